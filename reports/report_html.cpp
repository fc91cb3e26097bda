// report.html: the static part of the page (verdict, explanations, run
// facts, links, config) escaped here; the charts are drawn by the inline
// script (report_script.cpp) from the embedded data block (report_data.cpp).
#include "reports/report_html.h"

#include <cstdio>
#include <string>

#include "reports/report_evidence.h"
#include "reports/report_script.h"

namespace faultline::reports {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if invalid.
std::size_t Utf8Length(std::string_view s, std::size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t n;
  std::uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  std::uint32_t cp = c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// Percent-encodes a relative path for an href (keeps '/').
std::string HrefPath(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '-' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  // A path that could be read as a scheme ("javascript:...") or as
  // protocol-relative ("//host") is made explicitly relative.
  if (out.rfind("//", 0) == 0) out = "." + out;
  return out;
}

void Link(std::string& out, const std::string& path, const char* what) {
  if (path.empty()) return;
  out += "<li><a href=\"" + HtmlEscape(HrefPath(path)) + "\">" +
         HtmlEscape(path) + "</a> — " + what + "</li>\n";
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = Utf8Length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (n == 1) {
      char c = s[i];
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        default:
          // Control characters other than tab/newline/CR are not shown.
          if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
              c != '\r') {
            out += "\xEF\xBF\xBD";
          } else {
            out += c;
          }
      }
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string ScriptSafeJson(std::string_view json) {
  std::string out;
  out.reserve(json.size() + 64);
  for (std::size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string ReportHtml(const RunSummary& s, const checkers::History& history,
                       const ReportLinks& links, const ReportOptions& options) {
  const std::string verdict(checkers::ToString(OverallValidity(s)));
  std::string out;
  out.reserve(4096 + history.size() * 60);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
      "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
      "img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\">\n<title>";
  out += HtmlEscape(s.name) + " — " + verdict + " — faultline";
  out += "</title>\n<style>\n";
  out += ReportCss();
  out += "</style>\n</head>\n<body>\n";

  // --- verdict first ---------------------------------------------------------
  out += "<header>\n<h1><span class=\"name\">" + HtmlEscape(s.name) +
         "</span> <span id=\"verdict\" class=\"verdict " + verdict + "\">" +
         verdict + "</span></h1>\n<p class=\"facts\">";
  if (s.expect) {
    bool met = *s.expect == verdict;
    out += "<span class=\"expect " + std::string(met ? "met" : "unmet") +
           "\">expected " + HtmlEscape(*s.expect) +
           (met ? " — as expected" : " — NOT as expected") + "</span> · ";
  }
  if (s.aborted) {
    out += "<span id=\"interrupted\" class=\"expect unmet\">interrupted" +
           (s.interruption.signal.empty()
                ? std::string()
                : " by " + HtmlEscape(s.interruption.signal)) +
           "</span> · ";
  }
  out +=
      "started " + HtmlEscape(s.started_at.empty() ? "?" : s.started_at) +
      " · seed " + std::to_string(s.seed) + " · target " +
      HtmlEscape(s.target) +
      (s.target_version.empty() ? ""
                                : " (" + HtmlEscape(s.target_version) + ")") +
      "</p>\n";
  if (s.aborted) {
    out += "<p class=\"interrupted\">" + HtmlEscape(InterruptionLine(s)) +
           "</p>\n";
  }
  out += "</header>\n";

  out += "<section id=\"checkers\">\n<h2>Checkers</h2>\n";
  for (const auto& v : s.verdicts) {
    std::string vv(checkers::ToString(v.validity));
    out += "<div class=\"checker " + vv + "\"><h3><span class=\"cname\">" +
           HtmlEscape(v.checker) + "</span> <span class=\"verdict " + vv +
           "\">" + vv + "</span></h3>\n<p class=\"summary\">" +
           HtmlEscape(v.summary) + "</p>\n";
    if (!v.explanation.empty()) {
      out +=
          "<details" +
          std::string(v.validity == checkers::Validity::kValid ? "" : " open") +
          "><summary>explanation</summary><pre class=\"explanation\">" +
          HtmlEscape(v.explanation) + "</pre></details>\n";
    }
    out += "</div>\n";
  }
  if (s.verdicts.empty()) out += "<p>No checker ran.</p>\n";
  out += "</section>\n";
  out += EvidenceSectionHtml(s, history);

  out +=
      "<section id=\"violation\" hidden>\n<h2>Linearizability violation</h2>\n"
      "<div id=\"violation-chart\" class=\"chart\"></div>\n</section>\n"
      "<section id=\"txn-section\" hidden>\n<h2>Transaction cycles</h2>\n"
      "<div id=\"txn\"></div>\n</section>\n"
      "<section id=\"timeline-section\">\n<h2>Timeline</h2>\n"
      "<p class=\"controls\"><button id=\"zoom-in\">zoom in</button> "
      "<button id=\"zoom-out\">zoom out</button> <button "
      "id=\"zoom-reset\">reset</button> <span id=\"view-range\"></span> "
      "<span class=\"hint\">wheel: zoom · drag: pan · hover: details</span>"
      "</p>\n<div id=\"timeline\" class=\"chart\"></div>\n</section>\n"
      "<section id=\"holds-section\" hidden>\n<h2>Holders over time</h2>\n"
      "<div id=\"holds\" class=\"chart\"></div>\n</section>\n"
      "<section id=\"leaders-section\" hidden>\n<h2>Leaders over time</h2>\n"
      "<div id=\"leaders\" class=\"chart\"></div>\n</section>\n"
      "<section id=\"clocks-section\" hidden>\n<h2>Clock offsets</h2>\n"
      "<div id=\"clocks\" class=\"chart\"></div>\n</section>\n"
      "<section id=\"latency-section\">\n<h2>Latency</h2>\n"
      "<div id=\"latency\" class=\"chart\"></div>\n</section>\n"
      "<section id=\"throughput-section\">\n<h2>Throughput</h2>\n"
      "<div id=\"throughput\" class=\"chart\"></div>\n</section>\n";

  // --- the run ---------------------------------------------------------------
  out += "<section id=\"run\">\n<h2>Run</h2>\n<table class=\"facts\">\n";
  auto row = [&](const char* k, const std::string& v) {
    out += "<tr><th>" + std::string(k) + "</th><td>" + HtmlEscape(v) +
           "</td></tr>\n";
  };
  row("run directory", s.run_dir);
  row("cluster", s.cluster_provider + ", " + std::to_string(s.nodes) + " node" +
                     (s.nodes == 1 ? "" : "s"));
  row("target",
      s.target + (s.target_version.empty() ? "" : " — " + s.target_version));
  row("faultline",
      (s.faultline_version.empty() ? "unknown" : s.faultline_version) +
          " (commit " +
          (s.faultline_commit.empty() ? "unknown" : s.faultline_commit) + ")");
  if (s.aborted) row("interrupted", InterruptionLine(s));
  row("events in history", std::to_string(history.size()));
  std::string phases;
  double total = 0;
  for (const auto& p : s.phases) {
    if (!phases.empty()) phases += ", ";
    phases += p.name + " " + Num(p.seconds) + " s";
    total += p.seconds;
  }
  if (!s.phases.empty()) phases += " (total " + Num(total) + " s)";
  row("phases", phases.empty() ? "—" : phases);
  out += "</table>\n";
  if (!s.problems.empty()) {
    out += "<h3>Problems during the run</h3>\n<ul class=\"problems\">\n";
    for (const auto& p : s.problems) out += "<li>" + HtmlEscape(p) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<h3>Files</h3>\n<ul class=\"links\">\n";
  Link(out, links.history, "history (JSON Lines)");
  Link(out, links.results, "results (JSON)");
  Link(out, links.junit, "JUnit XML");
  Link(out, links.config, "resolved config");
  Link(out, links.log, "controller log");
  Link(out, links.ledger, "fault ledger");
  for (const auto& l : links.node_logs) Link(out, l, "node log");
  out += "</ul>\n";
  out += "<h3>Config</h3>\n<pre class=\"config\">" + HtmlEscape(s.config_yaml) +
         "</pre>\n</section>\n";
  out += "<footer>faultline " +
         HtmlEscape(s.faultline_version.empty() ? "unknown"
                                                : s.faultline_version) +
         " report · self-contained: nothing is fetched </footer>\n";

  out += "<script type=\"application/json\" id=\"faultline-data\">";
  out += ScriptSafeJson(ReportDataJson(s, history, options));
  out += "</script>\n<script>\n";
  out += ReportScript();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace faultline::reports

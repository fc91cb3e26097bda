#include "reports/store_index.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "reports/report_html.h"

namespace faultline::reports {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool ReadAll(const fs::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return static_cast<bool>(in) || in.eof();
}

void FillFromResults(const std::string& text, StoreRun& r) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return;
  if (j.contains("name") && j["name"].is_string()) r.name = j["name"];
  if (j.contains("valid") && j["valid"].is_string()) r.verdict = j["valid"];
  if (j.contains("started_at") && j["started_at"].is_string()) {
    r.started_at = j["started_at"];
  }
  if (j.contains("expect") && j["expect"].is_string()) r.expect = j["expect"];
  if (j.contains("aborted") && j["aborted"].is_boolean()) {
    r.aborted = j["aborted"];
  }
  if (j.contains("phases") && j["phases"].is_array()) {
    double total = 0;
    bool any = false;
    for (const auto& p : j["phases"]) {
      if (p.is_object() && p.contains("seconds") && p["seconds"].is_number()) {
        total += p["seconds"].get<double>();
        any = true;
      }
    }
    if (any) r.duration_s = total;
  }
  if (j.contains("checkers") && j["checkers"].is_array()) {
    for (const auto& c : j["checkers"]) {
      if (!c.is_object()) continue;
      if (c.value("valid", std::string()) != "valid") {
        r.summary = c.value("checker", std::string()) + ": " +
                    c.value("summary", std::string());
        break;
      }
    }
  }
}

std::string Duration(double s) {
  if (s < 0) return "—";
  char buf[32];
  if (s < 120) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(s) / 60,
                  static_cast<int>(s) % 60);
  }
  return buf;
}

}  // namespace

std::vector<StoreRun> ScanStore(const std::string& store_dir) {
  std::vector<StoreRun> runs;
  std::error_code ec;
  for (fs::directory_iterator t(store_dir, ec), end; !ec && t != end;
       t.increment(ec)) {
    if (t->is_symlink(ec) || !t->is_directory(ec)) continue;
    std::error_code ec2;
    for (fs::directory_iterator r(t->path(), ec2), rend; !ec2 && r != rend;
         r.increment(ec2)) {
      if (r->is_symlink(ec2) || !r->is_directory(ec2)) continue;
      fs::path dir = r->path();
      bool has_history = fs::exists(dir / "history.jsonl", ec2);
      bool has_results = fs::exists(dir / "results.json", ec2);
      if (!has_history && !has_results) continue;
      StoreRun run;
      run.test = t->path().filename().string();
      run.run = dir.filename().string();
      run.path = run.test + "/" + run.run;
      run.name = run.test;
      run.verdict = "incomplete";
      run.has_report = fs::exists(dir / "report.html", ec2);
      std::string text;
      if (has_results && ReadAll(dir / "results.json", text)) {
        FillFromResults(text, run);
      }
      runs.push_back(std::move(run));
    }
  }
  std::sort(runs.begin(), runs.end(), [](const StoreRun& a, const StoreRun& b) {
    if (a.run != b.run) return a.run > b.run;
    return a.test < b.test;
  });
  return runs;
}

std::string StoreIndexHtml(const std::vector<StoreRun>& runs) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
      "'none'; style-src 'unsafe-inline'\">\n<title>faultline store</title>\n"
      "<style>\nbody{font:14px/1.45 system-ui,sans-serif;margin:0 "
      "auto;max-width:1400px;padding:0 16px 32px;color:#1d2330}\n"
      "table{border-collapse:collapse;width:100%}th,td{text-align:left;"
      "padding:4px 10px;border-bottom:1px solid #e2e4ea;vertical-align:top}\n"
      "th{background:#f4f5f8}.verdict{font-weight:600}.valid{color:#2e8b42}"
      ".invalid{color:#c9302c}.unknown{color:#b07800}.incomplete{color:#889}"
      "\n.met{color:#2e8b42}.unmet{color:#c9302c}.summary{color:#4a5365;"
      "font-size:13px}\n</style>\n</head>\n<body>\n<h1>faultline runs</h1>\n";
  int counts[4] = {0, 0, 0, 0};
  for (const auto& r : runs) {
    int k = r.verdict == "valid"     ? 0
            : r.verdict == "invalid" ? 1
            : r.verdict == "unknown" ? 2
                                     : 3;
    ++counts[k];
  }
  out += "<p id=\"totals\">" + std::to_string(runs.size()) +
         (runs.size() == 1 ? " run: " : " runs: ") + std::to_string(counts[0]) +
         " valid, " + std::to_string(counts[1]) + " invalid, " +
         std::to_string(counts[2]) + " unknown, " + std::to_string(counts[3]) +
         " incomplete</p>\n";
  out +=
      "<table id=\"runs\">\n<thead><tr><th>test</th><th>run</th><th>started"
      "</th><th>duration</th><th>verdict</th><th>expected</th><th>report"
      "</th></tr></thead>\n<tbody>\n";
  for (const auto& r : runs) {
    std::string link = r.path + (r.has_report ? "/report.html" : "/");
    std::string href;
    for (unsigned char c : link) {
      if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_') {
        href += static_cast<char>(c);
      } else {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%%%02X", c);
        href += buf;
      }
    }
    out += "<tr class=\"run\"><td>" + HtmlEscape(r.name) + "</td><td>" +
           HtmlEscape(r.run) + "</td><td>" +
           HtmlEscape(r.started_at.empty() ? "—" : r.started_at) + "</td><td>" +
           Duration(r.duration_s) + "</td><td><span class=\"verdict " +
           HtmlEscape(r.verdict) + "\">" + HtmlEscape(r.verdict) + "</span>" +
           (r.aborted ? " (interrupted)" : "");
    if (!r.summary.empty()) {
      out += "<div class=\"summary\">" + HtmlEscape(r.summary) + "</div>";
    }
    out += "</td><td>";
    if (r.expect) {
      bool met = *r.expect == r.verdict;
      out += "<span class=\"" + std::string(met ? "met" : "unmet") + "\">" +
             HtmlEscape(*r.expect) + (met ? " ✓" : " ✗") + "</span>";
    } else {
      out += "—";
    }
    out += "</td><td><a href=\"" + HtmlEscape(href) + "\">" +
           (r.has_report ? "report" : "run directory") + "</a></td></tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (runs.empty()) out += "<p>No runs yet.</p>\n";
  out += "</body>\n</html>\n";
  return out;
}

std::string WriteFileAtomically(const std::string& path,
                                const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + tmp;
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return "cannot write " + tmp;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return "cannot write " + path + ": " + ec.message();
  }
  return "";
}

std::string WriteStoreIndex(const std::string& store_dir) {
  std::string path = (fs::path(store_dir) / "index.html").string();
  std::string err =
      WriteFileAtomically(path, StoreIndexHtml(ScanStore(store_dir)));
  return err.empty() ? path : "error: " + err;
}

}  // namespace faultline::reports

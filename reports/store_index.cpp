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

std::int64_t Count(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// Operations and faults from the stats checker's details (checkers/stats.h:
// {"ops": {"ok","fail","info"}, "faults": [{"f", ...}]}).
void FillFromStats(const json& checker, StoreRun& r) {
  auto d = checker.find("details");
  if (d == checker.end() || !d->is_object()) return;
  if (auto ops = d->find("ops"); ops != d->end() && ops->is_object()) {
    r.ops_ok = Count(*ops, "ok");
    r.ops_total = r.ops_ok + Count(*ops, "fail") + Count(*ops, "info");
  }
  if (auto faults = d->find("faults");
      faults != d->end() && faults->is_array()) {
    r.faults = static_cast<int>(faults->size());
    std::vector<std::pair<std::string, int>> kinds;  // in order of first use
    for (const auto& f : *faults) {
      std::string kind = f.is_object() ? f.value("f", std::string("?")) : "?";
      auto it = std::find_if(kinds.begin(), kinds.end(),
                             [&](const auto& k) { return k.first == kind; });
      if (it == kinds.end()) {
        kinds.emplace_back(kind, 1);
      } else {
        ++it->second;
      }
    }
    for (const auto& [kind, n] : kinds) {
      if (!r.fault_kinds.empty()) r.fault_kinds += ", ";
      r.fault_kinds += kind + " ×" + std::to_string(n);
    }
  }
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
  if (j.contains("seed") && j["seed"].is_number_unsigned()) {
    r.seed = j["seed"].get<std::uint64_t>();
  }
  if (j.contains("target") && j["target"].is_object()) {
    r.target = j["target"].value("name", std::string());
    r.target_version = j["target"].value("version", std::string());
  }
  if (j.contains("faultline") && j["faultline"].is_object()) {
    r.faultline_version = j["faultline"].value("version", std::string());
  }
  if (j.contains("checkers") && j["checkers"].is_array()) {
    for (const auto& c : j["checkers"]) {
      if (!c.is_object()) continue;
      if (r.summary.empty() && c.value("valid", std::string()) != "valid") {
        r.summary = c.value("checker", std::string()) + ": " +
                    c.value("summary", std::string());
      }
      if (c.value("checker", std::string()) == "stats") FillFromStats(c, r);
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

namespace {

// Sorting and filtering. Reads cells' text and data-v attributes, hides and
// reorders rows, writes the state to the URL fragment; never writes markup.
constexpr const char* kIndexScript = R"JS(
(function () {
  "use strict";
  var table = document.getElementById("runs");
  var body = table.tBodies[0];
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var rows = Array.prototype.slice.call(body.rows);
  var q = document.getElementById("q");
  var verdict = document.getElementById("verdict-filter");
  var target = document.getElementById("target-filter");
  var shown = document.getElementById("shown");
  var state = {q: "", verdict: "", target: "", sort: ""};
  function readHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i < 0) return;
      var k = kv.slice(0, i), v = kv.slice(i + 1);
      try { v = decodeURIComponent(v); } catch (e) { return; }
      if (Object.prototype.hasOwnProperty.call(state, k)) state[k] = v;
    });
  }
  function writeHash() {
    var parts = [];
    Object.keys(state).forEach(function (k) {
      if (state[k]) parts.push(k + "=" + encodeURIComponent(state[k]));
    });
    try { history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname); } catch (e) {}
  }
  function column(name) {
    for (var i = 0; i < heads.length; i++) {
      if (heads[i].getAttribute("data-col") === name) return i;
    }
    return -1;
  }
  function value(row, col) {
    var cell = row.cells[col];
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent : v;
  }
  function apply() {
    q.value = state.q;
    verdict.value = state.verdict;
    target.value = state.target;
    var desc = state.sort.charAt(0) === "-";
    var col = column(desc ? state.sort.slice(1) : state.sort);
    var order = rows.slice();
    if (col >= 0) {
      var numeric = heads[col].hasAttribute("data-num");
      order.sort(function (a, b) {
        var x = value(a, col), y = value(b, col), c;
        if (numeric) {  // unknown ("") sorts below every number
          x = x === "" ? -Infinity : parseFloat(x);
          y = y === "" ? -Infinity : parseFloat(y);
        }
        c = x < y ? -1 : x > y ? 1 : 0;
        return desc ? -c : c;
      });
    }
    heads.forEach(function (h, i) {
      h.setAttribute("aria-sort", i !== col ? "none" : desc ? "descending" : "ascending");
    });
    var needle = state.q.toLowerCase(), n = 0;
    order.forEach(function (row) {
      var ok = (!state.verdict || row.getAttribute("data-verdict") === state.verdict) &&
               (!state.target || row.getAttribute("data-target") === state.target) &&
               (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0);
      row.hidden = !ok;
      if (ok) n++;
      body.appendChild(row);
    });
    shown.textContent = n === rows.length ? "" : "showing " + n + " of " + rows.length;
    table.setAttribute("data-shown", String(n));
  }
  heads.forEach(function (h) {
    var name = h.getAttribute("data-col");
    if (!name) return;
    h.tabIndex = 0;
    function toggle() {
      state.sort = state.sort === "-" + name ? name : "-" + name;
      apply(); writeHash();
    }
    h.addEventListener("click", toggle);
    h.addEventListener("keydown", function (e) { if (e.key === "Enter") toggle(); });
  });
  q.addEventListener("input", function () { state.q = q.value; apply(); writeHash(); });
  verdict.addEventListener("change", function () { state.verdict = verdict.value; apply(); writeHash(); });
  target.addEventListener("change", function () { state.target = target.value; apply(); writeHash(); });
  window.addEventListener("hashchange", function () {
    state = {q: "", verdict: "", target: "", sort: ""}; readHash(); apply();
  });
  readHash();
  apply();
  document.body.setAttribute("data-ready", "yes");
})();
)JS";

// A table cell: `sort_value` becomes data-v (what the script sorts by),
// `title` a tooltip; `numeric` right-aligns it.
std::string Cell(const std::string& text, const std::string& sort_value = "",
                 const std::string& title = "", bool numeric = false) {
  std::string out = numeric ? "<td class=\"num\"" : "<td";
  if (!sort_value.empty()) out += " data-v=\"" + HtmlEscape(sort_value) + "\"";
  if (!title.empty()) out += " title=\"" + HtmlEscape(title) + "\"";
  return out + ">" + HtmlEscape(text) + "</td>";
}

std::string Grouped(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string Href(const std::string& link) {
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
  return href;
}

}  // namespace

std::string StoreIndexHtml(const std::vector<StoreRun>& runs) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
      "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
      "<title>faultline store</title>\n"
      "<style>\nbody{font:14px/1.45 system-ui,sans-serif;margin:0 "
      "auto;max-width:1600px;padding:0 16px 32px;color:#1d2330}\n"
      "table{border-collapse:collapse;width:100%}th,td{text-align:left;"
      "padding:4px 10px;border-bottom:1px solid #e2e4ea;vertical-align:top}\n"
      "th{background:#f4f5f8;cursor:pointer;user-select:none;white-space:"
      "nowrap}th[aria-sort=ascending]::after{content:' \\25b2'}"
      "th[aria-sort=descending]::after{content:' \\25bc'}\n"
      "td.num{text-align:right;font-variant-numeric:tabular-nums}"
      ".verdict{font-weight:600}.valid{color:#2e8b42}"
      ".invalid{color:#c9302c}.unknown{color:#b07800}.incomplete{color:#889}"
      "\n.met{color:#2e8b42}.unmet{color:#c9302c}.summary{color:#4a5365;"
      "font-size:13px}\n#filters{margin:8px 0 12px}#filters label{margin-"
      "right:14px}#shown{color:#4a5365}\n</style>\n</head>\n<body>\n"
      "<h1>faultline runs</h1>\n";
  int counts[4] = {0, 0, 0, 0};
  std::vector<std::string> targets;
  for (const auto& r : runs) {
    int k = r.verdict == "valid"     ? 0
            : r.verdict == "invalid" ? 1
            : r.verdict == "unknown" ? 2
                                     : 3;
    ++counts[k];
    if (!r.target.empty() &&
        std::find(targets.begin(), targets.end(), r.target) == targets.end()) {
      targets.push_back(r.target);
    }
  }
  std::sort(targets.begin(), targets.end());
  out += "<p id=\"totals\">" + std::to_string(runs.size()) +
         (runs.size() == 1 ? " run: " : " runs: ") + std::to_string(counts[0]) +
         " valid, " + std::to_string(counts[1]) + " invalid, " +
         std::to_string(counts[2]) + " unknown, " + std::to_string(counts[3]) +
         " incomplete</p>\n";
  out +=
      "<div id=\"filters\"><label>filter <input id=\"q\" type=\"search\" "
      "placeholder=\"any text\"></label><label>verdict <select "
      "id=\"verdict-filter\"><option value=\"\">all</option>"
      "<option>valid</option><option>invalid</option><option>unknown</option>"
      "<option>incomplete</option></select></label><label>target <select "
      "id=\"target-filter\"><option value=\"\">all</option>";
  for (const auto& t : targets) {
    out += "<option>" + HtmlEscape(t) + "</option>";
  }
  out += "</select></label><span id=\"shown\"></span></div>\n";
  out +=
      "<table id=\"runs\">\n<thead><tr><th data-col=\"test\">test</th>"
      "<th data-col=\"run\">run</th><th data-col=\"duration\" data-num>"
      "duration</th><th data-col=\"target\">target</th><th data-col=\"seed\" "
      "data-num>seed</th><th data-col=\"faultline\">faultline</th>"
      "<th data-col=\"ops\" data-num>operations</th><th data-col=\"faults\" "
      "data-num>faults</th><th data-col=\"verdict\">verdict</th>"
      "<th data-col=\"expected\">expected</th><th>report</th></tr></thead>\n"
      "<tbody>\n";
  for (const auto& r : runs) {
    std::string link = r.path + (r.has_report ? "/report.html" : "/");
    out += "<tr class=\"run\" data-verdict=\"" + HtmlEscape(r.verdict) +
           "\" data-target=\"" + HtmlEscape(r.target) + "\">";
    out += Cell(r.name);
    out += Cell(r.run, r.run, r.started_at);
    char dur[32] = "";
    if (r.duration_s >= 0) std::snprintf(dur, sizeof dur, "%.3f", r.duration_s);
    out += Cell(Duration(r.duration_s), dur, "", true);
    out += Cell(r.target.empty() ? "—" : r.target, r.target, r.target_version);
    std::string seed = r.seed ? std::to_string(*r.seed) : "";
    out += Cell(seed.empty() ? "—" : seed, seed, "", true);
    out += Cell(r.faultline_version.empty() ? "—" : r.faultline_version);
    std::string ops =
        r.ops_total < 0 ? "—"
                        : Grouped(r.ops_ok) + " ok of " + Grouped(r.ops_total);
    out +=
        Cell(ops, r.ops_total < 0 ? "" : std::to_string(r.ops_total), "", true);
    out +=
        Cell(r.faults < 0 ? "—" : std::to_string(r.faults),
             r.faults < 0 ? "" : std::to_string(r.faults), r.fault_kinds, true);
    out += "<td><span class=\"verdict " + HtmlEscape(r.verdict) + "\">" +
           HtmlEscape(r.verdict) + "</span>" +
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
    out += "</td><td><a href=\"" + HtmlEscape(Href(link)) + "\">" +
           (r.has_report ? "report" : "run directory") + "</a></td></tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (runs.empty()) out += "<p>No runs yet.</p>\n";
  out += "<script>" + std::string(kIndexScript) + "</script>\n";
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

// report.html: one self-contained page per run, for people. It opens in any
// browser without network access: styles and the one script are inline, the
// charts are SVG drawn by that script from data embedded in the page.
//
// Contents, in order: the verdict and each checker's explanation; for a
// linearizability violation, its kind and context sentence and the
// operations involved on their processes' timelines with key, values, the
// node that served each and their times in seconds, the faults in force
// shaded behind them; for the transactional checkers (list-append,
// rw-register) each dependency cycle drawn as a ring of transactions with
// the edges between them and why each edge exists; a zoomable timeline of
// every operation per process (ok / fail / info coloured, nemesis windows
// shaded and labelled); for lock and election runs the holders chart
// (overlaps red when unsafe, grey when harmless, tokens granted twice or
// backwards marked) and the leaders chart with the leaders per term, terms
// with two leaders marked;
// latency over time (points and quantile lines) and throughput over time per
// f, with fault windows shaded; then the cluster, phases, problems, links to
// the run's files and node logs, and the resolved config.
//
// Scale: the page stays usable on a 100,000-op history. Operations are
// embedded as compact column arrays (about 50 bytes per op); the script
// aggregates them into pixel buckets when a view holds more than a few
// thousand, so the DOM never holds more than a few thousand chart elements.
//
// Escaping: every string that comes from a history, a config, a checker or a
// file name is either HTML-escaped into the static part of the page or
// carried in a <script type="application/json"> block (with '<', '>', '&',
// U+2028 and U+2029 written as \uXXXX) and put into the DOM with textContent
// by the script. A value like `</script><script>alert(1)</script>` shows as
// text. Invalid UTF-8 becomes U+FFFD. A Content-Security-Policy meta tag
// forbids every fetch (default-src 'none').
//
// Pure functions; thread-safe; never throw for any input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checkers/history.h"
#include "reports/results.h"

namespace faultline::reports {

// Links in the report, relative to the directory holding report.html.
// An empty path is not linked.
struct ReportLinks {
  std::string history = "history.jsonl";
  std::string results = "results.json";
  std::string junit = "junit.xml";
  std::string config = "config.yaml";
  std::string log = "faultline.log";
  std::string ledger = "ledger.jsonl";
  std::vector<std::string> node_logs;  // e.g. "nodes/n1/etcd.log"
};

struct ReportOptions {
  // Operation descriptions (key, value, result) are cut to this many bytes
  // (on a UTF-8 boundary, with "…").
  std::size_t max_value_chars = 80;
};

// The whole page. `history` may be empty (a run that never started): the
// charts then say there is nothing to draw.
std::string ReportHtml(const RunSummary& s, const checkers::History& history,
                       const ReportLinks& links,
                       const ReportOptions& options = {});

// `s` escaped for HTML text and double-quoted attribute values (&, <, >,
// ", '), with invalid UTF-8 replaced by U+FFFD.
std::string HtmlEscape(std::string_view s);

// A JSON text made safe to embed in <script type="application/json">: '<',
// '>' and '&' become \u003c, \u003e, \u0026 and U+2028/U+2029 become
// \u2028/\u2029. Precondition: `json` is valid JSON (the escapes are only
// correct inside strings, where every '<' of valid JSON is).
std::string ScriptSafeJson(std::string_view json);

// The page's data block (the JSON embedded in it, before ScriptSafeJson),
// exposed for tests: {"name","verdict","unit":"us"|"index","end",
// "lanes":[label...],"fs":[f...],
// "ops":{"lane":[],"s":[],"e":[],"t":[],"f":[],"d":[]},
// "faults":[{"f","s","e","label"}], "violation": {"key","model","state",
// "summary","kind","at","sentence","ops":[{"index","process","s","e","t",
// "d","role","node","part"?,"faults"?}],"why","faults":[{"id","kind","s",
// "e","open","effect"}]}|null, "holds": {"rows","locks","items":[{..,
// "bad"?,"bad_why"?}],"overlaps":[{"lock","s","e","unsafe","why"}]}|null,
// "leaders": {"rows","items","dual","conflicts","terms":[{"domain","term",
// "nodes","s","conflict"}],"terms_more"}|null, "clocks": ...,
// "txn": [...]|null (TxnCyclesData, reports/report_txn.h)}.
std::string ReportDataJson(const RunSummary& s,
                           const checkers::History& history,
                           const ReportOptions& options = {});

}  // namespace faultline::reports

// results.json: the machine-readable outcome of a run (or of `analyze` /
// `check`). Schema "faultline.results/1":
//   {"schema", "name", "valid": "valid|invalid|unknown", "expect",
//    "expectation_met", "exit_code", "seed", "run_dir", "started_at",
//    "cluster": {"provider","nodes"}, "target": {"name","version"},
//    "checkers": [{"checker","valid","summary","explanation","details"}],
//    "phases": [{"name","seconds"}], "problems": [...], "aborted",
//    "config": "<resolved YAML>"}
// `details` is each checker's own JSON object (stats: op counts, latency
// quantiles, fault windows; linearizable: the violation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/verdict.h"

namespace faultline::reports {

struct Phase {
  std::string name;  // "setup", "workload", "final", "teardown", "check"
  double seconds = 0;
};

struct RunSummary {
  std::string name;
  std::string run_dir;
  std::string started_at;  // ISO-8601 UTC
  std::uint64_t seed = 0;
  std::string cluster_provider;
  int nodes = 0;
  std::string target;
  std::string target_version;
  std::string config_yaml;
  std::optional<std::string> expect;  // "valid" | "invalid"
  std::vector<checkers::Verdict> verdicts;
  std::vector<Phase> phases;
  std::vector<std::string> problems;
  bool aborted = false;
};

// The overall verdict (compose of every checker).
checkers::Validity OverallValidity(const RunSummary& s);

// Exit code of the run: without `expect`, per shared/spec/history.md (0/1/2);
// with `expect`, 0 when the verdict is the expected one, else the code of
// the verdict found (1 invalid, 2 unknown) or 1 when valid was found but
// invalid expected.
int RunExitCode(const RunSummary& s);

// Never throws: invalid UTF-8 in any string becomes U+FFFD.
std::string ResultsJson(const RunSummary& s);

// The inverse of ResultsJson, for regenerating reports from a stored run:
// nullopt when `text` is not a results.json object. Fields absent from the
// text keep their defaults; each checker's `details` becomes its
// details_json.
std::optional<RunSummary> ParseResultsJson(const std::string& text);

// Terminal summary: verdict line, one line per checker (unless
// `per_checker` is false, e.g. when SummaryTable follows), explanation of
// failures, problems.
std::string TextSummary(const RunSummary& s, bool per_checker = true);

// The end-of-run table for the terminal: one row per checker (verdict and
// summary), the phases and the total time, then `report_path` when not
// empty. Rows are cut to 100 columns.
std::string SummaryTable(const RunSummary& s, const std::string& report_path);

}  // namespace faultline::reports

// results.json: the machine-readable outcome of a run (or of `analyze` /
// `check`). Schema "faultline.results/1":
//   {"schema", "name", "valid": "valid|invalid|unknown", "expect",
//    "expectation_met", "exit_code", "seed", "run_dir", "started_at",
//    "cluster": {"provider","nodes"}, "target": {"name","version"},
//    "faultline": {"version","commit"},
//    "checkers": [{"checker","valid","summary","explanation","details"}],
//    "phases": [{"name","seconds"}], "problems": [...], "aborted",
//    "interrupted": null | {"signal","at","after_s","during","note"},
//    "evidence": null | {...} (reports/evidence.h: did the faults bite, ok
//    ops per phase, CAS share, weak and why),
//    "config": "<resolved YAML>"}
// `details` is each checker's own JSON object (stats: op counts, latency
// quantiles, fault windows; linearizable: the violation).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/verdict.h"
#include "reports/evidence.h"

namespace faultline::reports {

struct Phase {
  std::string name;  // "setup", "workload", "final", "teardown", "check"
  double seconds = 0;
};

// Why and when a run stopped early (RunSummary::aborted). Empty strings and
// a negative after_s mean "not known" (a controller killed with SIGKILL
// cannot say when or why); they become null in results.json.
struct Interruption {
  std::string signal;   // "SIGINT", "SIGTERM", "" unknown
  std::string at;       // ISO-8601 UTC of the signal
  double after_s = -1;  // seconds from the start of the run to the signal
  std::string during;   // the phase the signal came in: setup, workload, ...
  std::string note;     // one sentence for people
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
  std::string faultline_version;  // the faultline that ran (or re-checked)
  std::string faultline_commit;   // its git commit, "unknown" outside git
  std::string config_yaml;
  std::optional<std::string> expect;  // "valid" | "invalid"
  std::vector<checkers::Verdict> verdicts;
  std::vector<Phase> phases;
  std::vector<std::string> problems;
  // The run stopped before its time limit (SIGINT/SIGTERM, or a controller
  // that never closed its ledger): the history is a prefix.
  bool aborted = false;
  Interruption interruption;  // meaningful when aborted
  // Was the run able to find anything (ComputeEvidence of its history)?
  // Absent for runs that never started and for results.json files written
  // before it existed.
  std::optional<Evidence> evidence;
};

// The overall verdict (compose of every checker).
checkers::Validity OverallValidity(const RunSummary& s);

// Exit code of the run: without `expect`, 0 valid, 1 invalid, 2 unknown;
// with `expect`, 0 when the verdict is the expected one, else the code of
// the verdict found (1 invalid, 2 unknown) or 1 when valid was found but
// invalid expected. An aborted run never exits 0: 128 + the signal's number
// when the signal is known (130 SIGINT, 143 SIGTERM) whatever the verdict
// of its prefix; otherwise (controller killed) 1 for an invalid prefix and
// 2 for the rest.
int RunExitCode(const RunSummary& s);

// 128 + the number of "SIGINT"/"SIGTERM"/"SIGHUP"/"SIGKILL", else 0.
int SignalExitCode(const std::string& signal);

// Never throws: invalid UTF-8 in any string becomes U+FFFD.
std::string ResultsJson(const RunSummary& s);

// The inverse of ResultsJson, for regenerating reports from a stored run:
// nullopt when `text` is not a results.json object. Fields absent from the
// text keep their defaults; each checker's `details` becomes its
// details_json.
std::optional<RunSummary> ParseResultsJson(const std::string& text);

// One line saying that, when and why a run was interrupted and what that
// means for its verdict (for aborted runs; also used by junit.xml).
std::string InterruptionLine(const RunSummary& s);

// Terminal summary: verdict line, one line per checker (unless
// `per_checker` is false, e.g. when SummaryTable follows), the evidence
// line (and "WEAK RUN: ..." when weak; EvidenceLines), explanation of
// failures, problems.
std::string TextSummary(const RunSummary& s, bool per_checker = true);

// The end-of-run table for the terminal: one row per checker (verdict and
// summary), the phases and the total time, then `report_path` when not
// empty. Rows are cut to 100 columns. With evidence, the "stats" row counts
// the workload's operations as the run's "workload done:" line does, with
// the final reads and observer reads apart and labelled (StatsRowSummary).
std::string SummaryTable(const RunSummary& s, const std::string& report_path);

// "8455 ok, 12 fail, 31 info; final reads 5 ok; observer reads 300": the
// workload's counts, then the final reads (their fail and info when not 0)
// and the observer reads, when there were any.
std::string StatsRowSummary(const Evidence& e);

}  // namespace faultline::reports

// What `run`, `analyze` and `report` share: the run facts and verdicts of a
// summary, report.html in the run directory and the store's index.html.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"
#include "reports/results.h"

namespace faultline::harness {
struct TestSpec;
struct CheckOptions;
class Workload;
}  // namespace faultline::harness

namespace faultline::cli {

// Reads a run's history.jsonl at `history_path`. Prints the reader's
// warnings, and on failure why ("faultline COMMAND: ..." or
// "PATH:LINE:COL: error: ...") to stderr and returns nullopt. A missing
// file is an empty history: the run stopped before its first operation.
std::optional<checkers::History> ReadRunHistory(const std::string& history_path,
                                                const char* command);

// False, after printing "PATH:LINE: error: ..." to stderr, when `history`
// (read from `history_path`) is not well formed (checkers/history_io.h).
bool WellFormedOrSay(const checkers::History& history,
                     const std::string& history_path);

// Fills the run facts of `summary` from the resolved config: name, seed,
// cluster provider and size, target, expectation and the config text.
void DescribeRun(const harness::TestSpec& spec, reports::RunSummary& summary);

// Every verdict on a run's history: the workload's checkers, then
// leader-per-term when the history holds `observe` events. A history
// without a single client operation tested nothing: one `run` verdict,
// unknown, instead. The one check path of `run`, `analyze` and
// `report --recheck`, so they agree.
std::vector<checkers::Verdict> CheckRunHistory(
    harness::Workload& workload, const checkers::History& history,
    const harness::CheckOptions& options);

// Writes `summary.run_dir`/report.html from the summary and the history,
// linking the run's files and every file under its nodes/ directory.
// Returns the path written, or "" after printing why to stderr.
std::string WriteRunReport(const reports::RunSummary& summary,
                           const checkers::History& history);

// For a run directory without results.json: when its fault ledger was
// never closed, the controller stopped before the end of the run (SIGKILL,
// crash, power loss), so `summary` is marked aborted with what is known
// (nothing about the signal or the time). No-op otherwise.
void NoteUnfinishedRun(const std::string& run_dir,
                       reports::RunSummary& summary);

// The store holding a run directory (store/<test>/<run> -> store), or ""
// when `run_dir` has no grandparent.
std::string StoreOfRunDir(const std::string& run_dir);

// Regenerates `store_dir`/index.html. Returns its path, or "" after printing
// why to stderr.
std::string UpdateStoreIndex(const std::string& store_dir);

}  // namespace faultline::cli

// The report files of a run, shared by `run`, `analyze` and `report`:
// report.html in the run directory and the store's index.html.
#pragma once

#include <string>

#include "checkers/history.h"
#include "reports/results.h"

namespace faultline::cli {

// Writes `summary.run_dir`/report.html from the summary and the history,
// linking the run's files and every file under its nodes/ directory.
// Returns the path written, or "" after printing why to stderr.
std::string WriteRunReport(const reports::RunSummary& summary,
                           const checkers::History& history);

// The store holding a run directory (store/<test>/<run> -> store), or ""
// when `run_dir` has no grandparent.
std::string StoreOfRunDir(const std::string& run_dir);

// Regenerates `store_dir`/index.html. Returns its path, or "" after printing
// why to stderr.
std::string UpdateStoreIndex(const std::string& store_dir);

}  // namespace faultline::cli

// The store: one directory per run, `store/<test>/<timestamp>/`, holding the
// resolved config, history, fault ledger, log, results and node logs, plus a
// `latest` symlink per test.
#pragma once

#include <string>

#include "harness/interfaces/result.h"

namespace faultline::harness {

struct RunDir {
  std::string path;       // store/<test>/<timestamp>
  std::string run_id;     // 6 hex digits, unique among live runs
  std::string timestamp;  // UTC, 20261130T051122.123Z
  std::string test_dir;   // store/<test>
};

// File names inside a run directory.
inline constexpr const char* kConfigFile = "config.yaml";
inline constexpr const char* kHistoryFile = "history.jsonl";
inline constexpr const char* kLedgerFile = "ledger.jsonl";
inline constexpr const char* kLogFile = "faultline.log";
inline constexpr const char* kResultsFile = "results.json";
inline constexpr const char* kJunitFile = "junit.xml";
inline constexpr const char* kNodesDir = "nodes";

// Creates a fresh run directory. `store/<test>/latest` is not moved:
// PointLatestAt does that once the run has something to show or to heal
// (its cluster exists), so a run refused before that leaves `latest` where
// it was.
Result<RunDir> CreateRunDir(const std::string& store_dir,
                            const std::string& test_name);

// Points `store/<test>/latest` at `run`, atomically (rename of a new link).
Status PointLatestAt(const RunDir& run);

// Removes the directory of a run that was refused before it created
// anything outside it, and `store/<test>/` too when that is left empty.
// `latest` is not touched.
Status RemoveRunDir(const RunDir& run);

// Resolves a user-given run directory (may be a `latest` link). A run
// directory holds history.jsonl, or at least config.yaml (a run stopped
// before its first operation); fails with a message saying what is missing
// otherwise.
Result<std::string> ResolveRunDir(const std::string& arg);

// The current UTC time to the millisecond, ISO 8601: basic form
// ("20261130T051122.123Z", run directory names) or extended form
// ("2026-11-30T05:11:22.123Z", timestamps inside results).
enum class UtcForm { kBasic, kExtended };
std::string UtcNowMillis(UtcForm form);

Result<std::string> ReadFile(const std::string& path);
Status WriteFileAtomic(const std::string& path, const std::string& content);

}  // namespace faultline::harness

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
};

// File names inside a run directory.
inline constexpr const char* kConfigFile = "config.yaml";
inline constexpr const char* kHistoryFile = "history.jsonl";
inline constexpr const char* kLedgerFile = "ledger.jsonl";
inline constexpr const char* kLogFile = "faultline.log";
inline constexpr const char* kResultsFile = "results.json";
inline constexpr const char* kJunitFile = "junit.xml";
inline constexpr const char* kNodesDir = "nodes";

// Creates a fresh run directory and points `store/<test>/latest` at it.
Result<RunDir> CreateRunDir(const std::string& store_dir,
                            const std::string& test_name);

// Resolves a user-given run directory (may be a `latest` link); fails with a
// message saying what is missing when it holds no history.
Result<std::string> ResolveRunDir(const std::string& arg);

Result<std::string> ReadFile(const std::string& path);
Status WriteFileAtomic(const std::string& path, const std::string& content);

}  // namespace faultline::harness

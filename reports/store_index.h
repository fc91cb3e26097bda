// The store index: store/index.html lists every run in a store (test name,
// start time, duration, verdict, link to its report), newest first. It is
// regenerated after each run and by `faultline report --index`.
//
// The store layout is store/<test>/<run>/ (harness/run/store.h); a run is a
// directory holding history.jsonl or results.json. `latest` links are
// skipped. A run without results.json (killed, or still running) is listed
// as "incomplete".
//
// Thread-safety: ScanStore and WriteStoreIndex read and write files; two
// processes writing the same index race benignly (each write is atomic, by
// rename). StoreIndexHtml is pure. No function throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace faultline::reports {

struct StoreRun {
  std::string test;        // the test's directory name
  std::string run;         // the run's directory name (its timestamp)
  std::string path;        // "<test>/<run>", relative to the store
  std::string name;        // the test name from results.json, else `test`
  std::string started_at;  // ISO-8601 from results.json, "" if unknown
  double duration_s = -1;  // sum of the recorded phases; -1 if unknown
  std::string verdict;     // "valid" | "invalid" | "unknown" | "incomplete"
  std::optional<std::string> expect;
  bool aborted = false;
  bool has_report = false;  // report.html exists
  std::string summary;      // the first non-valid checker's summary
};

// Every run under `store_dir`, newest first (by run directory name, which
// is a UTC timestamp, then by test). Unreadable entries are skipped.
std::vector<StoreRun> ScanStore(const std::string& store_dir);

// The index page (self-contained, no script; every string escaped).
std::string StoreIndexHtml(const std::vector<StoreRun>& runs);

// Scans `store_dir` and writes `store_dir`/index.html. Returns the path
// written, or an error message prefixed "error: ".
std::string WriteStoreIndex(const std::string& store_dir);

// Writes `content` to `path` atomically (temporary file + rename). Returns
// "" on success, else a message.
std::string WriteFileAtomically(const std::string& path,
                                const std::string& content);

}  // namespace faultline::reports

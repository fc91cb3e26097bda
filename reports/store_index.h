// The store index: store/index.html lists every run in a store (test name,
// run, duration, target and its version, seed, the faultline version that
// ran it, operations, faults, verdict, link to its report), newest first.
// It is regenerated after each run and by `faultline report --index`.
//
// The page sorts (click a column's header; again to reverse) and filters
// (free text over every cell, verdict, target). Its state lives in the
// URL's fragment, e.g. index.html#verdict=invalid&target=etcd&sort=-ops,
// so a filtered view can be bookmarked or linked from a CI job. The script
// only reorders and hides rows the page already holds; it reads cells'
// text and never writes markup.
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

#include <cstdint>
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
  std::optional<std::uint64_t> seed;
  std::string target;             // target name, "" if unknown
  std::string target_version;     // e.g. "etcd 3.4.23"
  std::string faultline_version;  // the faultline that ran it, "" if unknown
  std::int64_t ops_ok = -1;       // client operations completed ok (stats)
  std::int64_t ops_total = -1;    // ok + fail + info; -1 if unknown
  int faults = -1;                // fault windows recorded; -1 if unknown
  std::string fault_kinds;        // e.g. "partition ×3, kill ×2"
};

// Every run under `store_dir`, newest first (by run directory name, which
// is a UTC timestamp, then by test). Unreadable entries are skipped.
std::vector<StoreRun> ScanStore(const std::string& store_dir);

// The index page: self-contained (no request leaves it), every string
// escaped; one inline script for sorting and filtering.
std::string StoreIndexHtml(const std::vector<StoreRun>& runs);

// Scans `store_dir` and writes `store_dir`/index.html. Returns the path
// written, or an error message prefixed "error: ".
std::string WriteStoreIndex(const std::string& store_dir);

// Writes `content` to `path` atomically (temporary file + rename). Returns
// "" on success, else a message.
std::string WriteFileAtomically(const std::string& path,
                                const std::string& content);

}  // namespace faultline::reports

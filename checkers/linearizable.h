// The linearizability checker (checker name "linearizable").
//
// Decides whether a client history is linearizable with respect to a model
// (checkers/model.h): every `ok` operation took effect once, at an instant
// inside its interval; `fail` operations never took effect (failed ops are
// ignored, including a failed cas's "compare did not match" observation);
// `info` operations and invocations that never completed took effect at some
// instant after their invocation, or never. Nemesis events are skipped.
//
// Algorithm: the history is split by key (P-compositionality), each key's
// sub-history is simplified by exact pre-passes (docs/checker.md: dropping
// unobserved crashed writes, closing observed ones, splitting at quiescent
// points) and searched with the Wing & Gong / Lowe depth-first search with
// memoization of (linearized set, model state). Keys are checked in
// parallel. The violation reported is the earliest in time over all keys:
// the one whose blocker (the op whose return no linearizable prefix gets
// past) returns first; ties go to the key that appears first in the
// history. Once a violation is found, the other keys are searched only
// until they get past its instant. The result does not depend on `threads`
// or on scheduling.
//
// Bounds: when the deadline, the memory limit or the cancel flag stops the
// search before a violation is found, the verdict is `unknown`, never
// `valid`. When a violation was found on one key and another key did not
// finish, the verdict is `invalid` with the earliest violation among the
// keys that finished, and the explanation and details_json.unfinished name
// the others.
//
// Thread-safety: CheckLinearizable is reentrant; it starts and joins its own
// threads and reads `cancel` only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers {

inline constexpr char kLinearizableChecker[] = "linearizable";

struct LinearizableOptions {
  std::string model = "cas-register";  // one of LinearizableModelNames()
  int threads = 1;                     // keys checked in parallel; >= 1
  // Give up (unknown) at this instant. nullopt: no deadline.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Give up (unknown) when memo tables and search stacks of all keys
  // together exceed this many bytes. 0: no limit.
  std::uint64_t memory_limit_bytes = 0;
  // When set, memory_limit_bytes bounds what this returns instead: the
  // caller's measure of all the memory it holds (faultline check passes
  // the process's resident set, so the history and the checker's own
  // structures count). Sampled while the operations are paired into
  // partitions (every 65,536 events), when a search's memo grows by 256 KB
  // and every 65,536 search steps; called from the checker's threads.
  std::function<std::uint64_t()> memory_in_use;
  // On valid, include a witness order (per key) in the explanation and
  // details_json.
  bool witness = false;
  // Polled during the search; when it becomes true the result is unknown
  // (unless a violation was already found). May be null.
  const std::atomic<bool>* cancel = nullptr;
  // Pre-passes; on by default. Turning them off is for tests and benchmarks.
  bool prune = true;            // drop unobserved / close observed crashed ops
  bool split_quiescent = true;  // split keys at quiescent points
  // The unique-value fast path (docs/checker.md): keys of register and
  // cas-register histories whose written values are distinct are decided
  // in O(n log n), and a violation is located without the search (the
  // same earliest violation, explained the same way). Off: the search.
  bool unique_fast_path = true;
};

// Checks `history` (well-formed per CheckWellFormed; a malformed history, an
// unknown model, a history without a single client operation (empty,
// nemesis events only) or without a single ok completion (every operation
// failed, timed out or never completed) gives `unknown` with the reason in
// the summary).
//
// Verdict fields (wording and fields in docs/checker.md): summary is one
// line naming the key and the kind of the violation ("key "k1": stale read:
// n2 returned 47 at 14.60 s, after 99 was acknowledged at 14.57 s");
// explanation is readable text: first the context (the kind, the nodes
// that served the operations involved, the faults in force on them from
// the nemesis events, which write produced a stale value and when it was
// overwritten, times in seconds since the start), then the longest
// linearizable prefix, the operations that could not be placed next and
// why, the concurrent window. details_json is a JSON object:
//   {"model":..., "keys":N, "ops":N, "pruned":N, "closed":N, "segments":N,
//    "memo_entries":N, "fast_path_keys":N (keys the unique-value fast path
//    decided), "peak_bytes":N,
//    "failure": {"key":..., "start_state":..., "state":...,
//                "prefix_length":N, "prefix":[op...] (its last 20 ops),
//                "stuck":[{"op":op,"rejected":bool,"why":...}...],
//                "window":[op...],
//                "kind": "stale-read" | "lost-write" | "never-written" |
//                        "no-consistent-order",
//                "at": {"index":N, "s":seconds|null},
//                "context": {...}}            (invalid only)
//    "unfinished": [{"key":..., "reason":..., "clear_before":{...}}...]
//                                             (invalid only)
//    "witness": [{"key":..., "order":[index...]}]   (valid + witness)
//    "reason": "..."}                         (unknown only)
// where an op is {"index": invoke index, "complete_index", "process", "f",
// "value", "output", "type", "closed", "node", "call_s", "return_s"}.
Verdict CheckLinearizable(const History& history,
                          const LinearizableOptions& options);

// Model names accepted in LinearizableOptions::model, sorted.
std::vector<std::string> LinearizableModelNames();

}  // namespace faultline::checkers

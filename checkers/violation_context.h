// The context of a linearizability violation, taken from the history
// itself: which kind of violation it is, which node served each operation
// involved, which faults were in force on those nodes at the time (the
// nemesis events that started and ended them), which write produced a
// stale value and when it was overwritten. Internal to the linearizability
// checker (linear_check.cpp); the wording and the JSON are documented in
// docs/checker.md.
//
// Kinds (register and cas-register; other models are always
// "no-consistent-order"). Let R be the rejected ok read of the violation
// (the blocker if it is one, else the first rejected read), X its value,
// and t_X the latest return of an op writing X (X must have been written
// by then; the initial value is written before everything). S is the set of
// ok writes and cas of another value invoked after t_X and acknowledged
// before R was invoked: each of them overwrote X before R started.
//  - "never-written": no op writes X and X is not the initial value.
//  - "lost-write": S holds a write W such that no ok op ever observes W's
//    value nor the value of any op invoked after W and before R: an
//    acknowledged write whose value, and every later one, is never read,
//    while R returns an older value. W is the earliest such write.
//  - "stale-read": S is not empty and no write of S is lost: R returned a
//    value that an acknowledged write had already overwritten before R was
//    invoked, and the newer values were seen.
//  - "no-consistent-order": anything else (no such R, X's writer may have
//    taken effect late, or only concurrent operations disagree).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/linear_internal.h"

namespace faultline::checkers::linear {

// One fault as faultline's nemesis events record it
// (harness/run/interpreter.cpp): a "start-K" invoke and its info (the fault
// is in force once that info carries no error), later a "stop-K" invoke and
// its info. Starts and stops of one kind pair first in, first out, as in
// ComputeStats. Nemesis events in another vocabulary are not faults here.
struct FaultSpan {
  std::string kind;
  Value value;                          // the start info's value
  std::vector<std::string> nodes;       // the nodes it acts on; empty: all
  const Event* start_invoke = nullptr;  // null when there was none
  const Event* start = nullptr;         // the start's info
  const Event* stop_invoke = nullptr;   // null while in force
  const Event* stop = nullptr;          // null while in force
  bool heal_failed = false;  // the stop's info carries an error: it may
                             // still be in force
  bool ActsOn(const std::string& node) const;
  // The event indexes between which it may be in force (inclusive); the
  // last is INT64_MAX while it is in force or when its heal failed.
  std::int64_t first_index() const;
  std::int64_t last_index() const;
};

// The faults of `history`, in the order they started.
std::vector<FaultSpan> FaultSpans(const History& history);

// What `fault` does to `node`, e.g. "cut off from the majority", "paused",
// "with messages from its peers delayed by 600 ms".
std::string DescribeFault(const FaultSpan& fault, const std::string& node);

struct ViolationContext {
  std::string kind;     // "stale-read", "lost-write", "never-written",
                        // "no-consistent-order"
  std::string summary;  // one line, without the key: "stale read: n2
                        // returned 47 at 14.60 s, after 99 was
                        // acknowledged at 14.57 s"
  std::string text;     // the lines that lead the explanation
  std::string json;     // members for the "failure" object, each preceded
                        // by a comma: ,"kind":..,"at":{..},"context":{..}
};

// The context of the violation `ex` found in partition `p` (built from
// `history` by BuildPartitions).
ViolationContext DescribeViolation(const History& history, const Partition& p,
                                   const Model& model, const Explanation& ex);

}  // namespace faultline::checkers::linear

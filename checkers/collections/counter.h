// The counter checker (checker name "counter"), after Jepsen's counter
// checker: a grow-only counter that clients add to and read.
//
// History shape (client events; nemesis events are skipped, any other f is
// ignored):
// - f "add": invoke value = the increment, a non-negative integer. Its
//   completion is ok (applied), fail (certainly not applied) or info (may
//   or may not have been applied); an add that never completes counts as
//   info. Completion values are not looked at.
// - f "read": invoke value not looked at (null by convention); ok value =
//   the counter's value, an integer. fail/info reads are ignored.
//
// Rule, for every ok read r invoked at event t0 and completed at event t1
// (event order is the real-time order):
//   lower <= r <= upper, where
//   lower = initial + the increments of adds that completed ok before t0,
//   upper = initial + the increments of every add invoked before t1 that
//           did not fail (ok, info, or never completed).
// One pass over the events with two running sums: O(n).
//
// Verdict: unknown when the history is malformed (the summary names the
// line and the shape expected) or when no read completed ok; invalid when
// a read lies outside its bounds; valid otherwise. A sum that overflows
// int64 is reported as malformed.
//
// Summary e.g. "invalid: p2's read invoked at 5.100 s (event 40) returned
// 12, but 15 had been acknowledged before it began (lower bound 15, upper
// 19)". The explanation has one line per kept violation, then the counts.
// details_json:
//   {"initial":I, "adds":{"ok":N,"fail":N,"info":N},
//    "reads":{"ok":N,"not_ok":N}, "reads_checked":N,
//    "violations":{"count":N,"below":N,"above":N,"examples":[{"kind":
//      "below"|"above","value":V,"lower":L,"upper":U,
//      "invoke":{"index","process","time"},"complete":{...}}]}}
// ("time" is ns or null). Pure; thread-safe on a const history.
#pragma once

#include <cstdint>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers::collections {

inline constexpr char kCounterChecker[] = "counter";

struct CounterOptions {
  std::int64_t initial = 0;  // the counter's value before any add
  int max_examples = 20;     // violations kept (all are counted); >= 1
};

Verdict CheckCounter(const History& history,
                     const CounterOptions& options = {});

}  // namespace faultline::checkers::collections

// The set checker (checker name "set"), after Jepsen's set-full checker:
// clients add unique elements to a set and read the whole set; every
// element acknowledged (or seen) must stay visible to every later read.
//
// History shape (client events; nemesis events are skipped, any other f is
// ignored):
// - f "add": invoke value = the element, an integer or a string, unique per
//   history (a second add of the same element makes the history
//   malformed). ok = added, fail = certainly not added, info (or never
//   completed) = maybe added. Completion values are not looked at.
// - f "read": invoke value not looked at (null by convention); ok value = a
//   list of every element currently in the set (integers or strings, in
//   any order). fail/info reads are ignored.
//
// Order: event order (index) is the real-time order; "read R began after
// X" means R's invoke comes after event X. Reads are taken in the order
// they completed. The last read(s) play no special part: each element is
// judged by all the reads that began after it was known.
//
// Per element: it is added when its add completed ok, or when its add
// ended info (or never completed) and some ok read lists it; an info add
// never seen is indeterminate, a failed add never seen is ignored. Its
// known event K is the earlier of its add's ok and the completion of the
// first ok read listing it. Over the ok reads invoked after K:
// - "stable": every one lists it (also when none exists but it was seen);
// - "never-read": none exists and no read listed it (unknown for it);
// - "lost": some such read omits it and no read lists it after that: some
//   read was invoked after the last read listing it completed (or, never
//   listed, after K), and from then on no read lists it (the last read
//   included);
// - "stale": some such read omits it, but a read completing later lists it
//   again. Its staleness is the time from K to the invoke of the latest
//   such read that omits it (a lower bound of how long it was invisible).
// Anomalies of the reads themselves:
// - "unexpected": a read lists an element no add added (no add, or only a
//   failed one);
// - "duplicate": a read lists an element more than once.
//
// Verdict: unknown when the history is malformed (the summary names the
// line and the shape expected), when no read completed ok, or when no
// element could be judged (every added element never-read) and nothing is
// unexpected or duplicated; invalid on any lost, unexpected or duplicate
// element, and on a stale one when !options.allow_stale; valid otherwise
// (stale elements are reported). Summary e.g. "invalid: 3 of 200 added
// elements lost (first: 17, added ok at 4.200 s (event 30), last seen at
// 9.100 s (event 85), missing from the 12 reads invoked after that)".
//
// details_json:
//   {"reads":N, "adds":{"ok":N,"fail":N,"info":N}, "added":N,
//    "counts":{"stable":N,"lost":N,"stale":N,"never-read":N,
//              "indeterminate":N,"unexpected":N,"duplicate":N},
//    "longest_stale":T|null,   (ns, or events when a time is missing)
//    "examples":{"lost":[E...],"stale":[...],"never-read":[...],
//                "stable":[...],"unexpected":[U...],"duplicate":[D...]}}
// with up to max_examples per outcome, by known event: E = {"element":V,
//   "add":{"index","process","time"}|null, "add_outcome":"ok"|"info",
//   "known":ref, "first_seen":ref|null, "last_seen":ref|null,
//   "reads_after_known":N, "omitted_by":N, "missing_after_last_seen":N,
//   "stale_for":T|null, "last_omitted_by":ref|null}, U = {"element":V,
//   "why":"never added"|"add failed", "first_seen":ref, "reads":N}, D =
//   {"element":V, "read":ref, "reads":N} (refs name completion events,
//   "add" and "last_omitted_by" the invokes; "time" is ns or null).
// Pure; thread-safe on a const history. O(n + total size of the reads)
// expected time, memory O(number of elements + reads).
#pragma once

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers::collections {

inline constexpr char kSetChecker[] = "set";

struct SetOptions {
  // Stale elements (omitted, then listed again) are reported but allowed;
  // false makes them a violation (a linearizable set never shows them).
  bool allow_stale = true;
  int max_examples = 20;  // examples kept per outcome (all are counted); >= 1
};

Verdict CheckSet(const History& history, const SetOptions& options = {});

}  // namespace faultline::checkers::collections

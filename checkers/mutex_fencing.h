// The mutual-exclusion-with-fencing checker (checker name "mutex-fencing").
//
// Reads the lock vocabulary of docs/history-locks.md: `acquire`, `renew`,
// `release` on a lock (`key` = lock name; acquire's ok value is the fencing
// token, an int, or null), `resource-write` on a protected resource (`key` =
// resource name, value [token, value], invoke field "fenced": bool, fail with
// error "fenced" = rejected as stale), and, unless disabled, the election
// ops `campaign` (= acquire) and `resign` (= release). Other ops are only
// looked at for `info` (a crashed process holds nothing any more).
//
// What it computes, per lock:
// - Holds: the intervals in which a process definitely believed it held the
//   lock: from its acquire's ok to the invoke of its release (whatever the
//   release's outcome), of its next acquire of the same lock, of a renew
//   that failed, or of any of its operations that ended `info` (or never
//   completed); still open at the end of the history otherwise. An acquire
//   that ended `info` makes no hold.
// - Overlaps: pairs of holds of different processes that overlap in time.
//   Reported (both processes, lock, times), not a violation by themselves;
//   each kept example is judged unsafe or harmless (HoldOverlap).
// - Tokens: unique per lock, and increasing with the real-time order of
//   acquisitions: acquire A ok before acquire B invoked => token A < token B.
//   A duplicate or a regression is a violation.
// Per resource:
// - Fenced writes ("fenced": true; when the field is absent, a write is
//   fenced iff its token is an int): the resource must never accept (ok) a
//   write whose token is lower than one it had accepted (ok) before that
//   write was invoked. A violation.
// - Unfenced writes: each accepted write is attributed to the hold its
//   process had when it invoked it (the invoke's "lock" field names the
//   lock; without it, the process's current hold, or the history's only
//   lock). Corruption (a violation): holder A accepted a write invoked after
//   a newer holder B (acquired at or after A, while A still held it) had
//   acquired, and B's hold also has an accepted write to the resource.
// - Stale writes (reported, not a violation): fenced writes, accepted or
//   rejected as "fenced", whose token is lower than a token of their lock
//   granted (acquire ok) before they were invoked; how many the resource
//   rejected or accepted (allowed while it had not seen the newer token).
//
// Times: when every client event has `time`, times are ns from `time` and
// a completion and an invocation with equal times are concurrent; otherwise
// the event `index` stands in for time.
//
// Verdict: invalid on a token duplicate/regression, a stale write accepted
// by a fenced resource, or a corrupted unfenced resource; unknown when the
// history is malformed or no acquire (or campaign) completed ok (nothing was
// tested); valid otherwise, with overlaps noted.
//
// Complexity O(n log n) in the number of events. Pure; thread-safe on a
// const history.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/value.h"
#include "checkers/verdict.h"

namespace faultline::checkers {

inline constexpr char kMutexFencingChecker[] = "mutex-fencing";

struct MutexFencingOptions {
  // Treat `campaign` as acquire and `resign` as release (election
  // workloads); key = election name, campaign ok value = token.
  bool campaigns_as_holds = true;
  // Examples kept per anomaly kind (all are counted). >= 1.
  int max_examples = 10;
};

// One operation, as the checker saw it. Times per the header comment.
struct LockOpRef {
  std::int64_t index = -1;  // index of the invoke event
  std::int64_t process = 0;
  std::int64_t invoke = 0;    // time of the invoke
  std::int64_t complete = 0;  // time of the completion (== invoke if none)
  std::optional<std::int64_t> token;
};

struct Hold {
  Value lock;
  LockOpRef acquire;            // acquire (or campaign) that completed ok
  std::int64_t start = 0;       // == acquire.complete
  std::int64_t end = 0;         // history end when open
  bool open = false;            // no end event: held to the end of the history
  std::int64_t end_index = -1;  // index of the event that ended it
  std::string ended_by;  // "release", "acquire", "renew-fail", "info", "end"
};

struct HoldOverlap {
  Value lock;
  std::size_t first = 0;   // index into MutexFencingResult::holds (older)
  std::size_t second = 0;  // the newer hold
  std::int64_t start = 0;
  std::int64_t end = 0;
  // Unsafe when the two holds' tokens clash (equal, or the newer hold's
  // lower although its acquire was invoked after the older's completed) or
  // when a write of the older hold invoked after the newer hold began, or
  // of the newer hold during the overlap, is a stale accept or a corruption
  // (below); harmless otherwise. `why` says which, e.g. "the store rejected
  // p2's stale token 3" or "p2 wrote nothing after p4 acquired it".
  bool unsafe = false;
  std::string why;
};

struct TokenAnomaly {
  Value lock;
  bool duplicate = false;  // else: a regression
  LockOpRef earlier;       // completed (ok) before `later` was invoked,
                           // unless duplicate (then possibly concurrent)
  LockOpRef later;
};

// A fenced resource accepted `stale` although it had accepted `newer`
// (higher token) before `stale` was invoked.
struct StaleAccept {
  Value resource;
  LockOpRef newer;
  LockOpRef stale;
};

// An unfenced resource accepted `old_write` from the older hold after the
// newer hold's holder had acquired; `new_write` is an accepted write of the
// newer hold.
struct Corruption {
  Value resource;
  Value lock;
  std::size_t old_hold = 0;  // index into holds
  std::size_t new_hold = 0;
  LockOpRef old_write;
  LockOpRef new_write;
};

struct MutexFencingResult {
  bool timed = false;    // times are ns (else event indices)
  std::int64_t end = 0;  // time of the last event
  std::int64_t locks = 0;
  std::int64_t acquires_ok = 0;
  std::int64_t acquires_fail = 0;
  std::int64_t acquires_info = 0;  // includes never completed
  std::vector<Hold> holds;         // all holds, in the order of their acquires
  std::int64_t overlap_count = 0;  // overlapping pairs (different processes)
  std::int64_t overlap_time = 0;   // time with >= 2 holders, summed by lock
  std::optional<HoldOverlap> longest_overlap;
  std::vector<HoldOverlap> overlaps;  // first max_examples, by lock, start

  std::int64_t token_duplicates = 0;
  std::int64_t token_regressions = 0;
  std::vector<TokenAnomaly> token_anomalies;  // first max_examples

  std::int64_t resources = 0;
  std::int64_t writes_ok = 0;
  std::int64_t writes_rejected = 0;      // fail with error "fenced"
  std::int64_t writes_failed = 0;        // other fails
  std::int64_t writes_info = 0;          // includes never completed
  std::int64_t writes_unfenced_ok = 0;   // accepted unfenced writes
  std::int64_t writes_unattributed = 0;  // accepted unfenced, no hold
  std::int64_t stale_writes = 0;
  std::int64_t stale_rejected = 0;
  std::int64_t stale_accepted = 0;
  std::int64_t stale_accepts = 0;  // violations (fenced resource)
  std::vector<StaleAccept> stale_accept_examples;
  std::int64_t corruptions = 0;  // accepted writes that corrupted
  std::vector<Corruption> corruption_examples;

  std::string malformed;  // non-empty: the history broke the spec's rules
};

// Computes everything above. Never fails; a malformed history sets
// `malformed` and leaves the rest empty.
MutexFencingResult AnalyzeMutexFencing(const History& history,
                                       const MutexFencingOptions& options);

// The verdict of an analysis: summary is one line that leads with what was
// unsafe ("unsafe: fencing token 7 of \"lock\" was granted twice: to p3 at
// 4.200 s and to p5 at 4.310 s; 1 overlap of holds") or says that it was
// safe ("3 overlaps of holds, harmless (p4 and p7 both held \"lock\" from
// 12.300 s to 13.100 s: the store rejected p4's stale token 3), all 5 stale
// writes rejected by fencing: safe"); the explanation's first lines are the
// unsafe findings ("unsafe: ..."), then each kept overlap worded as unsafe
// or harmless, then the counts; details_json is
//   {"timed":B, "locks":N, "acquires":{"ok":N,"fail":N,"info":N},
//    "holds":N, "overlaps":{"count":N,"time":T,"examples":[overlap...]},
//    "tokens":{"duplicates":N,"regressions":N,"examples":[...]},
//    "writes":{"resources":N,"ok":N,"rejected":N,"failed":N,"info":N,
//              "unfenced_ok":N,"unattributed":N,"stale":N,"stale_rejected":N,
//              "stale_accepted":N},
//    "stale_accepts":{"count":N,"examples":[...]},
//    "corruptions":{"count":N,"examples":[...]}, "reason":"..."}
// where an overlap is {"lock","first":hold,"second":hold,"start","end",
// "unsafe":B,"why":"..."}, a
// hold {"process","token","start","end","open","acquire_index",
// "end_index","ended_by"} and an op {"index","process","invoke",
// "complete","token"}.
Verdict MutexFencingVerdict(const MutexFencingResult& result);

// AnalyzeMutexFencing + MutexFencingVerdict.
Verdict CheckMutexFencing(const History& history,
                          const MutexFencingOptions& options = {});

}  // namespace faultline::checkers

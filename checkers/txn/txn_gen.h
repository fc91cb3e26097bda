// A seeded generator of small list-append and rw-register histories for the
// differential test of the transactional checkers (reference_test.cpp).
//
// It simulates a real execution: transactions are invoked on processes (at
// most one outstanding per process), each committed transaction takes
// effect atomically at one instant between its invocation and completion,
// and its reads record the state at that instant, so the history is
// strict-serializable by construction. Fail transactions take no effect;
// info transactions may or may not, possibly after their info event, and
// some never complete (their process then continues under a fresh id, as
// Jepsen's does). Values are unique per key (one counter).
//
// One anomaly of a chosen class may then be injected. Each is meant to make
// the history invalid for a known reason, but some injections happen to
// leave it valid under some model (e.g. a stale read in a read-only
// transaction may still be serializable): callers must decide the verdict
// with the reference (txn_reference.h), not assume it.
//
// Deterministic: the same options give the same history.
// Thread-safety: pure; reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "checkers/history.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {

enum class Injection : std::uint8_t {
  kNone,
  kStaleRead,         // a read's result replaced by an older state of its key
  kAbortedRead,       // a fail txn's write visible to later reads (G1a)
  kIntermediateRead,  // only the first of a txn's two writes visible (G1b)
  kInternal,          // a txn's later read disagrees with its earlier ops
  kReorder,           // two reads showing incompatible version orders
  kGarbage,           // a read showing a value nobody wrote
  kWriteSkew,         // two concurrent txns each miss the other's write
  kRealtime,          // a read-only txn reads a snapshot from before a
                      // write that completed before it began
};
inline constexpr int kInjectionCount = 9;

std::string_view ToString(Injection i);  // "none", "stale-read", ...

struct GenOptions {
  Workload workload = Workload::kListAppend;
  std::uint64_t seed = 1;
  int txns = 5;            // >= 1
  int processes = 3;       // >= 1 (kWriteSkew uses at least 2)
  int keys = 2;            // >= 1 (kWriteSkew uses at least 2)
  int max_mops = 3;        // micro-ops per txn: 1..max_mops (>= 1)
  double info_rate = 0.1;  // share of txns that end info / never complete
  double fail_rate = 0.1;  // share of txns that fail
  Injection injection = Injection::kNone;
};

struct GenResult {
  History history;
  // False when the history had no place for the injection (e.g. no read to
  // make stale): the history is then the uninjected one.
  bool injected = false;
  std::string note;  // what was injected, for failure messages
};

GenResult GenerateTxnHistory(const GenOptions& options);

}  // namespace faultline::checkers::txn

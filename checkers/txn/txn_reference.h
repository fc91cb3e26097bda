// A brute-force reference for the transactional checkers (checkers/txn/
// txn.h): decides strict serializability and serializability of a small
// list-append or rw-register history by searching for a serial order, with
// no dependency graph. The differential test (reference_test.cpp) compares
// CheckListAppend / CheckRwRegister against it.
//
// Semantics. Every ok transaction commits and every fail transaction does
// not; each info or never-completed transaction may or may not commit (the
// search chooses). A history satisfies the model iff some choice and some
// order of the committed transactions, executed one at a time, makes every
// read of every ok transaction return what it recorded:
//   list-append: keys start as []; ["append", k, v] pushes v back;
//                ["r", k, l] must read the whole list l (null counts as []).
//   rw-register: keys start as null; ["w", k, v] sets k; ["r", k, v] must
//                read v (null: never written).
// Reads of info / never-completed transactions are unknown and not checked.
// Strict serializability also requires the order to respect real time: if
// A's completion precedes B's invocation in the history, A comes before B
// (info and never-completed transactions have no completion, so nothing is
// forced after them). Process order is not part of either model.
//
// The search places transactions one by one with early failure at the first
// mismatched read, and memoizes failed (placed set, state) pairs; histories
// of up to a dozen transactions are checked in well under a millisecond.
//
// Thread-safety: pure; reentrant.
#pragma once

#include <cstdint>
#include <string>

#include "checkers/history.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {

struct ReferenceOptions {
  // Histories with more candidate transactions (ok plus info/never-
  // completed ones that write) are refused (error set).
  int max_txns = 24;
  // Search nodes (placements tried) before giving up (gave_up set).
  std::uint64_t max_steps = 20'000'000;
};

struct ReferenceResult {
  // Non-empty when the history could not be read as transactions of the
  // workload (the event and why), or was too large: nothing else is valid.
  std::string error;
  // Set when max_steps stopped the search: the booleans mean nothing.
  bool gave_up = false;
  bool strict_serializable = false;
  bool serializable = false;
  std::uint64_t steps = 0;  // placements tried, both searches together
};

ReferenceResult CheckTxnReference(const History& history, Workload workload,
                                  const ReferenceOptions& options = {});

}  // namespace faultline::checkers::txn

// The transactional workloads list-append and rw-register
// (docs/transactions.md). Every operation is a transaction: f "txn", value
// a list of 1..n micro-ops, each [f, key, value]:
//   list-append: ["append", k, v] appends v to key k's list; ["r", k, null]
//                reads the whole list (the client fills in the list read)
//   rw-register: ["w", k, v] writes v; ["r", k, null] reads (filled in)
// A transaction has min_txn_length..max_txn_length micro-ops (uniform); each
// is a read or a write with the mix's read and write weights. Keys are
// integers. `keys` of them are in use at a time, chosen by key_dist:
//   uniform      every key alike
//   exponential  key slot i weighs 100^(-i / keys): the first slot is about
//                100 times as likely as the last
//   hot          a tenth of the slots (at least one) get 90 % of accesses
// Each slot moves to a fresh key after about max_writes_per_key writes to
// it (all workers together), so lists stay short and every key's version
// order is recoverable: a worker's slot i in generation g is key
// g * keys + i, and a worker moves to the next generation after
// `period` of its own transactions, where period is the number of
// transactions after which a slot has received max_writes_per_key writes
// from `concurrency` workers in expectation. Workers that fall behind use an
// older generation for a while, which is harmless.
//
// Written values are unique per history: worker w's n-th write is
// n * concurrency + w + 1. The generator is pure and seeded.
//
// The target's client is opened with the workload's name as its kind
// ("list-append" or "rw-register"). Checked by checkers/txn/txn.h against
// workload.consistency_model, plus stats.
#pragma once

#include <memory>

#include "harness/config/spec.h"
#include "harness/interfaces/workload.h"

namespace faultline::workloads {

std::unique_ptr<harness::Workload> MakeListAppendWorkload(
    const harness::WorkloadSpec& spec);
std::unique_ptr<harness::Workload> MakeRwRegisterWorkload(
    const harness::WorkloadSpec& spec);

}  // namespace faultline::workloads

// The collection workloads set, bank and counter (docs/collections.md),
// after Jepsen's tests of the same names. Each worker draws a read with the
// mix's read weight and an update (add or transfer) with its write weight;
// cas is not used. The generators are pure and seeded.
//
//   set      f "add", value a unique integer (worker w's n-th add is
//            n * concurrency + w + 1); f "read", value null, ok value the
//            whole set as a list. Checked by the set checker
//            (checkers/collections/set.h).
//   bank     f "transfer", value {"from": A, "to": B, "amount": N} with
//            A != B drawn from 0..accounts-1 and N from 1..max_transfer;
//            f "read", value null, ok value {"0": balance, ...} for every
//            account. The client initialises the accounts to
//            total/accounts each (the remainder on account 0) once, before
//            any transfer. Checked by the bank checker with the configured
//            total and the account names "0".."accounts-1".
//   counter  f "add", value an increment from 1..5; f "read", value null,
//            ok value the counter. Checked by the counter checker (initial
//            value 0).
//
// Each has one final read (after the final heal, retried until ok), so
// every run ends with a read of the recovered system. Every verdict list
// ends with the stats checker's. The target's client is opened with the
// workload's name as its kind.
#pragma once

#include <memory>

#include "harness/config/spec.h"
#include "harness/interfaces/workload.h"

namespace faultline::workloads {

std::unique_ptr<harness::Workload> MakeSetWorkload(
    const harness::WorkloadSpec& spec);
std::unique_ptr<harness::Workload> MakeBankWorkload(
    const harness::WorkloadSpec& spec);
std::unique_ptr<harness::Workload> MakeCounterWorkload(
    const harness::WorkloadSpec& spec);

}  // namespace faultline::workloads

// A brute-force linearizability checker, the oracle of the differential
// test. It shares nothing with the real checker but the models: it pairs
// events itself, does no pruning, no partitioning (the state is the map of
// all keys) and no quiescent splitting, and enumerates linearization orders
// depth-first (memoizing only exact (done set, full state) pairs).
//
// Only for small histories: at most 62 operations, exponential time.
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers {

struct ReferenceResult {
  Validity validity = Validity::kUnknown;  // kUnknown only with `error`
  std::string error;  // malformed history, unknown model, too many ops
};

ReferenceResult CheckReference(const History& history, std::string_view model);

}  // namespace faultline::checkers

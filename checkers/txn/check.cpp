// CheckListAppend and CheckRwRegister (checkers/txn/txn.h): inference, then
// analysis.
#include <utility>

#include "checkers/txn/txn.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

Limits LimitsOf(const TxnOptions& options) {
  return Limits{options.deadline, options.memory_limit_bytes};
}

}  // namespace

Verdict CheckListAppend(const History& history, const TxnOptions& options) {
  return Analyze(InferListAppend(history, LimitsOf(options)), options);
}

Verdict CheckRwRegister(const History& history, const TxnOptions& options) {
  return Analyze(InferRwRegister(history, LimitsOf(options)), options);
}

}  // namespace faultline::checkers::txn

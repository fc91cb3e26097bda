// TxnHistoryBuilder, CheckListAppend and CheckRwRegister
// (checkers/txn/txn.h): extraction (one event at a time), inference, then
// analysis. The History entry points feed a builder, so both paths give
// the same verdicts.
#include <memory>
#include <utility>

#include "checkers/txn/txn.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

Limits LimitsOf(const TxnOptions& options) {
  return Limits{options.deadline, options.memory_limit_bytes,
                options.memory_in_use ? &options.memory_in_use : nullptr};
}

Verdict CheckHistory(const History& history, Workload workload,
                     const TxnOptions& options) {
  TxnHistoryBuilder builder(workload);
  builder.Reserve(history.size());
  for (const Event& e : history) {
    builder.Add(e);
    if (builder.failed()) break;
  }
  return builder.Finish(options);
}

}  // namespace

TxnHistoryBuilder::TxnHistoryBuilder(Workload workload)
    : extractor_(std::make_unique<TxnExtractor>(workload)) {}
TxnHistoryBuilder::~TxnHistoryBuilder() = default;
TxnHistoryBuilder::TxnHistoryBuilder(TxnHistoryBuilder&&) noexcept = default;
TxnHistoryBuilder& TxnHistoryBuilder::operator=(TxnHistoryBuilder&&) noexcept =
    default;

void TxnHistoryBuilder::Reserve(std::size_t events) {
  extractor_->Reserve(events);
}

void TxnHistoryBuilder::Add(const Event& e) { extractor_->Add(e); }

std::size_t TxnHistoryBuilder::events() const { return extractor_->events(); }

bool TxnHistoryBuilder::failed() const { return extractor_->failed(); }

Verdict TxnHistoryBuilder::Finish(const TxnOptions& options) {
  const Workload workload = extractor_->workload();
  ExtractResult extracted = extractor_->Take();
  Inference inf =
      workload == Workload::kListAppend
          ? InferListAppend(std::move(extracted), LimitsOf(options))
          : InferRwRegister(std::move(extracted), LimitsOf(options));
  return Analyze(std::move(inf), options);
}

Verdict CheckListAppend(const History& history, const TxnOptions& options) {
  return CheckHistory(history, Workload::kListAppend, options);
}

Verdict CheckRwRegister(const History& history, const TxnOptions& options) {
  return CheckHistory(history, Workload::kRwRegister, options);
}

}  // namespace faultline::checkers::txn

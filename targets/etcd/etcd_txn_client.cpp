#include "targets/etcd/etcd_txn_client.h"

#include <chrono>
#include <exception>
#include <utility>

#include "targets/etcd/gateway.h"
#include "targets/etcd/http.h"
#include "targets/etcd/reply.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Done;
using harness::Operation;
using harness::Outcome;
using Clock = std::chrono::steady_clock;

}  // namespace

EtcdTxnClient::EtcdTxnClient(EtcdClientOptions options, TxnWorkload workload)
    : options_(std::move(options)),
      workload_(workload),
      txn_url_("http://" + options_.ip + ":" + std::to_string(options_.port) +
               "/v3/kv/txn"),
      http_(std::make_unique<HttpSession>()) {}

EtcdTxnClient::~EtcdTxnClient() = default;

Completion EtcdTxnClient::Invoke(const Operation& op) noexcept {
  try {
    if (op.f != "txn") {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    return Txn(op);
  } catch (const std::exception& e) {
    // The write txn may have been sent.
    return Done(Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    return Done(Outcome::kInfo, op.value, "exception");
  }
}

Completion EtcdTxnClient::Txn(const Operation& op) {
  auto plan = PlanTxn(op.value, workload_);
  if (!plan) return Done(Outcome::kFail, op.value, plan.error());
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  auto remaining_ms = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - Clock::now())
                          .count();
    return static_cast<long>(left < 1 ? 1 : left);
  };

  // 1. The snapshot read (skipped by a blind-write-only transaction).
  std::vector<TxnKeyState> states;
  if (!plan->depends.empty()) {
    HttpReply reply = http_->Post(
        txn_url_, ReadRequest(plan->depends, options_.serializable_reads),
        remaining_ms());
    if (!Answered(reply)) {
      return Done(Outcome::kFail, op.value, "read: " + WhyUnanswered(reply));
    }
    auto parsed = ParseReadReply(reply.body, plan->depends);
    if (!parsed) return Done(Outcome::kFail, op.value, parsed.error());
    states = std::move(*parsed);
  }
  // 2. The micro-ops against the snapshot.
  auto eval = Evaluate(*plan, workload_, states);
  if (!eval) return Done(Outcome::kFail, op.value, eval.error());
  if (plan->writes.empty()) return Done(Outcome::kOk, eval->completed);

  // 3. The write txn, guarded by what the snapshot showed.
  HttpReply reply = http_->Post(
      txn_url_, WriteRequest(*plan, states, eval->puts), remaining_ms());
  if (!Answered(reply)) {
    const Outcome o = reply.transport == Transport::kRefused ? Outcome::kFail
                                                             : Outcome::kInfo;
    return Done(o, op.value, "write: " + WhyUnanswered(reply));
  }
  auto txn = ParseTxnReply(reply.body);
  if (!txn) return Done(Outcome::kInfo, op.value, txn.error());
  if (!txn->succeeded) return Done(Outcome::kFail, op.value, "conflict");
  return Done(Outcome::kOk, eval->completed);
}

}  // namespace faultline::targets::etcd

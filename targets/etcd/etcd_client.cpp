#include "targets/etcd/etcd_client.h"

#include <exception>
#include <utility>

#include "targets/etcd/gateway.h"
#include "targets/etcd/http.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;

Completion Done(Outcome type, Value value, std::string error = "") {
  Completion c;
  c.type = type;
  c.value = std::move(value);
  c.error = std::move(error);
  return c;
}

// The outcome of a request that did not produce a usable 200 reply, for an
// operation that may have side effects (write, cas).
Completion Indeterminate(const HttpReply& reply, const Value& arg) {
  switch (reply.transport) {
    case Transport::kRefused:
      return Done(Outcome::kFail, arg, "connection-refused");
    case Transport::kTimeout:
      return Done(Outcome::kInfo, arg, "timeout");
    case Transport::kOther:
      return Done(Outcome::kInfo, arg, "transport: " + reply.error);
    case Transport::kOk:
      break;
  }
  return Done(
      Outcome::kInfo, arg,
      "http " + std::to_string(reply.status) + ": " + ErrorSummary(reply.body));
}

// Same, for a read: nothing can have happened, so it is always `fail`.
Completion ReadFailed(const HttpReply& reply, const Value& arg) {
  Completion c = Indeterminate(reply, arg);
  c.type = Outcome::kFail;
  return c;
}

}  // namespace

EtcdClient::EtcdClient(EtcdClientOptions options)
    : options_(std::move(options)),
      base_url_("http://" + options_.ip + ":" + std::to_string(options_.port) +
                "/v3/kv/"),
      http_(std::make_unique<HttpSession>()) {}

EtcdClient::~EtcdClient() = default;

Completion EtcdClient::Invoke(const Operation& op) noexcept {
  try {
    if (op.f == "read") return Read(op);
    if (op.f == "write") return Write(op);
    if (op.f == "cas") return Cas(op);
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  } catch (const std::exception& e) {
    // Whatever happened, the request may have been sent.
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                "exception");
  }
}

Completion EtcdClient::Read(const Operation& op) {
  auto key = RegisterKey(op.key);
  if (!key) return Done(Outcome::kFail, op.value, key.error());
  HttpReply reply = http_->Post(base_url_ + "range",
                                RangeRequest(*key, options_.serializable_reads),
                                options_.op_timeout_ms);
  if (reply.transport != Transport::kOk || reply.status != 200) {
    return ReadFailed(reply, op.value);
  }
  auto range = ParseRangeReply(reply.body);
  if (!range) return Done(Outcome::kFail, op.value, range.error());
  if (!range->found) return Done(Outcome::kOk, Value::Null());
  return Done(Outcome::kOk, DecodeRegisterValue(range->value));
}

Completion EtcdClient::Write(const Operation& op) {
  auto key = RegisterKey(op.key);
  if (!key) return Done(Outcome::kFail, op.value, key.error());
  HttpReply reply = http_->Post(base_url_ + "put",
                                PutRequest(*key, EncodeRegisterValue(op.value)),
                                options_.op_timeout_ms);
  if (reply.transport != Transport::kOk || reply.status != 200) {
    return Indeterminate(reply, op.value);
  }
  auto put = ParsePutReply(reply.body);
  if (!put) return Done(Outcome::kInfo, op.value, put.error());
  return Done(Outcome::kOk, op.value);
}

Completion EtcdClient::Cas(const Operation& op) {
  auto key = RegisterKey(op.key);
  if (!key) return Done(Outcome::kFail, op.value, key.error());
  if (!op.value.is_list() || op.value.as_list().size() != 2) {
    return Done(Outcome::kFail, op.value, "cas value must be [expected, new]");
  }
  const Value& expected = op.value.as_list()[0];
  const Value& desired = op.value.as_list()[1];
  std::optional<std::string> expected_text;
  if (!expected.is_null()) expected_text = EncodeRegisterValue(expected);
  HttpReply reply =
      http_->Post(base_url_ + "txn",
                  CasRequest(*key, expected_text, EncodeRegisterValue(desired)),
                  options_.op_timeout_ms);
  if (reply.transport != Transport::kOk || reply.status != 200) {
    return Indeterminate(reply, op.value);
  }
  auto txn = ParseTxnReply(reply.body);
  if (!txn) return Done(Outcome::kInfo, op.value, txn.error());
  if (!txn->succeeded) return Done(Outcome::kFail, op.value, "mismatch");
  return Done(Outcome::kOk, op.value);
}

}  // namespace faultline::targets::etcd

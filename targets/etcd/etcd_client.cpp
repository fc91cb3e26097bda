#include "targets/etcd/etcd_client.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <thread>
#include <utility>

#include "targets/etcd/gateway.h"
#include "targets/etcd/http.h"
#include "targets/etcd/reply.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;

using harness::Done;

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

// The lease id in hex, as etcd's own lock keys spell it.
std::string Hex(std::int64_t id) {
  char buf[24];
  auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, static_cast<std::uint64_t>(id), 16);
  (void)ec;
  return std::string(buf, end);
}

using Clock = std::chrono::steady_clock;

long MillisUntil(Clock::time_point t) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now())
          .count());
}

}  // namespace

EtcdClient::EtcdClient(EtcdClientOptions options)
    : options_(std::move(options)),
      root_url_("http://" + options_.ip + ":" + std::to_string(options_.port) +
                "/v3/"),
      base_url_(root_url_ + "kv/"),
      http_(std::make_unique<HttpSession>()) {}

EtcdClient::~EtcdClient() = default;

Completion EtcdClient::Invoke(const Operation& op) noexcept {
  try {
    if (op.f == "read") return Read(op);
    if (op.f == "write") return Write(op);
    if (op.f == "cas") return Cas(op);
    if (op.f == "acquire") return Acquire(op);
    if (op.f == "renew") return Renew(op);
    if (op.f == "release") return Release(op);
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
  auto range = ParseRangeReply(reply.body, *key);
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

Completion EtcdClient::Acquire(const Operation& op) {
  auto prefix = LockPrefix(op.key);
  if (!prefix) return Done(Outcome::kFail, op.value, prefix.error());
  const std::int64_t ttl_ms =
      op.value.is_int() ? op.value.as_int() : options_.lock_ttl_ms;
  if (ttl_ms <= 0) return Done(Outcome::kFail, op.value, "ttl must be > 0");
  const auto until =
      Clock::now() + std::chrono::milliseconds(options_.acquire_timeout_ms);
  const std::string& name = op.key.as_string();
  if (auto old = holds_.find(name); old != holds_.end()) {
    RevokeQuietly(old->second.lease);  // a hold never released
    holds_.erase(old);
  }
  // 1. The lease. Whatever happens to it, no key holds the lock yet.
  HttpReply grant = http_->Post(root_url_ + "lease/grant",
                                LeaseGrantRequest((ttl_ms + 999) / 1000),
                                options_.op_timeout_ms);
  if (!Answered(grant)) {
    Completion c = Indeterminate(grant, op.value);
    c.type = Outcome::kFail;
    c.error = "lease grant: " + c.error;
    return c;
  }
  auto lease = ParseLeaseGrantReply(grant.body);
  if (!lease) return Done(Outcome::kFail, op.value, lease.error());
  Hold h;
  h.lease = lease->id;
  h.ttl_s = lease->ttl_s;
  h.key = *prefix + Hex(h.lease);
  // 2. The key, in the queue of the lock.
  HttpReply put =
      http_->Post(base_url_ + "put", PutWithLeaseRequest(h.key, "", h.lease),
                  options_.op_timeout_ms);
  if (!Answered(put) || !ParseHeaderRevision(put.body).ok()) {
    Completion c = Answered(put)
                       ? Done(Outcome::kInfo, op.value, "unexpected reply")
                       : Indeterminate(put, op.value);
    c.error = "put: " + c.error;
    RevokeQuietly(h.lease);
    return c;
  }
  // 3. Our turn.
  Completion c = AwaitTurn(op, *prefix, h, until);
  if (c.type == Outcome::kOk) holds_[name] = h;
  return c;
}

Completion EtcdClient::AwaitTurn(const Operation& op, const std::string& prefix,
                                 Hold& h, Clock::time_point until) {
  const auto keepalive_every =
      std::chrono::milliseconds(std::max<std::int64_t>(1, h.ttl_s) * 1000 / 3);
  auto next_keepalive = Clock::now() + keepalive_every;
  std::string last = "no answer";
  for (;;) {
    const long left = MillisUntil(until);
    HttpReply r =
        http_->Post(base_url_ + "range", PrefixKeysRequest(prefix),
                    std::max(1L, std::min(options_.op_timeout_ms, left)));
    if (Answered(r)) {
      auto keys = ParseKeysReply(r.body);
      if (keys) {
        auto mine =
            std::find_if(keys->begin(), keys->end(),
                         [&](const KeyRevision& k) { return k.key == h.key; });
        if (mine == keys->end()) {
          RevokeQuietly(h.lease);
          return Done(Outcome::kFail, op.value, "lease-expired");
        }
        if (mine == keys->begin()) {
          h.token = mine->create_revision;
          return Confirm(op, h);
        }
        last = std::to_string(mine - keys->begin()) + " ahead";
      } else {
        last = keys.error();
      }
    } else {
      last = Indeterminate(r, op.value).error;
    }
    if (MillisUntil(until) <= 0) break;
    if (Clock::now() >= next_keepalive) {
      next_keepalive = Clock::now() + keepalive_every;
      HttpReply ka = http_->Post(
          root_url_ + "lease/keepalive", LeaseIdRequest(h.lease),
          std::max(1L, std::min(options_.op_timeout_ms, MillisUntil(until))));
      auto alive = Answered(ka) ? ParseKeepAliveReply(ka.body)
                                : harness::Result<LeaseReply>(
                                      harness::Fail("keepalive: no answer"));
      if (alive && alive->ttl_s <= 0) {
        return Done(Outcome::kFail, op.value, "lease-expired");
      }
    }
    const long sleep_ms = std::min(options_.lock_poll_ms, MillisUntil(until));
    if (sleep_ms > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    }
  }
  RevokeQuietly(h.lease);  // leave the queue: we may have been first by now
  return Done(Outcome::kInfo, op.value,
              "timeout waiting for the lock (" + last + ")");
}

Completion EtcdClient::Confirm(const Operation& op, const Hold& h) {
  // The range that showed our key first may have been answered late (a
  // member paused after the read was confirmed answers when it resumes),
  // after the lease expired. A keepalive proves the lease is alive now
  // and starts the hold with a full TTL.
  HttpReply r = http_->Post(root_url_ + "lease/keepalive",
                            LeaseIdRequest(h.lease), options_.op_timeout_ms);
  auto alive = Answered(r) ? ParseKeepAliveReply(r.body)
                           : harness::Result<LeaseReply>(harness::Fail(
                                 Indeterminate(r, op.value).error));
  if (alive && alive->ttl_s > 0) return Done(Outcome::kOk, Value::Int(h.token));
  RevokeQuietly(h.lease);
  if (alive) return Done(Outcome::kFail, op.value, "lease-expired");
  return Done(Outcome::kInfo, op.value,
              "keepalive after acquire: " + alive.error());
}

Completion EtcdClient::Renew(const Operation& op) {
  auto it = op.key.is_string() ? holds_.find(op.key.as_string()) : holds_.end();
  if (it == holds_.end() || !op.value.is_int() ||
      it->second.token != op.value.as_int()) {
    return Done(Outcome::kFail, op.value, "not-held");
  }
  HttpReply r =
      http_->Post(root_url_ + "lease/keepalive",
                  LeaseIdRequest(it->second.lease), options_.op_timeout_ms);
  if (!Answered(r)) {
    Completion c = Indeterminate(r, op.value);
    c.type = Outcome::kInfo;  // even refused: the lease may be gone or not
    return c;
  }
  auto alive = ParseKeepAliveReply(r.body);
  if (!alive) return Done(Outcome::kInfo, op.value, alive.error());
  if (alive->ttl_s <= 0) {
    holds_.erase(it);
    return Done(Outcome::kFail, op.value, "lease-expired");
  }
  return Done(Outcome::kOk, op.value);
}

Completion EtcdClient::Release(const Operation& op) {
  auto it = op.key.is_string() ? holds_.find(op.key.as_string()) : holds_.end();
  if (it == holds_.end() || !op.value.is_int() ||
      it->second.token != op.value.as_int()) {
    return Done(Outcome::kFail, op.value, "not-held");
  }
  const Hold h = it->second;
  holds_.erase(it);
  HttpReply r = http_->Post(base_url_ + "deleterange", DeleteRequest(h.key),
                            options_.op_timeout_ms);
  Completion c;
  if (!Answered(r)) {
    c = Indeterminate(r, op.value);
    c.type = Outcome::kInfo;  // even refused: the lock is still held
  } else if (auto deleted = ParseDeleteReply(r.body); !deleted) {
    c = Done(Outcome::kInfo, op.value, deleted.error());
  } else if (*deleted == 0) {
    c = Done(Outcome::kFail, op.value, "not-held");
  } else {
    c = Done(Outcome::kOk, op.value);
  }
  RevokeQuietly(h.lease);
  return c;
}

void EtcdClient::RevokeQuietly(std::int64_t lease) {
  (void)http_->Post(root_url_ + "lease/revoke", LeaseIdRequest(lease),
                    options_.op_timeout_ms);
}

}  // namespace faultline::targets::etcd

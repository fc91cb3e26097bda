#include "targets/redis/redis_client.h"

#include <algorithm>
#include <exception>
#include <random>
#include <utility>

#include "targets/etcd/gateway.h"  // the register value encoding
#include "targets/redis/redis_proto.h"

namespace faultline::targets::redis {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;
using raftkv::CallError;
using raftkv::CallResult;
using raftkv::RespConn;

// Each sentinel question gets at most this long, so one unreachable
// sentinel leaves time for the others.
constexpr auto kSentinelTimeout = std::chrono::milliseconds(400);

using harness::Done;

std::string Shorten(std::string s) {
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

// The outcome of an update whose call got no reply.
Completion Unanswered(const CallResult& r, const Value& arg) {
  if (r.error == CallError::kConnect || !r.sent) {
    return Done(Outcome::kFail, arg, Shorten(r.detail));
  }
  if (r.error == CallError::kTimeout) {
    return Done(Outcome::kInfo, arg, "timeout");
  }
  return Done(Outcome::kInfo, arg,
              std::string(raftkv::ToString(r.error)) + ": " + r.detail);
}

// The outcome of an update answered with an error reply.
Completion ErrorReply(const resp::Value& v, const Value& arg) {
  if (NoEffect(ErrorCode(v.str))) {
    return Done(Outcome::kFail, arg, Shorten(v.str));
  }
  return Done(Outcome::kInfo, arg, Shorten(v.str));
}

}  // namespace

RedisClient::RedisClient(RedisClientOptions options)
    : options_(std::move(options)) {
  for (const std::string& ip : options_.sentinels) {
    sentinels_.push_back(std::make_unique<RespConn>(ip, kSentinelPort));
  }
  std::random_device rd;
  std::uint64_t id = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[24];
  snprintf(buf, sizeof buf, "c%016llx", static_cast<unsigned long long>(id));
  owner_ = buf;
}

RedisClient::~RedisClient() = default;

std::string RedisClient::KeyFor(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kNull:
      return "r/_";
    case Value::Kind::kString:
      return "r/" + key.as_string();
    case Value::Kind::kInt:
      return "r/" + std::to_string(key.as_int());
    default:
      return "";
  }
}

std::string RedisClient::Discover(Clock::time_point deadline) {
  primary_.reset();
  std::string why;
  for (auto& sentinel : sentinels_) {
    if (Clock::now() >= deadline) break;
    const auto until = std::min(deadline, Clock::now() + kSentinelTimeout);
    CallResult r = sentinel->Call(
        {"SENTINEL", "get-master-addr-by-name", kMasterName}, until);
    const std::string who = "sentinel " + sentinel->host();
    if (r.error != CallError::kNone) {
      why += who + ": " + raftkv::ToString(r.error) + "; ";
      continue;
    }
    auto addr = ParseMasterAddr(r.reply);
    if (!addr) {
      why += who + ": no primary; ";
      continue;
    }
    auto conn = std::make_unique<RespConn>(addr->host, addr->port);
    CallResult role = conn->Call({"ROLE"}, deadline);
    if (role.error != CallError::kNone) {
      why += who + " names " + addr->host + ", " +
             raftkv::ToString(role.error) + "; ";
      continue;
    }
    if (ParseRole(role.reply).role != "master") {
      why += who + " names " + addr->host + ", which is not master; ";
      continue;
    }
    primary_ = std::move(conn);
    return "";
  }
  if (why.empty()) why = "deadline passed";
  return why;
}

CallResult RedisClient::Call(const Command& command, Clock::time_point deadline,
                             bool may_switch) {
  CallResult r;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!primary_) {
      std::string why = may_switch ? Discover(deadline) : "primary lost";
      if (!why.empty()) {
        r = CallResult{};
        r.error = CallError::kConnect;
        r.sent = false;
        r.detail = "no primary: " + why;
        return r;
      }
    }
    r = primary_->Call(command, deadline);
    if (r.error != CallError::kNone) {
      primary_.reset();
      if (may_switch && attempt == 0 &&
          (r.error == CallError::kConnect || !r.sent)) {
        continue;
      }
      return r;
    }
    if (r.reply.kind == resp::Value::Kind::kError &&
        Rediscover(ErrorCode(r.reply.str))) {
      primary_.reset();
      if (may_switch && attempt == 0) continue;
    }
    return r;
  }
  return r;
}

Completion RedisClient::Invoke(const Operation& op) noexcept {
  try {
    if (op.f == "read") return Read(op);
    if (op.f == "acquire" || op.f == "renew" || op.f == "release") {
      return Lock(op);
    }
    const std::string key = KeyFor(op.key);
    if (key.empty()) {
      return Done(Outcome::kFail, op.value,
                  "unsupported key " + op.key.ToJson());
    }
    if (op.f == "write") {
      return Update(op, {"SET", key, etcd::EncodeRegisterValue(op.value)});
    }
    if (op.f == "cas") {
      if (!op.value.is_list() || op.value.as_list().size() != 2) {
        return Done(Outcome::kFail, op.value,
                    "cas value must be [expected, new]");
      }
      const Value& expected = op.value.as_list()[0];
      const bool absent = expected.is_null();
      return Update(op, {"EVAL", kCasScript, "1", key,
                         absent ? "" : etcd::EncodeRegisterValue(expected),
                         etcd::EncodeRegisterValue(op.value.as_list()[1]),
                         absent ? "1" : "0"});
    }
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  } catch (const std::exception& e) {
    primary_.reset();
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    primary_.reset();
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                "exception");
  }
}

Completion RedisClient::Read(const Operation& op) {
  const std::string key = KeyFor(op.key);
  if (key.empty()) {
    return Done(Outcome::kFail, op.value, "unsupported key " + op.key.ToJson());
  }
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  CallResult r = Call({"EVAL", kReadScript, "1", key}, deadline, true);
  if (r.error == CallError::kTimeout) {
    return Done(Outcome::kInfo, op.value, "timeout");
  }
  if (r.error != CallError::kNone) {
    return Done(
        Outcome::kFail, op.value,
        std::string(raftkv::ToString(r.error)) + ": " + Shorten(r.detail));
  }
  switch (r.reply.kind) {
    case resp::Value::Kind::kNull:
      return Done(Outcome::kOk, Value::Null());
    case resp::Value::Kind::kBulk:
      return Done(Outcome::kOk, etcd::DecodeRegisterValue(r.reply.str));
    case resp::Value::Kind::kError:
      return Done(Outcome::kFail, op.value, Shorten(r.reply.str));
    default:
      primary_.reset();
      return Done(Outcome::kFail, op.value, "unexpected reply to the read");
  }
}

Completion RedisClient::Update(const Operation& op, const Command& command) {
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  CallResult r = Call(command, deadline, true);
  if (r.error != CallError::kNone) return Unanswered(r, op.value);
  const resp::Value& v = r.reply;
  if (v.kind == resp::Value::Kind::kError) return ErrorReply(v, op.value);
  if (command[0] == "SET" && v.kind == resp::Value::Kind::kSimple &&
      v.str == "OK") {
    return Done(Outcome::kOk, op.value);
  }
  if (command[0] == "EVAL" && v.kind == resp::Value::Kind::kInteger) {
    if (v.integer == 1) return Done(Outcome::kOk, op.value);
    if (v.integer == 0) return Done(Outcome::kFail, op.value, "mismatch");
  }
  primary_.reset();  // out of step with the server: start afresh
  return Done(Outcome::kInfo, op.value, "unexpected reply");
}

Completion RedisClient::Lock(const Operation& op) {
  std::string name;
  if (op.key.is_string()) {
    name = op.key.as_string();
  } else if (op.key.is_int()) {
    name = std::to_string(op.key.as_int());
  }
  if (name.empty()) {
    return Done(Outcome::kFail, op.value,
                "unsupported lock name " + op.key.ToJson());
  }
  const std::string key = "lock:" + name;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  if (op.f == "acquire") {
    long ttl = options_.lock_ttl_ms;
    if (op.value.is_int()) ttl = static_cast<long>(op.value.as_int());
    if (ttl <= 0) return Done(Outcome::kFail, op.value, "ttl must be > 0");
    Held& held = held_[name];
    held.owner = owner_ + "-" + std::to_string(++acquisitions_);
    held.ttl = ttl;
    held.token = 0;
    CallResult r =
        Call({"SET", key, held.owner, "NX", "PX", std::to_string(ttl)},
             deadline, true);
    if (r.error != CallError::kNone) return Unanswered(r, op.value);
    if (r.reply.kind == resp::Value::Kind::kNull) {
      return Done(Outcome::kFail, op.value, "held");
    }
    if (r.reply.kind == resp::Value::Kind::kError) {
      return ErrorReply(r.reply, op.value);
    }
    if (r.reply.kind != resp::Value::Kind::kSimple || r.reply.str != "OK") {
      primary_.reset();
      return Done(Outcome::kInfo, op.value, "unexpected reply to SET NX");
    }
    // Acquired: from here on every failure is info (the lock may be held).
    CallResult t = Call({"INCR", key + ":token"}, deadline, false);
    if (t.error == CallError::kNone &&
        t.reply.kind == resp::Value::Kind::kInteger) {
      held.token = t.reply.integer;
      return Done(Outcome::kOk, Value::Int(t.reply.integer));
    }
    std::string why =
        t.error != CallError::kNone
            ? std::string(raftkv::ToString(t.error)) + ": " + t.detail
            : "INCR: " + t.reply.str;
    return Done(Outcome::kInfo, op.value,
                Shorten("acquired, but no token: " + why));
  }
  auto held = held_.find(name);
  if (held == held_.end() || held->second.token == 0) {
    return Done(Outcome::kFail, op.value,
                "not-held: this client holds no token for " + name);
  }
  if (!op.value.is_int() || op.value.as_int() != held->second.token) {
    return Done(Outcome::kFail, op.value,
                "not-held: the token is not this client's last one");
  }
  const bool renew = op.f == "renew";
  Command command =
      renew ? Command{"EVAL",
                      kRenewScript,
                      "1",
                      key,
                      held->second.owner,
                      std::to_string(held->second.ttl)}
            : Command{"EVAL", kReleaseScript, "1", key, held->second.owner};
  CallResult r = Call(command, deadline, true);
  if (r.error != CallError::kNone) return Unanswered(r, op.value);
  if (r.reply.kind == resp::Value::Kind::kError) {
    return ErrorReply(r.reply, op.value);
  }
  if (r.reply.kind == resp::Value::Kind::kInteger) {
    if (r.reply.integer == 1) return Done(Outcome::kOk, op.value);
    if (r.reply.integer == 0) {
      return Done(Outcome::kFail, op.value, "not-held");
    }
  }
  primary_.reset();
  return Done(Outcome::kInfo, op.value, "unexpected reply");
}

}  // namespace faultline::targets::redis

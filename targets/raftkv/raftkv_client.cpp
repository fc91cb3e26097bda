#include "targets/raftkv/raftkv_client.h"

#include <chrono>
#include <exception>
#include <random>
#include <utility>
#include <vector>

#include "targets/etcd/gateway.h"  // the register value encoding
#include "targets/raftkv/resp_conn.h"

namespace faultline::targets::raftkv {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;
using Clock = std::chrono::steady_clock;

using harness::Done;

// The first word of an error reply ("NOTLEADER", "ERR", ...).
std::string_view ErrorCode(std::string_view error) {
  return error.substr(0, error.find(' '));
}

// Error replies that guarantee the command had no effect.
bool DefinitelyNoEffect(std::string_view code) {
  return code == "NOTLEADER" || code == "NOLEADER" || code == "LOCKED" ||
         code == "ERR" || code == "NOTOWNER" || code == "FENCED" ||
         code == "WRONGTYPE";
}

// The address in "NOTLEADER <id> <host:port>", if any.
std::optional<HostPort> RedirectTarget(std::string_view error) {
  // Skip the code and the id.
  auto first = error.find(' ');
  if (first == std::string_view::npos) return std::nullopt;
  auto second = error.find(' ', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  std::string_view addr = error.substr(second + 1);
  addr = addr.substr(0, addr.find(' '));
  return ParseHostPort(addr);
}

std::string Shorten(std::string s) {
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

// The outcome of an update (write/cas) whose call did not get a reply.
Completion Unanswered(const CallResult& r, const Value& arg) {
  if (r.error == CallError::kConnect || !r.sent) {
    return Done(Outcome::kFail, arg, "connect: " + r.detail);
  }
  if (r.error == CallError::kTimeout)
    return Done(Outcome::kInfo, arg, "timeout");
  return Done(Outcome::kInfo, arg,
              std::string(ToString(r.error)) + ": " + r.detail);
}

}  // namespace

RaftkvClient::RaftkvClient(RaftkvClientOptions options)
    : options_(std::move(options)),
      own_(std::make_unique<RespConn>(options_.host, options_.port)) {
  std::random_device rd;
  std::uint64_t id = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[24];
  snprintf(buf, sizeof buf, "c%016llx", static_cast<unsigned long long>(id));
  owner_ = buf;
}

std::string RaftkvClient::NextOwner() {
  return owner_ + "-" + std::to_string(++acquisitions_);
}

RaftkvClient::~RaftkvClient() = default;

std::string RaftkvClient::KeyFor(const Value& key) {
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

Completion RaftkvClient::Invoke(const Operation& op) noexcept {
  try {
    if (op.f == "read") return Read(op);
    if (op.f == "acquire" || op.f == "renew" || op.f == "release") {
      return LockOp(op);
    }
    const std::string key = KeyFor(op.key);
    if (key.empty()) {
      return Done(Outcome::kFail, op.value,
                  "unsupported key " + op.key.ToJson());
    }
    if (op.f == "write") {
      return Update(op, {"SET", key, etcd::EncodeRegisterValue(op.value)},
                    Expect::kOk);
    }
    if (op.f == "cas") {
      if (!op.value.is_list() || op.value.as_list().size() != 2) {
        return Done(Outcome::kFail, op.value,
                    "cas value must be [expected, new]");
      }
      const Value& expected = op.value.as_list()[0];
      if (expected.is_null()) {
        return Done(Outcome::kFail, op.value,
                    "cas from null is not supported by raftkv");
      }
      return Update(op,
                    {"CAS", key, etcd::EncodeRegisterValue(expected),
                     etcd::EncodeRegisterValue(op.value.as_list()[1])},
                    Expect::kCasInt);
    }
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

Completion RaftkvClient::Read(const Operation& op) {
  const std::string key = KeyFor(op.key);
  if (key.empty()) {
    return Done(Outcome::kFail, op.value, "unsupported key " + op.key.ToJson());
  }
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  CallResult r = own_->Call({"GET", key}, deadline);
  if (r.error == CallError::kTimeout) {
    return Done(Outcome::kInfo, op.value, "timeout");
  }
  if (r.error != CallError::kNone) {
    return Done(Outcome::kFail, op.value,
                std::string(ToString(r.error)) + ": " + r.detail);
  }
  switch (r.reply.kind) {
    case resp::Value::Kind::kNull:
      return Done(Outcome::kOk, Value::Null());
    case resp::Value::Kind::kBulk:
      return Done(Outcome::kOk, etcd::DecodeRegisterValue(r.reply.str));
    case resp::Value::Kind::kError: {
      std::string_view code = ErrorCode(r.reply.str);
      // -TIMEOUT on a read: nothing happened, but the project rule is that
      // timeouts are info.
      if (code == "TIMEOUT") return Done(Outcome::kInfo, op.value, "timeout");
      return Done(Outcome::kFail, op.value, Shorten(r.reply.str));
    }
    default:
      own_->Close();  // out of step with the server: start afresh
      return Done(Outcome::kFail, op.value, "unexpected reply to GET");
  }
}

Completion RaftkvClient::LockOp(const Operation& op) {
  std::string name;
  if (op.key.is_string()) {
    name = op.key.as_string();
  } else if (op.key.is_int()) {
    name = std::to_string(op.key.as_int());
  }
  if (name.empty() || name.find_first_of(" \r\n") != std::string::npos) {
    return Done(Outcome::kFail, op.value,
                "unsupported lock name " + op.key.ToJson());
  }
  if (op.f == "acquire") {
    long ttl = options_.lock_ttl_ms;
    if (op.value.is_int()) ttl = static_cast<long>(op.value.as_int());
    if (ttl <= 0) return Done(Outcome::kFail, op.value, "ttl must be > 0");
    // A fresh owner per acquisition: raftkv gives an owner that acquires
    // again its old token back, which would read as a duplicate token when
    // an earlier release failed without effect (e.g. no leader).
    Held& held = held_[name];
    held.owner = NextOwner();
    held.ttl = ttl;
    return Update(op, {"LOCK", name, held.owner, std::to_string(ttl)},
                  Expect::kToken);
  }
  auto held = held_.find(name);
  if (held == held_.end()) {
    return Done(Outcome::kFail, op.value,
                "not-held: this client never acquired " + name);
  }
  if (!op.value.is_int()) {
    return Done(Outcome::kFail, op.value, op.f + " needs the token");
  }
  const std::string token = std::to_string(op.value.as_int());
  Completion c;
  if (op.f == "renew") {
    c = Update(op,
               {"RENEW", name, held->second.owner, token,
                std::to_string(held->second.ttl)},
               Expect::kOk);
  } else {
    c = Update(op, {"UNLOCK", name, held->second.owner, token}, Expect::kOk);
  }
  if (c.type == Outcome::kFail && ErrorCode(c.error) == "NOTOWNER") {
    c.error = "not-held: " + c.error;
  }
  return c;
}

Completion RaftkvClient::Update(const Operation& op,
                                std::vector<std::string> command,
                                Expect expect) {
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
  RespConn* conn = own_.get();
  for (int attempt = 0; attempt < 2; ++attempt) {
    CallResult r = conn->Call(command, deadline);
    if (r.error != CallError::kNone) return Unanswered(r, op.value);
    const resp::Value& v = r.reply;
    if (v.kind == resp::Value::Kind::kError) {
      std::string_view code = ErrorCode(v.str);
      if (code == "NOTLEADER" && attempt == 0) {
        auto target = RedirectTarget(v.str);
        if (!target) return Done(Outcome::kFail, op.value, Shorten(v.str));
        if (target->host == options_.host && target->port == options_.port) {
          return Done(Outcome::kFail, op.value, Shorten(v.str));
        }
        if (!leader_ || leader_->host() != target->host ||
            leader_->port() != target->port) {
          leader_ = std::make_unique<RespConn>(target->host, target->port);
        }
        conn = leader_.get();
        continue;
      }
      if (DefinitelyNoEffect(code)) {
        return Done(Outcome::kFail, op.value, Shorten(v.str));
      }
      if (code == "TIMEOUT") return Done(Outcome::kInfo, op.value, "timeout");
      return Done(Outcome::kInfo, op.value, Shorten(v.str));
    }
    if (expect == Expect::kOk) {
      if (v.kind == resp::Value::Kind::kSimple && v.str == "OK") {
        return Done(Outcome::kOk, op.value);
      }
    } else if (expect == Expect::kToken) {
      if (v.kind == resp::Value::Kind::kInteger) {
        return Done(Outcome::kOk, Value::Int(v.integer));
      }
    } else if (v.kind == resp::Value::Kind::kInteger) {
      if (v.integer == 1) return Done(Outcome::kOk, op.value);
      if (v.integer == 0) return Done(Outcome::kFail, op.value, "mismatch");
    }
    conn->Close();  // out of step with the server: start afresh
    return Done(Outcome::kInfo, op.value, "unexpected reply");
  }
  return Done(Outcome::kFail, op.value, "redirected twice");  // not reached
}

}  // namespace faultline::targets::raftkv

#include "targets/process/resp_client.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <utility>

#include "targets/etcd/gateway.h"  // the register value encoding
#include "targets/redis/redis_proto.h"

namespace faultline::targets::process {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;
using raftkv::CallError;
using raftkv::CallResult;
using raftkv::RespConn;
namespace resp = ::faultline::raftkv::resp;
using Kind = resp::Value::Kind;
using Clock = std::chrono::steady_clock;
using Command = std::vector<std::string>;

// Each sentinel question gets at most this long, so one unreachable
// sentinel leaves time for the others.
constexpr auto kSentinelTimeout = std::chrono::milliseconds(400);

using harness::Done;

std::string Shorten(std::string s) {
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

bool IsStatus(const resp::Value& v, std::string_view text) {
  return v.kind == Kind::kSimple && v.str == text;
}

bool IsInt(const resp::Value& v, std::int64_t n) {
  return v.kind == Kind::kInteger && v.integer == n;
}

// The outcome of an update whose call got no reply.
Completion Unanswered(const CallResult& r, const Value& arg) {
  if (r.error == CallError::kConnect || !r.sent) {
    return Done(Outcome::kFail, arg, Shorten(r.detail));
  }
  if (r.error == CallError::kTimeout) {
    return Done(Outcome::kInfo, arg, "timeout");
  }
  return Done(
      Outcome::kInfo, arg,
      Shorten(std::string(raftkv::ToString(r.error)) + ": " + r.detail));
}

Completion ReadOutcome(const CallResult& r, const Value& arg) {
  if (r.error == CallError::kTimeout) {
    return Done(Outcome::kInfo, arg, "timeout");
  }
  if (r.error != CallError::kNone) {
    return Done(
        Outcome::kFail, arg,
        Shorten(std::string(raftkv::ToString(r.error)) + ": " + r.detail));
  }
  const resp::Value& v = r.reply;
  switch (v.kind) {
    case Kind::kNull:
      return Done(Outcome::kOk, Value::Null());
    case Kind::kBulk:
    case Kind::kSimple:
      return Done(Outcome::kOk, etcd::DecodeRegisterValue(v.str));
    case Kind::kInteger:
      return Done(Outcome::kOk, Value::Int(v.integer));
    case Kind::kError:
      return Done(Outcome::kFail, arg, Shorten(v.str));
    default:
      return Done(Outcome::kFail, arg, "unexpected reply to the read");
  }
}

}  // namespace

const std::vector<std::string>& RespPlaceholders() {
  static const std::vector<std::string> names = {"key", "value", "old",  "new",
                                                 "ttl", "token", "owner"};
  return names;
}

std::map<std::string, std::vector<std::string>> DefaultRespCommands(
    const std::string& workload) {
  if (workload == "register") {
    return {
        {"read", {"GET", "r/{key}"}},
        {"write", {"SET", "r/{key}", "{value}"}},
        {"cas",
         {"EVAL",
          "local v = redis.call('GET', KEYS[1]) "
          "if v == ARGV[1] or (v == false and ARGV[1] == 'null') then "
          "redis.call('SET', KEYS[1], ARGV[2]) return 1 end return 0",
          "1", "r/{key}", "{old}", "{new}"}},
    };
  }
  if (workload == "lock") {
    return {
        {"acquire",
         {"EVAL",
          "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
          "return redis.call('INCR', KEYS[2]) end return 0",
          "2", "lock:{key}", "lock:{key}:token", "{owner}", "{ttl}"}},
        {"renew",
         {"EVAL",
          "if redis.call('GET', KEYS[1]) == ARGV[1] then "
          "redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end return 0",
          "1", "lock:{key}", "{owner}", "{ttl}"}},
        {"release",
         {"EVAL",
          "if redis.call('GET', KEYS[1]) == ARGV[1] then "
          "redis.call('DEL', KEYS[1]) return 1 end return 0",
          "1", "lock:{key}", "{owner}"}},
    };
  }
  return {};
}

std::vector<std::string> ExpandRespCommand(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& values) {
  const auto& names = RespPlaceholders();
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const std::string& text : argv) {
    std::string s;
    s.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
      if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
        s += text[i];
        i += 2;
        continue;
      }
      if (text[i] == '{') {
        const auto close = text.find('}', i + 1);
        if (close != std::string::npos) {
          const std::string name = text.substr(i + 1, close - i - 1);
          if (std::find(names.begin(), names.end(), name) != names.end()) {
            auto it = values.find(name);
            if (it != values.end()) s += it->second;
            i = close + 1;
            continue;
          }
        }
      }
      s += text[i];
      ++i;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string RespKeyText(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kNull:
      return "_";
    case Value::Kind::kString:
      return key.as_string();
    case Value::Kind::kInt:
      return std::to_string(key.as_int());
    default:
      return "";
  }
}

bool RespNoEffect(std::string_view code) {
  return redis::NoEffect(code) || code == "NOTLEADER" || code == "NOLEADER" ||
         code == "LOCKED" || code == "NOTOWNER";
}

Completion RespOutcome(const std::string& f, const CallResult& r,
                       const Value& arg) {
  if (f == "read") return ReadOutcome(r, arg);
  if (r.error != CallError::kNone) return Unanswered(r, arg);
  const resp::Value& v = r.reply;
  if (v.kind == Kind::kError) {
    const std::string_view code = redis::ErrorCode(v.str);
    if (f == "acquire" && code == "LOCKED") {
      return Done(Outcome::kFail, arg, "held");
    }
    if ((f == "renew" || f == "release") && code == "NOTOWNER") {
      return Done(Outcome::kFail, arg, "not-held");
    }
    return Done(RespNoEffect(code) ? Outcome::kFail : Outcome::kInfo, arg,
                Shorten(v.str));
  }
  if (f == "write") {
    if (v.kind == Kind::kSimple || v.kind == Kind::kInteger) {
      return Done(Outcome::kOk, arg);
    }
  } else if (f == "cas") {
    if (IsInt(v, 1) || IsStatus(v, "OK")) return Done(Outcome::kOk, arg);
    if (IsInt(v, 0)) return Done(Outcome::kFail, arg, "mismatch");
  } else if (f == "acquire") {
    if (v.kind == Kind::kInteger && v.integer > 0) {
      return Done(Outcome::kOk, Value::Int(v.integer));
    }
    if (IsInt(v, 0) || v.kind == Kind::kNull) {
      return Done(Outcome::kFail, arg, "held");
    }
  } else if (f == "renew" || f == "release") {
    if (IsInt(v, 1) || IsStatus(v, "OK")) return Done(Outcome::kOk, arg);
    if (IsInt(v, 0) || v.kind == Kind::kNull) {
      return Done(Outcome::kFail, arg, "not-held");
    }
  }
  return Done(Outcome::kInfo, arg, "unexpected reply to " + f);
}

namespace {

class RespClient : public harness::Client {
 public:
  explicit RespClient(RespClientOptions options)
      : options_(std::move(options)) {
    if (options_.route == "sentinel") {
      for (const std::string& s : options_.sentinels) {
        if (auto hp = raftkv::ParseHostPort(s)) {
          sentinels_.push_back(std::make_unique<RespConn>(hp->host, hp->port));
        }
      }
    } else {
      primary_ = std::make_unique<RespConn>(options_.host, options_.port);
    }
    std::random_device rd;
    const std::uint64_t id = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    char buf[24];
    std::snprintf(buf, sizeof buf, "c%016llx",
                  static_cast<unsigned long long>(id));
    owner_ = buf;
  }

  Completion Invoke(const Operation& op) noexcept override {
    try {
      return Run(op);
    } catch (const std::exception& e) {
      Drop();
      return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                  std::string("exception: ") + e.what());
    } catch (...) {
      Drop();
      return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                  "exception");
    }
  }

 private:
  bool sentinel() const { return options_.route == "sentinel"; }

  // Forgets the primary (route sentinel) or closes the connection (node).
  void Drop() {
    if (sentinel()) {
      primary_.reset();
    } else if (primary_) {
      primary_->Close();
    }
  }

  Completion Run(const Operation& op) {
    if (options_.route != "node" && options_.route != "sentinel") {
      return Done(Outcome::kFail, op.value,
                  "unknown route '" + options_.route + "'");
    }
    auto command = options_.commands.find(op.f);
    if (command == options_.commands.end() || command->second.empty()) {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    const std::string key = RespKeyText(op.key);
    if (key.empty()) {
      return Done(Outcome::kFail, op.value,
                  "unsupported key " + op.key.ToJson());
    }
    std::map<std::string, std::string> values = {{"key", key}};
    Held* held = nullptr;
    if (op.f == "write") {
      values["value"] = etcd::EncodeRegisterValue(op.value);
    } else if (op.f == "cas") {
      if (!op.value.is_list() || op.value.as_list().size() != 2) {
        return Done(Outcome::kFail, op.value,
                    "cas value must be [expected, new]");
      }
      values["old"] = etcd::EncodeRegisterValue(op.value.as_list()[0]);
      values["new"] = etcd::EncodeRegisterValue(op.value.as_list()[1]);
    } else if (op.f == "acquire") {
      long ttl = options_.lock_ttl_ms;
      if (op.value.is_int()) ttl = static_cast<long>(op.value.as_int());
      if (ttl <= 0) return Done(Outcome::kFail, op.value, "ttl must be > 0");
      held = &held_[key];
      held->owner = owner_ + "-" + std::to_string(++acquisitions_);
      held->ttl = ttl;
      held->token = 0;
      values["owner"] = held->owner;
      values["ttl"] = std::to_string(ttl);
    } else if (op.f == "renew" || op.f == "release") {
      auto it = held_.find(key);
      if (it == held_.end() || it->second.token == 0) {
        return Done(Outcome::kFail, op.value,
                    "not-held: this client holds no token for " + key);
      }
      if (!op.value.is_int() || op.value.as_int() != it->second.token) {
        return Done(Outcome::kFail, op.value,
                    "not-held: the token is not this client's last one");
      }
      values["owner"] = it->second.owner;
      values["ttl"] = std::to_string(it->second.ttl);
      values["token"] = std::to_string(it->second.token);
    } else if (op.f != "read") {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
    CallResult r = Call(ExpandRespCommand(command->second, values), deadline);
    Completion c = RespOutcome(op.f, r, op.value);
    if (held != nullptr && c.type == Outcome::kOk && c.value.is_int()) {
      held->token = c.value.as_int();
    }
    // An unexpected reply: the server and this client disagree on
    // something, so start afresh.
    if (c.type == Outcome::kInfo && r.error == CallError::kNone) Drop();
    return c;
  }

  // Connects primary_ to the primary some sentinel names, verified by
  // ROLE. "" on success, else why not.
  std::string Discover(Clock::time_point deadline) {
    primary_.reset();
    std::string why;
    for (auto& s : sentinels_) {
      if (Clock::now() >= deadline) break;
      const auto until = std::min(deadline, Clock::now() + kSentinelTimeout);
      CallResult r = s->Call(
          {"SENTINEL", "get-master-addr-by-name", options_.master}, until);
      const std::string who =
          "sentinel " + s->host() + ":" + std::to_string(s->port());
      if (r.error != CallError::kNone) {
        why += who + ": " + raftkv::ToString(r.error) + "; ";
        continue;
      }
      auto addr = redis::ParseMasterAddr(r.reply);
      if (!addr) {
        why += who + ": no primary; ";
        continue;
      }
      auto conn = std::make_unique<RespConn>(addr->host, addr->port);
      CallResult role = conn->Call({"ROLE"}, deadline);
      const std::string named =
          who + " names " + addr->host + ":" + std::to_string(addr->port);
      if (role.error != CallError::kNone) {
        why += named + ", " + raftkv::ToString(role.error) + "; ";
        continue;
      }
      if (redis::ParseRole(role.reply).role != "master") {
        why += named + ", which is not master; ";
        continue;
      }
      primary_ = std::move(conn);
      return "";
    }
    if (sentinels_.empty()) why = "no sentinel address";
    if (why.empty()) why = "deadline passed";
    return why;
  }

  // One command: on the own node (route node), or on the primary, with one
  // retry on a fresh primary when the first attempt surely had no effect.
  CallResult Call(const Command& command, Clock::time_point deadline) {
    if (!sentinel()) return primary_->Call(command, deadline);
    CallResult r;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!primary_) {
        std::string why = Discover(deadline);
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
        if (attempt == 0 && (r.error == CallError::kConnect || !r.sent)) {
          continue;
        }
        return r;
      }
      if (r.reply.kind == Kind::kError &&
          redis::Rediscover(redis::ErrorCode(r.reply.str))) {
        primary_.reset();
        if (attempt == 0) continue;
      }
      return r;
    }
    return r;
  }

  struct Held {
    std::string owner;
    long ttl = 0;
    std::int64_t token = 0;
  };

  RespClientOptions options_;
  std::vector<std::unique_ptr<RespConn>> sentinels_;
  // Route node: the own node's connection (always set). Route sentinel:
  // the verified primary, or null (discover first).
  std::unique_ptr<RespConn> primary_;
  std::string owner_;  // random prefix, per client object
  long acquisitions_ = 0;
  std::map<std::string, Held> held_;  // by lock name ({key})
};

}  // namespace

std::unique_ptr<harness::Client> MakeRespClient(RespClientOptions options) {
  return std::make_unique<RespClient>(std::move(options));
}

}  // namespace faultline::targets::process

#include "targets/redis/redis_txn_client.h"

#include <chrono>
#include <exception>
#include <utility>

#include "targets/raftkv/raftkv_client.h"  // DecodeElement
#include "targets/redis/redis_proto.h"

namespace faultline::targets::redis {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Done;
using harness::Operation;
using harness::Outcome;
using raftkv::CallError;
using raftkv::CallResult;

std::string Shorten(std::string s) {
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

Value Decode(const std::string& s) {
  return raftkv::RaftkvClient::DecodeElement(s);
}

}  // namespace

// Each micro-op i: KEYS[i], ARGV[2i-1] its letter, ARGV[2i] its value. A
// write returns 1; a read the list (LRANGE of a missing key is empty).
const char* const kListAppendTxnScript =
    "#!lua\n"
    "local out = {}\n"
    "for i = 1, #KEYS do\n"
    "  if ARGV[2 * i - 1] == 'r' then\n"
    "    out[i] = redis.call('LRANGE', KEYS[i], 0, -1)\n"
    "  else\n"
    "    redis.call('RPUSH', KEYS[i], ARGV[2 * i])\n"
    "    out[i] = 1\n"
    "  end\n"
    "end\n"
    "return out\n";

// A read returns {value} or {} (absent): a nil inside a Lua table would
// cut the reply short.
const char* const kRwRegisterTxnScript =
    "#!lua\n"
    "local out = {}\n"
    "for i = 1, #KEYS do\n"
    "  if ARGV[2 * i - 1] == 'r' then\n"
    "    local v = redis.call('GET', KEYS[i])\n"
    "    if v then out[i] = {v} else out[i] = {} end\n"
    "  else\n"
    "    redis.call('SET', KEYS[i], ARGV[2 * i])\n"
    "    out[i] = 1\n"
    "  end\n"
    "end\n"
    "return out\n";

std::optional<TxnKind> TxnKindOf(std::string_view workload) {
  if (workload == "list-append") return TxnKind::kListAppend;
  if (workload == "rw-register") return TxnKind::kRwRegister;
  return std::nullopt;
}

std::string TxnKey(TxnKind kind, const Value& key) {
  const std::string prefix = kind == TxnKind::kListAppend ? "la:" : "rw:";
  if (key.is_int()) return prefix + std::to_string(key.as_int());
  if (key.is_string()) return prefix + key.as_string();
  return "";
}

std::optional<RedisClient::Command> TxnEval(TxnKind kind, const Value& txn,
                                            std::string* error) {
  if (!txn.is_list() || txn.as_list().empty()) {
    *error = "txn value must be a non-empty list of [f, k, v]";
    return std::nullopt;
  }
  const std::string write = kind == TxnKind::kListAppend ? "append" : "w";
  const Value::List& micros = txn.as_list();
  std::vector<std::string> keys;
  std::vector<std::string> args;
  for (const Value& m : micros) {
    if (!m.is_list() || m.as_list().size() != 3 ||
        !m.as_list()[0].is_string()) {
      *error = "txn micro-op must be [f, k, v]: " + m.ToJson();
      return std::nullopt;
    }
    const std::string& f = m.as_list()[0].as_string();
    std::string key = TxnKey(kind, m.as_list()[1]);
    if (key.empty()) {
      *error = "unsupported txn key " + m.as_list()[1].ToJson();
      return std::nullopt;
    }
    if (f == "r") {
      keys.push_back(std::move(key));
      args.insert(args.end(), {"r", ""});
      continue;
    }
    if (f != write) {
      *error = "unsupported txn micro-op " + m.ToJson();
      return std::nullopt;
    }
    const Value& v = m.as_list()[2];
    std::string arg;
    if (v.is_int()) {
      arg = std::to_string(v.as_int());
    } else if (v.is_string()) {
      arg = v.as_string();
    } else {
      *error = "txn value must be an integer or string: " + m.ToJson();
      return std::nullopt;
    }
    keys.push_back(std::move(key));
    args.push_back(kind == TxnKind::kListAppend ? "a" : "w");
    args.push_back(std::move(arg));
  }
  RedisClient::Command cmd = {"EVAL",
                              kind == TxnKind::kListAppend
                                  ? kListAppendTxnScript
                                  : kRwRegisterTxnScript,
                              std::to_string(keys.size())};
  cmd.insert(cmd.end(), keys.begin(), keys.end());
  cmd.insert(cmd.end(), args.begin(), args.end());
  return cmd;
}

bool TxnReadOnly(const Value& txn) {
  if (!txn.is_list()) return false;
  for (const Value& m : txn.as_list()) {
    if (!m.is_list() || m.as_list().empty() || !m.as_list()[0].is_string() ||
        m.as_list()[0].as_string() != "r") {
      return false;
    }
  }
  return true;
}

std::optional<Value> TxnFill(TxnKind kind, const Value& txn,
                             const resp::Value& reply) {
  if (!txn.is_list() || reply.kind != resp::Value::Kind::kArray ||
      reply.array.size() != txn.as_list().size()) {
    return std::nullopt;
  }
  Value::List out;
  out.reserve(reply.array.size());
  for (std::size_t i = 0; i < reply.array.size(); ++i) {
    const Value& micro = txn.as_list()[i];
    if (!micro.is_list() || micro.as_list().size() != 3 ||
        !micro.as_list()[0].is_string()) {
      return std::nullopt;
    }
    const Value::List& m = micro.as_list();
    const resp::Value& e = reply.array[i];
    if (m[0].as_string() != "r") {
      if (e.kind != resp::Value::Kind::kInteger || e.integer != 1) {
        return std::nullopt;
      }
      out.push_back(micro);
      continue;
    }
    if (e.kind != resp::Value::Kind::kArray) return std::nullopt;
    Value::List elems;
    elems.reserve(e.array.size());
    for (const resp::Value& x : e.array) {
      if (x.kind != resp::Value::Kind::kBulk) return std::nullopt;
      elems.push_back(Decode(x.str));
    }
    Value read;
    if (kind == TxnKind::kListAppend) {
      read = Value::MakeList(std::move(elems));
    } else if (elems.empty()) {
      read = Value::Null();
    } else if (elems.size() == 1) {
      read = std::move(elems[0]);
    } else {
      return std::nullopt;
    }
    out.push_back(Value::MakeList({m[0], m[1], std::move(read)}));
  }
  return Value::MakeList(std::move(out));
}

bool TxnNoEffect(std::string_view code) {
  return code == "READONLY" || code == "NOREPLICAS" || code == "MASTERDOWN" ||
         code == "LOADING" || code == "BUSY" || code == "NOSCRIPT" ||
         code == "OOM";
}

Outcome TxnErrorOutcome(std::string_view error, bool read_only) {
  if (read_only || TxnNoEffect(ErrorCode(error))) return Outcome::kFail;
  return Outcome::kInfo;
}

Outcome TxnUnansweredOutcome(const CallResult& r, bool read_only) {
  if (r.error == CallError::kConnect || !r.sent) return Outcome::kFail;
  if (r.error == CallError::kTimeout) return Outcome::kInfo;
  return read_only ? Outcome::kFail : Outcome::kInfo;
}

RedisTxnClient::RedisTxnClient(RedisClientOptions options, TxnKind kind)
    : kind_(kind),
      op_timeout_ms_(options.op_timeout_ms),
      primary_(std::move(options)) {}

Completion RedisTxnClient::Invoke(const Operation& op) noexcept {
  bool read_only = false;
  try {
    if (op.f != "txn") {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    read_only = TxnReadOnly(op.value);
    return Txn(op, read_only);
  } catch (const std::exception& e) {
    primary_.DropPrimary();
    return Done(read_only ? Outcome::kFail : Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    primary_.DropPrimary();
    return Done(read_only ? Outcome::kFail : Outcome::kInfo, op.value,
                "exception");
  }
}

Completion RedisTxnClient::Txn(const Operation& op, bool read_only) {
  std::string error;
  auto cmd = TxnEval(kind_, op.value, &error);
  if (!cmd) return Done(Outcome::kFail, op.value, error);
  const auto deadline =
      RedisClient::Clock::now() + std::chrono::milliseconds(op_timeout_ms_);
  CallResult r = primary_.Call(*cmd, deadline, true);
  if (r.error != CallError::kNone) {
    const std::string why =
        r.error == CallError::kTimeout
            ? std::string("timeout")
            : std::string(raftkv::ToString(r.error)) + ": " + r.detail;
    return Done(TxnUnansweredOutcome(r, read_only), op.value, Shorten(why));
  }
  if (r.reply.kind == resp::Value::Kind::kError) {
    return Done(TxnErrorOutcome(r.reply.str, read_only), op.value,
                Shorten(r.reply.str));
  }
  if (auto filled = TxnFill(kind_, op.value, r.reply)) {
    return Done(Outcome::kOk, std::move(*filled));
  }
  primary_.DropPrimary();  // out of step with the server: start afresh
  return Done(read_only ? Outcome::kFail : Outcome::kInfo, op.value,
              "unexpected reply to the transaction");
}

}  // namespace faultline::targets::redis

#include "targets/raftkv/raftkv_client.h"

#include <algorithm>
#include <charconv>
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

std::string RaftkvClient::TxnKeyFor(const Value& key) {
  if (key.is_string()) return "t/" + key.as_string();
  if (key.is_int()) return "t/" + std::to_string(key.as_int());
  return "";
}

Value RaftkvClient::DecodeElement(const std::string& s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec == std::errc() && ptr == end && std::to_string(v) == s) {
    return Value::Int(v);
  }
  return Value::String(s);
}

std::optional<std::vector<std::string>> RaftkvClient::TxnCommand(
    const Value& txn, std::string* error) {
  if (!txn.is_list() || txn.as_list().empty()) {
    *error = "txn value must be a non-empty list of [f, k, v]";
    return std::nullopt;
  }
  std::vector<std::string> cmd = {"TXN"};
  for (const Value& m : txn.as_list()) {
    if (!m.is_list() || m.as_list().size() != 3 ||
        !m.as_list()[0].is_string()) {
      *error = "txn micro-op must be [f, k, v]: " + m.ToJson();
      return std::nullopt;
    }
    const std::string& f = m.as_list()[0].as_string();
    const std::string key = TxnKeyFor(m.as_list()[1]);
    const Value& v = m.as_list()[2];
    if (key.empty()) {
      *error = "unsupported txn key " + m.as_list()[1].ToJson();
      return std::nullopt;
    }
    if (f == "r") {
      cmd.insert(cmd.end(), {"R", key, "-"});
      continue;
    }
    if (f != "append" && f != "w") {
      *error = "unsupported txn micro-op " + m.ToJson();
      return std::nullopt;
    }
    std::string arg;
    if (v.is_int()) {
      arg = std::to_string(v.as_int());
    } else if (v.is_string()) {
      arg = v.as_string();
    } else {
      *error = "txn value must be an integer or string: " + m.ToJson();
      return std::nullopt;
    }
    cmd.insert(cmd.end(), {f == "w" ? "W" : "APPEND", key, std::move(arg)});
  }
  return cmd;
}

std::optional<Value> RaftkvClient::TxnResult(const Value& txn,
                                             const resp::Value& reply,
                                             bool list_reads) {
  if (!txn.is_list() || reply.kind != resp::Value::Kind::kArray ||
      reply.array.size() != txn.as_list().size()) {
    return std::nullopt;
  }
  Value::List out;
  out.reserve(txn.as_list().size());
  for (std::size_t i = 0; i < reply.array.size(); ++i) {
    const Value& micro = txn.as_list()[i];
    if (!micro.is_list() || micro.as_list().size() != 3 ||
        !micro.as_list()[0].is_string()) {
      return std::nullopt;
    }
    const Value::List& m = micro.as_list();
    const resp::Value& e = reply.array[i];
    if (m[0].as_string() != "r") {
      if (e.kind != resp::Value::Kind::kSimple || e.str != "OK") {
        return std::nullopt;
      }
      out.push_back(micro);
      continue;
    }
    Value read;
    switch (e.kind) {
      case resp::Value::Kind::kNull:
        read = list_reads ? Value::MakeList({}) : Value::Null();
        break;
      case resp::Value::Kind::kBulk:
        read = DecodeElement(e.str);
        break;
      case resp::Value::Kind::kArray: {
        Value::List elems;
        elems.reserve(e.array.size());
        for (const resp::Value& x : e.array) {
          if (x.kind != resp::Value::Kind::kBulk) return std::nullopt;
          elems.push_back(DecodeElement(x.str));
        }
        read = Value::MakeList(std::move(elems));
        break;
      }
      default:
        return std::nullopt;
    }
    out.push_back(Value::MakeList({m[0], m[1], std::move(read)}));
  }
  return Value::MakeList(std::move(out));
}

Completion RaftkvClient::Invoke(const Operation& op) noexcept {
  try {
    if (options_.workload == "set" || options_.workload == "counter" ||
        options_.workload == "bank") {
      return CollectionOp(op);
    }
    if (op.f == "read") return Read(op);
    if (op.f == "txn") {
      std::string error;
      auto cmd = TxnCommand(op.value, &error);
      if (!cmd) return Done(Outcome::kFail, op.value, error);
      return Update(op, std::move(*cmd), Expect::kTxn);
    }
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
    } else if (expect == Expect::kTxn) {
      if (auto filled = TxnResult(op.value, v, options_.list_reads)) {
        return Done(Outcome::kOk, std::move(*filled));
      }
    } else if (expect != Expect::kCasInt) {
      if (auto c = CollectionReply(op, v, expect)) return std::move(*c);
    } else if (v.kind == resp::Value::Kind::kInteger) {
      if (v.integer == 1) return Done(Outcome::kOk, op.value);
      if (v.integer == 0) return Done(Outcome::kFail, op.value, "mismatch");
    }
    conn->Close();  // out of step with the server: start afresh
    return Done(Outcome::kInfo, op.value, "unexpected reply");
  }
  return Done(Outcome::kFail, op.value, "redirected twice");  // not reached
}

namespace {

constexpr char kSetKey[] = "c/set";
constexpr char kCounterKey[] = "c/counter";

std::string AccountKey(std::int64_t a) { return "b/" + std::to_string(a); }

// The field `name` of an object value, or nullptr.
const Value* Field(const Value& v, const std::string& name) {
  if (!v.is_object()) return nullptr;
  for (const auto& [k, x] : v.as_object()) {
    if (k == name) return &x;
  }
  return nullptr;
}

// A canonical decimal int64 stored by the server.
std::optional<std::int64_t> StoredInt(const resp::Value& e) {
  if (e.kind != resp::Value::Kind::kBulk) return std::nullopt;
  Value v = RaftkvClient::DecodeElement(e.str);
  if (!v.is_int()) return std::nullopt;
  return v.as_int();
}

}  // namespace

Completion RaftkvClient::CollectionOp(const Operation& op) {
  const std::string& w = options_.workload;
  if (w == "set" && op.f == "add") {
    std::string element;
    if (op.value.is_int()) {
      element = std::to_string(op.value.as_int());
    } else if (op.value.is_string()) {
      element = op.value.as_string();
    } else {
      return Done(Outcome::kFail, op.value,
                  "set element must be an integer or string");
    }
    return Update(op, {"TXN", "APPEND", kSetKey, std::move(element)},
                  Expect::kAppended);
  }
  if (w == "set" && op.f == "read") {
    return Update(op, {"TXN", "R", kSetKey, "-"}, Expect::kSetRead);
  }
  if (w == "counter" && op.f == "add") {
    if (!op.value.is_int()) {
      return Done(Outcome::kFail, op.value, "counter add needs an integer");
    }
    return Update(op,
                  {"INCRBY", kCounterKey, std::to_string(op.value.as_int())},
                  Expect::kInteger);
  }
  if (w == "counter" && op.f == "read") {
    return Update(op, {"TXN", "R", kCounterKey, "-"}, Expect::kCounterRead);
  }
  if (w != "bank" || (op.f != "transfer" && op.f != "read")) {
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  }
  const int n = std::max(1, options_.accounts);
  std::vector<std::string> cmd;
  if (op.f == "transfer") {
    const Value* from = Field(op.value, "from");
    const Value* to = Field(op.value, "to");
    const Value* amount = Field(op.value, "amount");
    if (!from || !to || !amount || !from->is_int() || !to->is_int() ||
        !amount->is_int()) {
      return Done(Outcome::kFail, op.value,
                  "transfer needs {\"from\": int, \"to\": int, "
                  "\"amount\": int}");
    }
    cmd = {"XFER", AccountKey(from->as_int()), AccountKey(to->as_int()),
           std::to_string(amount->as_int())};
  } else {
    cmd = {"TXN"};
    for (int a = 0; a < n; ++a)
      cmd.insert(cmd.end(), {"R", AccountKey(a), "-"});
  }
  if (!bank_ready_) {
    std::vector<std::string> init = {"MSETNX"};
    const std::int64_t each = options_.total / n;
    for (int a = 0; a < n; ++a) {
      const std::int64_t balance = a == 0 ? each + options_.total % n : each;
      init.insert(init.end(), {AccountKey(a), std::to_string(balance)});
    }
    Completion c = Update(op, std::move(init), Expect::kInit);
    // The op itself was not sent, whatever became of the MSETNX.
    if (c.type != Outcome::kOk) {
      return Done(Outcome::kFail, op.value, "bank init: " + c.error);
    }
    bank_ready_ = true;
  }
  return Update(op, std::move(cmd),
                op.f == "read" ? Expect::kBankRead : Expect::kTransfer);
}

std::optional<Completion> RaftkvClient::CollectionReply(const Operation& op,
                                                        const resp::Value& v,
                                                        Expect expect) const {
  using K = resp::Value::Kind;
  switch (expect) {
    case Expect::kInteger:
      if (v.kind == K::kInteger) return Done(Outcome::kOk, op.value);
      return std::nullopt;
    case Expect::kInit:
      if (v.kind == K::kInteger && (v.integer == 0 || v.integer == 1))
        return Done(Outcome::kOk, op.value);
      return std::nullopt;
    case Expect::kTransfer:
      if (v.kind != K::kInteger) return std::nullopt;
      if (v.integer == 1) return Done(Outcome::kOk, op.value);
      if (v.integer == 0)
        return Done(Outcome::kFail, op.value, "insufficient funds");
      return std::nullopt;
    case Expect::kAppended:
      if (v.kind == K::kArray && v.array.size() == 1 &&
          v.array[0].kind == K::kSimple && v.array[0].str == "OK")
        return Done(Outcome::kOk, op.value);
      return std::nullopt;
    default:
      break;
  }
  // The reads: TXN's array, one element per account (or the one key).
  if (v.kind != K::kArray) return std::nullopt;
  if (expect == Expect::kSetRead) {
    if (v.array.size() != 1) return std::nullopt;
    const resp::Value& e = v.array[0];
    if (e.kind == K::kNull) return Done(Outcome::kOk, Value::MakeList({}));
    if (e.kind != K::kArray) return std::nullopt;
    Value::List elems;
    elems.reserve(e.array.size());
    for (const resp::Value& x : e.array) {
      if (x.kind != K::kBulk) return std::nullopt;
      elems.push_back(DecodeElement(x.str));
    }
    return Done(Outcome::kOk, Value::MakeList(std::move(elems)));
  }
  if (expect == Expect::kCounterRead) {
    if (v.array.size() != 1) return std::nullopt;
    if (v.array[0].kind == K::kNull) return Done(Outcome::kOk, Value::Int(0));
    auto n = StoredInt(v.array[0]);
    if (!n) return std::nullopt;
    return Done(Outcome::kOk, Value::Int(*n));
  }
  if (expect == Expect::kBankRead) {
    if (v.array.size() !=
        static_cast<std::size_t>(std::max(1, options_.accounts)))
      return std::nullopt;
    Value::Object balances;
    for (std::size_t a = 0; a < v.array.size(); ++a) {
      if (v.array[a].kind == K::kNull) continue;  // missing: the checker says
      auto n = StoredInt(v.array[a]);
      if (!n) return std::nullopt;
      balances.emplace_back(std::to_string(a), Value::Int(*n));
    }
    return Done(Outcome::kOk, Value::MakeObject(std::move(balances)));
  }
  return std::nullopt;
}

}  // namespace faultline::targets::raftkv

#include "targets/redis/redis_collections_client.h"

#include <charconv>
#include <chrono>
#include <exception>
#include <utility>

#include "targets/raftkv/raftkv_client.h"  // DecodeElement
#include "targets/redis/redis_proto.h"
#include "targets/redis/redis_txn_client.h"  // TxnNoEffect

namespace faultline::targets::redis {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Done;
using harness::Operation;
using harness::Outcome;
using raftkv::CallError;
using raftkv::CallResult;
using Command = RedisClient::Command;
using RV = resp::Value;

std::string Shorten(std::string s) {
  if (s.size() > 100) s = s.substr(0, 97) + "...";
  return s;
}

std::optional<std::int64_t> ParseInt(std::string_view s) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

const Value* Field(const Value& obj, const std::string& name) {
  if (!obj.is_object()) return nullptr;
  for (const auto& [k, v] : obj.as_object()) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::optional<int> AccountOf(const Value* v, int accounts) {
  if (v == nullptr) return std::nullopt;
  std::optional<std::int64_t> i;
  if (v->is_int()) i = v->as_int();
  if (v->is_string()) i = ParseInt(v->as_string());
  if (!i || *i < 0 || *i >= accounts) return std::nullopt;
  return static_cast<int>(*i);
}

std::string Unanswered(const CallResult& r) {
  if (r.error == CallError::kTimeout) return "timeout";
  return Shorten(std::string(raftkv::ToString(r.error)) + ": " + r.detail);
}

}  // namespace

// "#!lua" without flags: Redis 7 treats each script as writing, so a
// replica refuses it with -READONLY before it runs (redis_proto.h).
const char* const kSetReadScript =
    "#!lua\n"
    "return redis.call('SMEMBERS', KEYS[1])\n";

// Like MSETNX: every account, or none when any exists.
const char* const kBankInitScript =
    "#!lua\n"
    "for i = 1, #KEYS do\n"
    "  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end\n"
    "end\n"
    "for i = 1, #KEYS do\n"
    "  redis.call('SET', KEYS[i], ARGV[i])\n"
    "end\n"
    "return 1\n";

// Writes only after every check passed (GET of a missing key is false,
// tonumber(false) is nil).
const char* const kTransferScript =
    "#!lua\n"
    "local a = tonumber(redis.call('GET', KEYS[1]))\n"
    "local b = tonumber(redis.call('GET', KEYS[2]))\n"
    "local n = tonumber(ARGV[1])\n"
    "if not a or not b or not n then return -1 end\n"
    "if a < n then return 0 end\n"
    "redis.call('SET', KEYS[1], string.format('%d', a - n))\n"
    "redis.call('SET', KEYS[2], string.format('%d', b + n))\n"
    "return 1\n";

// A missing key is false in Lua and null in the reply.
const char* const kBankReadScript =
    "#!lua\n"
    "return redis.call('MGET', unpack(KEYS))\n";

std::optional<Collection> CollectionOf(std::string_view workload) {
  if (workload == "set") return Collection::kSet;
  if (workload == "bank") return Collection::kBank;
  if (workload == "counter") return Collection::kCounter;
  return std::nullopt;
}

std::string AccountKey(int i) { return "faultline:bank:" + std::to_string(i); }

std::optional<Command> SetAddCommand(const Value& element, std::string* error) {
  if (element.is_int()) {
    return Command{"SADD", kSetKey, std::to_string(element.as_int())};
  }
  if (element.is_string() && !element.as_string().empty()) {
    return Command{"SADD", kSetKey, element.as_string()};
  }
  *error = "a set element is an integer or a non-empty string";
  return std::nullopt;
}

Command SetReadCommand() { return {"EVAL", kSetReadScript, "1", kSetKey}; }

std::optional<Value> ParseSetRead(const RV& reply) {
  if (reply.kind != RV::Kind::kArray) return std::nullopt;
  Value::List out;
  out.reserve(reply.array.size());
  for (const RV& e : reply.array) {
    if (e.kind != RV::Kind::kBulk) return std::nullopt;
    out.push_back(raftkv::RaftkvClient::DecodeElement(e.str));
  }
  return Value::MakeList(std::move(out));
}

std::optional<Command> CounterAddCommand(const Value& n, std::string* error) {
  if (!n.is_int() || n.as_int() < 0) {
    *error = "a counter add is a non-negative integer";
    return std::nullopt;
  }
  return Command{"INCRBY", kCounterKey, std::to_string(n.as_int())};
}

Command CounterReadCommand() { return {"EVAL", kReadScript, "1", kCounterKey}; }

std::optional<std::int64_t> ParseCounterRead(const RV& reply) {
  if (reply.kind == RV::Kind::kNull) return 0;
  if (reply.kind != RV::Kind::kBulk) return std::nullopt;
  return ParseInt(reply.str);
}

std::vector<std::int64_t> InitialBalances(int accounts, std::int64_t total) {
  const std::int64_t each = total / accounts;
  std::vector<std::int64_t> out(static_cast<std::size_t>(accounts), each);
  out[0] = total - each * (accounts - 1);
  return out;
}

Command BankInitCommand(int accounts, std::int64_t total) {
  Command cmd = {"EVAL", kBankInitScript, std::to_string(accounts)};
  for (int i = 0; i < accounts; ++i) cmd.push_back(AccountKey(i));
  for (std::int64_t b : InitialBalances(accounts, total)) {
    cmd.push_back(std::to_string(b));
  }
  return cmd;
}

std::optional<Command> TransferCommand(const Value& transfer, int accounts,
                                       std::string* error) {
  const auto from = AccountOf(Field(transfer, "from"), accounts);
  const auto to = AccountOf(Field(transfer, "to"), accounts);
  const Value* amount = Field(transfer, "amount");
  if (!from || !to || *from == *to || amount == nullptr || !amount->is_int() ||
      amount->as_int() < 0) {
    *error = "a transfer is {from, to, amount} between two accounts 0.." +
             std::to_string(accounts - 1);
    return std::nullopt;
  }
  return Command{"EVAL",
                 kTransferScript,
                 "2",
                 AccountKey(*from),
                 AccountKey(*to),
                 std::to_string(amount->as_int())};
}

Command BankReadCommand(int accounts) {
  Command cmd = {"EVAL", kBankReadScript, std::to_string(accounts)};
  for (int i = 0; i < accounts; ++i) cmd.push_back(AccountKey(i));
  return cmd;
}

std::optional<Value> ParseBankRead(const RV& reply, int accounts) {
  if (reply.kind != RV::Kind::kArray ||
      reply.array.size() != static_cast<std::size_t>(accounts)) {
    return std::nullopt;
  }
  Value::Object out;
  for (int i = 0; i < accounts; ++i) {
    const RV& e = reply.array[static_cast<std::size_t>(i)];
    if (e.kind == RV::Kind::kNull) continue;  // missing: left out
    if (e.kind != RV::Kind::kBulk) return std::nullopt;
    auto b = ParseInt(e.str);
    if (!b) return std::nullopt;
    out.emplace_back(std::to_string(i), Value::Int(*b));
  }
  return Value::MakeObject(std::move(out));
}

Outcome UpdateErrorOutcome(std::string_view error, bool script) {
  const std::string_view code = ErrorCode(error);
  const bool no_effect = script ? TxnNoEffect(code) : NoEffect(code);
  return no_effect ? Outcome::kFail : Outcome::kInfo;
}

// ---- the client
// ----------------------------------------------------------------

RedisCollectionsClient::RedisCollectionsClient(RedisClientOptions options,
                                               CollectionOptions what)
    : what_(what),
      op_timeout_ms_(options.op_timeout_ms),
      primary_(std::move(options)) {}

Completion RedisCollectionsClient::Invoke(const Operation& op) noexcept {
  try {
    const Deadline d =
        RedisClient::Clock::now() + std::chrono::milliseconds(op_timeout_ms_);
    std::string error;
    Completion failed;
    switch (what_.workload) {
      case Collection::kSet:
        if (op.f == "add") {
          auto cmd = SetAddCommand(op.value, &error);
          if (!cmd) return Done(Outcome::kFail, op.value, error);
          return Update(op, *cmd, false, d);
        }
        if (op.f == "read") {
          auto reply = Read(op, SetReadCommand(), d, &failed);
          if (!reply) return failed;
          if (auto set = ParseSetRead(*reply)) {
            return Done(Outcome::kOk, std::move(*set));
          }
          primary_.DropPrimary();
          return Done(Outcome::kFail, op.value, "unexpected reply to the read");
        }
        break;
      case Collection::kCounter:
        if (op.f == "add") {
          auto cmd = CounterAddCommand(op.value, &error);
          if (!cmd) return Done(Outcome::kFail, op.value, error);
          return Update(op, *cmd, false, d);
        }
        if (op.f == "read") {
          auto reply = Read(op, CounterReadCommand(), d, &failed);
          if (!reply) return failed;
          if (auto n = ParseCounterRead(*reply)) {
            return Done(Outcome::kOk, Value::Int(*n));
          }
          primary_.DropPrimary();
          return Done(Outcome::kFail, op.value, "unexpected reply to the read");
        }
        break;
      case Collection::kBank:
        if (op.f == "transfer") return Transfer(op, d);
        if (op.f == "read") return BankRead(op, d);
        break;
    }
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  } catch (const std::exception& e) {
    primary_.DropPrimary();
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    primary_.DropPrimary();
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                "exception");
  }
}

Completion RedisCollectionsClient::Update(const Operation& op,
                                          const Command& command, bool script,
                                          Deadline d) {
  CallResult r = primary_.Call(command, d, true);
  if (r.error != CallError::kNone) {
    return Done(TxnUnansweredOutcome(r, false), op.value, Unanswered(r));
  }
  if (r.reply.kind == RV::Kind::kError) {
    return Done(UpdateErrorOutcome(r.reply.str, script), op.value,
                Shorten(r.reply.str));
  }
  if (r.reply.kind == RV::Kind::kInteger) {
    if (!script) return Done(Outcome::kOk, op.value);  // SADD, INCRBY
    if (r.reply.integer == 1) return Done(Outcome::kOk, op.value);
    if (r.reply.integer == 0) {
      return Done(Outcome::kFail, op.value, "insufficient-funds");
    }
    if (r.reply.integer == -1) {
      return Done(Outcome::kFail, op.value,
                  "an account is missing or not a number");
    }
  }
  primary_.DropPrimary();  // out of step with the server: start afresh
  return Done(Outcome::kInfo, op.value, "unexpected reply");
}

std::optional<RV> RedisCollectionsClient::Read(const Operation& op,
                                               const Command& command,
                                               Deadline d, Completion* failed) {
  CallResult r = primary_.Call(command, d, true);
  if (r.error != CallError::kNone) {
    *failed = Done(TxnUnansweredOutcome(r, true), op.value, Unanswered(r));
    return std::nullopt;
  }
  if (r.reply.kind == RV::Kind::kError) {
    *failed = Done(Outcome::kFail, op.value, Shorten(r.reply.str));
    return std::nullopt;
  }
  return std::move(r.reply);
}

bool RedisCollectionsClient::EnsureAccounts(Deadline d, std::string* why) {
  if (accounts_ready_) return true;
  CallResult r =
      primary_.Call(BankInitCommand(what_.accounts, what_.total), d, true);
  if (r.error != CallError::kNone) {
    *why = "creating the accounts: " + Unanswered(r);
    return false;
  }
  if (r.reply.kind != RV::Kind::kInteger ||
      (r.reply.integer != 0 && r.reply.integer != 1)) {
    if (r.reply.kind != RV::Kind::kError) primary_.DropPrimary();
    *why = "creating the accounts: " + (r.reply.kind == RV::Kind::kError
                                            ? Shorten(r.reply.str)
                                            : std::string("unexpected reply"));
    return false;
  }
  accounts_ready_ = true;
  return true;
}

Completion RedisCollectionsClient::Transfer(const Operation& op, Deadline d) {
  std::string error;
  auto cmd = TransferCommand(op.value, what_.accounts, &error);
  if (!cmd) return Done(Outcome::kFail, op.value, error);
  if (!EnsureAccounts(d, &error)) {
    // Whether the accounts were created is unknown, but no money moved.
    return Done(Outcome::kFail, op.value, error);
  }
  return Update(op, *cmd, true, d);
}

Completion RedisCollectionsClient::BankRead(const Operation& op, Deadline d) {
  std::string why;
  if (!EnsureAccounts(d, &why)) return Done(Outcome::kFail, op.value, why);
  Completion failed;
  auto reply = Read(op, BankReadCommand(what_.accounts), d, &failed);
  if (!reply) return failed;
  if (auto balances = ParseBankRead(*reply, what_.accounts)) {
    return Done(Outcome::kOk, std::move(*balances));
  }
  primary_.DropPrimary();
  return Done(Outcome::kFail, op.value, "unexpected reply to the read");
}

}  // namespace faultline::targets::redis

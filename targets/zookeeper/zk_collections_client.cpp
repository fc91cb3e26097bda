#include "targets/zookeeper/zk_collections_client.h"

#include <zookeeper/zookeeper.h>

#include <charconv>
#include <chrono>
#include <exception>
#include <utility>

#include "targets/zookeeper/zk_config.h"

namespace faultline::targets::zookeeper {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Done;
using harness::Operation;
using harness::Outcome;

constexpr int kMaxTries = 10;  // writes per operation (lost races)

bool ValidName(const std::string& n) {
  return !n.empty() && n != "." && n != ".." &&
         n.find_first_of(std::string("/\r\n\0", 4)) == std::string::npos;
}

bool IsTimeout(int rc) { return rc == kTimedOut || rc == ZOPERATIONTIMEOUT; }

// Creates the persistent znodes of `path` and its ancestors that are
// missing; true when all of them exist afterwards.
bool EnsurePath(ZkSession& s, const std::string& path, Deadline deadline) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      ZkReply r = s.Create(path.substr(0, i), "", 0, deadline);
      if (!r.ok() && r.rc != ZNODEEXISTS) return false;
    }
  }
  return true;
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

}  // namespace

// ---- pure parts
// --------------------------------------------------------------

std::string SetPathFor(const Value& element) {
  std::string name;
  if (element.is_int()) {
    name = std::to_string(element.as_int());
  } else if (element.is_string()) {
    name = element.as_string();
  }
  if (!ValidName(name)) return "";
  return std::string(kSetRoot) + "/" + name;
}

Value SetElements(const std::vector<std::string>& children) {
  Value::List out;
  out.reserve(children.size());
  for (const std::string& name : children) {
    auto i = ParseInt(name);
    if (i && std::to_string(*i) == name) {
      out.push_back(Value::Int(*i));
    } else {
      out.push_back(Value::String(name));
    }
  }
  return Value::MakeList(std::move(out));
}

std::optional<std::int64_t> ParseAmount(std::string_view data) {
  return ParseInt(data);
}

std::string AccountPath(int i) {
  return std::string(kBankRoot) + "/" + std::to_string(i);
}

std::vector<std::int64_t> InitialBalances(int accounts, std::int64_t total) {
  const std::int64_t each = total / accounts;
  std::vector<std::int64_t> out(static_cast<std::size_t>(accounts), each);
  out[0] = total - each * (accounts - 1);
  return out;
}

std::vector<ZkOp> BankCreateMulti(int accounts, std::int64_t total) {
  const std::vector<std::int64_t> balances = InitialBalances(accounts, total);
  std::vector<ZkOp> ops;
  for (int i = 0; i < accounts; ++i) {
    ops.push_back({ZkOp::Kind::kCreate, AccountPath(i),
                   std::to_string(balances[static_cast<std::size_t>(i)]), -1});
  }
  return ops;
}

harness::Result<ZkTransfer> ParseTransfer(const Value& value, int accounts) {
  const auto from = AccountOf(Field(value, "from"), accounts);
  const auto to = AccountOf(Field(value, "to"), accounts);
  const Value* amount = Field(value, "amount");
  if (!from || !to || *from == *to || amount == nullptr || !amount->is_int() ||
      amount->as_int() < 0) {
    return harness::Fail(
        "a transfer is {from, to, amount} between two accounts 0.." +
        std::to_string(accounts - 1));
  }
  return ZkTransfer{*from, *to, amount->as_int()};
}

std::vector<ZkOp> TransferMulti(const ZkTransfer& t, const ZkBalance& from,
                                const ZkBalance& to) {
  return {{ZkOp::Kind::kSet, AccountPath(t.from),
           std::to_string(from.amount - t.amount), from.version},
          {ZkOp::Kind::kSet, AccountPath(t.to),
           std::to_string(to.amount + t.amount), to.version}};
}

std::vector<ZkOp> BankCheckMulti(const std::vector<ZkBalance>& balances) {
  std::vector<ZkOp> ops;
  for (std::size_t i = 0; i < balances.size(); ++i) {
    ops.push_back({ZkOp::Kind::kCheck, AccountPath(static_cast<int>(i)), "",
                   balances[i].version});
  }
  return ops;
}

Value BankReadValue(const std::vector<ZkBalance>& balances) {
  Value::Object out;
  for (std::size_t i = 0; i < balances.size(); ++i) {
    out.emplace_back(std::to_string(i), Value::Int(balances[i].amount));
  }
  return Value::MakeObject(std::move(out));
}

Completion ZkUpdateOutcome(int rc, const Value& value) {
  if (rc == ZBADVERSION || rc == ZNODEEXISTS) {
    return Done(Outcome::kFail, value, "conflict: " + RcName(rc));
  }
  if (rc == ZNONODE || rc == ZBADARGUMENTS) {
    return Done(Outcome::kFail, value, "refused: " + RcName(rc));
  }
  if (rc == kNotConnected || rc == ZINVALIDSTATE) {
    return Done(Outcome::kFail, value, "not sent: " + RcName(rc));
  }
  return Done(Outcome::kInfo, value, RcName(rc));
}

Completion ZkReadOutcome(int rc, bool read, const Value& value) {
  if (read && IsTimeout(rc)) {
    return Done(Outcome::kInfo, value, "read: " + RcName(rc));
  }
  return Done(Outcome::kFail, value, "read: " + RcName(rc));
}

// ---- the client
// ----------------------------------------------------------------

ZkCollectionsClient::ZkCollectionsClient(ZkCollectionsOptions options)
    : options_(std::move(options)),
      session_(std::make_unique<ZkSession>(
          options_.host + ":" + std::to_string(kClientPort),
          options_.session_timeout_ms)) {}

ZkCollectionsClient::~ZkCollectionsClient() = default;

Completion ZkCollectionsClient::Invoke(const Operation& op) noexcept {
  try {
    const Deadline d =
        Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
    switch (options_.workload) {
      case ZkCollection::kSet:
        if (op.f == "add") return SetAdd(op, d);
        if (op.f == "read") return SetRead(op, d);
        break;
      case ZkCollection::kCounter:
        if (op.f == "add") return CounterAdd(op, d);
        if (op.f == "read") return CounterRead(op, d);
        break;
      case ZkCollection::kBank:
        if (op.f == "transfer") return Transfer(op, d);
        if (op.f == "read") return BankRead(op, d);
        break;
    }
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  } catch (const std::exception& e) {
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                "exception");
  }
}

Completion ZkCollectionsClient::SetAdd(const Operation& op, Deadline d) {
  const std::string path = SetPathFor(op.value);
  if (path.empty()) {
    return Done(Outcome::kFail, op.value,
                "a set element is an integer or a string usable as a znode "
                "name");
  }
  // Whether an earlier attempt may have been applied: from then on, only
  // an answer from the server can turn the outcome into fail.
  bool maybe_applied = false;
  int rc = kNotConnected;
  for (int attempt = 0; attempt < kMaxTries && Clock::now() < d; ++attempt) {
    ZkReply r = session_->Create(path, "", 0, d);
    rc = r.rc;
    if (r.ok() || r.rc == ZNODEEXISTS) return Done(Outcome::kOk, op.value);
    if (r.rc == ZNONODE) {  // no parent yet: nothing applied
      if (!EnsurePath(*session_, kSetRoot, d)) break;
      continue;
    }
    if (r.rc == ZCONNECTIONLOSS || r.rc == ZSESSIONEXPIRED) {
      maybe_applied = true;  // sent again below, on a new connection
      continue;
    }
    break;
  }
  Completion c = ZkUpdateOutcome(rc, op.value);
  if (maybe_applied && c.type == Outcome::kFail) {
    c.type = Outcome::kInfo;
    c.error = "an earlier attempt may have been applied; then " + c.error;
  }
  return c;
}

Completion ZkCollectionsClient::SetRead(const Operation& op, Deadline d) {
  if (options_.sync_reads) {
    ZkReply s = session_->Sync(kSetRoot, d);
    if (!s.ok() && s.rc != ZNONODE) return ZkReadOutcome(s.rc, true, op.value);
  }
  ZkReply r = session_->Children(kSetRoot, d);
  if (r.rc == ZNONODE) return Done(Outcome::kOk, Value::MakeList({}));
  if (!r.ok()) return ZkReadOutcome(r.rc, true, op.value);
  return Done(Outcome::kOk, SetElements(r.children));
}

Completion ZkCollectionsClient::CounterAdd(const Operation& op, Deadline d) {
  if (!op.value.is_int() || op.value.as_int() < 0) {
    return Done(Outcome::kFail, op.value,
                "a counter add is a non-negative integer");
  }
  const std::int64_t n = op.value.as_int();
  int rc = kNotConnected;
  for (int attempt = 0; attempt < kMaxTries && Clock::now() < d; ++attempt) {
    ZkReply g = session_->Get(kCounterPath, d);
    if (g.rc == ZNONODE) {
      ZkReply c = session_->Create(kCounterPath, std::to_string(n), 0, d);
      rc = c.rc;
      if (c.ok()) return Done(Outcome::kOk, op.value);
      if (c.rc == ZNONODE) {  // no /faultline yet: nothing applied
        if (!EnsurePath(*session_, "/faultline", d)) break;
        continue;
      }
      if (c.rc == ZNODEEXISTS) continue;  // lost the race to create it
      return ZkUpdateOutcome(c.rc, op.value);
    }
    if (!g.ok()) return ZkReadOutcome(g.rc, false, op.value);
    auto sum = ParseAmount(g.data);
    if (!sum) {
      return Done(Outcome::kFail, op.value,
                  "the counter is not a number: " + g.data);
    }
    ZkReply s = session_->Set(kCounterPath, std::to_string(*sum + n),
                              g.stat.version, d);
    rc = s.rc;
    if (s.ok()) return Done(Outcome::kOk, op.value);
    if (s.rc != ZBADVERSION) return ZkUpdateOutcome(s.rc, op.value);
  }
  return ZkUpdateOutcome(rc, op.value);
}

Completion ZkCollectionsClient::CounterRead(const Operation& op, Deadline d) {
  if (options_.sync_reads) {
    ZkReply s = session_->Sync(kCounterPath, d);
    if (!s.ok() && s.rc != ZNONODE) return ZkReadOutcome(s.rc, true, op.value);
  }
  ZkReply r = session_->Get(kCounterPath, d);
  if (r.rc == ZNONODE) return Done(Outcome::kOk, Value::Int(0));
  if (!r.ok()) return ZkReadOutcome(r.rc, true, op.value);
  auto sum = ParseAmount(r.data);
  if (!sum) {
    return Done(Outcome::kFail, op.value,
                "the counter is not a number: " + r.data);
  }
  return Done(Outcome::kOk, Value::Int(*sum));
}

bool ZkCollectionsClient::EnsureAccounts(Deadline d, std::string* why) {
  if (accounts_ready_) return true;
  if (!EnsurePath(*session_, kBankRoot, d)) {
    *why = std::string("creating the accounts: cannot make ") + kBankRoot;
    return false;
  }
  // All or none: ZNODEEXISTS means they were all created before.
  ZkReply m =
      session_->Multi(BankCreateMulti(options_.accounts, options_.total), d);
  if (!m.ok() && m.rc != ZNODEEXISTS) {
    *why = "creating the accounts: " + RcName(m.rc);
    return false;
  }
  accounts_ready_ = true;
  return true;
}

std::optional<ZkBalance> ZkCollectionsClient::ReadBalance(
    const std::string& path, bool read, const Operation& op, Deadline d,
    Completion* failed) {
  ZkReply r = session_->Get(path, d);
  if (!r.ok()) {
    *failed = r.rc == ZNONODE
                  ? Done(Outcome::kFail, op.value, "missing account " + path)
                  : ZkReadOutcome(r.rc, read, op.value);
    return std::nullopt;
  }
  auto amount = ParseAmount(r.data);
  if (!amount) {
    *failed = Done(Outcome::kFail, op.value,
                   "account " + path + " is not a number: " + r.data);
    return std::nullopt;
  }
  return ZkBalance{*amount, r.stat.version};
}

Completion ZkCollectionsClient::Transfer(const Operation& op, Deadline d) {
  auto t = ParseTransfer(op.value, options_.accounts);
  if (!t) return Done(Outcome::kFail, op.value, t.error());
  std::string why;
  if (!EnsureAccounts(d, &why)) {
    // Whether the accounts were created is unknown, but no money moved.
    return Done(Outcome::kFail, op.value, why);
  }
  int rc = kNotConnected;
  for (int attempt = 0; attempt < kMaxTries && Clock::now() < d; ++attempt) {
    Completion failed;
    auto from = ReadBalance(AccountPath(t->from), false, op, d, &failed);
    if (!from) return failed;
    auto to = ReadBalance(AccountPath(t->to), false, op, d, &failed);
    if (!to) return failed;
    if (from->amount < t->amount) {
      return Done(Outcome::kFail, op.value, "insufficient-funds");
    }
    ZkReply m = session_->Multi(TransferMulti(*t, *from, *to), d);
    rc = m.rc;
    if (m.ok()) return Done(Outcome::kOk, op.value);
    if (m.rc != ZBADVERSION) return ZkUpdateOutcome(m.rc, op.value);
  }
  return ZkUpdateOutcome(rc, op.value);
}

Completion ZkCollectionsClient::BankRead(const Operation& op, Deadline d) {
  std::string why;
  if (!EnsureAccounts(d, &why)) return Done(Outcome::kFail, op.value, why);
  int rc = kNotConnected;
  for (int attempt = 0; attempt < kMaxTries && Clock::now() < d; ++attempt) {
    if (options_.sync_reads) {
      ZkReply s = session_->Sync(kBankRoot, d);
      if (!s.ok()) return ZkReadOutcome(s.rc, true, op.value);
    }
    std::vector<ZkBalance> balances;
    for (int i = 0; i < options_.accounts; ++i) {
      Completion failed;
      auto b = ReadBalance(AccountPath(i), true, op, d, &failed);
      if (!b) return failed;
      balances.push_back(*b);
    }
    ZkReply m = session_->Multi(BankCheckMulti(balances), d);
    rc = m.rc;
    if (m.ok()) return Done(Outcome::kOk, BankReadValue(balances));
    if (m.rc != ZBADVERSION) break;
  }
  // Checks change nothing, applied or not.
  if (rc == ZBADVERSION) {
    return Done(Outcome::kFail, op.value, "conflict: the balances moved");
  }
  return ZkReadOutcome(rc, true, op.value);
}

}  // namespace faultline::targets::zookeeper

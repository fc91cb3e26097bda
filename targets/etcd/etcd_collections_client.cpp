#include "targets/etcd/etcd_collections_client.h"

#include <charconv>
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

constexpr std::string_view kSetPrefix = "/faultline-set/";
constexpr std::string_view kCounterKey = "/faultline-counter";
constexpr std::string_view kBankPrefix = "/faultline-bank/";
constexpr int kMaxTries = 10;  // guarded puts per operation (lost races)

std::optional<std::int64_t> ParseInt(std::string_view s) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// A stored decimal (absent: 0); nullopt for anything else.
std::optional<std::int64_t> Amount(const TxnKeyState& s) {
  return s.found ? ParseInt(s.value) : std::optional<std::int64_t>(0);
}

std::optional<std::string> ElementText(const Value& v) {
  if (v.is_int()) return std::to_string(v.as_int());
  if (v.is_string() && !v.as_string().empty() &&
      v.as_string().find('\0') == std::string::npos) {
    return v.as_string();
  }
  return std::nullopt;
}

Value ElementOf(std::string_view text) {
  auto i = ParseInt(text);
  if (i && std::to_string(*i) == text) return Value::Int(*i);
  return Value::String(std::string(text));
}

std::string AccountKey(std::int64_t i) {
  return std::string(kBankPrefix) + std::to_string(i);
}

// An account named in a transfer: an integer, or its decimal text.
std::optional<std::int64_t> AccountOf(const Value& v, int accounts) {
  std::optional<std::int64_t> i;
  if (v.is_int()) i = v.as_int();
  if (v.is_string()) i = ParseInt(v.as_string());
  if (!i || *i < 0 || *i >= accounts) return std::nullopt;
  return i;
}

const Value* Field(const Value& obj, const std::string& name) {
  if (!obj.is_object()) return nullptr;
  for (const auto& [k, v] : obj.as_object()) {
    if (k == name) return &v;
  }
  return nullptr;
}

}  // namespace

EtcdCollectionsClient::EtcdCollectionsClient(EtcdClientOptions options,
                                             CollectionOptions what)
    : options_(std::move(options)),
      what_(what),
      root_url_("http://" + options_.ip + ":" + std::to_string(options_.port) +
                "/v3/kv/"),
      http_(std::make_unique<HttpSession>()) {}

EtcdCollectionsClient::~EtcdCollectionsClient() = default;

HttpReply EtcdCollectionsClient::Post(const std::string& path,
                                      const std::string& body, Deadline d) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(d - Clock::now())
          .count();
  return http_->Post(root_url_ + path, body,
                     static_cast<long>(left < 1 ? 1 : left));
}

Completion EtcdCollectionsClient::Invoke(const Operation& op) noexcept {
  try {
    const Deadline d =
        Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);
    switch (what_.workload) {
      case CollectionWorkload::kSet:
        if (op.f == "add") return SetAdd(op, d);
        if (op.f == "read") return SetRead(op, d);
        break;
      case CollectionWorkload::kCounter:
        if (op.f == "add") return CounterAdd(op, d);
        if (op.f == "read") return CounterRead(op, d);
        break;
      case CollectionWorkload::kBank:
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

std::optional<std::vector<TxnKeyState>> EtcdCollectionsClient::ReadStates(
    const std::vector<std::string>& keys, Deadline d, std::string* why) {
  HttpReply reply = Post("txn", ReadRequest(keys, /*serializable=*/false), d);
  if (!Answered(reply)) {
    *why = "read: " + WhyUnanswered(reply);
    return std::nullopt;
  }
  auto states = ParseReadReply(reply.body, keys);
  if (!states) {
    *why = states.error();
    return std::nullopt;
  }
  return std::move(*states);
}

std::optional<Completion> EtcdCollectionsClient::GuardedPut(
    const Operation& op, const std::vector<std::string>& keys,
    const std::vector<TxnKeyState>& states,
    const std::vector<std::string>& values, Deadline d) {
  HttpReply reply =
      Post("txn", GuardedPutRequest(keys, states, keys, values), d);
  if (!Answered(reply)) {
    const Outcome o = reply.transport == Transport::kRefused ? Outcome::kFail
                                                             : Outcome::kInfo;
    return Done(o, op.value, "write: " + WhyUnanswered(reply));
  }
  auto txn = ParseTxnReply(reply.body);
  if (!txn) return Done(Outcome::kInfo, op.value, txn.error());
  if (!txn->succeeded) return std::nullopt;
  return Done(Outcome::kOk, op.value);
}

Completion EtcdCollectionsClient::SetAdd(const Operation& op, Deadline d) {
  auto text = ElementText(op.value);
  if (!text) {
    return Done(Outcome::kFail, op.value,
                "a set element is an integer or a non-empty string");
  }
  HttpReply reply =
      Post("put", PutRequest(std::string(kSetPrefix) + *text, "1"), d);
  if (!Answered(reply)) {
    const Outcome o = reply.transport == Transport::kRefused ? Outcome::kFail
                                                             : Outcome::kInfo;
    return Done(o, op.value, WhyUnanswered(reply));
  }
  if (auto put = ParsePutReply(reply.body); !put) {
    return Done(Outcome::kInfo, op.value, put.error());
  }
  return Done(Outcome::kOk, op.value);
}

Completion EtcdCollectionsClient::SetRead(const Operation& op, Deadline d) {
  HttpReply reply = Post("range", PrefixKeysRequest(kSetPrefix), d);
  if (!Answered(reply))
    return Done(Outcome::kFail, op.value, WhyUnanswered(reply));
  auto keys = ParseKeysReply(reply.body);
  if (!keys) return Done(Outcome::kFail, op.value, keys.error());
  Value::List elements;
  elements.reserve(keys->size());
  for (const KeyRevision& k : *keys) {
    if (k.key.size() <= kSetPrefix.size() ||
        k.key.compare(0, kSetPrefix.size(), kSetPrefix) != 0) {
      return Done(Outcome::kFail, op.value, "read: a key outside the set");
    }
    elements.push_back(
        ElementOf(std::string_view(k.key).substr(kSetPrefix.size())));
  }
  return Done(Outcome::kOk, Value::MakeList(std::move(elements)));
}

Completion EtcdCollectionsClient::CounterAdd(const Operation& op, Deadline d) {
  if (!op.value.is_int() || op.value.as_int() < 0) {
    return Done(Outcome::kFail, op.value,
                "a counter add is a non-negative integer");
  }
  const std::vector<std::string> keys = {std::string(kCounterKey)};
  for (int attempt = 0; attempt < kMaxTries && Clock::now() < d; ++attempt) {
    std::string why;
    auto states = ReadStates(keys, d, &why);
    if (!states) return Done(Outcome::kFail, op.value, why);
    auto sum = Amount((*states)[0]);
    if (!sum)
      return Done(Outcome::kFail, op.value, "the counter is not a number");
    if (auto c = GuardedPut(op, keys, *states,
                            {std::to_string(*sum + op.value.as_int())}, d)) {
      return *c;
    }
  }
  return Done(Outcome::kFail, op.value, "conflict");
}

Completion EtcdCollectionsClient::CounterRead(const Operation& op, Deadline d) {
  std::string why;
  auto states = ReadStates({std::string(kCounterKey)}, d, &why);
  if (!states) return Done(Outcome::kFail, op.value, why);
  auto sum = Amount((*states)[0]);
  if (!sum)
    return Done(Outcome::kFail, op.value, "the counter is not a number");
  return Done(Outcome::kOk, Value::Int(*sum));
}

bool EtcdCollectionsClient::EnsureAccounts(Deadline d, std::string* why) {
  if (accounts_ready_) return true;
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::vector<TxnKeyState> absent;
  const std::int64_t each = what_.total / what_.accounts;
  for (int i = 0; i < what_.accounts; ++i) {
    keys.push_back(AccountKey(i));
    values.push_back(std::to_string(
        i == 0 ? what_.total - each * (what_.accounts - 1) : each));
    absent.push_back({});  // mod_revision 0: the key does not exist
  }
  // Created only if no account exists yet; a failed compare means someone
  // created them before (they are only ever created together).
  HttpReply reply =
      Post("txn", GuardedPutRequest(keys, absent, keys, values), d);
  if (!Answered(reply) || !ParseTxnReply(reply.body)) {
    *why = "creating the accounts: " + WhyUnanswered(reply);
    return false;
  }
  accounts_ready_ = true;
  return true;
}

Completion EtcdCollectionsClient::Transfer(const Operation& op, Deadline d) {
  const Value* from = Field(op.value, "from");
  const Value* to = Field(op.value, "to");
  const Value* amount = Field(op.value, "amount");
  std::optional<std::int64_t> a, b;
  if (from) a = AccountOf(*from, what_.accounts);
  if (to) b = AccountOf(*to, what_.accounts);
  if (!a || !b || *a == *b || !amount || !amount->is_int() ||
      amount->as_int() < 0) {
    return Done(Outcome::kFail, op.value,
                "a transfer is {from, to, amount} between two accounts 0.." +
                    std::to_string(what_.accounts - 1));
  }
  std::string why;
  if (!EnsureAccounts(d, &why)) {
    // Whether the accounts were created is unknown, but no money moved.
    return Done(Outcome::kFail, op.value, why);
  }
  const std::vector<std::string> keys = {AccountKey(*a), AccountKey(*b)};
  const std::int64_t n = amount->as_int();
  for (int attempt = 0; attempt < kMaxTries && Clock::now() < d; ++attempt) {
    auto states = ReadStates(keys, d, &why);
    if (!states) return Done(Outcome::kFail, op.value, why);
    auto have = Amount((*states)[0]);
    auto other = Amount((*states)[1]);
    if (!have || !other || !(*states)[0].found || !(*states)[1].found) {
      return Done(Outcome::kFail, op.value,
                  "an account is missing or not a number");
    }
    if (*have < n) return Done(Outcome::kFail, op.value, "insufficient-funds");
    if (auto c = GuardedPut(
            op, keys, *states,
            {std::to_string(*have - n), std::to_string(*other + n)}, d)) {
      return *c;
    }
  }
  return Done(Outcome::kFail, op.value, "conflict");
}

Completion EtcdCollectionsClient::BankRead(const Operation& op, Deadline d) {
  std::string why;
  if (!EnsureAccounts(d, &why)) return Done(Outcome::kFail, op.value, why);
  std::vector<std::string> keys;
  for (int i = 0; i < what_.accounts; ++i) keys.push_back(AccountKey(i));
  auto states = ReadStates(keys, d, &why);
  if (!states) return Done(Outcome::kFail, op.value, why);
  Value::Object balances;
  for (int i = 0; i < what_.accounts; ++i) {
    const TxnKeyState& s = (*states)[static_cast<std::size_t>(i)];
    auto v = Amount(s);
    if (!s.found || !v) {
      return Done(
          Outcome::kFail, op.value,
          "account " + std::to_string(i) + " is missing or not a number");
    }
    balances.emplace_back(std::to_string(i), Value::Int(*v));
  }
  return Done(Outcome::kOk, Value::MakeObject(std::move(balances)));
}

}  // namespace faultline::targets::etcd

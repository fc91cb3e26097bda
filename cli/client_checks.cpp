#include "cli/client_checks.h"

#include <chrono>
#include <optional>
#include <utility>

namespace faultline::cli {
namespace {

using checkers::Value;
using harness::Client;
using harness::Completion;
using harness::Operation;
using harness::Outcome;

const char* Word(Outcome o) {
  return o == Outcome::kOk ? "ok" : o == Outcome::kFail ? "fail" : "info";
}

Value Mop(const char* f, std::int64_t k, Value v = Value()) {
  return Value::MakeList({Value::String(f), Value::Int(k), std::move(v)});
}

Value Ints(std::initializer_list<std::int64_t> xs) {
  Value::List out;
  for (std::int64_t x : xs) out.push_back(Value::Int(x));
  return Value::MakeList(std::move(out));
}

// The reads (v of every "r" micro-op, in order) of an ok txn answer, or
// nullopt when it is not ok.
std::optional<std::vector<Value>> TxnReads(const Completion& c) {
  if (c.type != Outcome::kOk || !c.value.is_list()) return std::nullopt;
  std::vector<Value> reads;
  for (const Value& m : c.value.as_list()) {
    if (m.is_list() && m.as_list().size() == 3 &&
        m.as_list()[0] == Value::String("r"))
      reads.push_back(m.as_list()[2]);
  }
  return reads;
}

// Whether an ok txn answer's reads are exactly `want`.
bool ReadsAre(const Completion& c, const std::vector<Value>& want) {
  auto reads = TxnReads(c);
  return reads && *reads == want;
}

Completion Txn(Client& c, ClientChecks& k, Value::List mops) {
  return k.Do(c, {"txn", Value(), Value::MakeList(std::move(mops))});
}

// How often `x` is in the list `v`.
int Count(const Value& v, const Value& x) {
  int n = 0;
  for (const Value& e : v.as_list()) n += e == x ? 1 : 0;
  return n;
}

// The balances of an ok bank read over accounts "0".."accounts-1", or
// nullopt when it lists other accounts, misses one or has a non-integer.
std::optional<std::vector<std::int64_t>> Balances(const Completion& c,
                                                  int accounts) {
  if (c.type != Outcome::kOk || !c.value.is_object()) return std::nullopt;
  if (c.value.as_object().size() != static_cast<std::size_t>(accounts))
    return std::nullopt;
  std::vector<std::int64_t> out;
  for (int a = 0; a < accounts; ++a) {
    const Value* b = c.value.Find(std::to_string(a));
    if (b == nullptr || !b->is_int()) return std::nullopt;
    out.push_back(b->as_int());
  }
  return out;
}

Value Transfer(int from, int to, std::int64_t amount) {
  return Value::MakeObject({{"from", Value::Int(from)},
                            {"to", Value::Int(to)},
                            {"amount", Value::Int(amount)}});
}

}  // namespace

Completion ClientChecks::Do(Client& client, const Operation& op) {
  const auto t0 = std::chrono::steady_clock::now();
  Completion c = client.Invoke(op);
  const double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  if (out_ != nullptr) {
    std::fprintf(
        out_, "  %-7s %-8s %-26s -> %s %s%s (%.1f ms)\n", "", op.f.c_str(),
        (op.key.ToJson() + " " + op.value.ToJson()).c_str(), Word(c.type),
        c.type == Outcome::kOk ? c.value.ToJson().c_str() : "",
        c.error.empty() ? "" : (" " + c.error).c_str(), ms);
  }
  return c;
}

void ClientChecks::Expect(bool good, const std::string& what) {
  if (out_ != nullptr) {
    std::fprintf(out_, "  %-7s %s\n", good ? "PASS" : "FAIL", what.c_str());
  }
  if (!good) failures_.push_back(what);
  ++total_;
}

void RegisterChecks(Client& c, ClientChecks& k, std::int64_t key,
                    std::int64_t v) {
  const Value K = Value::Int(key);
  auto read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value.is_null(),
           "a fresh key reads ok null");
  auto write = k.Do(c, {"write", K, Value::Int(v)});
  k.Expect(write.type == Outcome::kOk, "a write answers ok");
  read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(v),
           "the write is read back");
  auto cas = k.Do(
      c,
      {"cas", K, Value::MakeList({Value::Int(v + 1000), Value::Int(v + 1)})});
  k.Expect(cas.type == Outcome::kFail,
           "a cas with a wrong expected value answers fail");
  read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(v),
           "that cas changed nothing (fail means it did not happen)");
  cas =
      k.Do(c, {"cas", K, Value::MakeList({Value::Int(v), Value::Int(v + 2)})});
  k.Expect(cas.type == Outcome::kOk,
           "a cas with the right expected value answers ok");
  read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(v + 2),
           "the cas is read back");
}

void LockChecks(Client& a, Client& b, ClientChecks& k, const std::string& lock,
                int ttl_ms) {
  const Value L = Value::String(lock);
  auto first = k.Do(a, {"acquire", L, Value::Int(ttl_ms)});
  const bool has_token = first.type == Outcome::kOk && first.value.is_int();
  k.Expect(has_token, "acquire answers ok with an integer token");
  if (!has_token) return;
  auto other = k.Do(b, {"acquire", L, Value::Int(ttl_ms)});
  k.Expect(other.type == Outcome::kFail,
           "a second client's acquire of the held lock answers fail");
  auto renew = k.Do(a, {"renew", L, first.value});
  k.Expect(renew.type == Outcome::kOk, "renew of the hold answers ok");
  auto release = k.Do(a, {"release", L, first.value});
  k.Expect(release.type == Outcome::kOk, "release of the hold answers ok");
  release = k.Do(a, {"release", L, first.value});
  k.Expect(release.type == Outcome::kFail,
           "a second release answers fail (not held)");
  auto again = k.Do(b, {"acquire", L, Value::Int(ttl_ms)});
  k.Expect(again.type == Outcome::kOk && again.value.is_int() &&
               again.value.as_int() > first.value.as_int(),
           "the next acquire's token is larger");
  if (again.type == Outcome::kOk) (void)b.Invoke({"release", L, again.value});
}

void StatusChecks(Client& c, ClientChecks& k) {
  auto st = k.Do(c, {"status", Value(), Value()});
  const Value* role = st.value.is_object() ? st.value.Find("role") : nullptr;
  const Value* term = st.value.is_object() ? st.value.Find("term") : nullptr;
  k.Expect(st.type == Outcome::kOk && role != nullptr && role->is_string(),
           "status answers ok with an object with a string \"role\"");
  k.Expect(term == nullptr || term->is_int(),
           "the status's \"term\", if any, is an integer");
}

void ListAppendChecks(Client& c, ClientChecks& k, std::int64_t key,
                      std::int64_t v) {
  const std::int64_t k1 = key, k2 = key + 1;
  auto fresh = Txn(c, k, {Mop("r", k1)});
  k.Expect(ReadsAre(fresh, {Ints({})}), "a txn reads a fresh key as []");
  auto own = Txn(c, k, {Mop("append", k1, Value::Int(v)), Mop("r", k1)});
  k.Expect(ReadsAre(own, {Ints({v})}),
           "a read after the txn's own append sees it");
  auto both =
      Txn(c, k,
          {Mop("r", k1), Mop("append", k1, Value::Int(v + 1)),
           Mop("append", k2, Value::Int(v + 2)), Mop("r", k1), Mop("r", k2)});
  auto reads = TxnReads(both);
  k.Expect(reads && reads->size() == 3 && (*reads)[0] == Ints({v}),
           "the next txn reads the committed append, and a read before its "
           "own append does not see that");
  k.Expect(reads && reads->size() == 3 && (*reads)[1] == Ints({v, v + 1}) &&
               (*reads)[2] == Ints({v + 2}),
           "reads after its appends see them, in append order, on both keys");
  auto after = Txn(c, k, {Mop("r", k1), Mop("r", k2)});
  k.Expect(ReadsAre(after, {Ints({v, v + 1}), Ints({v + 2})}),
           "both appends of one txn are read back by the next");
}

void RwRegisterChecks(Client& c, ClientChecks& k, std::int64_t key,
                      std::int64_t v) {
  const std::int64_t k1 = key, k2 = key + 1;
  auto fresh = Txn(c, k, {Mop("r", k1)});
  k.Expect(ReadsAre(fresh, {Value()}), "a txn reads a fresh key as null");
  auto own = Txn(c, k, {Mop("w", k1, Value::Int(v)), Mop("r", k1)});
  k.Expect(ReadsAre(own, {Value::Int(v)}),
           "a read after the txn's own write sees it");
  auto both =
      Txn(c, k,
          {Mop("r", k1), Mop("w", k1, Value::Int(v + 1)),
           Mop("w", k2, Value::Int(v + 2)), Mop("r", k1), Mop("r", k2)});
  auto reads = TxnReads(both);
  k.Expect(reads && reads->size() == 3 && (*reads)[0] == Value::Int(v),
           "the next txn reads the committed write, and a read before its "
           "own write does not see that");
  k.Expect(reads && reads->size() == 3 && (*reads)[1] == Value::Int(v + 1) &&
               (*reads)[2] == Value::Int(v + 2),
           "reads after its writes see them, on both keys");
  auto after = Txn(c, k, {Mop("r", k1), Mop("r", k2)});
  k.Expect(ReadsAre(after, {Value::Int(v + 1), Value::Int(v + 2)}),
           "both writes of one txn are read back by the next");
}

void SetChecks(Client& c, ClientChecks& k, std::int64_t element) {
  const Value e1 = Value::Int(element), e2 = Value::Int(element + 1);
  auto before = k.Do(c, {"read", Value(), Value()});
  const bool listed = before.type == Outcome::kOk && before.value.is_list();
  k.Expect(listed, "a read answers ok with a list");
  if (!listed) return;
  k.Expect(Count(before.value, e1) == 0 && Count(before.value, e2) == 0,
           "the fresh elements are not in the set yet");
  auto add = k.Do(c, {"add", Value(), e1});
  k.Expect(add.type == Outcome::kOk, "an add answers ok");
  auto read = k.Do(c, {"read", Value(), Value()});
  bool kept = read.type == Outcome::kOk && read.value.is_list() &&
              Count(read.value, e1) >= 1;
  for (const Value& x : before.value.as_list())
    kept = kept && Count(read.value, x) >= 1;
  k.Expect(kept,
           "the added element is read back with every element read before");
  add = k.Do(c, {"add", Value(), e2});
  k.Expect(add.type == Outcome::kOk, "a second add answers ok");
  read = k.Do(c, {"read", Value(), Value()});
  k.Expect(read.type == Outcome::kOk && read.value.is_list() &&
               Count(read.value, e1) == 1 && Count(read.value, e2) == 1,
           "both added elements are read back, each listed once");
}

void CounterChecks(Client& c, ClientChecks& k) {
  auto first = k.Do(c, {"read", Value(), Value()});
  const bool number = first.type == Outcome::kOk && first.value.is_int();
  k.Expect(number, "a read answers ok with an integer");
  if (!number) return;
  const std::int64_t r0 = first.value.as_int();
  auto add = k.Do(c, {"add", Value(), Value::Int(3)});
  k.Expect(add.type == Outcome::kOk, "an add answers ok");
  auto read = k.Do(c, {"read", Value(), Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(r0 + 3),
           "the add of 3 is read back (the counter went up by exactly 3)");
  const bool two =
      k.Do(c, {"add", Value(), Value::Int(2)}).type == Outcome::kOk &&
      k.Do(c, {"add", Value(), Value::Int(4)}).type == Outcome::kOk;
  k.Expect(two, "two more adds answer ok");
  read = k.Do(c, {"read", Value(), Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(r0 + 9),
           "all three adds are read back (exactly 9 more than at first)");
}

void BankChecks(Client& c, ClientChecks& k, int accounts, std::int64_t total) {
  const std::string names = "\"0\" .. \"" + std::to_string(accounts - 1) + "\"";
  auto read = k.Do(c, {"read", Value(), Value()});
  k.Expect(read.type == Outcome::kOk, "a read answers ok");
  auto before = Balances(read, accounts);
  k.Expect(before.has_value(), "the read lists exactly the accounts " + names +
                                   ", each with an integer balance");
  if (!before) return;
  std::int64_t sum = 0;
  bool negative = false;
  int richest = 0;
  for (int a = 0; a < accounts; ++a) {
    sum += (*before)[a];
    negative = negative || (*before)[a] < 0;
    if ((*before)[a] > (*before)[richest]) richest = a;
  }
  k.Expect(sum == total && !negative, "the balances sum to the total (" +
                                          std::to_string(total) +
                                          ") and none is negative");
  if ((*before)[richest] < 1) return;  // nothing to move (total 0)
  const int to = (richest + 1) % accounts;
  auto moved = k.Do(c, {"transfer", Value(), Transfer(richest, to, 1)});
  k.Expect(moved.type == Outcome::kOk,
           "a transfer of 1 from the richest account answers ok");
  std::vector<std::int64_t> want = *before;
  want[richest] -= 1;
  want[to] += 1;
  auto after = Balances(k.Do(c, {"read", Value(), Value()}), accounts);
  k.Expect(after && *after == want,
           "the transfer is read back (the two balances moved by 1)");
  auto refused =
      k.Do(c, {"transfer", Value(), Transfer(to, richest, total + 1)});
  k.Expect(refused.type == Outcome::kFail,
           "a transfer of more than the total answers fail");
  auto last = Balances(k.Do(c, {"read", Value(), Value()}), accounts);
  k.Expect(last && *last == want,
           "that transfer changed nothing (fail means it did not happen)");
}

}  // namespace faultline::cli

// End-to-end tests of CheckListAppend and CheckRwRegister (checkers/txn/
// txn.h): small hand-written histories, one per anomaly class, checked for
// the verdict, the class named and the transactions the explanation names.
#include <catch2/catch.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "checkers/json_parser.h"
#include "checkers/txn/txn.h"

namespace faultline::checkers::txn {
namespace {

Value I(std::int64_t i) { return Value::Int(i); }
Value S(const char* s) { return Value::String(s); }
Value Mop(const char* f, const char* k, Value v) {
  return Value::MakeList({S(f), S(k), std::move(v)});
}
Value Ap(const char* k, std::int64_t v) { return Mop("append", k, I(v)); }
Value Rl(const char* k, std::initializer_list<std::int64_t> xs) {
  Value::List l;
  for (auto x : xs) l.push_back(I(x));
  return Mop("r", k, Value::MakeList(std::move(l)));
}
Value W(const char* k, std::int64_t v) { return Mop("w", k, I(v)); }
Value Rr(const char* k, std::optional<std::int64_t> v) {
  return Mop("r", k, v ? I(*v) : Value());
}

// Events in the order written. Inv() records the invocation (reads null);
// Ok() / Fail() / Info() the completion of the process's open txn.
class Hist {
 public:
  void Inv(std::int64_t p, const std::vector<Value>& mops) {
    Value::List inv;
    for (const Value& m : mops) {
      const Value::List& parts = m.as_list();
      inv.push_back(parts[0].as_string() == "r"
                        ? Value::MakeList({parts[0], parts[1], Value()})
                        : m);
    }
    Push(p, EventType::kInvoke, Value::MakeList(std::move(inv)));
  }
  void Ok(std::int64_t p, const std::vector<Value>& mops) {
    Push(p, EventType::kOk, Value::MakeList(Value::List(mops)));
  }
  void Fail(std::int64_t p, const std::vector<Value>& mops) {
    Push(p, EventType::kFail, Value::MakeList(Value::List(mops)));
  }
  // A whole transaction, invoked and completed ok with nothing between.
  void Txn(std::int64_t p, const std::vector<Value>& mops) {
    Inv(p, mops);
    Ok(p, mops);
  }
  History h;

 private:
  void Push(std::int64_t p, EventType type, Value v) {
    Event e;
    e.index = static_cast<std::int64_t>(h.size());
    e.process = p;
    e.type = type;
    e.f = "txn";
    e.value = std::move(v);
    h.push_back(std::move(e));
  }
};

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Verdict Check(const Hist& hist, bool list_append,
              const std::string& model = "strict-serializable") {
  TxnOptions o;
  o.consistency_model = model;
  Verdict v =
      list_append ? CheckListAppend(hist.h, o) : CheckRwRegister(hist.h, o);
  Value parsed;
  std::string error;
  INFO(v.summary);
  INFO(v.explanation);
  REQUIRE(ParseJson(v.details_json, parsed, &error));
  return v;
}

// Invokes every transaction first, then completes them all: no real-time
// order between them.
Hist Concurrent(const std::vector<std::vector<Value>>& txns) {
  Hist h;
  for (std::size_t i = 0; i < txns.size(); ++i) {
    h.Inv(static_cast<std::int64_t>(i), txns[i]);
  }
  for (std::size_t i = 0; i < txns.size(); ++i) {
    h.Ok(static_cast<std::int64_t>(i), txns[i]);
  }
  return h;
}

TEST_CASE("txn end to end: list-append G0", "[txn]") {
  Hist h = Concurrent({{Ap("x", 1), Ap("y", 2)},
                       {Ap("x", 2), Ap("y", 1)},
                       {Rl("x", {1, 2}), Rl("y", {1, 2})}});
  Verdict v = Check(h, true);
  INFO(v.explanation);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Contains(v.summary, "G0 (1 cycle, 2 transactions)"));
  CHECK(Contains(v.explanation, "G0 cycle of 2 transactions"));
  CHECK(Contains(v.explanation, "T0 -ww-> T1"));
  CHECK(Contains(v.explanation, "T1 -ww-> T0"));
}

TEST_CASE("txn end to end: list-append G1c", "[txn]") {
  Hist h = Concurrent({{Ap("x", 1), Rl("y", {1})}, {Ap("y", 1), Rl("x", {1})}});
  Verdict v = Check(h, true);
  INFO(v.explanation);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Contains(v.summary, "G1c (1 cycle, 2 transactions)"));
  CHECK(Contains(v.explanation, "T0 -wr-> T1"));
  CHECK(Contains(v.explanation, "T1 -wr-> T0"));
}

TEST_CASE("txn end to end: list-append G-single (read skew)", "[txn]") {
  Hist h = Concurrent({{Rl("x", {}), Rl("y", {1})},
                       {Ap("x", 1), Ap("y", 1)},
                       {Rl("x", {1}), Rl("y", {1})}});
  Verdict v = Check(h, true);
  INFO(v.explanation);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Contains(v.summary, "G-single (1 cycle, 2 transactions)"));
  CHECK(Contains(v.explanation, "T0 -rw-> T1"));
  CHECK(Contains(v.explanation, "T1 -wr-> T0"));
  CHECK(Check(h, true, "snapshot-isolation").validity == Validity::kInvalid);
  CHECK(Check(h, true, "read-committed").validity == Validity::kValid);
}

TEST_CASE("txn end to end: list-append G2-item (write skew)", "[txn]") {
  Hist h = Concurrent({{Rl("x", {}), Ap("y", 1)},
                       {Rl("y", {}), Ap("x", 1)},
                       {Rl("x", {1}), Rl("y", {1})}});
  Verdict v = Check(h, true);
  INFO(v.explanation);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Contains(v.summary, "G2-item (1 cycle, 2 transactions)"));
  CHECK(Contains(v.explanation, "T0 -rw-> T1"));
  CHECK(Contains(v.explanation, "T1 -rw-> T0"));
  CHECK(Check(h, true, "snapshot-isolation").validity == Validity::kValid);
  CHECK(Check(h, true, "repeatable-read").validity == Validity::kInvalid);
  CHECK(Check(h, true, "serializable").validity == Validity::kInvalid);
}

TEST_CASE("txn end to end: list-append G1a and a stale read", "[txn]") {
  Hist g1a;
  g1a.Inv(0, {Ap("x", 1)});
  g1a.Fail(0, {Ap("x", 1)});
  g1a.Txn(1, {Rl("x", {1})});
  Verdict v = Check(g1a, true);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Contains(v.summary, "G1a (1)"));
  CHECK(Contains(v.explanation, "T0"));
  CHECK(Contains(v.explanation, "T1"));
  CHECK(Check(g1a, true, "read-uncommitted").validity == Validity::kValid);

  // T0's append completes; T1, invoked afterwards, does not see it.
  Hist stale;
  stale.Txn(0, {Ap("x", 1)});
  stale.Txn(1, {Rl("x", {})});
  stale.Txn(2, {Rl("x", {1})});
  Verdict s = Check(stale, true);
  INFO(s.explanation);
  CHECK(s.validity == Validity::kInvalid);
  CHECK(Contains(s.summary, "G-single-realtime"));
  CHECK(Contains(s.explanation, "T1 -rw-> T0"));
  CHECK(Contains(s.explanation,
                 "T0 -realtime-> T1: T0 completed (event 1) "
                 "before T1 was invoked (event 2)"));
  CHECK(Check(stale, true, "serializable").validity == Validity::kValid);
}

TEST_CASE("txn end to end: list-append valid serial history", "[txn]") {
  Hist h;
  h.Txn(0, {Ap("x", 1), Rl("x", {1})});
  h.Txn(1, {Ap("x", 2), Rl("y", {})});
  h.Txn(0, {Rl("x", {1, 2}), Ap("y", 3)});
  Verdict v = Check(h, true);
  INFO(v.explanation);
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "valid: 3 transactions, no anomaly; strict-serializable holds");
}

TEST_CASE("txn end to end: rw-register anomalies", "[txn]") {
  SECTION("G1c") {
    Hist h = Concurrent({{W("x", 1), Rr("y", 2)}, {W("y", 2), Rr("x", 1)}});
    Verdict v = Check(h, false);
    INFO(v.explanation);
    CHECK(v.checker == "rw-register");
    CHECK(v.validity == Validity::kInvalid);
    CHECK(Contains(v.summary, "G1c"));
    CHECK(Contains(v.explanation, "T0 -wr-> T1"));
  }
  SECTION("G2-item") {
    Hist h = Concurrent({{Rr("x", std::nullopt), W("y", 1)},
                         {Rr("y", std::nullopt), W("x", 1)}});
    Verdict v = Check(h, false);
    INFO(v.explanation);
    CHECK(v.validity == Validity::kInvalid);
    CHECK(Contains(v.summary, "G2-item"));
    CHECK(Check(h, false, "snapshot-isolation").validity == Validity::kValid);
  }
  SECTION("stale read: G-single-realtime") {
    Hist h;
    h.Txn(0, {W("x", 1)});
    h.Txn(1, {Rr("x", std::nullopt)});
    Verdict v = Check(h, false);
    INFO(v.explanation);
    CHECK(v.validity == Validity::kInvalid);
    CHECK(Contains(v.summary, "G-single-realtime"));
    CHECK(Contains(v.explanation, "T1 -rw-> T0"));
    CHECK(Check(h, false, "serializable").validity == Validity::kValid);
  }
  SECTION("valid") {
    Hist h;
    h.Txn(0, {W("x", 1)});
    h.Txn(1, {Rr("x", 1), W("x", 2)});
    h.Txn(0, {Rr("x", 2)});
    Verdict v = Check(h, false);
    INFO(v.explanation);
    CHECK(v.validity == Validity::kValid);
  }
  SECTION("malformed") {
    Hist h;
    h.Txn(0, {Ap("x", 1)});
    Verdict v = Check(h, false);
    CHECK(v.validity == Validity::kUnknown);
    CHECK(Contains(v.summary, "unknown: line 1"));
  }
}

}  // namespace
}  // namespace faultline::checkers::txn

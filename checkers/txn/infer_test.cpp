// Tests for the inference half of checkers/txn (txn_internal.h):
// ExtractTxns, InferListAppend and InferRwRegister on hand-built histories —
// the data edges of serial histories, the completeness rule, each anomaly
// found without a cycle, extraction errors with their lines, and the
// explainers' sentences.
#include <catch2/catch.hpp>
#include <initializer_list>
#include <string>
#include <vector>

#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

Value I(std::int64_t i) { return Value::Int(i); }
Value S(const char* s) { return Value::String(s); }
Value L(std::initializer_list<std::int64_t> xs) {
  Value::List l;
  for (auto x : xs) l.push_back(I(x));
  return Value::MakeList(std::move(l));
}
Value M(const char* f, Value k, Value v) {
  return Value::MakeList({S(f), std::move(k), std::move(v)});
}
Value Ap(std::int64_t k, std::int64_t v) { return M("append", I(k), I(v)); }
Value Rl(std::int64_t k, std::initializer_list<std::int64_t> xs) {
  return M("r", I(k), L(xs));
}
Value W(const char* k, std::int64_t v) { return M("w", S(k), I(v)); }
Value Rr(const char* k, std::optional<std::int64_t> v) {
  return M("r", S(k), v ? I(*v) : Value());
}

class H {
 public:
  // An invoke/completion pair by process `p`; the invocation's reads are
  // null. Returns the txn id (txns are numbered in invocation order).
  TxnId Txn(std::vector<Value> mops, EventType type = EventType::kOk,
            std::int64_t p = -2) {
    Value::List inv;
    for (const Value& m : mops) {
      const Value::List& parts = m.as_list();
      inv.push_back(parts[0].as_string() == "r"
                        ? Value::MakeList({parts[0], parts[1], Value()})
                        : m);
    }
    if (p == -2) p = next_process_++;
    Push(p, EventType::kInvoke, Value::MakeList(inv));
    Push(p, type,
         type == EventType::kOk ? Value::MakeList(mops) : Value::MakeList(inv));
    return txns_++;
  }
  void Push(std::int64_t p, EventType type, Value v, const char* f = "txn") {
    Event e;
    e.index = static_cast<std::int64_t>(h.size());
    e.process = p;
    e.type = type;
    e.f = f;
    e.value = std::move(v);
    h.push_back(std::move(e));
  }
  History h;

 private:
  TxnId txns_ = 0;
  std::int64_t next_process_ = 0;
};

std::uint8_t EdgeOf(const Graph& g, TxnId a, TxnId b) {
  for (std::uint32_t e = g.OutBegin(a); e < g.OutEnd(a); ++e) {
    if (g.Target(e) == b) return g.Bits(e);
  }
  return 0;
}

std::vector<std::string> Types(const Inference& inf) {
  std::vector<std::string> out;
  for (const Anomaly& a : inf.anomalies) out.push_back(a.type);
  return out;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Inference La(const H& h) {
  Inference inf = InferListAppend(h.h, Limits{});
  std::string why = inf.error ? ToString(*inf.error) : std::string();
  INFO(why);
  REQUIRE_FALSE(inf.error);
  REQUIRE(inf.gave_up.empty());
  return inf;
}

Inference Rw(const H& h) {
  Inference inf = InferRwRegister(h.h, Limits{});
  std::string why = inf.error ? ToString(*inf.error) : std::string();
  INFO(why);
  REQUIRE_FALSE(inf.error);
  REQUIRE(inf.gave_up.empty());
  return inf;
}

TEST_CASE("list-append: serial history gives ww, wr and rw", "[txn]") {
  H h;
  TxnId t0 = h.Txn({Rl(1, {})});
  TxnId t1 = h.Txn({Ap(1, 10)});
  TxnId t2 = h.Txn({Rl(1, {10}), Ap(1, 11)});
  TxnId t3 = h.Txn({Rl(1, {10, 11})});
  TxnId t4 = h.Txn({Rl(1, {10})});
  Inference inf = La(h);
  CHECK(inf.anomalies.empty());
  const Graph& g = inf.graph;
  CHECK(EdgeOf(g, t0, t1) == kRW);
  CHECK(EdgeOf(g, t1, t2) == (kWW | kWR));
  CHECK(EdgeOf(g, t2, t3) == kWR);
  CHECK(EdgeOf(g, t1, t4) == kWR);
  CHECK(EdgeOf(g, t4, t2) == kRW);
  CHECK(g.edge_count() == 5);
  CHECK(inf.explainer->Why(t1, t2, kWW) ==
        "ww on key 1: T2 appended 11 right after T1's 10 (key 1 read as [.. "
        "10 11 ..] by T3)");
  CHECK(inf.explainer->Why(t2, t3, kWR) ==
        "wr on key 1: T3 read key 1 as [.. 11], and 11 was appended by T2");
  CHECK(inf.explainer->Why(t4, t2, kRW) ==
        "rw on key 1: T4 read key 1 as [10], which T2's append of 11 follows");
  CHECK(inf.explainer->Why(t0, t1, kRW) ==
        "rw on key 1: T0 read key 1 as [], which T1's append of 10 follows");
  CHECK(DescribeTxn(inf.set, t2) ==
        "T2 (process 2, ok, events 4-5): [r 1 [10]] [append 1 11]");
}

TEST_CASE("list-append: an unobserved acknowledged append follows every read",
          "[txn]") {
  H h;
  TxnId t0 = h.Txn({Ap(1, 1)});
  TxnId t1 = h.Txn({Rl(1, {1})});
  TxnId t2 = h.Txn({Ap(1, 2)});                    // ok, never read
  TxnId t3 = h.Txn({Ap(1, 3)}, EventType::kInfo);  // maybe never happened
  TxnId t4 = h.Txn({Rl(1, {1})});
  Inference inf = La(h);
  CHECK(inf.anomalies.empty());
  CHECK(EdgeOf(inf.graph, t1, t2) == kRW);
  CHECK(EdgeOf(inf.graph, t4, t2) == kRW);
  CHECK(EdgeOf(inf.graph, t0, t2) == kWW);
  for (TxnId t = 0; t < 5; ++t) {
    CHECK(EdgeOf(inf.graph, t, t3) == 0);
    CHECK(EdgeOf(inf.graph, t3, t) == 0);
  }
  CHECK(inf.explainer->Why(t1, t2, kRW) ==
        "rw on key 1: T1 read key 1 without 2, which T2 appended "
        "(acknowledged) and no read ever showed, so T2's append follows "
        "every read");
  CHECK(Contains(inf.explainer->Why(t0, t2, kWW), "no read ever showed"));
}

TEST_CASE("list-append: info appends that were read get edges", "[txn]") {
  H h;
  TxnId t0 = h.Txn({Ap(1, 1)}, EventType::kInfo);
  TxnId t1 = h.Txn({Ap(1, 2)}, EventType::kInfo);
  TxnId t2 = h.Txn({Rl(1, {1, 2})});
  Inference inf = La(h);
  CHECK(inf.anomalies.empty());
  CHECK(EdgeOf(inf.graph, t0, t1) == kWW);
  CHECK(EdgeOf(inf.graph, t1, t2) == kWR);
  CHECK(Contains(DescribeTxn(inf.set, t0), "info"));
}

TEST_CASE("list-append: an info txn seen on one key committed on all",
          "[txn]") {
  H h;
  TxnId t0 = h.Txn({Ap(1, 1)});
  TxnId t1 = h.Txn({Ap(0, 8), Ap(1, 9)}, EventType::kInfo);
  TxnId t2 = h.Txn({Rl(1, {1}), Rl(0, {8})});
  Inference inf = La(h);
  CHECK(inf.anomalies.empty());
  CHECK(EdgeOf(inf.graph, t1, t2) == kWR);  // key 0
  CHECK(EdgeOf(inf.graph, t2, t1) == kRW);  // key 1: 9 follows every read
  CHECK(EdgeOf(inf.graph, t0, t1) == kWW);
  CHECK(Contains(inf.explainer->Why(t2, t1, kRW),
                 "(committed: a read showed another of its appends)"));
}

TEST_CASE("list-append: G1a, G1b and garbage reads", "[txn]") {
  SECTION("G1a") {
    H h;
    TxnId t0 = h.Txn({Ap(3, 9)}, EventType::kFail);
    TxnId t1 = h.Txn({Rl(3, {9})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"G1a"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1, t0});
    CHECK(inf.anomalies[0].text ==
          "T1 read key 3 as [9]; 9 was appended by T0, which failed (G1a: "
          "aborted read).");
    CHECK(inf.graph.edge_count() == 0);
  }
  SECTION("G1b") {
    H h;
    TxnId t0 = h.Txn({Ap(3, 1), Ap(3, 2)});
    TxnId t1 = h.Txn({Rl(3, {1})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"G1b"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1, t0});
    CHECK(Contains(inf.anomalies[0].text, "which appended 2 to key 3 after"));
    CHECK(EdgeOf(inf.graph, t0, t1) == kWR);
  }
  SECTION("garbage-read") {
    H h;
    h.Txn({Ap(3, 1)});
    TxnId t1 = h.Txn({Rl(3, {1, 7})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"garbage-read"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1});
    CHECK(Contains(inf.anomalies[0].text, "7 was never appended to key 3"));
  }
}

TEST_CASE("list-append: internal, duplicate-elements, incompatible-order",
          "[txn]") {
  SECTION("a read that does not end with the txn's own append") {
    H h;
    TxnId t0 = h.Txn({Ap(1, 1), Rl(1, {})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"internal"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t0});
    CHECK(inf.anomalies[0].text ==
          "T0 appended [1] to key 1 and then read it as [], which does not "
          "end with its own appends (internal).");
  }
  SECTION("a second read that disagrees with the first and the appends") {
    H h;
    h.Txn({Ap(1, 5)});
    h.Txn({Ap(1, 6)});
    TxnId t2 = h.Txn({Rl(1, {5}), Ap(1, 7), Rl(1, {5, 6, 7})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"internal"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t2});
    CHECK(Contains(inf.anomalies[0].text, "should have read [5 7]"));
  }
  SECTION("a read that shows an append the txn makes only later") {
    H h;
    h.Txn({Ap(1, 5)});
    TxnId t1 = h.Txn({Rl(1, {5, 7}), Ap(1, 7)});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"internal"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1});
    CHECK(inf.anomalies[0].text ==
          "T1 read key 1 as [5 7], which shows 7, an append it made only "
          "later in the same transaction (internal).");
  }
  SECTION("own appends read back in order are fine") {
    H h;
    h.Txn({Ap(1, 5)});
    TxnId t1 = h.Txn({Rl(1, {5}), Ap(1, 7), Ap(1, 8), Rl(1, {5, 7, 8})});
    TxnId t2 = h.Txn({Rl(1, {5, 7, 8})});
    Inference inf = La(h);
    CHECK(inf.anomalies.empty());
    CHECK(EdgeOf(inf.graph, t1, t2) == kWR);
  }
  SECTION("duplicate-elements") {
    H h;
    h.Txn({Ap(1, 5)});
    TxnId t1 = h.Txn({Rl(1, {5, 5})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"duplicate-elements"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1});
    CHECK(Contains(inf.anomalies[0].text, "holds 5 twice"));
  }
  SECTION("incompatible-order") {
    H h;
    TxnId t0 = h.Txn({Ap(1, 1)});
    TxnId t1 = h.Txn({Ap(1, 2)});
    TxnId t2 = h.Txn({Rl(1, {1, 2})});
    TxnId t3 = h.Txn({Rl(1, {2})});
    Inference inf = La(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"incompatible-order"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t3, t2});
    CHECK(Contains(inf.anomalies[0].text, "differ at index 0 (2 vs 1)"));
    // The conflicting read gives no edges; the longest still does.
    CHECK(EdgeOf(inf.graph, t1, t3) == 0);
    CHECK(EdgeOf(inf.graph, t0, t1) == kWW);
  }
}

TEST_CASE("list-append: extraction errors name the line", "[txn]") {
  SECTION("wrong f") {
    H h;
    h.Txn({Ap(1, 1)});
    h.Push(0, EventType::kInvoke, Value(), "read");
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 3);
    CHECK(Contains(inf.error->message, "\"read\""));
  }
  SECTION("a micro-op of the wrong shape") {
    H h;
    h.Push(0, EventType::kInvoke, Value::MakeList({L({1, 2})}));
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 1);
  }
  SECTION("an rw-register micro-op in a list-append history") {
    H h;
    h.Txn({Ap(1, 1)});
    h.Txn({W("x", 1)});
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 3);
    CHECK(Contains(inf.error->message, "\"w\""));
  }
  SECTION("a read that is not a list") {
    H h;
    h.Push(0, EventType::kInvoke, Value::MakeList({M("r", I(1), Value())}));
    h.Push(0, EventType::kOk, Value::MakeList({M("r", I(1), I(4))}));
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 2);
  }
  SECTION("a completion whose key differs from the invocation's") {
    H h;
    h.Push(0, EventType::kInvoke, Value::MakeList({Ap(1, 1)}));
    h.Push(0, EventType::kOk, Value::MakeList({Ap(2, 1)}));
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 2);
    CHECK(Contains(inf.error->message, "invocation's (line 1)"));
  }
  SECTION("a completion with fewer micro-ops") {
    H h;
    h.Push(0, EventType::kInvoke, Value::MakeList({Ap(1, 1), Ap(1, 2)}));
    h.Push(0, EventType::kOk, Value::MakeList({Ap(1, 1)}));
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 2);
  }
  SECTION("a completion with no invocation") {
    H h;
    h.Txn({Ap(1, 1)});
    h.Push(0, EventType::kOk, Value::MakeList({Ap(1, 2)}));
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 3);
  }
  SECTION("a value appended twice to one key") {
    H h;
    h.Txn({Ap(1, 1)});
    h.Txn({Ap(2, 1)});  // another key: fine
    h.Txn({Ap(1, 1)}, EventType::kFail);
    Inference inf = InferListAppend(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 5);
    CHECK(Contains(inf.error->message, "unique"));
  }
  SECTION("nemesis events are skipped, unfinished invokes are info") {
    H h;
    h.Push(kNemesisProcess, EventType::kInfo, S("partition"), "start");
    h.Push(0, EventType::kInvoke, Value::MakeList({Ap(1, 1)}));
    ExtractResult r = ExtractTxns(h.h, Workload::kListAppend);
    REQUIRE_FALSE(r.error);
    REQUIRE(r.set.txns.size() == 1);
    CHECK(r.set.txns[0].status == Status::kInfo);
    CHECK(r.set.txns[0].complete_index == -1);
    CHECK(DescribeTxn(r.set, 0) ==
          "T0 (process 0, info, event 1, never completed): [append 1 1]");
  }
}

TEST_CASE("list-append: long reads are shortened in sentences", "[txn]") {
  H h;
  Value::List read;
  for (int i = 1; i <= 41; ++i) {
    h.Txn({Ap(1, i)});
    read.push_back(I(i));
  }
  read.push_back(I(99));
  h.Txn({M("r", I(1), Value::MakeList(read))});
  Inference inf = La(h);
  REQUIRE(Types(inf) == std::vector<std::string>{"garbage-read"});
  CHECK(Contains(inf.anomalies[0].text, "[1 2 3 ... 40 41 99] (42 elements)"));
}

TEST_CASE("list-append: a passed deadline gives up", "[txn]") {
  H h;
  h.Txn({Ap(1, 1)});
  Limits limits;
  limits.deadline = std::chrono::steady_clock::now();
  Inference inf = InferListAppend(h.h, limits);
  CHECK(Contains(inf.gave_up, "deadline reached"));
}

TEST_CASE("rw-register: serial history gives ww, wr and rw", "[txn]") {
  H h;
  TxnId t0 = h.Txn({Rr("x", std::nullopt)});
  TxnId t1 = h.Txn({W("x", 1)});
  TxnId t2 = h.Txn({Rr("x", 1), W("x", 2)});
  TxnId t3 = h.Txn({Rr("x", 2)});
  TxnId t4 = h.Txn({Rr("x", 1)});
  TxnId t5 = h.Txn({W("x", 3)}, EventType::kInfo);  // never read
  Inference inf = Rw(h);
  CHECK(inf.anomalies.empty());
  const Graph& g = inf.graph;
  CHECK(EdgeOf(g, t0, t1) == kRW);
  CHECK(EdgeOf(g, t0, t2) == kRW);
  CHECK(EdgeOf(g, t0, t5) == 0);
  CHECK(EdgeOf(g, t1, t2) == (kWW | kWR));
  CHECK(EdgeOf(g, t2, t3) == kWR);
  CHECK(EdgeOf(g, t1, t4) == kWR);
  CHECK(EdgeOf(g, t4, t2) == kRW);
  CHECK(g.edge_count() == 6);
  CHECK(inf.explainer->Why(t1, t2, kWW) ==
        "ww on key \"x\": T2 read 1 and then wrote 2, so 2 follows T1's 1");
  CHECK(inf.explainer->Why(t2, t3, kWR) ==
        "wr on key \"x\": T3 read 2, which T2 wrote");
  CHECK(inf.explainer->Why(t4, t2, kRW) ==
        "rw on key \"x\": T4 read 1, and T2 (which read 1 and wrote 2) "
        "overwrote it");
  CHECK(inf.explainer->Why(t0, t1, kRW) ==
        "rw on key \"x\": T0 read key \"x\" before any write (nil), and T1 "
        "wrote 1");
  CHECK(DescribeTxn(inf.set, t0) ==
        "T0 (process 0, ok, events 0-1): [r \"x\" nil]");
  CHECK(DescribeTxn(inf.set, t2) ==
        "T2 (process 2, ok, events 4-5): [r \"x\" 1] [w \"x\" 2]");
}

TEST_CASE("rw-register: anomalies without a cycle", "[txn]") {
  SECTION("lost-update") {
    H h;
    h.Txn({W("x", 1)});
    TxnId t1 = h.Txn({Rr("x", 1), W("x", 2)});
    TxnId t2 = h.Txn({Rr("x", 1), W("x", 3)});
    Inference inf = Rw(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"lost-update"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1, t2});
    CHECK(
        Contains(inf.anomalies[0].text, "T1 and T2 both read key \"x\" as 1"));
    CHECK(EdgeOf(inf.graph, t1, t2) == kRW);
    CHECK(EdgeOf(inf.graph, t2, t1) == kRW);
  }
  SECTION("G1a") {
    H h;
    TxnId t0 = h.Txn({W("x", 1)}, EventType::kFail);
    TxnId t1 = h.Txn({Rr("x", 1)});
    Inference inf = Rw(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"G1a"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1, t0});
    CHECK(inf.graph.edge_count() == 0);
  }
  SECTION("G1b") {
    H h;
    TxnId t0 = h.Txn({W("x", 1), W("x", 2)});
    TxnId t1 = h.Txn({Rr("x", 1)});
    Inference inf = Rw(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"G1b"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1, t0});
  }
  SECTION("garbage-read") {
    H h;
    h.Txn({W("x", 1)});
    TxnId t1 = h.Txn({Rr("x", 5)});
    Inference inf = Rw(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"garbage-read"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1});
  }
  SECTION("internal: a read after the txn's own write") {
    H h;
    h.Txn({W("x", 1)});
    TxnId t1 = h.Txn({W("x", 2), Rr("x", 1)});
    Inference inf = Rw(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"internal"});
    CHECK(inf.anomalies[0].txns == std::vector<TxnId>{t1});
    CHECK(Contains(inf.anomalies[0].text, "should have read its own write"));
    CHECK(inf.graph.edge_count() == 0);
  }
  SECTION("internal: two reads that disagree") {
    H h;
    h.Txn({W("x", 1)});
    h.Txn({Rr("x", 1), Rr("x", std::nullopt)});
    Inference inf = Rw(h);
    REQUIRE(Types(inf) == std::vector<std::string>{"internal"});
  }
  SECTION("info writes that were read are committed") {
    H h;
    TxnId t0 = h.Txn({W("x", 1)}, EventType::kInfo);
    TxnId t1 = h.Txn({Rr("x", std::nullopt)});
    TxnId t2 = h.Txn({Rr("x", 1)});
    Inference inf = Rw(h);
    CHECK(inf.anomalies.empty());
    CHECK(EdgeOf(inf.graph, t0, t2) == kWR);
    CHECK(EdgeOf(inf.graph, t1, t0) == kRW);
  }
}

TEST_CASE("rw-register: extraction errors name the line", "[txn]") {
  SECTION("an append in an rw-register history") {
    H h;
    h.Txn({Ap(1, 1)});
    Inference inf = InferRwRegister(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 1);
  }
  SECTION("a list read") {
    H h;
    h.Txn({Rl(1, {1})});
    Inference inf = InferRwRegister(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 2);
  }
  SECTION("a value written twice to one key") {
    H h;
    h.Txn({W("x", 1)});
    h.Txn({W("x", 1)}, EventType::kInfo);
    Inference inf = InferRwRegister(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 3);
  }
  SECTION("a null write") {
    H h;
    h.Txn({M("w", S("x"), Value())});
    Inference inf = InferRwRegister(h.h, Limits{});
    REQUIRE(inf.error);
    CHECK(inf.error->line == 1);
  }
}

}  // namespace
}  // namespace faultline::checkers::txn

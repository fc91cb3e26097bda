// Tests for the analysis half of the transactional checkers (cycles.h,
// classify.h, Analyze): hand-built Inference values with one cycle class
// each, the real-time frontier, the model table and the unknown cases.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checkers/json_parser.h"
#include "checkers/txn/classify.h"
#include "checkers/txn/cycles.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

class StubExplainer : public EdgeExplainer {
 public:
  std::string Why(TxnId from, TxnId to, EdgeBits kind) const override {
    return "stub " + std::string(EdgeName(kind)) + " " + TxnName(from) + " " +
           TxnName(to);
  }
};

struct Spec {
  std::int64_t process;
  Status status;
  std::int64_t invoke;
  std::int64_t complete;
};

// Transactions (in invocation order) and data edges.
Inference Make(const std::vector<Spec>& txns, const std::vector<Edge>& edges) {
  Inference inf;
  inf.workload = Workload::kListAppend;
  for (const Spec& s : txns) {
    Txn t;
    t.process = s.process;
    t.status = s.status;
    t.invoke_index = s.invoke;
    t.complete_index = s.complete;
    inf.set.txns.push_back(t);
  }
  inf.graph = Graph(static_cast<std::uint32_t>(txns.size()));
  for (const Edge& e : edges) inf.graph.Add(e.from, e.to, e.bits);
  inf.graph.Finish();
  inf.explainer = std::make_unique<StubExplainer>();
  return inf;
}

// n ok transactions on distinct processes, all concurrent: no real-time
// or process edges.
std::vector<Spec> Concurrent(int n) {
  std::vector<Spec> out;
  for (int i = 0; i < n; ++i) out.push_back({i, Status::kOk, i, n + i});
  return out;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Verdict Run(Inference inf, const std::string& model = "strict-serializable") {
  TxnOptions o;
  o.consistency_model = model;
  Verdict v = Analyze(std::move(inf), o);
  Value parsed;
  std::string error;
  INFO(v.summary);
  INFO(v.explanation);
  INFO(v.details_json);
  REQUIRE(ParseJson(v.details_json, parsed, &error));
  CHECK(parsed.is_object());
  return v;
}

std::vector<std::string> Types(const Verdict& v) {
  Value parsed;
  std::string error;
  REQUIRE(ParseJson(v.details_json, parsed, &error));
  std::vector<std::string> out;
  const std::string& j = v.details_json;
  const std::size_t at = j.find("\"anomaly_types\":[");
  REQUIRE(at != std::string::npos);
  const std::size_t end = j.find(']', at);
  std::string list = j.substr(at + 17, end - at - 17);
  std::size_t p = 0;
  while ((p = list.find('"', p)) != std::string::npos) {
    const std::size_t q = list.find('"', p + 1);
    out.push_back(list.substr(p + 1, q - p - 1));
    p = q + 1;
  }
  return out;
}

TEST_CASE("txn analyze: G0 cycle of write-write edges", "[txn]") {
  Verdict v = Run(Make(Concurrent(3), {{0, 1, kWW}, {1, 2, kWW}, {2, 0, kWW}}));
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.checker == "list-append");
  CHECK(Types(v) == std::vector<std::string>{"G0"});
  CHECK(Contains(v.summary,
                 "invalid: G0 (1 cycle, 3 transactions) violates "
                 "strict-serializable"));
  CHECK(Contains(v.summary, "no model checked here is satisfied"));
  CHECK(Contains(v.explanation, "G0 cycle of 3 transactions"));
  CHECK(Contains(v.explanation, "T0 -ww-> T1: stub ww T0 T1"));
  CHECK(Contains(v.explanation, "T2 -ww-> T0: stub ww T2 T0"));
  CHECK(Contains(v.details_json, "\"steps\":[{\"txn\":"));
}

TEST_CASE("txn analyze: G1c needs a write-read edge", "[txn]") {
  Verdict v = Run(Make(Concurrent(2), {{0, 1, kWW}, {1, 0, kWR}}));
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Types(v) == std::vector<std::string>{"G1c"});
  CHECK(Contains(v.summary,
                 "the strongest model satisfied is "
                 "read-uncommitted"));
  CHECK(Contains(v.explanation, "T1 -wr-> T0"));
}

TEST_CASE("txn analyze: G-single, one anti-dependency", "[txn]") {
  Verdict v = Run(Make(Concurrent(3), {{0, 1, kRW}, {1, 2, kWR}, {2, 0, kWW}}));
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Types(v) == std::vector<std::string>{"G-single"});
  CHECK(Contains(v.explanation,
                 "G-single cycle of 3 transactions (one anti-dependency):"));
  CHECK(Contains(v.explanation, "Satisfies: read-committed"));
  CHECK(Contains(v.explanation,
                 "Violates: snapshot-isolation and repeatable-read"));
  CHECK(Run(Make(Concurrent(3), {{0, 1, kRW}, {1, 2, kWR}, {2, 0, kWW}}),
            "snapshot-isolation")
            .validity == Validity::kInvalid);
  CHECK(Run(Make(Concurrent(3), {{0, 1, kRW}, {1, 2, kWR}, {2, 0, kWW}}),
            "read-committed")
            .validity == Validity::kValid);
}

TEST_CASE("txn analyze: G2-item, write skew", "[txn]") {
  auto make = [] { return Make(Concurrent(2), {{0, 1, kRW}, {1, 0, kRW}}); };
  Verdict v = Run(make());
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Types(v) == std::vector<std::string>{"G2-item"});
  CHECK(Contains(v.explanation, "(2 anti-dependencies)"));
  CHECK(Contains(v.summary,
                 "the strongest model satisfied is "
                 "snapshot-isolation"));
  CHECK(Run(make(), "snapshot-isolation").validity == Validity::kValid);
  CHECK(Run(make(), "repeatable-read").validity == Validity::kInvalid);
  Verdict rc = Run(make(), "read-committed");
  CHECK(rc.validity == Validity::kValid);
  CHECK(Contains(rc.summary,
                 "G2-item (1 cycle, 2 transactions) is allowed "
                 "by read-committed"));
}

TEST_CASE("txn analyze: a component with both G-single and G2-item", "[txn]") {
  // T0 -rw-> T1 -ww-> T0 (G-single); T1 -rw-> T2 -rw-> T1 (G2-item).
  Verdict v = Run(Make(Concurrent(3),
                       {{0, 1, kRW}, {1, 0, kWW}, {1, 2, kRW}, {2, 1, kRW}}));
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Types(v) == std::vector<std::string>{"G-single", "G2-item"});
  CHECK(Contains(v.summary,
                 "G-single (1 cycle, 2 transactions) and G2-item "
                 "(1 cycle, 2 transactions) violate"));
}

TEST_CASE("txn analyze: real-time and process variants", "[txn]") {
  struct Case {
    std::vector<Edge> data;  // a cycle closed by T0 → T1 real-time order
    const char* type;
  };
  const std::vector<Case> cases = {
      {{{1, 0, kWW}}, "G0"},
      {{{1, 0, kWR}}, "G1c"},
      {{{1, 0, kRW}}, "G-single"},
      {{{1, 2, kRW}, {2, 0, kRW}}, "G2-item"},
  };
  for (const Case& c : cases) {
    for (bool same_process : {false, true}) {
      // T0 completes (event 1) before T1 is invoked (event 2); T2 is
      // concurrent with both.
      std::vector<Spec> txns = {{1, Status::kOk, 0, 1},
                                {same_process ? 1 : 2, Status::kOk, 2, 4},
                                {3, Status::kOk, 0, 5}};
      // Keep invocation order: T2's invoke ties with T0's.
      Verdict v = Run(Make(txns, c.data));
      const std::string want =
          std::string(c.type) + (same_process ? "-process" : "-realtime");
      INFO(want);
      INFO(v.explanation);
      CHECK(v.validity == Validity::kInvalid);
      CHECK(Types(v) == std::vector<std::string>{want});
      if (same_process) {
        CHECK(Contains(v.explanation,
                       "T0 -process-> T1: T0 and T1 ran on process 1, T0 "
                       "first"));
      } else {
        CHECK(Contains(v.explanation,
                       "T0 -realtime-> T1: T0 completed (event 1) before T1 "
                       "was invoked (event 2)"));
      }
      CHECK(Contains(v.summary, "strongest model satisfied is serializable"));
      Verdict ser = Run(Make(txns, c.data), "serializable");
      CHECK(ser.validity == Validity::kValid);
    }
  }
}

TEST_CASE("txn analyze: no cycle is valid", "[txn]") {
  std::vector<Spec> txns = {{0, Status::kOk, 0, 1},
                            {1, Status::kOk, 2, 3},
                            {2, Status::kInfo, 4, -1},
                            {3, Status::kFail, 5, 6}};
  Verdict v = Run(Make(txns, {{0, 1, kWW}, {0, 1, kWR}, {1, 2, kRW}}));
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "valid: 4 transactions, no anomaly; strict-serializable holds");
  CHECK(Contains(v.details_json, "\"satisfied\":[\"strict-serializable\"]"));
  CHECK(Contains(v.details_json, "\"realtime\":2"));
}

TEST_CASE("txn analyze: non-cycle anomalies are classified", "[txn]") {
  Inference inf = Make(Concurrent(2), {});
  inf.anomalies.push_back(Anomaly{"G1a",
                                  {0, 1},
                                  0,
                                  "T1 read 3, which T0 "
                                  "wrote and aborted."});
  inf.anomalies.push_back(Anomaly{"G1a", {0, 1}, 0, "Second one."});
  Verdict v = Run(std::move(inf));
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "invalid: G1a (2) violates strict-serializable; the strongest model "
        "satisfied is read-uncommitted");
  CHECK(Contains(v.explanation, "T1 read 3, which T0 wrote and aborted."));
  Inference again = Make(Concurrent(2), {});
  again.anomalies.push_back(Anomaly{"G1a", {0, 1}, 0, "x"});
  CHECK(Run(std::move(again), "read-uncommitted").validity == Validity::kValid);
}

TEST_CASE("txn classify: the model table", "[txn]") {
  using V = std::vector<std::string>;
  CHECK(StrongestSatisfied(ViolatedModels("G2-item")) ==
        V{"snapshot-isolation"});
  CHECK(WeakestViolated(ViolatedModels("G2-item")) == V{"repeatable-read"});
  CHECK(StrongestSatisfied(ViolatedModels("G-single")) == V{"read-committed"});
  CHECK(WeakestViolated(ViolatedModels("G-single")) ==
        V{"snapshot-isolation", "repeatable-read"});
  CHECK(StrongestSatisfied(ViolatedModels("G1a")) == V{"read-uncommitted"});
  CHECK(WeakestViolated(ViolatedModels("G1a")) == V{"read-committed"});
  CHECK(StrongestSatisfied(ViolatedModels("G0")).empty());
  CHECK(StrongestSatisfied(ViolatedModels("G1c-realtime")) ==
        V{"serializable"});
  CHECK(StrongestSatisfied(ViolatedModels("lost-update")) ==
        V{"read-committed"});
  CHECK(StrongestSatisfied(0) == V{"strict-serializable"});
  CHECK(WeakestViolated(0).empty());
  CHECK(ConsistencyModelNames().size() == 6);
  CHECK(ModelIndex("repeatable-read") == kRepeatableRead);
  CHECK(ModelIndex("linearizable") == -1);
}

TEST_CASE("txn cycles: real-time frontier is the transitive reduction",
          "[txn]") {
  // Events: A inv 0, B inv 1, A ok 2, B ok 3, C inv 4, D inv 5, C ok 6,
  // D ok 7, E (info) inv 8, F (fail) inv 9 ok 10, G inv 11.
  TxnSet set;
  auto add = [&](std::int64_t p, Status s, std::int64_t i, std::int64_t c) {
    Txn t;
    t.process = p;
    t.status = s;
    t.invoke_index = i;
    t.complete_index = c;
    set.txns.push_back(t);
  };
  add(0, Status::kOk, 0, 2);     // A = 0
  add(1, Status::kOk, 1, 3);     // B = 1
  add(2, Status::kOk, 4, 6);     // C = 2
  add(3, Status::kOk, 5, 7);     // D = 3
  add(4, Status::kInfo, 8, 12);  // E = 4
  add(5, Status::kFail, 9, 10);  // F = 5
  add(6, Status::kOk, 11, 13);   // G = 6
  std::vector<Edge> edges;
  RealtimeEdges(set, edges);
  std::set<std::pair<TxnId, TxnId>> got;
  for (const Edge& e : edges) {
    CHECK(e.bits == kRealtime);
    got.insert({e.from, e.to});
  }
  const std::set<std::pair<TxnId, TxnId>> want = {
      {0, 2}, {1, 2}, {0, 3}, {1, 3}, {2, 4}, {3, 4}, {2, 6}, {3, 6}};
  CHECK(got == want);
  // The closure is the full real-time order among non-fail transactions.
  const std::size_t n = set.txns.size();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (auto [a, b] : got) reach[a][b] = true;
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (reach[i][k] && reach[k][j]) reach[i][j] = true;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const Txn& a = set.txns[i];
      const Txn& b = set.txns[j];
      const bool order = a.status == Status::kOk && b.status != Status::kFail &&
                         a.complete_index < b.invoke_index;
      INFO(i << " -> " << j);
      CHECK(reach[i][j] == order);
    }
  }
  std::vector<Edge> proc;
  set.txns[2].process = 0;  // C after A on process 0
  set.txns[6].process = 0;  // G after C
  ProcessEdges(set, proc);
  REQUIRE(proc.size() == 2);
  CHECK(proc[0].from == 0);
  CHECK(proc[0].to == 2);
  CHECK(proc[1].from == 2);
  CHECK(proc[1].to == 6);
}

TEST_CASE("txn cycles: components of a large chain and ring", "[txn]") {
  const std::uint32_t n = 200000;
  TxnSet set;
  for (std::uint32_t i = 0; i < n; ++i) {
    Txn t;
    t.process = i;
    t.status = Status::kOk;
    t.invoke_index = i;
    t.complete_index = 2 * n;
    set.txns.push_back(t);
  }
  Graph g(n);
  for (std::uint32_t i = 0; i + 1 < n; ++i) g.Add(i, i + 1, kWW);
  g.Finish();
  FullGraph full = BuildFullGraph(g, set);
  Components comps = StronglyConnected(full);
  CHECK(comps.count == n);
  CHECK(comps.nontrivial == 0);
  Graph ring(n);
  for (std::uint32_t i = 0; i < n; ++i) ring.Add(i, (i + 1) % n, kWW);
  ring.Finish();
  FullGraph full_ring = BuildFullGraph(ring, set);
  Components rc = StronglyConnected(full_ring);
  CHECK(rc.count == 1);
  CHECK(rc.nontrivial == 1);
  CycleSearch found = FindCycles(full_ring, rc, CycleSearchOptions{});
  REQUIRE(found.cycles.size() == 1);
  CHECK(found.cycles[0].type == "G0");
  CHECK(found.cycles[0].txns.size() == n);
}

TEST_CASE("txn cycles: a cap is no unknown where the kinds have no cycle",
          "[txn]") {
  // n transactions one after another in real time, each with an rw edge
  // back to the one before: one component through real-time edges, many
  // rw start edges (more than the cap), but no cycle of data edges alone.
  const std::uint32_t n = 600;
  TxnSet set;
  for (std::uint32_t i = 0; i < n; ++i) {
    Txn t;
    t.process = i;
    t.status = Status::kOk;
    t.invoke_index = 2 * i;
    t.complete_index = 2 * i + 1;
    set.txns.push_back(t);
  }
  Graph g(n);
  for (std::uint32_t i = 1; i < n; ++i) g.Add(i, i - 1, kRW);
  g.Finish();
  FullGraph full = BuildFullGraph(g, set);
  Components comps = StronglyConnected(full);
  REQUIRE(comps.nontrivial == 1);
  CycleSearch found = FindCycles(full, comps, CycleSearchOptions{});
  // The data-only classes are not capped (no data cycle to miss); a
  // real-time class may be (this graph has no simple cycle of two rw
  // edges, but its real-time-and-data edges do form cycles).
  for (const std::string& t : found.capped_types) {
    CHECK(t.find("-realtime") != std::string::npos);
  }
  REQUIRE_FALSE(found.cycles.empty());
  for (const Cycle& c : found.cycles) {
    CHECK(c.type.find("-realtime") != std::string::npos);
  }
}

TEST_CASE("txn analyze: unknown verdicts", "[txn]") {
  SECTION("deadline already passed") {
    TxnOptions o;
    o.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    Verdict v = Analyze(Make(Concurrent(2), {{0, 1, kWW}, {1, 0, kWW}}), o);
    CHECK(v.validity == Validity::kUnknown);
    CHECK(Contains(v.summary, "gave up: deadline"));
    CHECK(Contains(v.details_json, "\"gave_up\":"));
  }
  SECTION("no ok transaction") {
    Verdict v =
        Run(Make({{0, Status::kInfo, 0, -1}, {1, Status::kFail, 1, 2}}, {}));
    CHECK(v.validity == Validity::kUnknown);
    CHECK(Contains(v.summary, "nothing to check"));
  }
  SECTION("unknown model") {
    Verdict v = Run(Make(Concurrent(1), {}), "linearizable");
    CHECK(v.validity == Validity::kUnknown);
    CHECK(Contains(v.summary, "consistency model \"linearizable\" is not one"));
  }
  SECTION("inference error") {
    Inference inf = Make(Concurrent(1), {});
    inf.error = ReadError{7, 0, "bad micro-op"};
    Verdict v = Run(std::move(inf));
    CHECK(v.validity == Validity::kUnknown);
    CHECK(v.summary == "unknown: line 7: bad micro-op");
  }
  SECTION("inference gave up, with or without a violation") {
    Inference inf = Make(Concurrent(2), {});
    inf.gave_up = "deadline reached while inferring";
    Verdict v = Run(std::move(inf));
    CHECK(v.validity == Validity::kUnknown);
    Inference bad = Make(Concurrent(2), {});
    bad.gave_up = "deadline reached while inferring";
    bad.anomalies.push_back(Anomaly{"G1b", {0, 1}, 0, "T1 read ..."});
    Verdict w = Run(std::move(bad));
    CHECK(w.validity == Validity::kInvalid);
    CHECK(Contains(w.summary, "the check was incomplete"));
  }
}

}  // namespace
}  // namespace faultline::checkers::txn

// Tests for checkers/leader_per_term.h: two leaders in a term (self-claimed,
// named by another node, from campaigns), allowed overlaps of different
// terms, and histories where nothing can be concluded.
#include "checkers/leader_per_term.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

constexpr EventType kInv = EventType::kInvoke;
constexpr EventType kOk = EventType::kOk;
constexpr EventType kFail = EventType::kFail;
constexpr EventType kInfo = EventType::kInfo;

using Events = std::vector<Event>;

// Times are given in ms and stored in ns.
Event Ev(std::int64_t ms, std::int64_t p, EventType type, const char* f,
         Value value = {}) {
  Event e;
  e.time = ms * 1000000;
  e.process = p;
  e.type = type;
  e.f = f;
  e.value = std::move(value);
  return e;
}

Value Status(const char* role, std::optional<std::int64_t> term,
             const char* leader) {
  return Value::MakeObject(
      {{"role", Value::String(role)},
       {"term", term ? Value::Int(*term) : Value()},
       {"leader", leader ? Value::String(leader) : Value()}});
}

// Process p asks `node` at `ms` (invoke) and gets the answer 5 ms later.
Events Observe(std::int64_t p, const char* node, std::int64_t ms,
               const char* role, std::optional<std::int64_t> term,
               const char* leader = nullptr) {
  Event inv = Ev(ms, p, kInv, "observe");
  inv.node = node;
  Event ok = Ev(ms + 5, p, kOk, "observe", Status(role, term, leader));
  ok.node = node;
  return {inv, ok};
}

Events NoAnswer(std::int64_t p, const char* node, std::int64_t ms,
                EventType type) {
  Event inv = Ev(ms, p, kInv, "observe");
  inv.node = node;
  Event done = Ev(ms + 5, p, type, "observe");
  done.node = node;
  done.error = type == kFail ? "connection-refused" : "timeout";
  return {inv, done};
}

Events Campaign(std::int64_t p, std::int64_t ms, std::int64_t term) {
  Event inv = Ev(ms, p, kInv, "campaign");
  inv.key = Value::String("e");
  Event ok = Ev(ms + 5, p, kOk, "campaign", Value::Int(term));
  ok.key = inv.key;
  return {inv, ok};
}

Events Resign(std::int64_t p, std::int64_t ms, std::int64_t term) {
  Event inv = Ev(ms, p, kInv, "resign", Value::Int(term));
  inv.key = Value::String("e");
  Event ok = Ev(ms + 5, p, kOk, "resign", Value::Int(term));
  ok.key = inv.key;
  return {inv, ok};
}

History H(std::vector<Events> parts) {
  History h;
  for (Events& p : parts) {
    for (Event& e : p) h.push_back(std::move(e));
  }
  std::stable_sort(h.begin(), h.end(), [](const Event& a, const Event& b) {
    return *a.time < *b.time;
  });
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i].index = static_cast<std::int64_t>(i);
  }
  return h;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void RequireJson(const Verdict& v) {
  Value parsed;
  std::string error;
  INFO(v.details_json);
  REQUIRE(ParseJson(v.details_json, parsed, &error));
  CHECK(parsed.is_object());
}

TEST_CASE("leader-per-term: a clean failover is valid", "[leader_per_term]") {
  // n1 leads term 1; then n2 leads term 2 after n1 stepped down.
  History h = H({Observe(0, "n1", 0, "leader", 1),
                 Observe(1, "n2", 0, "follower", 1, "n1"),
                 Observe(0, "n1", 1000, "leader", 1),
                 Observe(0, "n1", 2000, "follower", 2, "n2"),
                 Observe(1, "n2", 2100, "leader", 2),
                 Observe(1, "n2", 3000, "leader", 2)});
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(h, {});
  CHECK(r.timed);
  CHECK(r.observations == 6);
  CHECK(r.observations_ok == 6);
  CHECK(r.leader_observations == 4);
  CHECK(r.nodes == 2);
  CHECK(r.terms == 2);
  CHECK(r.conflicting_terms == 0);
  REQUIRE(r.intervals.size() == 2);
  CHECK(r.intervals[0].node == "n1");
  CHECK(r.intervals[0].start == 5000000);
  CHECK(r.intervals[0].end == 2005000000);  // n1's "follower" answer
  CHECK(r.intervals[1].node == "n2");
  CHECK(r.intervals[1].end == 3005000000);  // its last "leader" answer
  CHECK(r.dual_count == 0);
  Verdict v = LeaderPerTermVerdict(r);
  CHECK(v.checker == "leader-per-term");
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary == "one leader per term (2 terms, 6 of 6 observations ok)");
  RequireJson(v);
}

TEST_CASE("leader-per-term: two nodes leading one term is invalid",
          "[leader_per_term]") {
  History h = H({Observe(0, "n1", 1000, "leader", 3),
                 Observe(1, "n2", 1500, "leader", 3),
                 Observe(0, "n1", 2000, "leader", 3)});
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(h, {});
  CHECK(r.conflicting_terms == 1);
  REQUIRE(r.conflicts.size() == 1);
  CHECK(r.conflicts[0].term == 3);
  REQUIRE(r.conflicts[0].claims.size() == 2);
  CHECK(r.conflicts[0].claims[0].node == "n1");
  CHECK(r.conflicts[0].claims[1].node == "n2");
  Verdict v = LeaderPerTermVerdict(r);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: two leaders in term 3: n1 (said so at 1.005 s) and n2 (said "
        "so at 1.505 s)");
  // The explanation leads with what was unsafe.
  CHECK(v.explanation.rfind(
            "unsafe: two leaders in term 3: n1 (said so at 1.005 s) and n2 "
            "(said so at 1.505 s)\n",
            0) == 0);
  RequireJson(v);
}

TEST_CASE("leader-per-term: a leader named by another node counts",
          "[leader_per_term]") {
  // n3 follows n1 in term 4, while n2 says it leads term 4.
  History h = H({Observe(0, "n3", 0, "follower", 4, "n1"),
                 Observe(1, "n2", 100, "leader", 4, "n2")});
  Verdict v = CheckLeaderPerTerm(h);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: two leaders in term 4: n1 (n3 said so at 0.005 s) and n2 "
        "(said so at 0.105 s)");

  LeaderPerTermOptions self_only;
  self_only.named_leaders = false;
  CHECK(CheckLeaderPerTerm(h, self_only).validity == Validity::kValid);

  // A follower naming the node that says it leads is consistent.
  History agree = H({Observe(0, "n3", 0, "follower", 4, "n2"),
                     Observe(1, "n2", 100, "leader", 4, "n2")});
  CHECK(CheckLeaderPerTerm(agree).validity == Validity::kValid);
}

TEST_CASE(
    "leader-per-term: leaders of different terms at once are reported "
    "but allowed",
    "[leader_per_term]") {
  // n1 (term 1) is cut off and keeps believing it leads until 4 s; n2 leads
  // term 2 from 2 s.
  History h = H(
      {Observe(0, "n1", 0, "leader", 1), Observe(0, "n1", 1000, "leader", 1),
       Observe(1, "n2", 1995, "leader", 2), Observe(0, "n1", 3000, "leader", 1),
       Observe(0, "n1", 3995, "follower", 2, "n2"),
       Observe(1, "n2", 4995, "leader", 2)});
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(h, {});
  CHECK(r.conflicting_terms == 0);
  CHECK(r.dual_count == 1);
  CHECK(r.dual_time == 2000000000);
  REQUIRE(r.longest_dual);
  CHECK(r.longest_dual->a.node == "n1");
  CHECK(r.longest_dual->b.node == "n2");
  Verdict v = LeaderPerTermVerdict(r);
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "one leader per term (2 terms, 6 of 6 observations ok); two nodes "
        "believed they led at once for 2.000 s in all (longest 2.000 s: n1 in "
        "term 1 and n2 in term 2, from 2.000 s to 4.000 s)");
  RequireJson(v);
}

TEST_CASE("leader-per-term: unanswered observations are not violations",
          "[leader_per_term]") {
  History h = H({Observe(0, "n1", 0, "leader", 1),
                 NoAnswer(1, "n2", 0, kFail),
                 NoAnswer(2, "n2", 100, kInfo),
                 NoAnswer(0, "n1", 200, kFail),
                 Observe(0, "n1", 300, "leader", 1),
                 {[] {
                   Event e = Ev(400, 3, kInv, "observe");
                   e.node = "n3";
                   return e;
                 }()}});
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(h, {});
  CHECK(r.observations == 6);
  CHECK(r.observations_ok == 2);
  CHECK(r.conflicting_terms == 0);
  REQUIRE(r.intervals.size() == 1);
  CHECK(r.intervals[0].end == 305000000);
  CHECK(LeaderPerTermVerdict(r).validity == Validity::kValid);
}

TEST_CASE("leader-per-term: no ok observation is unknown",
          "[leader_per_term]") {
  History h = H({NoAnswer(0, "n1", 0, kFail), NoAnswer(1, "n2", 0, kInfo)});
  Verdict v = CheckLeaderPerTerm(h);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary ==
        "no observation or campaign completed ok (2 observations), so nothing "
        "was tested");
  CHECK(CheckLeaderPerTerm({}).validity == Validity::kUnknown);

  History bad = H({Observe(0, "n1", 0, "leader", 1)});
  bad[0].process = 1;  // completion without invoke of the same process
  v = CheckLeaderPerTerm(bad);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(Contains(v.summary, "malformed history"));
  RequireJson(v);
}

TEST_CASE("leader-per-term: campaigns", "[leader_per_term]") {
  // Two candidates winning the same term is invalid.
  History twice = H({Campaign(0, 0, 5), Campaign(1, 100, 5)});
  Verdict v = CheckLeaderPerTerm(twice);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: two leaders in term 5 of campaign \"e\": p0 (won its "
        "campaign at 0.005 s) and p1 (won its campaign at 0.105 s)");

  // A deposed candidate that has not resigned yet overlaps its successor;
  // candidate tokens and node terms are separate numbers.
  History h = H({Campaign(0, 0, 1), Observe(9, "n1", 0, "leader", 1),
                 Campaign(1, 3000, 2), Resign(0, 5000, 1), Resign(1, 6000, 2)});
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(h, {});
  CHECK(r.campaigns_ok == 2);
  CHECK(r.conflicting_terms == 0);
  CHECK(r.dual_count == 1);
  CHECK(r.dual_time == 1995000000);  // 3.005 s to 5.000 s
  v = LeaderPerTermVerdict(r);
  CHECK(v.validity == Validity::kValid);
  CHECK(Contains(v.summary, "p0 in term 1 and p1 in term 2"));

  LeaderPerTermOptions off;
  off.campaigns = false;
  CHECK(CheckLeaderPerTerm(twice, off).validity == Validity::kUnknown);
}

TEST_CASE("leader-per-term: histories without time use event indices",
          "[leader_per_term]") {
  History h =
      H({Observe(0, "n1", 0, "leader", 3), Observe(1, "n2", 100, "leader", 3)});
  for (Event& e : h) e.time.reset();
  Verdict v = CheckLeaderPerTerm(h);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: two leaders in term 3: n1 (said so at event 1) and n2 (said "
        "so at event 3)");
}

TEST_CASE("leader-per-term: observation keys are separate domains",
          "[leader_per_term]") {
  Events a = Observe(0, "n1", 0, "leader", 1);
  for (Event& e : a) e.key = Value::String("c1");
  Events b = Observe(1, "n1", 10, "leader", 1);
  for (Event& e : b) e.key = Value::String("c2");
  Events c = Observe(2, "n2", 20, "leader", 1);
  for (Event& e : c) e.key = Value::String("c2");
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(H({a, b, c}), {});
  CHECK(r.terms == 2);
  REQUIRE(r.conflicting_terms == 1);
  CHECK(r.conflicts[0].domain == "observe \"c2\"");
  CHECK(Contains(LeaderPerTermVerdict(r).summary,
                 "two leaders in term 1 of observe \"c2\""));
}

History ParseDoc(const char* text) {
  ReadResult r = ParseJsonl(text);
  INFO(ToString(r.error));
  REQUIRE(r.ok);
  return r.history;
}

TEST_CASE("leader-per-term: the documented examples", "[leader_per_term]") {
  History observe = ParseDoc(
      R"({"index":0,"time":0,"process":5,"type":"invoke","f":"observe","value":null,"node":"n1"}
{"index":1,"time":4000000,"process":5,"type":"ok","f":"observe","value":{"role":"leader","term":1,"leader":"n1"},"node":"n1"}
{"index":2,"time":2000000000,"process":6,"type":"invoke","f":"observe","value":null,"node":"n2"}
{"index":3,"time":2003000000,"process":6,"type":"ok","f":"observe","value":{"role":"leader","term":2,"leader":"n2"},"node":"n2"}
{"index":4,"time":3000000000,"process":5,"type":"invoke","f":"observe","value":null,"node":"n1"}
{"index":5,"time":3002000000,"process":5,"type":"ok","f":"observe","value":{"role":"leader","term":1,"leader":"n1"},"node":"n1"}
{"index":6,"time":4000000000,"process":5,"type":"invoke","f":"observe","value":null,"node":"n1"}
{"index":7,"time":4001000000,"process":5,"type":"ok","f":"observe","value":{"role":"follower","term":2,"leader":"n2"},"node":"n1"}
{"index":8,"time":4500000000,"process":6,"type":"invoke","f":"observe","value":null,"node":"n2"}
{"index":9,"time":4502000000,"process":6,"type":"ok","f":"observe","value":{"role":"leader","term":2,"leader":"n2"},"node":"n2"}
{"index":10,"time":4600000000,"process":7,"type":"invoke","f":"observe","value":null,"node":"n3"}
{"index":11,"time":4700000000,"process":7,"type":"info","f":"observe","value":null,"node":"n3","error":"timeout"}
)");
  Verdict v = CheckLeaderPerTerm(observe);
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "one leader per term (2 terms, 5 of 6 observations ok); two nodes "
        "believed they led at once for 1.998 s in all (longest 1.998 s: n1 in "
        "term 1 and n2 in term 2, from 2.003 s to 4.001 s)");

  History election = ParseDoc(
      R"({"index":0,"time":0,"process":3,"type":"invoke","f":"campaign","key":"election","value":null}
{"index":1,"time":9000000,"process":3,"type":"ok","f":"campaign","key":"election","value":7}
{"index":2,"time":20000000,"process":3,"type":"invoke","f":"resource-write","key":"r","value":[7,31],"fenced":true}
{"index":3,"time":25000000,"process":3,"type":"ok","f":"resource-write","key":"r","value":[7,31]}
{"index":4,"time":3000000000,"process":4,"type":"invoke","f":"campaign","key":"election","value":null}
{"index":5,"time":3010000000,"process":4,"type":"ok","f":"campaign","key":"election","value":8}
{"index":6,"time":3500000000,"process":3,"type":"invoke","f":"resign","key":"election","value":7}
{"index":7,"time":3510000000,"process":3,"type":"ok","f":"resign","key":"election","value":7}
)");
  LeaderPerTermResult r = AnalyzeLeaderPerTerm(election, {});
  CHECK(r.conflicting_terms == 0);
  CHECK(r.dual_time == 490000000);  // 3.010 s to 3.500 s
  CHECK(LeaderPerTermVerdict(r).validity == Validity::kValid);
}

}  // namespace
}  // namespace faultline::checkers

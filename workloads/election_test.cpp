// The election workload: its seeded generator (campaign, renew + write per
// write, resign; the stall between a renew and its write), its client
// wrapper against a scripted fake lock client (campaign/resign mapped to
// acquire/release, a failed renew deposes: no more writes, no resign), and
// its checkers on a recorded history.
#include "workloads/election.h"

#include <catch2/catch.hpp>
#include <deque>
#include <set>

#include "checkers/history.h"

namespace {

using faultline::checkers::Event;
using faultline::checkers::EventType;
using faultline::checkers::History;
using faultline::checkers::Validity;
using faultline::checkers::Value;
using faultline::harness::Client;
using faultline::harness::Completion;
using faultline::harness::Operation;
using faultline::harness::Outcome;
using faultline::harness::PreparedOp;
using faultline::harness::StatefulClient;
using faultline::harness::WorkloadSpec;
using faultline::workloads::MakeElectionWorkload;

// A lock client with scripted answers per f; records what it was asked.
class ScriptedLocks : public Client {
 public:
  std::deque<Completion> acquires;
  std::deque<Completion> renews;  // empty: ok
  std::vector<Operation> seen;
  Completion Invoke(const Operation& op) noexcept override {
    seen.push_back(op);
    std::deque<Completion>* q = op.f == "acquire" ? &acquires
                                : op.f == "renew" ? &renews
                                                  : nullptr;
    if (q != nullptr && !q->empty()) {
      Completion c = q->front();
      q->pop_front();
      return c;
    }
    return {Outcome::kOk, op.value, ""};
  }
};

WorkloadSpec Spec() {
  WorkloadSpec w;
  w.name = "election";
  w.locks = 1;
  w.concurrency = 3;
  w.writes_per_hold = 2;
  w.hold_ms = 90;
  w.ttl_ms = 1000;
  return w;
}

}  // namespace

TEST_CASE("election generator: campaign, renew+write, resign; seeded") {
  WorkloadSpec w = Spec();
  w.stall_probability = 0.5;
  w.stall_ms = 700;
  auto wl = MakeElectionWorkload(w);
  CHECK(wl->name() == "election");
  CHECK(wl->client_kind() == "lock");  // the vocabulary the target opens
  auto a = wl->ForWorker(2, 5);
  auto b = wl->ForWorker(2, 5);
  const char* expected[] = {"campaign", "renew",          "resource-write",
                            "renew",    "resource-write", "resign"};
  std::set<std::int64_t> values;
  int stalls = 0;
  for (int i = 0; i < 600; ++i) {
    Operation x = a->Next();
    Operation y = b->Next();
    REQUIRE(x.f == y.f);
    REQUIRE(x.value == y.value);
    REQUIRE(x.f == expected[i % 6]);
    const Value* delay = x.value.Find("delay_ms");
    if (x.f == "campaign") {
      CHECK(x.key == Value::String("election0"));
      CHECK(x.value.is_null());
    } else if (x.f == "resource-write") {
      CHECK(x.key == Value::String("election0-resource"));
      REQUIRE(delay != nullptr);
      // The write follows its renew at once, unless it is the stall.
      CHECK((delay->as_int() == 0 || delay->as_int() == 700));
      if (delay->as_int() == 700) ++stalls;
      REQUIRE(values.insert(x.value.Find("value")->as_int()).second);
      CHECK(x.value.Find("value")->as_int() % 3 == 0);  // worker 2 of 3
    } else {
      REQUIRE(delay != nullptr);
      CHECK(delay->as_int() >= 15);  // hold_ms / 3 with jitter
      CHECK(delay->as_int() <= 45);
    }
  }
  CHECK(stalls > 20);  // half of 100 terms
  CHECK(stalls < 80);
}

TEST_CASE("election wrapper: campaign/resign map to acquire/release") {
  auto wl = MakeElectionWorkload(Spec());
  auto inner = std::make_unique<ScriptedLocks>();
  ScriptedLocks* locks = inner.get();
  locks->acquires = {{Outcome::kFail, Value(), "lost"},
                     {Outcome::kOk, Value::Int(12), ""},
                     {Outcome::kOk, Value::Int(20), ""}};
  locks->renews = {{Outcome::kOk, Value::Int(12), ""},
                   {Outcome::kOk, Value::Int(12), ""},
                   {Outcome::kOk, Value::Int(20), ""},
                   {Outcome::kFail, Value::Int(20), "lease-expired"}};
  auto client = wl->WrapClient(std::move(inner));
  auto* stateful = dynamic_cast<StatefulClient*>(client.get());
  REQUIRE(stateful != nullptr);
  auto gen = wl->ForWorker(0, 1);

  // Term 1: the campaign is lost, so nothing else of it runs.
  PreparedOp p = stateful->Prepare(gen->Next());
  REQUIRE(p.op.f == "campaign");
  Completion c = client->Invoke(p.op);
  CHECK(c.type == Outcome::kFail);
  CHECK(c.value.is_null());
  CHECK(locks->seen.back().f == "acquire");
  CHECK(locks->seen.back().value == Value::Int(1000));  // ttl_ms
  for (int i = 0; i < 5; ++i) CHECK(stateful->Prepare(gen->Next()).skip);

  // Term 2: won with token 12; renews and writes carry it; resign.
  c = client->Invoke(stateful->Prepare(gen->Next()).op);
  REQUIRE(c.type == Outcome::kOk);
  CHECK(c.value == Value::Int(12));
  for (int i = 0; i < 2; ++i) {
    p = stateful->Prepare(gen->Next());
    REQUIRE(p.op.f == "renew");
    CHECK(p.op.key == Value::String("election0"));
    CHECK(p.op.value == Value::Int(12));
    CHECK(client->Invoke(p.op).type == Outcome::kOk);
    p = stateful->Prepare(gen->Next());
    REQUIRE(p.op.f == "resource-write");
    CHECK(p.op.value.as_list()[0] == Value::Int(12));
    CHECK(p.extra[1].second == Value::String("election0"));
    CHECK(client->Invoke(p.op).type == Outcome::kOk);
  }
  p = stateful->Prepare(gen->Next());
  REQUIRE(p.op.f == "resign");
  CHECK(p.op.value == Value::Int(12));
  c = client->Invoke(p.op);
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value == Value::Int(12));
  CHECK(locks->seen.back().f == "release");
  CHECK(locks->seen.back().value == Value::Int(12));

  // Term 3: token 20; the second renew fails: deposed, so its write and the
  // resign are skipped and the inner client is not asked again.
  c = client->Invoke(stateful->Prepare(gen->Next()).op);
  REQUIRE(c.value == Value::Int(20));
  client->Invoke(stateful->Prepare(gen->Next()).op);  // renew ok
  client->Invoke(stateful->Prepare(gen->Next()).op);  // write ok
  p = stateful->Prepare(gen->Next());
  REQUIRE(p.op.f == "renew");
  c = client->Invoke(p.op);
  CHECK(c.type == Outcome::kFail);
  CHECK(c.error == "lease-expired");
  const std::size_t asked = locks->seen.size();
  CHECK(stateful->Prepare(gen->Next()).skip);  // the write
  CHECK(stateful->Prepare(gen->Next()).skip);  // the resign
  CHECK(locks->seen.size() == asked);
  CHECK(stateful->Prepare(gen->Next()).op.f == "campaign");
}

TEST_CASE("election check: mutex-fencing, leader-per-term and stats") {
  auto wl = MakeElectionWorkload(Spec());
  History h;
  auto add = [&](std::int64_t p, EventType t, std::string f, Value key, Value v,
                 std::string err = "") {
    Event e;
    e.index = static_cast<std::int64_t>(h.size());
    e.time = e.index * 1000;
    e.process = p;
    e.type = t;
    e.f = std::move(f);
    e.key = std::move(key);
    e.value = std::move(v);
    e.error = std::move(err);
    if (e.f == "resource-write") {
      e.extra = {{"fenced", Value::Bool(true)},
                 {"lock", Value::String("election0")}};
    }
    h.push_back(std::move(e));
  };
  const Value el = Value::String("election0");
  const Value res = Value::String("election0-resource");
  auto w = [](int t, int v) {
    return Value::MakeList({Value::Int(t), Value::Int(v)});
  };
  add(0, EventType::kInvoke, "campaign", el, Value());
  add(0, EventType::kOk, "campaign", el, Value::Int(7));
  add(0, EventType::kInvoke, "resource-write", res, w(7, 1));
  add(0, EventType::kOk, "resource-write", res, w(7, 1));
  add(1, EventType::kInvoke, "campaign", el, Value());
  add(1, EventType::kOk, "campaign", el, Value::Int(7));  // the same term
  add(1, EventType::kInvoke, "resource-write", res, w(7, 2));
  add(1, EventType::kOk, "resource-write", res, w(7, 2));
  auto verdicts = wl->Check(h, {});
  REQUIRE(verdicts.size() == 3);
  CHECK(verdicts[0].checker == "mutex-fencing");
  CHECK(verdicts[0].validity == Validity::kInvalid);  // token duplicate
  CHECK(verdicts[1].checker == "leader-per-term");
  CHECK(verdicts[1].validity == Validity::kInvalid);  // two leaders of term 7
  CHECK(verdicts[2].checker == "stats");

  // With leader observations the run adds leader-per-term itself.
  add(2, EventType::kInvoke, "observe", Value(), Value());
  add(2, EventType::kOk, "observe", Value(),
      Value::MakeObject({{"role", Value::String("leader")},
                         {"term", Value::Int(1)},
                         {"leader", Value::String("n1")}}));
  h.back().node = "n1";
  h[h.size() - 2].node = "n1";
  verdicts = wl->Check(h, {});
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[1].checker == "stats");
}

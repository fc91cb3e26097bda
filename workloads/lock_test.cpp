// The lock workload: the protected resource, the seeded generator, and the
// client wrapper (token bookkeeping, skips, stalls, resource writes) against
// a scripted fake lock client; its checker on the histories it produces.
// Also: the register workload's checker skips the leader observer's events.
#include "workloads/lock.h"

#include <catch2/catch.hpp>
#include <deque>
#include <set>

#include "checkers/history.h"
#include "workloads/register.h"

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
using faultline::workloads::MakeLockWorkload;
using faultline::workloads::ProtectedResource;

// Answers acquire with scripted outcomes; records what it was asked.
class ScriptedLocks : public Client {
 public:
  std::deque<Completion> acquires;
  std::vector<Operation> seen;
  Completion Invoke(const Operation& op) noexcept override {
    seen.push_back(op);
    if (op.f == "acquire") {
      Completion c = acquires.front();
      acquires.pop_front();
      return c;
    }
    return {Outcome::kOk, op.value, ""};
  }
};

WorkloadSpec Spec() {
  WorkloadSpec w;
  w.name = "lock";
  w.locks = 1;
  w.concurrency = 2;
  w.writes_per_hold = 2;
  w.hold_ms = 30;
  w.ttl_ms = 50;
  return w;
}

}  // namespace

TEST_CASE("protected resource: fenced rejects lower tokens, unfenced not") {
  ProtectedResource fenced(true);
  CHECK(fenced.Write(5, 1).accepted);
  CHECK(fenced.Write(5, 2).accepted);  // equal token: same holder
  CHECK(fenced.Write(7, 3).accepted);
  auto stale = fenced.Write(6, 4);
  CHECK_FALSE(stale.accepted);
  CHECK(stale.highest == 7);
  CHECK_FALSE(fenced.Write(std::nullopt, 5).accepted);
  CHECK(fenced.value() == 3);
  CHECK(fenced.accepted() == 3);
  CHECK(fenced.rejected() == 2);

  ProtectedResource open(false);
  CHECK(open.Write(7, 1).accepted);
  CHECK(open.Write(6, 2).accepted);
  CHECK(open.Write(std::nullopt, 3).accepted);
  CHECK(open.value() == 3);
}

TEST_CASE("lock generator: acquire, writes, release; seeded and unique") {
  WorkloadSpec w = Spec();
  w.locks = 3;
  w.stall_probability = 0.5;
  w.stall_ms = 1000;
  auto wl = MakeLockWorkload(w);
  auto a = wl->ForWorker(1, 99);
  auto b = wl->ForWorker(1, 99);
  std::set<std::int64_t> values;
  int stalls = 0;
  for (int i = 0; i < 400; ++i) {
    Operation x = a->Next();
    Operation y = b->Next();
    REQUIRE(x.f == y.f);
    REQUIRE(x.key == y.key);
    REQUIRE(x.value == y.value);
    const char* expected[] = {"acquire", "resource-write", "resource-write",
                              "release"};
    REQUIRE(x.f == expected[i % 4]);
    if (x.f == "resource-write") {
      REQUIRE(x.value.Find("value") != nullptr);
      CHECK(values.insert(x.value.Find("value")->as_int()).second);
      // Written values of worker 1 with concurrency 2: n * 2 + 2.
      CHECK(x.value.Find("value")->as_int() % 2 == 0);
    }
    if (x.f != "acquire" && x.value.Find("delay_ms")->as_int() >= 1000) {
      ++stalls;
    }
  }
  CHECK(stalls > 20);  // about half of 100 holds
  CHECK(stalls < 80);
  CHECK(wl->FinalOps().empty());
}

TEST_CASE("lock client wrapper: tokens, skips, stalls and the resource") {
  WorkloadSpec w = Spec();
  w.stall_probability = 1;
  w.stall_ms = 500;
  auto wl = MakeLockWorkload(w);
  auto inner = std::make_unique<ScriptedLocks>();
  ScriptedLocks* locks = inner.get();
  locks->acquires = {{Outcome::kFail, Value(), "LOCKED held"},
                     {Outcome::kOk, Value::Int(9), ""},
                     {Outcome::kOk, Value::Int(4), ""}};
  auto client = wl->WrapClient(std::move(inner));
  auto* stateful = dynamic_cast<StatefulClient*>(client.get());
  REQUIRE(stateful != nullptr);
  auto gen = wl->ForWorker(0, 7);

  // Hold 1: the acquire fails, so its writes and release are skipped.
  PreparedOp p = stateful->Prepare(gen->Next());
  REQUIRE_FALSE(p.skip);
  CHECK(p.op.value.is_null());
  CHECK(client->Invoke(p.op).type == Outcome::kFail);
  for (int i = 0; i < 3; ++i) CHECK(stateful->Prepare(gen->Next()).skip);

  // Hold 2: token 9; the writes carry it, one is preceded by the stall.
  p = stateful->Prepare(gen->Next());
  Completion acq = client->Invoke(p.op);
  REQUIRE(acq.type == Outcome::kOk);
  CHECK(acq.value == Value::Int(9));
  CHECK(locks->seen.back().value == Value::Int(50));  // ttl_ms to the target
  std::int64_t stalled = 0;
  for (int i = 0; i < 2; ++i) {
    p = stateful->Prepare(gen->Next());
    REQUIRE_FALSE(p.skip);
    REQUIRE(p.op.f == "resource-write");
    CHECK(p.op.key == Value::String("lock0-resource"));
    REQUIRE(p.op.value.is_list());
    CHECK(p.op.value.as_list()[0] == Value::Int(9));
    REQUIRE(p.extra.size() == 2);
    CHECK(p.extra[0].first == "fenced");
    CHECK(p.extra[0].second == Value::Bool(true));
    CHECK(p.extra[1].second == Value::String("lock0"));
    if (p.delay.count() >= 500) ++stalled;
    CHECK(client->Invoke(p.op).type == Outcome::kOk);
  }
  CHECK(stalled == 1);
  p = stateful->Prepare(gen->Next());
  REQUIRE(p.op.f == "release");
  CHECK(p.op.value == Value::Int(9));
  CHECK(client->Invoke(p.op).type == Outcome::kOk);

  // Hold 3: token 4 < 9 (a broken lock service): the resource rejects it.
  client->Invoke(stateful->Prepare(gen->Next()).op);
  p = stateful->Prepare(gen->Next());
  Completion stale = client->Invoke(p.op);
  CHECK(stale.type == Outcome::kFail);
  CHECK(stale.error == "fenced");
}

TEST_CASE("lock workload check: mutex-fencing reads the recorded history") {
  auto wl = MakeLockWorkload(Spec());
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
                 {"lock", Value::String("lock0")}};
    }
    h.push_back(std::move(e));
  };
  const Value lock = Value::String("lock0");
  const Value res = Value::String("lock0-resource");
  auto w = [](int t, int v) {
    return Value::MakeList({Value::Int(t), Value::Int(v)});
  };
  add(0, EventType::kInvoke, "acquire", lock, Value());
  add(0, EventType::kOk, "acquire", lock, Value::Int(5));
  add(1, EventType::kInvoke, "acquire", lock, Value());
  add(1, EventType::kOk, "acquire", lock, Value::Int(3));  // goes backwards
  add(1, EventType::kInvoke, "resource-write", res, w(3, 1));
  add(1, EventType::kFail, "resource-write", res, w(3, 1), "fenced");
  auto verdicts = wl->Check(h, {});
  REQUIRE(verdicts.size() == 2);
  CHECK(verdicts[0].checker == "mutex-fencing");
  CHECK(verdicts[0].validity == Validity::kInvalid);
  CHECK(verdicts[0].summary.find("not monotonic") != std::string::npos);
}

TEST_CASE("register workload check skips observe events") {
  faultline::harness::WorkloadSpec w;
  auto reg = faultline::workloads::MakeRegisterWorkload(w);
  History h;
  auto add = [&](std::int64_t p, EventType t, std::string f, Value v) {
    Event e;
    e.index = static_cast<std::int64_t>(h.size());
    e.time = e.index * 1000;
    e.process = p;
    e.type = t;
    e.f = std::move(f);
    e.key = e.f == "observe" ? Value() : Value::String("k0");
    if (e.f == "observe") e.node = "n1";
    e.value = std::move(v);
    h.push_back(std::move(e));
  };
  const Value view = Value::MakeObject({{"role", Value::String("leader")},
                                        {"term", Value::Int(2)},
                                        {"leader", Value::String("n1")}});
  add(0, EventType::kInvoke, "write", Value::Int(1));
  add(1000000000, EventType::kInvoke, "observe", Value());
  add(0, EventType::kOk, "write", Value::Int(1));
  add(1000000000, EventType::kOk, "observe", view);
  add(1, EventType::kInvoke, "read", Value());
  add(1, EventType::kOk, "read", Value::Int(1));
  auto verdicts = reg->Check(h, {});
  REQUIRE_FALSE(verdicts.empty());
  CHECK(verdicts[0].validity == Validity::kValid);
  // And a stale read among observations is still caught.
  h.back().value = Value::Null();
  CHECK(reg->Check(h, {})[0].validity == Validity::kInvalid);
}

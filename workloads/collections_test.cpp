#include "workloads/collections.h"

#include <catch2/catch.hpp>
#include <set>

using faultline::checkers::EventType;
using faultline::checkers::History;
using faultline::checkers::Validity;
using faultline::checkers::Value;
using faultline::harness::Operation;
using faultline::harness::WorkloadSpec;

namespace {

std::vector<Operation> Take(faultline::harness::WorkerGenerator& g, int n) {
  std::vector<Operation> ops;
  for (int i = 0; i < n; ++i) ops.push_back(g.Next());
  return ops;
}

bool Same(const std::vector<Operation>& a, const std::vector<Operation>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].f != b[i].f || a[i].value.ToJson() != b[i].value.ToJson())
      return false;
  }
  return true;
}

WorkloadSpec Spec(const std::string& name) {
  WorkloadSpec spec;
  spec.name = name;
  spec.concurrency = 3;
  spec.read = 20;
  spec.write = 80;
  return spec;
}

// One client operation, invoked and completed back to back.
void Op(History* h, std::int64_t process, const std::string& f,
        const Value& invoke, EventType done, const Value& result) {
  faultline::checkers::Event e;
  e.index = static_cast<std::int64_t>(h->size());
  e.time = e.index * 1000;
  e.process = process;
  e.f = f;
  e.type = EventType::kInvoke;
  e.value = invoke;
  h->push_back(e);
  e.index = static_cast<std::int64_t>(h->size());
  e.time = e.index * 1000;
  e.type = done;
  e.value = result;
  h->push_back(e);
}

}  // namespace

TEST_CASE("set generator: seeded, unique adds, reads at the read weight",
          "[collections]") {
  WorkloadSpec spec = Spec("set");
  auto w = faultline::workloads::MakeSetWorkload(spec);
  CHECK(w->name() == "set");
  CHECK(w->client_kind() == "set");
  REQUIRE(w->FinalOps().size() == 1);
  CHECK(w->FinalOps()[0].f == "read");
  std::set<std::int64_t> added;
  int reads = 0;
  int total = 0;
  for (int worker = 0; worker < spec.concurrency; ++worker) {
    auto a = Take(*w->ForWorker(worker, 11 + worker), 1000);
    CHECK(Same(a, Take(*w->ForWorker(worker, 11 + worker), 1000)));
    for (const Operation& op : a) {
      ++total;
      if (op.f == "read") {
        ++reads;
        CHECK(op.value.is_null());
        continue;
      }
      REQUIRE(op.f == "add");
      REQUIRE(op.value.is_int());
      CHECK(added.insert(op.value.as_int()).second);
    }
  }
  CHECK(reads > total * 0.15);
  CHECK(reads < total * 0.25);
}

TEST_CASE("bank generator: transfers between distinct accounts",
          "[collections]") {
  WorkloadSpec spec = Spec("bank");
  spec.accounts = 3;
  spec.max_transfer = 4;
  auto w = faultline::workloads::MakeBankWorkload(spec);
  CHECK(w->name() == "bank");
  std::set<std::int64_t> amounts;
  std::set<std::int64_t> froms;
  auto ops = Take(*w->ForWorker(0, 5), 2000);
  CHECK(Same(ops, Take(*w->ForWorker(0, 5), 2000)));
  CHECK_FALSE(Same(ops, Take(*w->ForWorker(0, 6), 2000)));
  for (const Operation& op : ops) {
    if (op.f == "read") continue;
    REQUIRE(op.f == "transfer");
    REQUIRE(op.value.is_object());
    const auto& o = op.value.as_object();
    REQUIRE(o.size() == 3);
    CHECK(o[0].first == "from");
    CHECK(o[1].first == "to");
    CHECK(o[2].first == "amount");
    const std::int64_t from = o[0].second.as_int();
    const std::int64_t to = o[1].second.as_int();
    CHECK(from != to);
    CHECK(from >= 0);
    CHECK(from < 3);
    CHECK(to >= 0);
    CHECK(to < 3);
    froms.insert(from);
    amounts.insert(o[2].second.as_int());
  }
  CHECK(froms == std::set<std::int64_t>{0, 1, 2});
  CHECK(amounts == std::set<std::int64_t>{1, 2, 3, 4});
}

TEST_CASE("counter generator: small positive increments", "[collections]") {
  auto w = faultline::workloads::MakeCounterWorkload(Spec("counter"));
  CHECK(w->name() == "counter");
  for (const Operation& op : Take(*w->ForWorker(1, 9), 1000)) {
    if (op.f == "read") continue;
    REQUIRE(op.f == "add");
    CHECK(op.value.as_int() >= 1);
    CHECK(op.value.as_int() <= 5);
  }
}

TEST_CASE("collection workloads apply their checker and stats",
          "[collections]") {
  const Value null = Value::Null();
  {
    History h;
    Op(&h, 0, "add", Value::Int(1), EventType::kOk, Value::Int(1));
    Op(&h, 1, "read", null, EventType::kOk, Value::MakeList({Value::Int(1)}));
    auto v = faultline::workloads::MakeSetWorkload(Spec("set"))->Check(h, {});
    REQUIRE(v.size() == 2);
    CHECK(v[0].checker == "set");
    CHECK(v[0].validity == Validity::kValid);
    CHECK(v[1].checker == "stats");
    History lost = h;
    Op(&lost, 1, "read", null, EventType::kOk, Value::MakeList({}));
    v = faultline::workloads::MakeSetWorkload(Spec("set"))->Check(lost, {});
    CHECK(v[0].validity == Validity::kInvalid);
  }
  {
    WorkloadSpec spec = Spec("bank");
    spec.accounts = 2;
    spec.total = 10;
    auto read = [](std::int64_t a, std::int64_t b) {
      return Value::MakeObject({{"0", Value::Int(a)}, {"1", Value::Int(b)}});
    };
    History h;
    Op(&h, 0, "read", null, EventType::kOk, read(5, 5));
    auto v = faultline::workloads::MakeBankWorkload(spec)->Check(h, {});
    CHECK(v[0].checker == "bank");
    CHECK(v[0].validity == Validity::kValid);
    // The configured total is the one checked, not the first read's.
    History wrong;
    Op(&wrong, 0, "read", null, EventType::kOk, read(5, 6));
    v = faultline::workloads::MakeBankWorkload(spec)->Check(wrong, {});
    CHECK(v[0].validity == Validity::kInvalid);
    // And the configured accounts.
    History missing;
    Op(&missing, 0, "read", null, EventType::kOk,
       Value::MakeObject({{"0", Value::Int(10)}}));
    v = faultline::workloads::MakeBankWorkload(spec)->Check(missing, {});
    CHECK(v[0].validity == Validity::kInvalid);
  }
  {
    History h;
    Op(&h, 0, "add", Value::Int(3), EventType::kOk, Value::Int(3));
    Op(&h, 1, "read", null, EventType::kOk, Value::Int(3));
    auto w = faultline::workloads::MakeCounterWorkload(Spec("counter"));
    auto v = w->Check(h, {});
    CHECK(v[0].checker == "counter");
    CHECK(v[0].validity == Validity::kValid);
    Op(&h, 1, "read", null, EventType::kOk, Value::Int(2));
    CHECK(w->Check(h, {})[0].validity == Validity::kInvalid);
  }
}

#include "workloads/register.h"

#include <catch2/catch.hpp>
#include <set>

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
    if (a[i].f != b[i].f || a[i].key != b[i].key || a[i].value != b[i].value)
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("register generator: same seed, same operations") {
  WorkloadSpec spec;
  auto w = faultline::workloads::MakeRegisterWorkload(spec);
  auto a = Take(*w->ForWorker(3, 42), 500);
  auto b = Take(*w->ForWorker(3, 42), 500);
  auto c = Take(*w->ForWorker(3, 43), 500);
  CHECK(Same(a, b));
  CHECK_FALSE(Same(a, c));
}

TEST_CASE("register generator: written values are unique across workers") {
  WorkloadSpec spec;
  spec.concurrency = 7;
  auto w = faultline::workloads::MakeRegisterWorkload(spec);
  std::set<std::int64_t> seen;
  int writes = 0;
  for (int worker = 0; worker < spec.concurrency; ++worker) {
    auto gen = w->ForWorker(worker, 1);
    for (const auto& op : Take(*gen, 2000)) {
      std::int64_t v;
      if (op.f == "write") {
        v = op.value.as_int();
      } else if (op.f == "cas") {
        v = op.value.as_list().at(1).as_int();
      } else {
        continue;
      }
      ++writes;
      CHECK(seen.insert(v).second);
    }
  }
  CHECK(writes > 1000);
}

TEST_CASE("register generator: follows the mix and the key range") {
  WorkloadSpec spec;
  spec.keys = 3;
  spec.read = 1;
  spec.write = 0;
  spec.cas = 0;
  auto w = faultline::workloads::MakeRegisterWorkload(spec);
  std::set<std::string> keys;
  for (const auto& op : Take(*w->ForWorker(0, 9), 300)) {
    CHECK(op.f == "read");
    CHECK(op.value.is_null());
    keys.insert(op.key.as_string());
  }
  CHECK(keys == std::set<std::string>{"k0", "k1", "k2"});
}

TEST_CASE("register generator: a cas expects this worker's last write") {
  WorkloadSpec spec;
  spec.keys = 1;
  spec.read = 0;
  spec.write = 1;
  spec.cas = 1;
  auto w = faultline::workloads::MakeRegisterWorkload(spec);
  auto gen = w->ForWorker(2, 5);
  std::int64_t last = -1;
  int cas = 0;
  for (const auto& op : Take(*gen, 200)) {
    if (op.f == "cas") {
      ++cas;
      REQUIRE(last != -1);
      CHECK(op.value.as_list().at(0).as_int() == last);
      last = op.value.as_list().at(1).as_int();
    } else {
      last = op.value.as_int();
    }
  }
  CHECK(cas > 50);
}

TEST_CASE("register workload: final operations read every key") {
  WorkloadSpec spec;
  spec.keys = 4;
  auto w = faultline::workloads::MakeRegisterWorkload(spec);
  auto ops = w->FinalOps();
  REQUIRE(ops.size() == 4);
  for (int k = 0; k < 4; ++k) {
    CHECK(ops[k].f == "read");
    CHECK(ops[k].key == Value::String("k" + std::to_string(k)));
  }
}

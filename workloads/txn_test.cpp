#include "workloads/txn.h"

#include <catch2/catch.hpp>
#include <map>
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

}  // namespace

TEST_CASE("txn generators: seeded, shaped, unique values", "[txn]") {
  WorkloadSpec spec;
  spec.name = "list-append";
  spec.keys = 10;
  spec.concurrency = 4;
  spec.min_txn_length = 2;
  spec.max_txn_length = 3;
  spec.read = 50;
  spec.write = 50;
  for (bool append : {true, false}) {
    auto w = append ? faultline::workloads::MakeListAppendWorkload(spec)
                    : faultline::workloads::MakeRwRegisterWorkload(spec);
    CHECK(w->name() == (append ? "list-append" : "rw-register"));
    CHECK(w->FinalOps().empty());
    std::set<std::pair<std::int64_t, std::int64_t>> written;
    std::map<std::int64_t, int> writes_per_key;
    std::size_t total_writes = 0;
    for (int worker = 0; worker < spec.concurrency; ++worker) {
      auto a = Take(*w->ForWorker(worker, 7 + worker), 2000);
      auto b = Take(*w->ForWorker(worker, 7 + worker), 2000);
      for (std::size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i].f == "txn");
        REQUIRE(a[i].value == b[i].value);  // same seed, same transactions
        const auto& mops = a[i].value.as_list();
        REQUIRE(mops.size() >= 2);
        REQUIRE(mops.size() <= 3);
        for (const Value& m : mops) {
          const auto& x = m.as_list();
          REQUIRE(x.size() == 3);
          REQUIRE(x[1].is_int());
          if (x[0].as_string() == "r") {
            CHECK(x[2].is_null());
            continue;
          }
          CHECK(x[0].as_string() == (append ? "append" : "w"));
          // Values are unique over every worker, so unique per key too.
          CHECK(written.insert({0, x[2].as_int()}).second);
          ++writes_per_key[x[1].as_int()];
          ++total_writes;
        }
      }
    }
    // Keys rotate: about max_writes_per_key writes each, so many more keys
    // than the 10 in use at a time, and none far past the bound.
    CHECK(writes_per_key.size() > 10 * total_writes / (2 * 32 * 10));
    int most = 0;
    for (const auto& [k, n] : writes_per_key) most = std::max(most, n);
    CHECK(most <= 3 * spec.max_writes_per_key);
  }
}

TEST_CASE("txn generators: hot keys take most accesses", "[txn]") {
  WorkloadSpec spec;
  spec.keys = 20;
  spec.key_dist = "hot";
  spec.max_writes_per_key = 100000;  // one generation: slots are keys
  auto w = faultline::workloads::MakeListAppendWorkload(spec);
  auto ops = Take(*w->ForWorker(0, 1), 3000);
  std::size_t hot = 0, all = 0;
  for (const Operation& op : ops) {
    for (const Value& m : op.value.as_list()) {
      ++all;
      if (m.as_list()[1].as_int() < 2) ++hot;  // a tenth of 20 slots
    }
  }
  CHECK(hot > all * 8 / 10);
  CHECK(hot < all * 95 / 100);
}

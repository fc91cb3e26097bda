// Properties of every partition shape for n = 2..9: symmetry, coverage,
// the shape's own connectivity property, and determinism per seed.
#include "nemesis/net/partition.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

using faultline::nemesis::BlockedFlows;
using faultline::nemesis::ComputePartition;
using faultline::nemesis::IsolateNodes;
using faultline::nemesis::Partition;
using faultline::nemesis::PartitionRuleSpecs;
using faultline::nemesis::PartitionShapes;

namespace {

bool Sees(const Partition& p, int a, int b) {
  auto it = p.grudge.find(a);
  return it == p.grudge.end() || !it->second.count(b);
}

// Sizes of what each node sees (itself included).
std::vector<int> ViewSizes(const Partition& p, int n) {
  std::vector<int> out;
  for (int a = 0; a < n; ++a) {
    int seen = 0;
    for (int b = 0; b < n; ++b) seen += Sees(p, a, b) ? 1 : 0;
    out.push_back(seen);
  }
  return out;
}

void CheckCommon(const Partition& p, int n) {
  std::set<int> covered;
  for (const auto& c : p.components) covered.insert(c.begin(), c.end());
  CHECK(static_cast<int>(covered.size()) == n);
  bool some_cut = false;
  for (int a = 0; a < n; ++a) {
    CHECK(Sees(p, a, a));
    for (int b = 0; b < n; ++b) {
      if (p.one_way) {  // a cut flow never goes both ways
        if (!Sees(p, a, b)) CHECK(Sees(p, b, a));
      } else {
        CHECK(Sees(p, a, b) == Sees(p, b, a));  // symmetric
      }
      some_cut = some_cut || !Sees(p, a, b);
    }
  }
  CHECK(some_cut);
  for (const auto& [who, dropped] : p.grudge) {
    CHECK(who >= 0);
    CHECK(who < n);
    CHECK_FALSE(dropped.empty());
  }
}

}  // namespace

TEST_CASE("partition shapes are symmetric and cover every node",
          "[partition]") {
  for (const auto& shape : PartitionShapes()) {
    for (int n = 2; n <= 9; ++n) {
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        auto p = ComputePartition(shape, n, seed);
        if ((shape == "bridge" || shape == "majorities-ring") && n < 3) {
          CHECK_FALSE(p.ok());
          continue;
        }
        INFO(shape << " n=" << n << " seed=" << seed);
        REQUIRE(p.ok());
        CHECK(p->shape == shape);
        CheckCommon(*p, n);
      }
    }
  }
}

TEST_CASE("partition shapes are deterministic per seed", "[partition]") {
  for (const auto& shape : PartitionShapes()) {
    for (int n = 3; n <= 9; ++n) {
      std::set<std::vector<std::vector<int>>> seen;
      for (std::uint64_t seed = 0; seed < 30; ++seed) {
        auto a = ComputePartition(shape, n, seed);
        auto b = ComputePartition(shape, n, seed);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(a->components == b->components);
        CHECK(a->grudge == b->grudge);
        seen.insert(a->components);
      }
      INFO(shape << " n=" << n);
      CHECK(seen.size() > 1);  // the seed matters
    }
  }
}

TEST_CASE("one and leader isolate a single node", "[partition]") {
  for (int n = 2; n <= 9; ++n) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      auto p = ComputePartition("one", n, seed);
      REQUIRE(p.ok());
      REQUIRE(p->components.size() == 2);
      CHECK(p->components[0].size() == 1);
      CHECK(static_cast<int>(p->components[1].size()) == n - 1);
      const int alone = p->components[0][0];
      auto sizes = ViewSizes(*p, n);
      for (int a = 0; a < n; ++a)
        CHECK(sizes[static_cast<std::size_t>(a)] == (a == alone ? 1 : n - 1));
      for (int leader = 0; leader < n; ++leader) {
        auto l = ComputePartition("leader", n, seed, leader);
        REQUIRE(l.ok());
        CHECK(l->components[0] == std::vector<int>{leader});
      }
      // Unknown leader: a random node, still one alone.
      auto u = ComputePartition("leader", n, seed);
      REQUIRE(u.ok());
      CHECK(u->components[0].size() == 1);
    }
  }
}

TEST_CASE("same cuts the given nodes off from the rest", "[partition]") {
  auto p = IsolateNodes({3, 1, 3}, 5);
  REQUIRE(p.ok());
  CHECK(p->shape == "same");
  CHECK_FALSE(p->one_way);
  CHECK(p->components == std::vector<std::vector<int>>{{1, 3}, {0, 2, 4}});
  CHECK(p->grudge.at(1) == std::set<int>{0, 2, 4});
  CHECK(p->grudge.at(0) == std::set<int>{1, 3});
  CHECK_FALSE(IsolateNodes({}, 3).ok());
  CHECK_FALSE(IsolateNodes({3}, 3).ok());
  auto every = IsolateNodes({0, 1, 2}, 3);
  REQUIRE_FALSE(every.ok());
  CHECK(every.error().find("every node") != std::string::npos);
}

TEST_CASE("halves splits floor(n/2) against the rest", "[partition]") {
  for (int n = 2; n <= 9; ++n) {
    auto p = ComputePartition("halves", n, 7);
    REQUIRE(p.ok());
    REQUIRE(p->components.size() == 2);
    CHECK(static_cast<int>(p->components[0].size()) == n / 2);
    CHECK(static_cast<int>(p->components[1].size()) == n - n / 2);
    for (int a : p->components[0])
      for (int b : p->components[1]) {
        CHECK_FALSE(Sees(*p, a, b));
      }
    for (const auto& c : p->components)
      for (int a : c)
        for (int b : c) CHECK(Sees(*p, a, b));
  }
}

TEST_CASE("bridge connects two halves through one node", "[partition]") {
  for (int n = 3; n <= 9; ++n) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      auto p = ComputePartition("bridge", n, seed);
      REQUIRE(p.ok());
      auto sizes = ViewSizes(*p, n);
      int bridges = 0;
      for (int s : sizes) bridges += s == n ? 1 : 0;
      CHECK(bridges == 1);  // only the bridge node sees everyone
      // Everyone else sees the bridge and a strict subset of the cluster;
      // the "sees" graph is connected (through the bridge).
      REQUIRE(p->components.size() == 2);
      std::vector<int> common;
      for (int a : p->components[0])
        for (int b : p->components[1])
          if (a == b) common.push_back(a);
      REQUIRE(common.size() == 1);
      for (int a = 0; a < n; ++a) CHECK(Sees(*p, a, common[0]));
      CHECK(static_cast<int>(p->components[0].size() +
                             p->components[1].size()) == n + 1);
    }
  }
}

TEST_CASE("majorities-ring: each node sees a distinct majority",
          "[partition]") {
  for (int n = 3; n <= 9; ++n) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      INFO("n=" << n << " seed=" << seed);
      auto p = ComputePartition("majorities-ring", n, seed);
      REQUIRE(p.ok());
      REQUIRE(static_cast<int>(p->components.size()) == n);
      std::set<std::vector<int>> views;
      for (int a = 0; a < n; ++a) {
        std::vector<int> view;
        for (int b = 0; b < n; ++b)
          if (Sees(*p, a, b)) view.push_back(b);
        CHECK(view == p->components[static_cast<std::size_t>(a)]);
        CHECK(static_cast<int>(view.size()) >= n / 2 + 1);
        views.insert(view);
      }
      CHECK(static_cast<int>(views.size()) == n);
    }
  }
  // n = 5 is the exact ring: every node sees exactly its two neighbours,
  // and following neighbours visits all five nodes in one cycle.
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    auto p = ComputePartition("majorities-ring", 5, seed);
    REQUIRE(p.ok());
    for (const auto& v : p->components) CHECK(v.size() == 3);
    int prev = -1, at = 0, steps = 0;
    do {
      int next = -1;
      for (int b : p->components[static_cast<std::size_t>(at)])
        if (b != at && b != prev) {
          next = b;
          break;
        }
      REQUIRE(next >= 0);
      prev = at;
      at = next;
      ++steps;
    } while (at != 0 && steps < 10);
    CHECK(steps == 5);
  }
}

TEST_CASE("partition rejects unknown shapes and tiny clusters", "[partition]") {
  CHECK_FALSE(ComputePartition("triangle", 5, 1).ok());
  CHECK_FALSE(ComputePartition("halves", 1, 1).ok());
  CHECK_FALSE(ComputePartition("bridge", 2, 1).ok());
  auto e = ComputePartition("majorities-ring", 2, 1);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().find("3 nodes") != std::string::npos);
}

TEST_CASE("one-way shapes: the first group stops hearing the rest only",
          "[partition]") {
  for (int n = 2; n <= 9; ++n) {
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      INFO("n=" << n << " seed=" << seed);
      for (const char* base : {"one", "leader", "halves"}) {
        const std::string shape = std::string("one-way-") + base;
        auto two = ComputePartition(base, n, seed, 1 % n);
        auto one = ComputePartition(shape, n, seed, 1 % n);
        REQUIRE(two.ok());
        REQUIRE(one.ok());
        CHECK(one->one_way);
        CHECK_FALSE(two->one_way);
        CHECK(one->shape == shape);
        // Same groups as the two-way shape of the same seed.
        CHECK(one->components == two->components);
        const auto& deaf = one->components[0];
        const auto& rest = one->components[1];
        for (int a = 0; a < n; ++a) {
          for (int b = 0; b < n; ++b) {
            if (a == b) continue;
            bool a_deaf = std::count(deaf.begin(), deaf.end(), a) > 0;
            bool b_rest = std::count(rest.begin(), rest.end(), b) > 0;
            CHECK(Sees(*one, a, b) == !(a_deaf && b_rest));
          }
        }
        // Every blocked flow goes from the rest to the deaf group.
        auto flows = BlockedFlows(*one);
        CHECK(flows.size() == deaf.size() * rest.size());
        for (const auto& [from, to] : flows) {
          CHECK(std::count(rest.begin(), rest.end(), from) == 1);
          CHECK(std::count(deaf.begin(), deaf.end(), to) == 1);
        }
      }
    }
  }
  // one-way-leader: the leader is the deaf one.
  auto p = ComputePartition("one-way-leader", 5, 3, 2);
  REQUIRE(p.ok());
  CHECK(p->components[0] == std::vector<int>{2});
  CHECK(p->grudge.size() == 1);
  CHECK(p->grudge.at(2) == std::set<int>{0, 1, 3, 4});
}

TEST_CASE("blocked flows of a two-way partition go both ways", "[partition]") {
  auto p = ComputePartition("one", 3, 0);
  REQUIRE(p.ok());
  auto flows = BlockedFlows(*p);
  CHECK(flows.size() == 4);  // 2 flows each way between 1 and 2 nodes
  for (const auto& [from, to] : flows)
    CHECK(std::count(flows.begin(), flows.end(), std::pair{to, from}) == 1);
}

TEST_CASE("partition rule specs: drop, or reset TCP then drop the rest",
          "[partition]") {
  CHECK(PartitionRuleSpecs({"10.0.0.2", "10.0.0.3"}, "drop") ==
        std::vector<std::string>{"-s 10.0.0.2/32 -j DROP",
                                 "-s 10.0.0.3/32 -j DROP"});
  CHECK(PartitionRuleSpecs({"10.0.0.2"}, "reset") ==
        std::vector<std::string>{
            "-s 10.0.0.2/32 -p tcp --tcp-flags RST RST -j RETURN",
            "-s 10.0.0.2/32 -p tcp -j REJECT --reject-with tcp-reset",
            "-s 10.0.0.2/32 -j DROP"});
  CHECK(PartitionRuleSpecs({}, "reset").empty());
}

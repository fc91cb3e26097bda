#include "nemesis/schedule.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

using faultline::harness::FaultStep;
using faultline::harness::NemesisSpec;
using faultline::nemesis::FaultSchedule;
using faultline::nemesis::MakeSchedule;

TEST_CASE("schedule is deterministic per seed", "[schedule]") {
  NemesisSpec spec;
  auto a = MakeSchedule(spec, 42, 50);
  auto b = MakeSchedule(spec, 42, 50);
  auto c = MakeSchedule(spec, 43, 50);
  REQUIRE(a.size() == 50);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].selector == b[i].selector);
    CHECK(a[i].seed == b[i].seed);
    differs = differs || a[i].kind != c[i].kind ||
              a[i].selector != c[i].selector || a[i].seed != c[i].seed;
  }
  CHECK(differs);
  // A prefix is the same schedule.
  auto prefix = MakeSchedule(spec, 42, 10);
  for (std::size_t i = 0; i < prefix.size(); ++i)
    CHECK(prefix[i].seed == a[i].seed);
}

TEST_CASE("schedule draws kinds and selectors from the spec", "[schedule]") {
  NemesisSpec spec;
  spec.faults = {"partition", "pause", "kill"};
  spec.partitions = {"halves", "bridge"};
  spec.targets = {"leader", "all"};
  std::map<std::string, int> kinds;
  std::map<std::string, int> selectors;
  std::set<std::uint64_t> seeds;
  for (const FaultStep& s : MakeSchedule(spec, 7, 600)) {
    ++kinds[s.kind];
    ++selectors[s.selector];
    seeds.insert(s.seed);
    if (s.kind == "partition") {
      CHECK((s.selector == "halves" || s.selector == "bridge"));
    } else {
      CHECK((s.selector == "leader" || s.selector == "all"));
    }
  }
  REQUIRE(kinds.size() == 3);
  for (const auto& [kind, count] : kinds) {
    INFO(kind);
    CHECK(count > 150);  // uniform: 200 expected each
    CHECK(count < 250);
  }
  CHECK(selectors.size() == 4);
  CHECK(seeds.size() == 600);  // per-step seeds differ
}

TEST_CASE("schedule without faults is empty; empty lists use defaults",
          "[schedule]") {
  NemesisSpec none;
  none.faults.clear();
  FaultSchedule s(none, 1);
  CHECK_FALSE(s.Next().has_value());
  CHECK(MakeSchedule(none, 1, 5).empty());

  NemesisSpec bare;
  bare.faults = {"partition"};
  bare.partitions.clear();
  auto steps = MakeSchedule(bare, 3, 5);
  REQUIRE(steps.size() == 5);
  for (const auto& st : steps) CHECK(st.selector == "halves");
  bare.faults = {"kill"};
  bare.targets.clear();
  for (const auto& st : MakeSchedule(bare, 3, 5)) CHECK(st.selector == "one");
}

#include "nemesis/schedule/schedule.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

using faultline::harness::FaultEntry;
using faultline::harness::FaultPlan;
using faultline::harness::FaultSettings;
using faultline::harness::FaultStep;
using faultline::harness::NemesisSpec;
using faultline::nemesis::FaultSchedule;
using faultline::nemesis::MakeSchedule;

namespace {
FaultSettings Fault(const std::string& kind) {
  FaultSettings f;
  f.fault = kind;
  return f;
}

// The single faults of plans that each hold one.
std::vector<FaultStep> Singles(const std::vector<FaultPlan>& plans) {
  std::vector<FaultStep> out;
  for (const FaultPlan& p : plans) {
    REQUIRE(p.faults.size() == 1);
    out.push_back(p.faults[0]);
  }
  return out;
}
}  // namespace

TEST_CASE("schedule is deterministic per seed", "[schedule]") {
  NemesisSpec spec;
  auto a = Singles(MakeSchedule(spec, 42, 50));
  auto b = Singles(MakeSchedule(spec, 42, 50));
  auto c = Singles(MakeSchedule(spec, 43, 50));
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
  auto prefix = Singles(MakeSchedule(spec, 42, 10));
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
  for (const FaultStep& s : Singles(MakeSchedule(spec, 7, 600))) {
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
  auto steps = Singles(MakeSchedule(bare, 3, 5));
  REQUIRE(steps.size() == 5);
  for (const auto& st : steps) CHECK(st.selector == "halves");
  bare.faults = {"kill"};
  bare.targets.clear();
  for (const auto& st : Singles(MakeSchedule(bare, 3, 5)))
    CHECK(st.selector == "one");
}

TEST_CASE("plain entries written out give the same schedule as names",
          "[schedule]") {
  NemesisSpec names;
  names.faults = {"partition", "pause", "kill"};
  NemesisSpec entries = names;
  for (const auto& k : names.faults) {
    FaultEntry e;
    e.plain = true;
    e.faults.push_back(Fault(k));
    entries.entries.push_back(e);
  }
  auto a = Singles(MakeSchedule(names, 9, 40));
  auto b = Singles(MakeSchedule(entries, 9, 40));
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].selector == b[i].selector);
    CHECK(a[i].seed == b[i].seed);
  }
}

TEST_CASE("per-fault settings override the nemesis-level ones", "[schedule]") {
  NemesisSpec spec;
  spec.duration_s = 10;
  spec.targets = {"one"};
  spec.partitions = {"halves"};
  spec.faults = {"pause", "clock", "partition"};
  FaultEntry pause;  // own targets
  pause.faults.push_back(Fault("pause"));
  pause.faults[0].targets = std::vector<std::string>{"leader", "majority"};
  FaultEntry clock;  // own clock settings and duration
  clock.faults.push_back(Fault("clock"));
  clock.faults[0].targets = std::vector<std::string>{"minority"};
  clock.faults[0].clock_rate = 0.5;
  clock.duration_s = 20;
  FaultEntry part;  // plain: the spec's settings
  part.plain = true;
  part.faults.push_back(Fault("partition"));
  spec.entries = {pause, clock, part};
  std::map<std::string, int> kinds;
  std::set<std::string> pause_selectors;
  for (const FaultPlan& p : MakeSchedule(spec, 5, 300)) {
    REQUIRE(p.faults.size() == 1);
    const FaultStep& s = p.faults[0];
    ++kinds[s.kind];
    if (s.kind == "pause") {
      pause_selectors.insert(s.selector);
      CHECK(p.duration_s == 10);
    } else if (s.kind == "clock") {
      CHECK(s.selector == "minority");
      CHECK(s.clock_rate == 0.5);
      CHECK(s.clock_offset_ms == spec.clock_offset_ms);
      CHECK(p.duration_s == 20);
    } else {
      CHECK(s.kind == "partition");
      CHECK(s.selector == "halves");
      CHECK(s.partition_mode == "drop");
    }
  }
  CHECK(kinds.size() == 3);
  CHECK(pause_selectors == std::set<std::string>{"leader", "majority"});
}

TEST_CASE("a together entry yields all its faults in one plan", "[schedule]") {
  NemesisSpec spec;
  spec.faults = {"clock", "partition"};
  spec.partition_mode = "drop";
  FaultEntry both;
  both.together = true;
  both.duration_s = 7;
  both.faults.push_back(Fault("clock"));
  both.faults[0].targets = std::vector<std::string>{"minority"};
  both.faults[0].clock_offset_ms = 4000;
  both.faults.push_back(Fault("partition"));
  both.faults[1].partitions = std::vector<std::string>{"one-way-halves"};
  both.faults[1].partition_mode = "reset";
  spec.entries = {both};
  auto a = MakeSchedule(spec, 11, 20);
  auto b = MakeSchedule(spec, 11, 20);
  REQUIRE(a.size() == 20);
  std::set<std::uint64_t> seeds;
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].faults.size() == 2);
    CHECK(a[i].duration_s == 7);
    CHECK(a[i].faults[0].kind == "clock");
    CHECK(a[i].faults[0].selector == "minority");
    CHECK(a[i].faults[0].clock_offset_ms == 4000);
    CHECK(a[i].faults[1].kind == "partition");
    CHECK(a[i].faults[1].selector == "one-way-halves");
    CHECK(a[i].faults[1].partition_mode == "reset");
    CHECK(a[i].faults[0].seed != a[i].faults[1].seed);
    CHECK(a[i].faults[0].seed == b[i].faults[0].seed);
    CHECK(a[i].faults[1].seed == b[i].faults[1].seed);
    seeds.insert(a[i].faults[1].seed);
  }
  CHECK(seeds.size() == 20);
}

TEST_CASE("a same selector passes through the schedule as written",
          "[schedule]") {
  NemesisSpec spec;
  FaultEntry group;
  group.together = true;
  FaultSettings clock, partition;
  clock.fault = "clock";
  clock.targets = std::vector<std::string>{"follower", "one"};
  clock.clock_rate = 0.85;
  partition.fault = "partition";
  partition.partitions = std::vector<std::string>{"same"};
  group.faults = {clock, partition};
  spec.entries = {group};
  spec.faults = {"clock", "partition"};
  for (const FaultPlan& plan : MakeSchedule(spec, 5, 20)) {
    REQUIRE(plan.faults.size() == 2);
    CHECK((plan.faults[0].selector == "follower" ||
           plan.faults[0].selector == "one"));
    CHECK(plan.faults[1].selector == "same");
    CHECK(plan.faults[1].nodes.empty());  // bound later, by the interpreter
  }
}

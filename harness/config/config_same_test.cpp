// Config of `same` selectors in together groups (harness/run/fault_group.h):
// where they may stand, their errors (file:line:col) and the round trip.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"

using faultline::harness::ConfigError;
using faultline::harness::DescribeSpec;
using faultline::harness::LoadConfigText;
using faultline::harness::LoadResult;

namespace {

LoadResult Load(const std::string& faults) {
  return LoadConfigText(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults:\n" +
          faults,
      "t.yaml", {});
}

ConfigError OnlyError(const LoadResult& r) {
  INFO(r.FormatErrors());
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors.size() == 1);
  return r.errors[0];
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("same: later faults of a group take the first fault's nodes",
          "[config][schedule]") {
  LoadResult r = Load(
      "    - together:\n"
      "        - {fault: clock, targets: [follower], clock_rate: 0.85}\n"
      "        - {fault: partition, partitions: [same]}\n"
      "        - {fault: pause, targets: [same]}\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  const auto& group = r.spec->nemesis.entries.at(0);
  REQUIRE(group.faults.size() == 3);
  CHECK(group.faults[1].partitions == std::vector<std::string>{"same"});
  CHECK(group.faults[2].targets == std::vector<std::string>{"same"});
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described", {});
  INFO(DescribeSpec(*r.spec));
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->nemesis == r.spec->nemesis);
}

TEST_CASE("same: misplaced uses are errors with file, line and column",
          "[config][schedule]") {
  // On the first fault of a group: nothing earlier to take nodes from.
  ConfigError first = OnlyError(
      Load("    - together:\n"
           "        - {fault: clock, targets: [same], clock_rate: 0.5}\n"
           "        - {fault: partition, partitions: [one]}\n"));
  CHECK(first.file == "t.yaml");
  CHECK(first.line == 7);
  CHECK(first.column == 35);
  CHECK(Contains(first.message, "first fault of a group"));
  CHECK(Contains(first.hint, "targets: [follower]"));

  // After a partition: a shape names no single set of nodes.
  ConfigError after_partition = OnlyError(
      Load("    - together:\n"
           "        - {fault: partition, partitions: [one]}\n"
           "        - {fault: clock, targets: [same], clock_rate: 0.5}\n"));
  CHECK(after_partition.line == 8);
  CHECK(after_partition.column == 35);
  CHECK(Contains(after_partition.message, "first fault is a partition"));

  // Cutting off every node.
  ConfigError all = OnlyError(
      Load("    - together:\n"
           "        - {fault: clock, targets: [all], clock_rate: 0.5}\n"
           "        - {fault: partition, partitions: [same]}\n"));
  CHECK(all.line == 8);
  CHECK(Contains(all.message, "every node"));

  // Outside a group, as a plain fault mapping or at the nemesis level.
  ConfigError alone =
      OnlyError(Load("    - {fault: pause, targets: [same]}\n"));
  CHECK(alone.line == 6);
  CHECK(alone.column == 32);
  CHECK(Contains(alone.message, "only fits a later fault"));
  ConfigError level = OnlyError(LoadConfigText(
      "name: x\nnemesis:\n  faults: [pause]\n  targets: [one, same]\n",
      "t.yaml", {}));
  CHECK(level.line == 4);
  CHECK(level.column == 18);
  CHECK(Contains(level.message, "`together` group"));

  // Drawn among other selectors.
  ConfigError mixed = OnlyError(
      Load("    - together:\n"
           "        - {fault: clock, targets: [one], clock_rate: 0.5}\n"
           "        - {fault: pause, targets: [same, one]}\n"));
  CHECK(mixed.line == 8);
  CHECK(Contains(mixed.message, "among other choices"));
  CHECK(Contains(mixed.hint, "targets: [same]"));
}

TEST_CASE(
    "the follower-lease drift known configs load and differ only in the "
    "switch",
    "[config][schedule]") {
  auto load = [](const char* name) {
    auto k = faultline::harness::LoadConfigFile(
        std::string(FAULTLINE_SOURCE_DIR) + "/configs/known/" + name + ".yaml");
    INFO(name << ": " << k.FormatErrors());
    REQUIRE(k.ok());
    return *k.spec;
  };
  auto bad = load("raftkv-follower-lease-no-margin-drift");
  auto control = load("raftkv-follower-lease-no-margin-drift-control");
  CHECK(bad.target.raftkv.unsafe == "follower-lease-no-margin");
  CHECK(bad.target.raftkv.lease_drift_bound == 0.2);
  CHECK(bad.expect == "invalid");
  CHECK(control.target.raftkv.unsafe == "none");
  CHECK(control.expect == "valid");
  // The drift stays inside the assumed bound, on a faked monotonic clock,
  // and the cut hits the drifting node.
  REQUIRE(bad.nemesis.entries.size() == 1);
  const auto& group = bad.nemesis.entries[0].faults;
  REQUIRE(group.size() == 2);
  CHECK(group[0].fault == "clock");
  CHECK(*group[0].clock_rate >= 1 / (1 + bad.target.raftkv.lease_drift_bound));
  CHECK(group[1].partitions == std::vector<std::string>{"same"});
  CHECK(bad.nemesis.clock_monotonic);
  // Everything else is the same campaign.
  control.target.raftkv.unsafe = bad.target.raftkv.unsafe;
  control.expect = bad.expect;
  control.name = bad.name;
  control.description = bad.description;
  control.source_file = bad.source_file;
  control.cluster.subnet = bad.cluster.subnet;
  CHECK(control.target == bad.target);
  CHECK(control.workload == bad.workload);
  CHECK(control.nemesis == bad.nemesis);
  CHECK(control.time_limit_s == bad.time_limit_s);
  CHECK(control.recovery_s == bad.recovery_s);
  CHECK(control.checker == bad.checker);
}

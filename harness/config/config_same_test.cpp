// Config of `same` selectors in together groups (harness/run/fault_group.h):
// where they may stand, their errors (file:line:col) and the round trip.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

namespace {

// A raftkv config on 3 nodes whose nemesis.faults list (from line 6) is
// `faults`.
std::string Faults(const std::string& faults) {
  return "name: x\ncluster: {nodes: 3}\ntarget: {name: raftkv}\n"
         "nemesis:\n  faults:\n" +
         faults;
}

}  // namespace

TEST_CASE("same: later faults of a group take the first fault's nodes",
          "[config][schedule]") {
  LoadResult r = MustLoad(
      Faults("    - together:\n"
             "        - {fault: clock, targets: [follower], clock_rate: 0.85}\n"
             "        - {fault: partition, partitions: [same]}\n"
             "        - {fault: pause, targets: [same]}\n"));
  const auto& group = r.spec->nemesis.entries.at(0);
  REQUIRE(group.faults.size() == 3);
  CHECK(group.faults[1].partitions == std::vector<std::string>{"same"});
  CHECK(group.faults[2].targets == std::vector<std::string>{"same"});
  CHECK(MustLoadDescribed(*r.spec).spec->nemesis == r.spec->nemesis);
}

TEST_CASE("same: misplaced uses are errors with file, line and column",
          "[config][schedule]") {
  // On the first fault of a group: nothing earlier to take nodes from.
  // A together group (from line 6) of the faults `first`, `second`.
  auto group = [](const std::string& first, const std::string& second) {
    return Faults("    - together:\n        - " + first + "\n        - " +
                  second + "\n");
  };
  ExpectError(group("{fault: clock, targets: [same], clock_rate: 0.5}",
                    "{fault: partition, partitions: [one]}"),
              {.file = "t.yaml",
               .line = 7,
               .column = 35,
               .message_has = {"first fault of a group"},
               .hint_has = {"targets: [follower]"}});

  // After a partition: a shape names no single set of nodes.
  ExpectError(
      group("{fault: partition, partitions: [one]}",
            "{fault: clock, targets: [same], clock_rate: 0.5}"),
      {.line = 8, .column = 35, .message_has = {"first fault is a partition"}});

  // Cutting off every node.
  ExpectError(group("{fault: clock, targets: [all], clock_rate: 0.5}",
                    "{fault: partition, partitions: [same]}"),
              {.line = 8, .message_has = {"every node"}});

  // Outside a group, as a plain fault mapping or at the nemesis level.
  ExpectError(
      Faults("    - {fault: pause, targets: [same]}\n"),
      {.line = 6, .column = 32, .message_has = {"only fits a later fault"}});
  ExpectError("name: x\nnemesis:\n  faults: [pause]\n  targets: [one, same]\n",
              {.line = 4, .column = 18, .message_has = {"`together` group"}});

  // Drawn among other selectors.
  ExpectError(group("{fault: clock, targets: [one], clock_rate: 0.5}",
                    "{fault: pause, targets: [same, one]}"),
              {.line = 8,
               .message_has = {"among other choices"},
               .hint_has = {"targets: [same]"}});
}

TEST_CASE(
    "the follower-lease drift known configs load and differ only in the "
    "switch",
    "[config][schedule]") {
  auto load = [](const char* name) {
    auto k = LoadConfigFile(SourceDir() + "/configs/known/" + name + ".yaml");
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

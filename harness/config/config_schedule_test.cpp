// Config of the fault schedule: nemesis.faults entries as mappings
// (per-fault settings), `together` groups, partition_mode and the one-way
// shapes; their errors (file:line:col) and the resolved-config round trip.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using faultline::harness::ConfigError;
using faultline::harness::DescribeSpec;
using faultline::harness::LoadConfigText;
using faultline::harness::LoadResult;
using faultline::harness::config_testing::Contains;
using faultline::harness::config_testing::Load;
using faultline::harness::config_testing::OnlyError;

namespace {

void RoundTrips(const LoadResult& r) {
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described", {});
  INFO(DescribeSpec(*r.spec));
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->nemesis == r.spec->nemesis);
}

}  // namespace

TEST_CASE("plain fault names keep their meaning", "[config][schedule]") {
  LoadResult r = Load("name: x\nnemesis:\n  faults: [partition, pause]\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->nemesis.faults ==
        std::vector<std::string>{"partition", "pause"});
  CHECK(r.spec->nemesis.entries.empty());
  CHECK(r.spec->nemesis.partition_mode == "drop");
  RoundTrips(r);
}

TEST_CASE("fault mappings and together groups", "[config][schedule]") {
  LoadResult r = Load(
      "name: x\n"
      "cluster: {nodes: 5}\n"
      "target: {name: raftkv}\n"
      "nemesis:\n"
      "  partition_mode: reset\n"
      "  faults:\n"
      "    - partition\n"
      "    - {fault: pause, targets: [leader]}\n"
      "    - {fault: clock, targets: [minority], clock_rate: 0.5, "
      "duration: 20}\n"
      "    - {fault: partition, partitions: [one-way-halves], "
      "partition_mode: drop}\n"
      "    - together:\n"
      "        - {fault: clock, targets: [minority], clock_offset_ms: 4s}\n"
      "        - {fault: partition, partitions: [halves]}\n"
      "      duration: 15\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  const auto& n = r.spec->nemesis;
  CHECK(n.partition_mode == "reset");
  CHECK(n.faults == std::vector<std::string>{"partition", "pause", "clock"});
  REQUIRE(n.entries.size() == 5);
  CHECK(n.entries[0].plain);
  CHECK(n.entries[0].faults[0].fault == "partition");
  CHECK_FALSE(n.entries[0].faults[0].partitions.has_value());
  CHECK(n.entries[1].faults[0].targets == std::vector<std::string>{"leader"});
  CHECK(n.entries[2].faults[0].clock_rate == 0.5);
  CHECK(n.entries[2].duration_s == 20);
  CHECK(n.entries[3].faults[0].partitions ==
        std::vector<std::string>{"one-way-halves"});
  CHECK(n.entries[3].faults[0].partition_mode == "drop");
  CHECK(n.entries[4].together);
  REQUIRE(n.entries[4].faults.size() == 2);
  CHECK(n.entries[4].faults[0].clock_offset_ms == 4000);
  CHECK(n.entries[4].faults[1].partitions ==
        std::vector<std::string>{"halves"});
  CHECK(n.entries[4].duration_s == 15);
  RoundTrips(r);
}

TEST_CASE("per-fault settings relieve the nemesis-level checks",
          "[config][schedule]") {
  // The nemesis-level clock settings change nothing, but the one clock
  // fault has its own rate, so this is fine.
  LoadResult ok = Load(
      "name: x\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [{fault: clock, clock_rate: 2}]\n");
  INFO(ok.FormatErrors());
  CHECK(ok.ok());
  // A plain clock uses them, so the old rule still holds.
  ConfigError plain = OnlyError(
      Load("name: x\ntarget: {name: raftkv}\n"
           "nemesis:\n  faults: [pause, {fault: clock, clock_rate: 2}, "
           "clock]\n"));
  CHECK(Contains(plain.message, "clock_offset_ms is 0"));
  // Own empty targets are refused; global empty targets do not matter to a
  // fault that has its own.
  LoadResult own = Load(
      "name: x\nnemesis:\n  targets: []\n"
      "  faults: [{fault: pause, targets: [all]}]\n");
  INFO(own.FormatErrors());
  CHECK(own.ok());
}

TEST_CASE("fault mapping errors point at the value", "[config][schedule]") {
  ConfigError unknown = OnlyError(Load(
      "name: x\nnemesis:\n  faults:\n    - {fault: pauze, targets: [one]}\n"));
  CHECK(unknown.line == 4);
  CHECK(unknown.column == 15);
  CHECK(Contains(unknown.message, "unknown fault \"pauze\""));
  CHECK(Contains(unknown.hint, "pause"));

  ConfigError no_kind =
      OnlyError(Load("name: x\nnemesis:\n  faults:\n    - {targets: [one]}\n"));
  CHECK(no_kind.line == 4);
  CHECK(Contains(no_kind.message, "no `fault:` key"));

  ConfigError wrong_key =
      OnlyError(Load("name: x\nnemesis:\n  faults:\n"
                     "    - {fault: partition, targets: [leader]}\n"));
  CHECK(wrong_key.line == 4);
  CHECK(wrong_key.column == 35);
  CHECK(Contains(wrong_key.message, "`targets` does not apply"));
  CHECK(Contains(wrong_key.hint, "partitions: [leader]"));

  ConfigError typo = OnlyError(Load(
      "name: x\nnemesis:\n  faults:\n    - {fault: pause, targts: [one]}\n"));
  CHECK(typo.line == 4);
  CHECK(Contains(typo.message, "unknown key `targts`"));
  CHECK(Contains(typo.hint, "targets"));

  ConfigError range =
      OnlyError(Load("name: x\nnemesis:\n  faults:\n"
                     "    - {fault: loss, loss_probability: 2}\n"));
  CHECK(range.line == 4);
  CHECK(Contains(range.message, "out of range"));

  ConfigError twice = OnlyError(
      Load("name: x\nnemesis:\n  faults: [pause, {fault: kill}, pause]\n"));
  CHECK(twice.line == 3);
  CHECK(Contains(twice.message, "listed twice"));

  ConfigError misfit = OnlyError(
      Load("name: x\ncluster: {nodes: 2}\nnemesis:\n  partitions: [one]\n"
           "  faults:\n    - {fault: partition, partitions: [bridge]}\n"));
  CHECK(misfit.line == 6);
  CHECK(Contains(misfit.message, "bridge"));
  CHECK(Contains(misfit.message, "needs at least 3 nodes"));

  ConfigError mode =
      OnlyError(Load("name: x\nnemesis:\n  partition_mode: rst\n"));
  CHECK(mode.line == 3);
  CHECK(Contains(mode.message, "partition mode"));
}

TEST_CASE("together groups: what they refuse", "[config][schedule]") {
  ConfigError one = OnlyError(
      Load("name: x\nnemesis:\n  faults:\n    - together: [{fault: pause}]\n"));
  CHECK(one.line == 4);
  CHECK(Contains(one.message, "at least two faults"));

  ConfigError same = OnlyError(Load(
      "name: x\nnemesis:\n  faults:\n"
      "    - together: [{fault: partition}, {fault: partition, partitions: "
      "[one]}]\n"));
  CHECK(same.line == 4);
  CHECK(Contains(same.message, "each kind once"));

  ConfigError procs =
      OnlyError(Load("name: x\nnemesis:\n  faults:\n"
                     "    - together: [pause, kill]\n"));
  CHECK(Contains(procs.message, "same processes"));

  ConfigError voter =
      OnlyError(Load("name: x\nnemesis:\n  targets: [leader]\n  faults:\n"
                     "    - together: [partition, kill-voter]\n"));
  CHECK(Contains(voter.message, "kill-voter cannot be combined"));

  ConfigError inner = OnlyError(
      Load("name: x\nnemesis:\n  faults:\n"
           "    - together: [{fault: pause, duration: 3}, partition]\n"));
  CHECK(Contains(inner.message, "no duration of its own"));
  CHECK(Contains(inner.hint, "beside `together:`"));

  LoadResult plain_members = Load(
      "name: x\nnemesis:\n  faults:\n    - together: [pause, partition]\n");
  INFO(plain_members.FormatErrors());
  REQUIRE(plain_members.ok());
  CHECK(plain_members.spec->nemesis.entries[0].faults.size() == 2);
  RoundTrips(plain_members);
}

TEST_CASE("one-way shapes are partition shapes", "[config][schedule]") {
  LoadResult r = Load(
      "name: x\ncluster: {nodes: 3}\nnemesis:\n  faults: [partition]\n"
      "  partitions: [one-way-one, one-way-leader, one-way-halves]\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->nemesis.partitions.size() == 3);
  RoundTrips(r);
}

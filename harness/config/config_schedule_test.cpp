// Config of the fault schedule: nemesis.faults entries as mappings
// (per-fault settings), `together` groups, partition_mode and the one-way
// shapes; their errors (file:line:col) and the resolved-config round trip.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

namespace {

void RoundTrips(const LoadResult& r) {
  CHECK(MustLoadDescribed(*r.spec).spec->nemesis == r.spec->nemesis);
}

}  // namespace

TEST_CASE("plain fault names keep their meaning", "[config][schedule]") {
  LoadResult r = MustLoad("name: x\nnemesis:\n  faults: [partition, pause]\n");
  CHECK(r.spec->nemesis.faults ==
        std::vector<std::string>{"partition", "pause"});
  CHECK(r.spec->nemesis.entries.empty());
  CHECK(r.spec->nemesis.partition_mode == "drop");
  RoundTrips(r);
}

TEST_CASE("fault mappings and together groups", "[config][schedule]") {
  LoadResult r = MustLoad(
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
  CheckLoads(
      "name: x\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [{fault: clock, clock_rate: 2}]\n");
  // A plain clock uses them, so the old rule still holds.
  ExpectError(
      "name: x\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [pause, {fault: clock, clock_rate: 2}, clock]\n",
      {.message_has = {"clock_offset_ms is 0"}});
  // Own empty targets are refused; global empty targets do not matter to a
  // fault that has its own.
  CheckLoads(
      "name: x\nnemesis:\n  targets: []\n"
      "  faults: [{fault: pause, targets: [all]}]\n");
}

TEST_CASE("fault mapping errors point at the value", "[config][schedule]") {
  // A list of faults whose one entry (line 4) is `entry`.
  auto faults = [](const std::string& entry) {
    return "name: x\nnemesis:\n  faults:\n    - " + entry + "\n";
  };
  ExpectError(faults("{fault: pauze, targets: [one]}"),
              {.line = 4,
               .column = 15,
               .message_has = {"unknown fault \"pauze\""},
               .hint_has = {"pause"}});
  ExpectError(faults("{targets: [one]}"),
              {.line = 4, .message_has = {"no `fault:` key"}});
  ExpectError(faults("{fault: partition, targets: [leader]}"),
              {.line = 4,
               .column = 35,
               .message_has = {"`targets` does not apply"},
               .hint_has = {"partitions: [leader]"}});
  ExpectError(faults("{fault: pause, targts: [one]}"),
              {.line = 4,
               .message_has = {"unknown key `targts`"},
               .hint_has = {"targets"}});
  ExpectError(faults("{fault: loss, loss_probability: 2}"),
              {.line = 4, .message_has = {"out of range"}});

  ExpectError("name: x\nnemesis:\n  faults: [pause, {fault: kill}, pause]\n",
              {.line = 3, .message_has = {"listed twice"}});
  ExpectError(
      "name: x\ncluster: {nodes: 2}\nnemesis:\n  partitions: [one]\n"
      "  faults:\n    - {fault: partition, partitions: [bridge]}\n",
      {.line = 6, .message_has = {"bridge", "needs at least 3 nodes"}});
  ExpectError("name: x\nnemesis:\n  partition_mode: rst\n",
              {.line = 3, .message_has = {"partition mode"}});
}

TEST_CASE("together groups: what they refuse", "[config][schedule]") {
  // A list of faults whose one entry (line 4) is the group `members`.
  auto together = [](const std::string& members) {
    return "name: x\nnemesis:\n  faults:\n    - together: " + members + "\n";
  };
  ExpectError(together("[{fault: pause}]"),
              {.line = 4, .message_has = {"at least two faults"}});
  ExpectError(
      together("[{fault: partition}, {fault: partition, partitions: [one]}]"),
      {.line = 4, .message_has = {"each kind once"}});
  ExpectError(together("[pause, kill]"), {.message_has = {"same processes"}});
  ExpectError(
      "name: x\nnemesis:\n  targets: [leader]\n  faults:\n"
      "    - together: [partition, kill-voter]\n",
      {.message_has = {"kill-voter cannot be combined"}});
  ExpectError(together("[{fault: pause, duration: 3}, partition]"),
              {.message_has = {"no duration of its own"},
               .hint_has = {"beside `together:`"}});

  LoadResult plain_members = MustLoad(together("[pause, partition]"));
  CHECK(plain_members.spec->nemesis.entries[0].faults.size() == 2);
  RoundTrips(plain_members);
}

TEST_CASE("one-way shapes are partition shapes", "[config][schedule]") {
  LoadResult r = MustLoad(
      "name: x\ncluster: {nodes: 3}\nnemesis:\n  faults: [partition]\n"
      "  partitions: [one-way-one, one-way-leader, one-way-halves]\n");
  CHECK(r.spec->nemesis.partitions.size() == 3);
  RoundTrips(r);
}

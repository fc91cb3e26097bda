// Config keys of the disk faults (power-loss, torn-write, fsync-error,
// disk-full, slow-disk; nemesis.fsync_errors, disk_latency_ms,
// disk_namespace) and their cross-field rules.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("disk faults: keys, defaults, round trip", "[config][disk]") {
  LoadResult d = MustLoad("name: x\n");
  CHECK(d.spec->nemesis.fsync_errors == 1);
  CHECK(d.spec->nemesis.disk_latency_ms == 100);
  CHECK(d.spec->nemesis.disk_namespace == "dir-fsync");
  CHECK(d.spec->nemesis.disk_writeback_ms == 0);
  CHECK_FALSE(UsesDiskFaults(d.spec->nemesis));

  LoadResult r = MustLoad(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [power-loss, torn-write, fsync-error, disk-full, "
      "slow-disk]\n  targets: [majority, all]\n  fsync_errors: 3\n"
      "  disk_latency_ms: 250ms\n  disk_namespace: any-fsync\n"
      "  disk_writeback_ms: 30s\n");
  CHECK(r.spec->nemesis.disk_writeback_ms == 30000);
  CHECK(UsesDiskFaults(r.spec->nemesis));
  CHECK(r.spec->nemesis.fsync_errors == 3);
  CHECK(r.spec->nemesis.disk_latency_ms == 250);
  CHECK(r.spec->nemesis.disk_namespace == "any-fsync");
  CHECK(MustLoadDescribed(*r.spec).spec->nemesis == r.spec->nemesis);

  ExpectError("name: x\nnemesis:\n  fsync_errors: 0\n",
              {.line = 3, .message_has = {"fsync_errors"}});
  ExpectError("name: x\nnemesis:\n  disk_latency_ms: 2m\n", {.line = 3});
  ExpectError("name: x\nnemesis:\n  disk_namespace: ordered\n",
              {.line = 3, .column = 19, .message_has = {"ordered"}});
  ExpectError("name: x\nnemesis:\n  faults: [power-loss]\n  targets: []\n",
              {.message_has = {"nemesis.targets is empty", "disk fault"}});
}

TEST_CASE("disk faults: a power loss and a kill in one group clash",
          "[config][disk]") {
  ExpectError(
      "name: x\ncluster: {nodes: 3}\nnemesis:\n  faults:\n"
      "    - together: [{fault: power-loss}, {fault: kill}]\n",
      {.message_has = {"kill"}});
  MustLoad(
      "name: x\ncluster: {nodes: 3}\nnemesis:\n  faults:\n"
      "    - together: [{fault: power-loss}, {fault: partition}]\n");
}

TEST_CASE("disk faults on target: process need {data}", "[config][disk]") {
  const std::string head =
      "name: p\ncluster: {nodes: 3}\ntarget:\n  name: process\n"
      "  ports: {client: 7000}\n"
      "  client: {protocol: exec, command: [my-client, \"{ip}\"]}\n"
      "  processes:\n";
  const std::string nemesis =
      "nemesis: {faults: [power-loss], targets: [one]}\n";
  ExpectError(
      head + "    - {name: db, argv: [mydb, --data, /var/lib/db]}\n" + nemesis,
      {.message_has = {"{data}", "power loss would lose nothing"},
       .hint_has = {"{data}"}});
  MustLoad(head + "    - {name: db, argv: [mydb, --data, \"{dir}/data\"]}\n" +
           nemesis);
  MustLoad(head + "    - {name: db, argv: [mydb, --data, \"{data}\"]}\n" +
           nemesis);
  MustLoad(head +
           "    - {name: db, argv: [mydb], env: {DB_DIR: \"{dir}/data/x\"}}\n" +
           nemesis);
}

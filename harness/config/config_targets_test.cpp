// Unit tests of the config keys of targets and workloads beyond the basics
// of config_test.cpp: raftkv's keys and cross-field rules, the lock
// workload and observer, the delay fault, Redis's keys.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("raftkv target keys are read and described", "[config][raftkv]") {
  LoadResult r = MustLoad(R"(name: rk
target:
  name: raftkv
  read_mode: follower-lease
  heartbeat_ms: 20
  election_timeout_ms: 200ms
  follower_lease_ms: 120
  pre_vote: false
  check_quorum: true
  snapshot_entries: 500
  unsafe: follower-lease-no-margin
  binary: /opt/raftkv
  extra_args: ["--request-timeout-ms=3000", "--log-level", "debug"]
)");
  const auto& k = r.spec->target.raftkv;
  CHECK(r.spec->target.name == "raftkv");
  CHECK(k.read_mode == "follower-lease");
  CHECK(k.heartbeat_ms == 20);
  CHECK(k.election_timeout_ms == 200);
  CHECK(k.follower_lease_ms == 120);
  CHECK_FALSE(k.pre_vote);
  CHECK(k.check_quorum);
  CHECK(k.snapshot_entries == 500);
  CHECK(k.unsafe == "follower-lease-no-margin");
  CHECK(k.binary == "/opt/raftkv");
  CHECK(k.extra_args.size() == 3);
  // etcd's keys keep their defaults.
  CHECK(r.spec->target.etcd == EtcdSpec{});

  const std::string yaml = DescribeSpec(*r.spec);
  CHECK(Contains(yaml, "read_mode: \"follower-lease\""));
  CHECK_FALSE(Contains(yaml, "serializable_reads"));
  CheckRoundTrip(*r.spec);

  // Defaults: raftkv's own, whatever the key order.
  LoadResult d =
      MustLoad("name: x\ntarget: {read_mode: lease, name: raftkv}\n");
  CHECK(d.spec->target.raftkv.heartbeat_ms == 50);
  CHECK(d.spec->target.raftkv.election_timeout_ms == 500);
  CHECK(d.spec->target.raftkv.unsafe == "none");
  CHECK(d.spec->target.raftkv.binary == "raftkv");
  // Any node count 1..9, even ones included.
  CheckLoads("name: x\ncluster: {nodes: 4}\ntarget: {name: raftkv}\n");
  CheckLoads(
      "name: x\ncluster: {nodes: 1}\ntarget: {name: raftkv}\n"
      "nemesis: {faults: [pause], targets: [one]}\n");
}

TEST_CASE("raftkv keys: errors with place and did-you-mean",
          "[config][raftkv]") {
  const std::string raftkv = "name: x\ntarget:\n  name: raftkv\n";
  ExpectError(raftkv + "  read_mode: follower_lease\n",
              {.line = 4,
               .column = 14,
               .message_has = {"unknown read mode \"follower_lease\""},
               .hint_has = {"did you mean \"follower-lease\"?"}});
  ExpectError(raftkv + "  unsafe: commit-old-term\n",
              {.line = 4,
               .message_has = {"unknown unsafe switch"},
               .hint_has = {"commit-old-terms"}});
  ExpectError(raftkv + "  chek_quorum: true\n",
              {.line = 4,
               .column = 3,
               .message_has = {"unknown key `chek_quorum` in `target:`"},
               .hint_has = {"did you mean `check_quorum`?"}});

  // A key of the other target says so.
  ExpectError(raftkv + "  serializable_reads: true\n",
              {.line = 4,
               .message_has = {"key of the etcd target"},
               .hint_has = {"name: etcd"}});
  ExpectError("name: x\ntarget:\n  read_mode: lease\n",
              {.message_has = {"`read_mode` is a key of the raftkv target, "
                               "but target.name is etcd"}});
  // An unknown target name is the only error (no cascade).
  ExpectError(
      "name: x\ntarget:\n  name: raftvk\n  read_mode: lease\n",
      {.message_has = {"unknown target \"raftvk\""}, .hint_has = {"raftkv"}});

  ExpectError(
      raftkv + "  heartbeat_ms: 2\n",
      {.line = 4, .message_has = {"expected whole milliseconds from 5"}});
  ExpectError(raftkv + "  extra_args: [--ok, --peers=x]\n",
              {.line = 4,
               .column = 22,
               .message_has = {"--peers is set by faultline"}});
}

TEST_CASE("raftkv cross-field rules", "[config][raftkv]") {
  const std::string raftkv = "name: x\ntarget:\n  name: raftkv\n";
  ExpectError(
      raftkv +
          "  heartbeat_ms: 100\n  election_timeout_ms: 250\n"
          "  follower_lease_ms: 100\n",
      {.line = 5, .message_has = {"at least 3 x target.heartbeat_ms (100)"}});

  // The default lease (300) is not the user's: the error is on line 4.
  ExpectError(
      raftkv + "  election_timeout_ms: 300\n",
      {.line = 4, .message_has = {"follower_lease_ms (300) must be shorter"}});
  ExpectError(raftkv + "  election_timeout_ms: 400\n  follower_lease_ms: 400\n",
              {.line = 5});

  ExpectError(raftkv + "  read_mode: lease\n  check_quorum: false\n",
              {.line = 5, .message_has = {"needs target.check_quorum: true"}});
  ExpectError(raftkv + "  unsafe: follower-lease-no-margin\n",
              {.line = 4, .message_has = {"has no effect"}});

  // etcd's 5x rule does not apply to raftkv.
  CheckLoads(raftkv +
             "  heartbeat_ms: 50\n  election_timeout_ms: 200\n"
             "  follower_lease_ms: 100\n");
}

TEST_CASE("lock workload and observer keys", "[config]") {
  LoadResult r = MustLoad(R"(name: locks
target: {name: raftkv}
workload:
  name: lock
  locks: 3
  ttl_ms: 500ms
  hold_ms: 200
  writes_per_hold: 4
  stall_probability: 0.25
  stall_ms: 1s
  fenced: false
  observe_ms: 20
)");
  const auto& w = r.spec->workload;
  CHECK(w.name == "lock");
  CHECK(w.locks == 3);
  CHECK(w.ttl_ms == 500);
  CHECK(w.hold_ms == 200);
  CHECK(w.writes_per_hold == 4);
  CHECK(w.stall_probability == 0.25);
  CHECK(w.stall_ms == 1000);
  CHECK_FALSE(w.fenced);
  CHECK(w.observe_ms == 20);
  CHECK(MustLoadDescribed(*r.spec).spec->workload == w);

  // Defaults: one fenced lock, no stalls, no observer.
  LoadResult d = MustLoad("name: x\n");
  CHECK(d.spec->workload.locks == 1);
  CHECK(d.spec->workload.fenced);
  CHECK(d.spec->workload.stall_probability == 0);
  CHECK(d.spec->workload.observe_ms == 0);
  // The observer works with the register workload too.
  CheckLoads("name: x\nworkload: {observe_ms: 50}\n");

  ExpectError(
      "name: x\ntarget: {name: raftkv}\nworkload:\n  name: lock\n"
      "  stall_probability: 1.5\n",
      {.line = 5});
  // Every target's client implements the lock operations, and elections
  // run on the same client.
  for (const char* target : {"etcd", "raftkv", "redis", "zookeeper"}) {
    for (const char* workload : {"lock", "election"}) {
      CheckLoads(std::string("name: x\ntarget: {name: ") + target +
                 "}\nworkload: {name: " + workload + "}\n");
    }
  }
  // The register mix is not used by the lock workload.
  CheckLoads(
      "name: x\ntarget: {name: raftkv}\nworkload:\n  name: lock\n"
      "  mix: {read: 0, write: 0, cas: 0}\n");
}

TEST_CASE("delay fault: delay_ms, follower selector, targets needed",
          "[config][delay]") {
  LoadResult r = MustLoad(
      "name: x\ncluster: {nodes: 3}\n"
      "nemesis:\n  faults: [delay]\n  targets: [follower]\n  delay_ms: "
      "600ms\n");
  CHECK(r.spec->nemesis.faults == std::vector<std::string>{"delay"});
  CHECK(r.spec->nemesis.targets == std::vector<std::string>{"follower"});
  CHECK(r.spec->nemesis.delay_ms == 600);
  CHECK(MustLoad("name: x\n").spec->nemesis.delay_ms == 500);

  ExpectError("name: x\nnemesis:\n  faults: [delay]\n  delay_ms: 20000\n",
              {.line = 4, .column = 13, .message_has = {"delay_ms"}});
  ExpectError("name: x\nnemesis:\n  delay_ms: 0\n", {.line = 3});

  ExpectError("name: x\nnemesis:\n  faults: [delay]\n  targets: []\n",
              {.message_has = {"nemesis.targets is empty", "delay"}});
  ExpectError(
      "name: x\ncluster: {nodes: 1}\n"
      "nemesis:\n  faults: [delay]\n  targets: [follower]\n",
      {.message_has = {"node selector \"follower\" needs at least 2"}});

  // The known configs for the follower-lease switch load.
  for (const char* name : {"raftkv-follower-lease-no-margin",
                           "raftkv-follower-lease-no-margin-control"}) {
    LoadResult k =
        LoadConfigFile(SourceDir() + "/configs/known/" + name + ".yaml");
    INFO(name << ": " << k.FormatErrors());
    REQUIRE(k.ok());
    CHECK(k.spec->nemesis.faults == std::vector<std::string>{"delay"});
    CHECK(k.spec->nemesis.delay_ms == 600);
  }
}

TEST_CASE("redis target keys: defaults, ranges, foreign keys, round trip",
          "[config][redis]") {
  LoadResult d = MustLoad("name: x\ntarget: {name: redis}\n");
  CHECK(d.spec->target.redis.down_after_ms == 2000);
  CHECK(d.spec->target.redis.min_replicas_to_write == 0);
  LoadResult r = MustLoad(
      "name: x\ntarget:\n  name: redis\n  down_after_ms: 1s\n"
      "  min_replicas_to_write: 1\n  min_replicas_max_lag_s: 3\n"
      "  appendonly: true\nworkload: {name: lock}\n");
  CHECK(r.spec->target.redis.down_after_ms == 1000);
  CHECK(r.spec->target.redis.min_replicas_to_write == 1);
  CHECK(r.spec->target.redis.min_replicas_max_lag_s == 3);
  CHECK(r.spec->target.redis.appendonly);
  CHECK(MustLoadDescribed(*r.spec).spec->target == r.spec->target);

  const std::string redis = "name: x\ntarget:\n  name: redis\n";
  ExpectError(redis + "  down_after_ms: 50\n", {.line = 4});
  ExpectError(redis + "  heartbeat_ms: 50\n",
              {.line = 4, .message_has = {"etcd"}});
  ExpectError("name: x\ntarget:\n  name: raftkv\n  down_after_ms: 500\n",
              {.message_has = {"redis"}});
  ExpectError(
      "name: x\ncluster: {nodes: 3}\ntarget:\n  name: redis\n"
      "  min_replicas_to_write: 3\n",
      {.message_has = {"min_replicas_to_write"}});
}

TEST_CASE(
    "durability keys: raftkv log-not-synced, redis appendfsync, "
    "zookeeper force_sync",
    "[config][raftkv][redis][zookeeper]") {
  // Defaults keep every fsync.
  LoadResult d = MustLoad("name: x\ntarget: {name: redis}\n");
  CHECK(d.spec->target.redis.appendfsync == "everysec");
  LoadResult dz = MustLoad("name: x\ntarget: {name: zookeeper}\n");
  CHECK(dz.spec->target.zookeeper.force_sync);

  LoadResult rk =
      MustLoad("name: x\ntarget: {name: raftkv, unsafe: log-not-synced}\n");
  CHECK(rk.spec->target.raftkv.unsafe == "log-not-synced");
  CheckRoundTrip(*rk.spec);

  for (const char* policy : {"always", "everysec", "no"}) {
    LoadResult r = MustLoad(
        std::string("name: x\ntarget:\n  name: redis\n  appendonly: true\n"
                    "  appendfsync: ") +
        policy + "\n");
    CHECK(r.spec->target.redis.appendfsync == policy);
    CHECK(Contains(DescribeSpec(*r.spec),
                   std::string("appendfsync: \"") + policy + "\""));
    CheckRoundTrip(*r.spec);
  }
  ExpectError("name: x\ntarget:\n  name: redis\n  appendfsync: every-sec\n",
              {.line = 4,
               .message_has = {"unknown appendfsync policy"},
               .hint_has = {"everysec"}});
  ExpectError("name: x\ntarget:\n  name: raftkv\n  appendfsync: no\n",
              {.message_has = {"redis"}});

  LoadResult z =
      MustLoad("name: x\ntarget:\n  name: zookeeper\n  force_sync: false\n");
  CHECK_FALSE(z.spec->target.zookeeper.force_sync);
  CHECK(Contains(DescribeSpec(*z.spec), "force_sync: false"));
  CheckRoundTrip(*z.spec);
  ExpectError("name: x\ntarget:\n  name: zookeeper\n  force_sync: maybe\n",
              {.line = 4});
  ExpectError("name: x\ntarget:\n  name: redis\n  force_sync: false\n",
              {.message_has = {"zookeeper"}});
}

// Unit tests of the config keys of targets and workloads beyond the basics
// of config_test.cpp: raftkv's keys and cross-field rules, the lock
// workload and observer, the delay fault, Redis's keys.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using faultline::harness::ConfigError;
using faultline::harness::DescribeSpec;
using faultline::harness::LoadConfigFile;
using faultline::harness::LoadConfigText;
using faultline::harness::LoadResult;
using faultline::harness::TestSpec;
using faultline::harness::config_testing::Contains;
using faultline::harness::config_testing::Load;
using faultline::harness::config_testing::OnlyError;

namespace {

std::string SourceDir() { return FAULTLINE_SOURCE_DIR; }

}  // namespace

TEST_CASE("raftkv target keys are read and described", "[config][raftkv]") {
  LoadResult r = Load(R"(name: rk
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
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
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
  CHECK(r.spec->target.etcd == faultline::harness::EtcdSpec{});

  const std::string yaml = DescribeSpec(*r.spec);
  CHECK(Contains(yaml, "read_mode: \"follower-lease\""));
  CHECK_FALSE(Contains(yaml, "serializable_reads"));
  LoadResult back = LoadConfigText(yaml, "config.yaml");
  INFO(yaml);
  INFO(back.FormatErrors());
  REQUIRE(back.ok());
  TestSpec expected = *r.spec;
  expected.seed_given = true;
  expected.source_file = "config.yaml";
  CHECK(*back.spec == expected);

  // Defaults: raftkv's own, whatever the key order.
  LoadResult d = Load("name: x\ntarget: {read_mode: lease, name: raftkv}\n");
  INFO(d.FormatErrors());
  REQUIRE(d.ok());
  CHECK(d.spec->target.raftkv.heartbeat_ms == 50);
  CHECK(d.spec->target.raftkv.election_timeout_ms == 500);
  CHECK(d.spec->target.raftkv.unsafe == "none");
  CHECK(d.spec->target.raftkv.binary == "raftkv");
  // Any node count 1..9, even ones included.
  CHECK(Load("name: x\ncluster: {nodes: 4}\ntarget: {name: raftkv}\n").ok());
  CHECK(Load("name: x\ncluster: {nodes: 1}\ntarget: {name: raftkv}\n"
             "nemesis: {faults: [pause], targets: [one]}\n")
            .ok());
}

TEST_CASE("raftkv keys: errors with place and did-you-mean",
          "[config][raftkv]") {
  ConfigError mode = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  read_mode: follower_lease\n"));
  CHECK(mode.line == 4);
  CHECK(mode.column == 14);
  CHECK(Contains(mode.message, "unknown read mode \"follower_lease\""));
  CHECK(Contains(mode.hint, "did you mean \"follower-lease\"?"));

  ConfigError sw = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  unsafe: commit-old-term\n"));
  CHECK(sw.line == 4);
  CHECK(Contains(sw.message, "unknown unsafe switch"));
  CHECK(Contains(sw.hint, "commit-old-terms"));

  ConfigError typo = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  chek_quorum: true\n"));
  CHECK(typo.line == 4);
  CHECK(typo.column == 3);
  CHECK(Contains(typo.message, "unknown key `chek_quorum` in `target:`"));
  CHECK(Contains(typo.hint, "did you mean `check_quorum`?"));

  // A key of the other target says so.
  ConfigError foreign = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  serializable_reads: true\n"));
  CHECK(foreign.line == 4);
  CHECK(Contains(foreign.message, "key of the etcd target"));
  CHECK(Contains(foreign.hint, "name: etcd"));
  ConfigError foreign2 =
      OnlyError(Load("name: x\ntarget:\n  read_mode: lease\n"));
  CHECK(Contains(foreign2.message,
                 "`read_mode` is a key of the raftkv target, but "
                 "target.name is etcd"));
  // An unknown target name is the only error (no cascade).
  ConfigError name =
      OnlyError(Load("name: x\ntarget:\n  name: raftvk\n  read_mode: lease\n"));
  CHECK(Contains(name.message, "unknown target \"raftvk\""));
  CHECK(Contains(name.hint, "raftkv"));

  ConfigError range =
      OnlyError(Load("name: x\ntarget:\n  name: raftkv\n  heartbeat_ms: 2\n"));
  CHECK(range.line == 4);
  CHECK(Contains(range.message, "expected whole milliseconds from 5"));

  ConfigError reserved = OnlyError(Load(
      "name: x\ntarget:\n  name: raftkv\n  extra_args: [--ok, --peers=x]\n"));
  CHECK(reserved.line == 4);
  CHECK(reserved.column == 22);
  CHECK(Contains(reserved.message, "--peers is set by faultline"));
}

TEST_CASE("raftkv cross-field rules", "[config][raftkv]") {
  ConfigError timing =
      OnlyError(Load("name: x\ntarget:\n  name: raftkv\n  heartbeat_ms: 100\n"
                     "  election_timeout_ms: 250\n  follower_lease_ms: 100\n"));
  CHECK(timing.line == 5);
  CHECK(Contains(timing.message, "at least 3 x target.heartbeat_ms (100)"));

  ConfigError lease = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  election_timeout_ms: 300\n"));
  CHECK(lease.line == 4);  // the default lease (300) is not the user's
  CHECK(Contains(lease.message, "follower_lease_ms (300) must be shorter"));
  ConfigError lease2 = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  election_timeout_ms: 400\n"
           "  follower_lease_ms: 400\n"));
  CHECK(lease2.line == 5);

  ConfigError cq =
      OnlyError(Load("name: x\ntarget:\n  name: raftkv\n  read_mode: lease\n"
                     "  check_quorum: false\n"));
  CHECK(cq.line == 5);
  CHECK(Contains(cq.message, "needs target.check_quorum: true"));

  ConfigError noeffect =
      OnlyError(Load("name: x\ntarget:\n  name: raftkv\n"
                     "  unsafe: follower-lease-no-margin\n"));
  CHECK(noeffect.line == 4);
  CHECK(Contains(noeffect.message, "has no effect"));

  // etcd's 5x rule does not apply to raftkv.
  CHECK(Load("name: x\ntarget:\n  name: raftkv\n  heartbeat_ms: 50\n"
             "  election_timeout_ms: 200\n  follower_lease_ms: 100\n")
            .ok());
}

TEST_CASE("lock workload and observer keys", "[config]") {
  LoadResult r = Load(R"(name: locks
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
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
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
  LoadResult back = LoadConfigText(DescribeSpec(*r.spec), "d");
  REQUIRE(back.ok());
  CHECK(back.spec->workload == w);

  // Defaults: one fenced lock, no stalls, no observer.
  LoadResult d = Load("name: x\n");
  REQUIRE(d.ok());
  CHECK(d.spec->workload.locks == 1);
  CHECK(d.spec->workload.fenced);
  CHECK(d.spec->workload.stall_probability == 0);
  CHECK(d.spec->workload.observe_ms == 0);
  // The observer works with the register workload too.
  CHECK(Load("name: x\nworkload: {observe_ms: 50}\n").ok());

  ConfigError p = OnlyError(
      Load("name: x\ntarget: {name: raftkv}\nworkload:\n  name: lock\n"
           "  stall_probability: 1.5\n"));
  CHECK(p.line == 5);
  // Every target's client implements the lock operations, and elections
  // run on the same client.
  for (const char* target : {"etcd", "raftkv", "redis", "zookeeper"}) {
    for (const char* workload : {"lock", "election"}) {
      LoadResult t = Load(std::string("name: x\ntarget: {name: ") + target +
                          "}\nworkload: {name: " + workload + "}\n");
      INFO(target << " " << workload << ": " << t.FormatErrors());
      CHECK(t.ok());
    }
  }
  // The register mix is not used by the lock workload.
  CHECK(Load("name: x\ntarget: {name: raftkv}\nworkload:\n  name: lock\n"
             "  mix: {read: 0, write: 0, cas: 0}\n")
            .ok());
}

TEST_CASE("delay fault: delay_ms, follower selector, targets needed",
          "[config][delay]") {
  LoadResult r = Load(
      "name: x\ncluster: {nodes: 3}\n"
      "nemesis:\n  faults: [delay]\n  targets: [follower]\n  delay_ms: "
      "600ms\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->nemesis.faults == std::vector<std::string>{"delay"});
  CHECK(r.spec->nemesis.targets == std::vector<std::string>{"follower"});
  CHECK(r.spec->nemesis.delay_ms == 600);
  LoadResult d = Load("name: x\n");
  REQUIRE(d.ok());
  CHECK(d.spec->nemesis.delay_ms == 500);

  ConfigError big = OnlyError(
      Load("name: x\nnemesis:\n  faults: [delay]\n  delay_ms: 20000\n"));
  CHECK(big.line == 4);
  CHECK(big.column == 13);
  CHECK(Contains(big.message, "delay_ms"));
  ConfigError zero = OnlyError(Load("name: x\nnemesis:\n  delay_ms: 0\n"));
  CHECK(zero.line == 3);

  ConfigError empty =
      OnlyError(Load("name: x\nnemesis:\n  faults: [delay]\n  targets: []\n"));
  CHECK(Contains(empty.message, "nemesis.targets is empty"));
  CHECK(Contains(empty.message, "delay"));

  ConfigError follower =
      OnlyError(Load("name: x\ncluster: {nodes: 1}\n"
                     "nemesis:\n  faults: [delay]\n  targets: [follower]\n"));
  CHECK(Contains(follower.message,
                 "node selector \"follower\" needs at least 2"));

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
  LoadResult d = Load("name: x\ntarget: {name: redis}\n");
  REQUIRE(d.ok());
  CHECK(d.spec->target.redis.down_after_ms == 2000);
  CHECK(d.spec->target.redis.min_replicas_to_write == 0);
  LoadResult r = Load(
      "name: x\ntarget:\n  name: redis\n  down_after_ms: 1s\n"
      "  min_replicas_to_write: 1\n  min_replicas_max_lag_s: 3\n"
      "  appendonly: true\nworkload: {name: lock}\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->target.redis.down_after_ms == 1000);
  CHECK(r.spec->target.redis.min_replicas_to_write == 1);
  CHECK(r.spec->target.redis.min_replicas_max_lag_s == 3);
  CHECK(r.spec->target.redis.appendonly);
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described");
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->target == r.spec->target);

  ConfigError range =
      OnlyError(Load("name: x\ntarget:\n  name: redis\n  down_after_ms: 50\n"));
  CHECK(range.line == 4);
  ConfigError foreign =
      OnlyError(Load("name: x\ntarget:\n  name: redis\n  heartbeat_ms: 50\n"));
  CHECK(foreign.line == 4);
  CHECK(Contains(foreign.message, "etcd"));
  ConfigError other = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  down_after_ms: 500\n"));
  CHECK(Contains(other.message, "redis"));
  ConfigError too_many =
      OnlyError(Load("name: x\ncluster: {nodes: 3}\ntarget:\n  name: redis\n"
                     "  min_replicas_to_write: 3\n"));
  CHECK(Contains(too_many.message, "min_replicas_to_write"));
}

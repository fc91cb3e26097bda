// Config keys of the loss and clock faults (nemesis.loss_probability,
// clock_offset_ms, clock_rate, clock_monotonic) and their cross-field rules;
// the drift bound raftkv's leases assume (target.lease_drift_bound).
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

TEST_CASE("loss fault: probability default, range, targets needed",
          "[config][loss]") {
  LoadResult d = Load("name: x\n");
  REQUIRE(d.ok());
  CHECK(d.spec->nemesis.loss_probability == 0.3);
  LoadResult r = Load(
      "name: x\ncluster: {nodes: 3}\n"
      "nemesis:\n  faults: [loss]\n  targets: [one]\n  loss_probability: "
      "0.5\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->nemesis.faults == std::vector<std::string>{"loss"});
  CHECK(r.spec->nemesis.loss_probability == 0.5);
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described", {});
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->nemesis == r.spec->nemesis);

  ConfigError zero =
      OnlyError(Load("name: x\nnemesis:\n  loss_probability: 0\n"));
  CHECK(zero.line == 3);
  CHECK(zero.column == 21);
  CHECK(Contains(zero.message, "loss_probability"));
  ConfigError big =
      OnlyError(Load("name: x\nnemesis:\n  loss_probability: 1.5\n"));
  CHECK(big.line == 3);

  ConfigError empty =
      OnlyError(Load("name: x\nnemesis:\n  faults: [loss]\n  targets: []\n"));
  CHECK(Contains(empty.message, "nemesis.targets is empty"));
  CHECK(Contains(empty.message, "loss"));
}

TEST_CASE("clock fault: keys, round trip, and what it refuses",
          "[config][clock]") {
  LoadResult r = Load(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [clock]\n  targets: [follower]\n"
      "  clock_offset_ms: 5s\n  clock_rate: 1.5\n  clock_monotonic: true\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->nemesis.clock_offset_ms == 5000);
  CHECK(r.spec->nemesis.clock_rate == 1.5);
  CHECK(r.spec->nemesis.clock_monotonic);
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described", {});
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->nemesis == r.spec->nemesis);

  LoadResult negative = Load(
      "name: x\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [clock]\n  clock_offset_ms: -2000\n");
  INFO(negative.FormatErrors());
  REQUIRE(negative.ok());
  CHECK(negative.spec->nemesis.clock_offset_ms == -2000);

  // etcd: Go reads the vDSO, libfaketime cannot move its clock.
  ConfigError etcd =
      OnlyError(Load("name: x\ntarget: {name: etcd}\n"
                     "nemesis:\n  faults: [clock]\n  clock_rate: 2\n"));
  CHECK(Contains(etcd.message, "cannot move the clocks of etcd"));
  CHECK(Contains(etcd.message, "vDSO"));
  CHECK(Contains(etcd.hint, "raftkv"));

  ConfigError nothing = OnlyError(
      Load("name: x\ntarget: {name: raftkv}\nnemesis:\n  faults: [clock]\n"));
  CHECK(Contains(nothing.message, "would not change any clock"));

  ConfigError back =
      OnlyError(Load("name: x\ntarget: {name: raftkv}\n"
                     "nemesis:\n  faults: [clock]\n  clock_offset_ms: -1000\n"
                     "  clock_monotonic: true\n"));
  CHECK(Contains(back.message, "CLOCK_MONOTONIC back"));

  ConfigError rate = OnlyError(Load("name: x\nnemesis:\n  clock_rate: 1000\n"));
  CHECK(rate.line == 3);
  CHECK(Contains(rate.message, "clock_rate"));
  ConfigError day =
      OnlyError(Load("name: x\nnemesis:\n  clock_offset_ms: 100000000\n"));
  CHECK(day.line == 3);
}

TEST_CASE("strobe fault: keys, round trip, targets and what it refuses",
          "[config][clock][strobe]") {
  LoadResult d = Load("name: x\n");
  REQUIRE(d.ok());
  CHECK(d.spec->nemesis.clock_strobe_delta_ms == 5000);
  CHECK(d.spec->nemesis.clock_strobe_period_ms == 1000);
  LoadResult r = Load(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: redis}\n"
      "nemesis:\n  faults: [strobe]\n  targets: [one]\n"
      "  clock_strobe_delta_ms: 2s\n  clock_strobe_period_ms: 250\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->nemesis.clock_strobe_delta_ms == 2000);
  CHECK(r.spec->nemesis.clock_strobe_period_ms == 250);
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described", {});
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->nemesis == r.spec->nemesis);

  // ZooKeeper and Redis take clock faults now; etcd still does not.
  CHECK(Load("name: x\ntarget: {name: zookeeper}\n"
             "nemesis:\n  faults: [clock]\n  clock_offset_ms: 1000\n")
            .ok());
  ConfigError etcd = OnlyError(
      Load("name: x\ntarget: {name: etcd}\nnemesis:\n  faults: [strobe]\n"));
  CHECK(Contains(etcd.message, "strobe fault cannot move the clocks of etcd"));
  CHECK(Contains(etcd.hint, "zookeeper"));

  ConfigError mono = OnlyError(
      Load("name: x\ntarget: {name: raftkv}\n"
           "nemesis:\n  faults: [strobe]\n  clock_monotonic: true\n"));
  CHECK(Contains(mono.message, "CLOCK_MONOTONIC back"));

  ConfigError fast =
      OnlyError(Load("name: x\nnemesis:\n  clock_strobe_period_ms: 5\n"));
  CHECK(fast.line == 3);
  CHECK(Contains(fast.message, "clock_strobe_period_ms"));
  ConfigError zero =
      OnlyError(Load("name: x\nnemesis:\n  clock_strobe_delta_ms: 0\n"));
  CHECK(zero.line == 3);
  ConfigError empty =
      OnlyError(Load("name: x\ntarget: {name: raftkv}\n"
                     "nemesis:\n  faults: [strobe]\n  targets: []\n"));
  CHECK(Contains(empty.message, "nemesis.targets is empty"));
  CHECK(Contains(empty.message, "strobe"));
}

TEST_CASE("raftkv lease_drift_bound: default, range, round trip",
          "[config][clock]") {
  LoadResult d = Load("name: x\ntarget: {name: raftkv}\n");
  REQUIRE(d.ok());
  CHECK(d.spec->target.raftkv.lease_drift_bound == 0.001);
  LoadResult r =
      Load("name: x\ntarget:\n  name: raftkv\n  lease_drift_bound: 0.2\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->target.raftkv.lease_drift_bound == 0.2);
  LoadResult again = LoadConfigText(DescribeSpec(*r.spec), "described", {});
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->target == r.spec->target);

  ConfigError big = OnlyError(
      Load("name: x\ntarget:\n  name: raftkv\n  lease_drift_bound: 0.8\n"));
  CHECK(big.line == 4);
  CHECK(big.column == 22);
  CHECK(Contains(big.message, "lease_drift_bound"));
  CHECK(Contains(big.hint, "1/1.2"));
  ConfigError flag =
      OnlyError(Load("name: x\ntarget:\n  name: raftkv\n"
                     "  extra_args: [--lease-drift-bound, '0.1']\n"));
  CHECK(Contains(flag.hint, "lease_drift_bound"));
  ConfigError foreign = OnlyError(
      Load("name: x\ntarget:\n  name: etcd\n  lease_drift_bound: 0.1\n"));
  CHECK(foreign.line == 4);
  CHECK(Contains(foreign.message, "raftkv"));
}

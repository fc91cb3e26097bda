// Config keys of the loss and clock faults (nemesis.loss_probability,
// clock_offset_ms, clock_rate, clock_monotonic) and their cross-field rules;
// the drift bound raftkv's leases assume (target.lease_drift_bound).
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("loss fault: probability default, range, targets needed",
          "[config][loss]") {
  CHECK(MustLoad("name: x\n").spec->nemesis.loss_probability == 0.3);
  LoadResult r = MustLoad(
      "name: x\ncluster: {nodes: 3}\n"
      "nemesis:\n  faults: [loss]\n  targets: [one]\n  loss_probability: "
      "0.5\n");
  CHECK(r.spec->nemesis.faults == std::vector<std::string>{"loss"});
  CHECK(r.spec->nemesis.loss_probability == 0.5);
  CHECK(MustLoadDescribed(*r.spec).spec->nemesis == r.spec->nemesis);

  ExpectError("name: x\nnemesis:\n  loss_probability: 0\n",
              {.line = 3, .column = 21, .message_has = {"loss_probability"}});
  ExpectError("name: x\nnemesis:\n  loss_probability: 1.5\n", {.line = 3});

  ExpectError("name: x\nnemesis:\n  faults: [loss]\n  targets: []\n",
              {.message_has = {"nemesis.targets is empty", "loss"}});
}

TEST_CASE("clock fault: keys, round trip, and what it refuses",
          "[config][clock]") {
  LoadResult r = MustLoad(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [clock]\n  targets: [follower]\n"
      "  clock_offset_ms: 5s\n  clock_rate: 1.5\n  clock_monotonic: true\n");
  CHECK(r.spec->nemesis.clock_offset_ms == 5000);
  CHECK(r.spec->nemesis.clock_rate == 1.5);
  CHECK(r.spec->nemesis.clock_monotonic);
  CHECK(MustLoadDescribed(*r.spec).spec->nemesis == r.spec->nemesis);

  const std::string raftkv = "name: x\ntarget: {name: raftkv}\n";
  CHECK(MustLoad(raftkv +
                 "nemesis:\n  faults: [clock]\n  clock_offset_ms: -2000\n")
            .spec->nemesis.clock_offset_ms == -2000);

  // etcd: Go reads the vDSO, libfaketime cannot move its clock.
  ExpectError(
      "name: x\ntarget: {name: etcd}\n"
      "nemesis:\n  faults: [clock]\n  clock_rate: 2\n",
      {.message_has = {"cannot move the clocks of etcd", "vDSO"},
       .hint_has = {"raftkv"}});
  ExpectError(raftkv + "nemesis:\n  faults: [clock]\n",
              {.message_has = {"would not change any clock"}});
  ExpectError(raftkv +
                  "nemesis:\n  faults: [clock]\n  clock_offset_ms: -1000\n"
                  "  clock_monotonic: true\n",
              {.message_has = {"CLOCK_MONOTONIC back"}});

  ExpectError("name: x\nnemesis:\n  clock_rate: 1000\n",
              {.line = 3, .message_has = {"clock_rate"}});
  ExpectError("name: x\nnemesis:\n  clock_offset_ms: 100000000\n", {.line = 3});
}

TEST_CASE("strobe fault: keys, round trip, targets and what it refuses",
          "[config][clock][strobe]") {
  LoadResult d = MustLoad("name: x\n");
  CHECK(d.spec->nemesis.clock_strobe_delta_ms == 5000);
  CHECK(d.spec->nemesis.clock_strobe_period_ms == 1000);
  LoadResult r = MustLoad(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: redis}\n"
      "nemesis:\n  faults: [strobe]\n  targets: [one]\n"
      "  clock_strobe_delta_ms: 2s\n  clock_strobe_period_ms: 250\n");
  CHECK(r.spec->nemesis.clock_strobe_delta_ms == 2000);
  CHECK(r.spec->nemesis.clock_strobe_period_ms == 250);
  CHECK(MustLoadDescribed(*r.spec).spec->nemesis == r.spec->nemesis);

  // ZooKeeper and Redis take clock faults now; etcd still does not.
  CheckLoads(
      "name: x\ntarget: {name: zookeeper}\n"
      "nemesis:\n  faults: [clock]\n  clock_offset_ms: 1000\n");
  ExpectError("name: x\ntarget: {name: etcd}\nnemesis:\n  faults: [strobe]\n",
              {.message_has = {"strobe fault cannot move the clocks of etcd"},
               .hint_has = {"zookeeper"}});
  const std::string raftkv = "name: x\ntarget: {name: raftkv}\n";
  ExpectError(
      raftkv + "nemesis:\n  faults: [strobe]\n  clock_monotonic: true\n",
      {.message_has = {"CLOCK_MONOTONIC back"}});

  ExpectError("name: x\nnemesis:\n  clock_strobe_period_ms: 5\n",
              {.line = 3, .message_has = {"clock_strobe_period_ms"}});
  ExpectError("name: x\nnemesis:\n  clock_strobe_delta_ms: 0\n", {.line = 3});
  ExpectError(raftkv + "nemesis:\n  faults: [strobe]\n  targets: []\n",
              {.message_has = {"nemesis.targets is empty", "strobe"}});
}

TEST_CASE("raftkv lease_drift_bound: default, range, round trip",
          "[config][clock]") {
  CHECK(MustLoad("name: x\ntarget: {name: raftkv}\n")
            .spec->target.raftkv.lease_drift_bound == 0.001);
  const std::string raftkv = "name: x\ntarget:\n  name: raftkv\n";
  LoadResult r = MustLoad(raftkv + "  lease_drift_bound: 0.2\n");
  CHECK(r.spec->target.raftkv.lease_drift_bound == 0.2);
  CHECK(MustLoadDescribed(*r.spec).spec->target == r.spec->target);

  ExpectError(raftkv + "  lease_drift_bound: 0.8\n",
              {.line = 4,
               .column = 22,
               .message_has = {"lease_drift_bound"},
               .hint_has = {"1/1.2"}});
  ExpectError(raftkv + "  extra_args: [--lease-drift-bound, '0.1']\n",
              {.hint_has = {"lease_drift_bound"}});
  ExpectError("name: x\ntarget:\n  name: etcd\n  lease_drift_bound: 0.1\n",
              {.line = 4, .message_has = {"raftkv"}});
}

// Unit tests of the system-clock keys (docs/config.md: cluster.system_clock,
// nemesis.clock_mode): what is accepted, and the refusals with their place
// in the file (netns and docker share a kernel clock, not allowed by the
// cluster, clock_monotonic, clock_rate).
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using faultline::harness::ConfigError;
using faultline::harness::DescribeSpec;
using faultline::harness::LoadResult;
using faultline::harness::config_testing::Contains;
using faultline::harness::config_testing::Load;
using faultline::harness::config_testing::OnlyError;

namespace {

// An ssh cluster with `cluster_extra` under cluster: and `nemesis` as the
// nemesis section's body (etcd: system clocks reach Go programs too).
std::string Ssh(const std::string& cluster_extra, const std::string& nemesis) {
  return "name: s\n"
         "target: {name: etcd}\n"
         "cluster:\n"
         "  provider: ssh\n"
         "  nodes: [10.77.94.2, 10.77.94.3, 10.77.94.4]\n" +
         cluster_extra + "nemesis:\n" + nemesis;
}

}  // namespace

TEST_CASE("system clocks: allowed ssh cluster, clock and strobe, etcd too",
          "[config][sysclock]") {
  LoadResult r = Load(Ssh("  system_clock: allow\n",
                          "  faults: [clock, strobe]\n"
                          "  clock_mode: system\n"
                          "  clock_offset_ms: -3000\n"));
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->cluster.system_clock == "allow");
  CHECK(r.spec->nemesis.clock_mode == "system");
  // The description round-trips the keys.
  LoadResult again = Load(DescribeSpec(*r.spec));
  INFO(again.FormatErrors());
  REQUIRE(again.ok());
  CHECK(again.spec->cluster.system_clock == "allow");
  CHECK(again.spec->nemesis.clock_mode == "system");
}

TEST_CASE("system clocks: defaults are faketime and deny",
          "[config][sysclock]") {
  LoadResult r = Load("name: s\ntarget: {name: raftkv}\n");
  REQUIRE(r.ok());
  CHECK(r.spec->cluster.system_clock == "deny");
  CHECK(r.spec->nemesis.clock_mode == "faketime");
  CHECK_FALSE(Contains(DescribeSpec(*r.spec), "clock_mode"));
  CHECK_FALSE(Contains(DescribeSpec(*r.spec), "system_clock"));
}

TEST_CASE("system clocks: refused unless the cluster allows them",
          "[config][sysclock]") {
  ConfigError e = OnlyError(Load(Ssh("",
                                     "  faults: [clock]\n  clock_mode: system\n"
                                     "  clock_offset_ms: 2000\n")));
  CHECK(e.file == "t.yaml");
  CHECK(e.line == 8);  // clock_mode
  CHECK(e.column == 15);
  CHECK(Contains(e.message, "cluster.system_clock does not allow it"));
  CHECK(Contains(e.hint, "system_clock: allow"));
  e = OnlyError(Load(Ssh("  system_clock: deny\n",
                         "  faults: [strobe]\n  clock_mode: system\n")));
  CHECK(Contains(e.message, "does not allow"));
}

TEST_CASE("system clocks: refused on netns and docker, which share a kernel",
          "[config][sysclock]") {
  ConfigError e =
      OnlyError(Load("name: s\ntarget: {name: raftkv}\n"
                     "nemesis:\n  faults: [clock]\n  clock_mode: system\n"
                     "  clock_offset_ms: 2000\n"));
  CHECK(e.line == 5);
  CHECK(Contains(e.message, "need provider ssh"));
  CHECK(Contains(e.message, "share the controller's kernel clock"));
  e =
      OnlyError(Load("name: s\ntarget: {name: raftkv}\n"
                     "cluster:\n  provider: docker\n  system_clock: allow\n"));
  CHECK(e.line == 5);
  CHECK(Contains(e.message, "docker containers share the host kernel's clock"));
  CHECK(Contains(e.hint, "provider ssh"));
}

TEST_CASE("system clocks: no clock_monotonic, no clock_rate",
          "[config][sysclock]") {
  ConfigError e = OnlyError(Load(Ssh("  system_clock: allow\n",
                                     "  faults: [clock]\n"
                                     "  clock_mode: system\n"
                                     "  clock_offset_ms: 2000\n"
                                     "  clock_monotonic: true\n")));
  CHECK(e.line == 11);
  CHECK(Contains(e.message, "CLOCK_MONOTONIC cannot be stepped"));
  e = OnlyError(Load(Ssh("  system_clock: allow\n",
                         "  faults: [clock]\n"
                         "  clock_mode: system\n"
                         "  clock_rate: 2\n")));
  CHECK(e.line == 10);
  CHECK(Contains(e.message, "cannot make them run faster or slower"));
  e = OnlyError(Load(Ssh("  system_clock: allow\n",
                         "  faults:\n"
                         "    - {fault: clock, clock_rate: 0.5}\n"
                         "  clock_mode: system\n")));
  CHECK(Contains(e.message, "clock_rate is not 1"));
}

TEST_CASE("system clocks: bad values name the choices", "[config][sysclock]") {
  ConfigError e =
      OnlyError(Load(Ssh("  system_clock: yes\n", "  faults: []\n")));
  CHECK(e.line == 6);
  CHECK(Contains(e.message, "allow"));
  e = OnlyError(Load(Ssh("", "  faults: []\n  clock_mode: real\n")));
  CHECK(e.line == 8);
  CHECK(Contains(e.message, "faketime"));
}

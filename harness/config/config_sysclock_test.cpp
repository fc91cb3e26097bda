// Unit tests of the system-clock keys (docs/config.md: cluster.system_clock,
// nemesis.clock_mode): what is accepted, and the refusals with their place
// in the file (netns and docker share a kernel clock, not allowed by the
// cluster, clock_monotonic, clock_rate).
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

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
  LoadResult r = MustLoad(Ssh("  system_clock: allow\n",
                              "  faults: [clock, strobe]\n"
                              "  clock_mode: system\n"
                              "  clock_offset_ms: -3000\n"));
  CHECK(r.spec->cluster.system_clock == "allow");
  CHECK(r.spec->nemesis.clock_mode == "system");
  // The description round-trips the keys.
  LoadResult again = MustLoadDescribed(*r.spec);
  CHECK(again.spec->cluster.system_clock == "allow");
  CHECK(again.spec->nemesis.clock_mode == "system");
}

TEST_CASE("system clocks: defaults are faketime and deny",
          "[config][sysclock]") {
  LoadResult r = MustLoad("name: s\ntarget: {name: raftkv}\n");
  CHECK(r.spec->cluster.system_clock == "deny");
  CHECK(r.spec->nemesis.clock_mode == "faketime");
  CHECK_FALSE(Contains(DescribeSpec(*r.spec), "clock_mode"));
  CHECK_FALSE(Contains(DescribeSpec(*r.spec), "system_clock"));
}

TEST_CASE("system clocks: refused unless the cluster allows them",
          "[config][sysclock]") {
  ExpectError(Ssh("",
                  "  faults: [clock]\n  clock_mode: system\n"
                  "  clock_offset_ms: 2000\n"),
              {.file = "t.yaml",
               .line = 8,  // clock_mode
               .column = 15,
               .message_has = {"cluster.system_clock does not allow it"},
               .hint_has = {"system_clock: allow"}});
  ExpectError(Ssh("  system_clock: deny\n",
                  "  faults: [strobe]\n  clock_mode: system\n"),
              {.message_has = {"does not allow"}});
}

TEST_CASE("system clocks: refused on netns and docker, which share a kernel",
          "[config][sysclock]") {
  ExpectError(
      "name: s\ntarget: {name: raftkv}\n"
      "nemesis:\n  faults: [clock]\n  clock_mode: system\n"
      "  clock_offset_ms: 2000\n",
      {.line = 5,
       .message_has = {"need provider ssh",
                       "share the controller's kernel clock"}});
  ExpectError(
      "name: s\ntarget: {name: raftkv}\n"
      "cluster:\n  provider: docker\n  system_clock: allow\n",
      {.line = 5,
       .message_has = {"docker containers share the host kernel's clock"},
       .hint_has = {"provider ssh"}});
}

TEST_CASE("system clocks: no clock_monotonic, no clock_rate",
          "[config][sysclock]") {
  const std::string allow = "  system_clock: allow\n";
  ExpectError(
      Ssh(allow,
          "  faults: [clock]\n"
          "  clock_mode: system\n"
          "  clock_offset_ms: 2000\n"
          "  clock_monotonic: true\n"),
      {.line = 11, .message_has = {"CLOCK_MONOTONIC cannot be stepped"}});
  ExpectError(
      Ssh(allow, "  faults: [clock]\n  clock_mode: system\n  clock_rate: 2\n"),
      {.line = 10, .message_has = {"cannot make them run faster or slower"}});
  ExpectError(Ssh(allow,
                  "  faults:\n"
                  "    - {fault: clock, clock_rate: 0.5}\n"
                  "  clock_mode: system\n"),
              {.message_has = {"clock_rate is not 1"}});
}

TEST_CASE("system clocks: bad values name the choices", "[config][sysclock]") {
  ExpectError(Ssh("  system_clock: yes\n", "  faults: []\n"),
              {.line = 6, .message_has = {"allow"}});
  ExpectError(Ssh("", "  faults: []\n  clock_mode: real\n"),
              {.line = 8, .message_has = {"faketime"}});
}

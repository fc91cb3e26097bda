// Unit tests of the ssh cluster provider's config keys (docs/config.md,
// "cluster" with provider ssh): host lists, defaults, the ssh-only keys,
// and the combinations that are config errors.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

TEST_CASE("ssh cluster: hosts as addresses and as maps", "[config][ssh]") {
  LoadResult r = MustLoad(R"(name: s
target: {name: raftkv}
cluster:
  provider: ssh
  nodes:
    - 10.77.70.2
    - {name: db2, address: 10.77.70.3}
    - {address: host-c.example}
  user: tester
  key: /tmp/k/id_ed25519
  port: 2222
  known_hosts: /tmp/k/known_hosts
  host_key_policy: accept-new
  sudo: true
  controller_ip: 10.77.70.1
  work_dir: /var/tmp
)");
  const auto& c = r.spec->cluster;
  CHECK(c.provider == "ssh");
  CHECK(c.nodes == 3);
  REQUIRE(c.hosts.size() == 3);
  CHECK(c.hosts[0].name == "n1");
  CHECK(c.hosts[0].address == "10.77.70.2");
  CHECK(c.hosts[1].name == "db2");
  CHECK(c.hosts[2].name == "n3");
  CHECK(c.hosts[2].address == "host-c.example");
  CHECK(c.user == "tester");
  CHECK(c.key == "/tmp/k/id_ed25519");
  CHECK(c.port == 2222);
  CHECK(c.known_hosts == "/tmp/k/known_hosts");
  CHECK(c.host_key_policy == "accept-new");
  CHECK(c.sudo);
  CHECK(c.controller_ip == "10.77.70.1");
  CHECK(c.work_dir == "/var/tmp");
  // The description loads back to the same spec.
  CHECK(MustLoadDescribed(*r.spec).spec->cluster == c);
}

TEST_CASE("ssh cluster: defaults", "[config][ssh]") {
  LoadResult r =
      MustLoad("name: s\ncluster: {provider: ssh, nodes: [a1, a2, a3]}\n");
  const auto& c = r.spec->cluster;
  CHECK(c.user == "root");
  CHECK(c.port == 22);
  CHECK(c.key.empty());
  CHECK(c.host_key_policy == "strict");
  CHECK_FALSE(c.sudo);
  CHECK(c.work_dir == "/tmp");
  CHECK(MustLoadDescribed(*r.spec).spec->cluster == c);
}

TEST_CASE("ssh cluster: bad combinations are errors with a place",
          "[config][ssh]") {
  // An ssh cluster of the hosts a, b, c, with the keys `extra` after them.
  auto abc = [](const std::string& extra) {
    return "name: s\ncluster: {provider: ssh, nodes: [a, b, c]" + extra + "}\n";
  };
  // An ssh cluster whose host list (line 4) ends with `hosts` (from line 5).
  auto hosts = [](const std::string& lines) {
    return "name: s\ncluster:\n  provider: ssh\n  nodes:\n" + lines;
  };
  SECTION("ssh without a host list") {
    ExpectError("name: s\ncluster: {provider: ssh, nodes: 3}\n",
                {.line = 2, .message_has = {"list of the hosts"}});
  }
  SECTION("ssh with no nodes key at all") {
    ExpectError("name: s\ncluster:\n  provider: ssh\n",
                {.line = 3, .message_has = {"list of the hosts"}});
  }
  SECTION("a host list under netns") {
    ExpectError("name: s\ncluster:\n  nodes: [a, b, c]\n",
                {.line = 3,
                 .column = 10,
                 .message_has = {"provider is netns"},
                 .hint_has = {"provider: ssh"}});
  }
  SECTION("an ssh key under netns") {
    ExpectError(
        "name: s\ncluster:\n  nodes: 3\n  sudo: true\n",
        {.line = 4, .message_has = {"cluster.sudo is a key of provider ssh"}});
  }
  SECTION("subnet with ssh") {
    ExpectError(
        "name: s\ncluster:\n  provider: ssh\n  nodes: [a, b, c]\n"
        "  subnet: 10.77.70.0/24\n",
        {.line = 5, .message_has = {"subnet is for provider netns"}});
  }
  SECTION("duplicate address") {
    ExpectError(hosts("    - 10.0.0.2\n    - {name: x, address: 10.0.0.2}\n"),
                {.line = 6, .message_has = {"used twice"}});
  }
  SECTION("duplicate name") {
    ExpectError(hosts("    - {name: n2, address: a}\n    - b\n"),
                {.line = 6, .message_has = {"n2"}});
  }
  SECTION("a host name that could inject shell") {
    ExpectError(hosts("    - {name: 'n1; rm -rf /', address: a}\n"),
                {.line = 5, .message_has = {"not a plain name"}});
  }
  SECTION("a host without an address") {
    ExpectError(hosts("    - {name: n1}\n"),
                {.line = 5, .message_has = {"address"}});
  }
  SECTION("too many hosts") {
    ExpectError(
        "name: s\ncluster: {provider: ssh, nodes: [a,b,c,d,e,f,g,h,i,j]}\n",
        {.message_has = {"1 to 9 hosts"}});
  }
  SECTION("relative key path") {
    ExpectError(abc(", key: id_rsa"), {.message_has = {"absolute path"}});
  }
  SECTION("unknown host key policy") {
    ExpectError(abc(", host_key_policy: yolo"), {.message_has = {"yolo"}});
  }
  SECTION("bad work_dir") {
    ExpectError(abc(", work_dir: tmp/x"), {.message_has = {"absolute path"}});
  }
  SECTION("--nodes cannot resize a host list") {
    Overrides o;
    o.nodes = 5;
    ExpectError(abc(""), {.message_has = {"--nodes"}}, o);
  }
}

TEST_CASE("ssh cluster: delay, kill-voter and figure8 are accepted",
          "[config][ssh]") {
  // The daemon they need is copied to the nodes (nemesis/net/netdelay_node.h).
  for (const char* fault : {"delay", "kill-voter"}) {
    CheckLoads(std::string("name: s\ncluster: {provider: ssh, "
                           "nodes: [a, b, c]}\nnemesis:\n  "
                           "faults: [partition, ") +
               fault + "]\n");
  }
  CheckLoads(
      "name: s\ncluster: {provider: ssh, nodes: [a, b, c]}\n"
      "target: {name: raftkv}\nnemesis:\n  faults: [figure8]\n");
}

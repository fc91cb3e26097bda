// Unit tests of the ssh cluster provider's config keys (docs/config.md,
// "cluster" with provider ssh): host lists, defaults, the ssh-only keys,
// and the combinations that are config errors.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using faultline::harness::ConfigError;
using faultline::harness::DescribeSpec;
using faultline::harness::LoadConfigText;
using faultline::harness::LoadResult;
using faultline::harness::Overrides;
using faultline::harness::config_testing::Contains;
using faultline::harness::config_testing::Load;
using faultline::harness::config_testing::OnlyError;

TEST_CASE("ssh cluster: hosts as addresses and as maps", "[config][ssh]") {
  LoadResult r = Load(R"(name: s
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
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
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
  LoadResult back = LoadConfigText(DescribeSpec(*r.spec), "d");
  INFO(back.FormatErrors());
  REQUIRE(back.ok());
  CHECK(back.spec->cluster == c);
}

TEST_CASE("ssh cluster: defaults", "[config][ssh]") {
  LoadResult r =
      Load("name: s\ncluster: {provider: ssh, nodes: [a1, a2, a3]}\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  const auto& c = r.spec->cluster;
  CHECK(c.user == "root");
  CHECK(c.port == 22);
  CHECK(c.key.empty());
  CHECK(c.host_key_policy == "strict");
  CHECK_FALSE(c.sudo);
  CHECK(c.work_dir == "/tmp");
  LoadResult back = LoadConfigText(DescribeSpec(*r.spec), "d");
  INFO(back.FormatErrors());
  REQUIRE(back.ok());
  CHECK(back.spec->cluster == c);
}

TEST_CASE("ssh cluster: bad combinations are errors with a place",
          "[config][ssh]") {
  SECTION("ssh without a host list") {
    auto e = OnlyError(Load("name: s\ncluster: {provider: ssh, nodes: 3}\n"));
    CHECK(e.line == 2);
    CHECK(Contains(e.message, "list of the hosts"));
  }
  SECTION("ssh with no nodes key at all") {
    auto e = OnlyError(Load("name: s\ncluster:\n  provider: ssh\n"));
    CHECK(e.line == 3);
    CHECK(Contains(e.message, "list of the hosts"));
  }
  SECTION("a host list under netns") {
    auto e = OnlyError(Load("name: s\ncluster:\n  nodes: [a, b, c]\n"));
    CHECK(e.line == 3);
    CHECK(e.column == 10);
    CHECK(Contains(e.message, "provider is netns"));
    CHECK(Contains(e.hint, "provider: ssh"));
  }
  SECTION("an ssh key under netns") {
    auto e = OnlyError(Load("name: s\ncluster:\n  nodes: 3\n  sudo: true\n"));
    CHECK(e.line == 4);
    CHECK(Contains(e.message, "cluster.sudo is a key of provider ssh"));
  }
  SECTION("subnet with ssh") {
    auto e = OnlyError(
        Load("name: s\ncluster:\n  provider: ssh\n  nodes: [a, b, c]\n"
             "  subnet: 10.77.70.0/24\n"));
    CHECK(e.line == 5);
    CHECK(Contains(e.message, "subnet is for provider netns"));
  }
  SECTION("duplicate address") {
    auto e = OnlyError(
        Load("name: s\ncluster:\n  provider: ssh\n  nodes:\n    - 10.0.0.2\n"
             "    - {name: x, address: 10.0.0.2}\n"));
    CHECK(e.line == 6);
    CHECK(Contains(e.message, "used twice"));
  }
  SECTION("duplicate name") {
    auto e =
        OnlyError(Load("name: s\ncluster:\n  provider: ssh\n  nodes:\n"
                       "    - {name: n2, address: a}\n    - b\n"));
    CHECK(e.line == 6);
    CHECK(Contains(e.message, "n2"));
  }
  SECTION("a host name that could inject shell") {
    auto e =
        OnlyError(Load("name: s\ncluster:\n  provider: ssh\n  nodes:\n"
                       "    - {name: 'n1; rm -rf /', address: a}\n"));
    CHECK(e.line == 5);
    CHECK(Contains(e.message, "not a plain name"));
  }
  SECTION("a host without an address") {
    auto e = OnlyError(Load(
        "name: s\ncluster:\n  provider: ssh\n  nodes:\n    - {name: n1}\n"));
    CHECK(e.line == 5);
    CHECK(Contains(e.message, "address"));
  }
  SECTION("too many hosts") {
    auto e = OnlyError(Load(
        "name: s\ncluster: {provider: ssh, nodes: [a,b,c,d,e,f,g,h,i,j]}\n"));
    CHECK(Contains(e.message, "1 to 9 hosts"));
  }
  SECTION("relative key path") {
    auto e = OnlyError(Load(
        "name: s\ncluster: {provider: ssh, nodes: [a, b, c], key: id_rsa}\n"));
    CHECK(Contains(e.message, "absolute path"));
  }
  SECTION("unknown host key policy") {
    auto e =
        OnlyError(Load("name: s\ncluster: {provider: ssh, nodes: [a, b, c], "
                       "host_key_policy: yolo}\n"));
    CHECK(Contains(e.message, "yolo"));
  }
  SECTION("bad work_dir") {
    auto e =
        OnlyError(Load("name: s\ncluster: {provider: ssh, nodes: [a, b, c], "
                       "work_dir: tmp/x}\n"));
    CHECK(Contains(e.message, "absolute path"));
  }
  SECTION("--nodes cannot resize a host list") {
    Overrides o;
    o.nodes = 5;
    auto e = OnlyError(
        Load("name: s\ncluster: {provider: ssh, nodes: [a, b, c]}\n", o));
    CHECK(Contains(e.message, "--nodes"));
  }
}

TEST_CASE("ssh cluster: delay, kill-voter and figure8 are accepted",
          "[config][ssh]") {
  // The daemon they need is copied to the nodes (nemesis/net/netdelay_node.h).
  for (const char* fault : {"delay", "kill-voter"}) {
    auto r = Load(std::string("name: s\ncluster: {provider: ssh, "
                              "nodes: [a, b, c]}\nnemesis:\n  "
                              "faults: [partition, ") +
                  fault + "]\n");
    CHECK(r.ok());
  }
  auto r = Load(
      "name: s\ncluster: {provider: ssh, nodes: [a, b, c]}\n"
      "target: {name: raftkv}\nnemesis:\n  faults: [figure8]\n");
  CHECK(r.ok());
}

#include "targets/zookeeper/zk_config.h"

#include <catch2/catch.hpp>

#include "harness/config/config.h"
#include "targets/zookeeper/zk_client.h"

namespace faultline::targets::zookeeper {
namespace {

// Answers captured from ZooKeeper 3.8.0 (Debian 12, 3.8.0-11+deb12u2) in a
// 3-node ensemble of a faultline run.
constexpr const char* kSrvrLeader =
    "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 "
    "17:54 UTC\n"
    "Latency min/avg/max: 0/0.9634/8\n"
    "Received: 234\n"
    "Sent: 246\n"
    "Connections: 3\n"
    "Outstanding: 0\n"
    "Zxid: 0x100000036\n"
    "Mode: leader\n"
    "Node count: 12\n"
    "Proposal sizes last/min/max: 122/36/122\n";
constexpr const char* kSrvrFollower =
    "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2024-12-29 "
    "17:54 UTC\n"
    "Latency min/avg/max: 0/1.1707/10\n"
    "Received: 57\n"
    "Sent: 58\n"
    "Connections: 3\n"
    "Outstanding: 0\n"
    "Zxid: 0x100000036\n"
    "Mode: follower\n"
    "Node count: 12\n";
// Not captured from a run: a follower before the ensemble's first write
// (ZooKeeper 3.8's `srvr` reports Zxid: 0x0 until then).
constexpr const char* kSrvrFollowerNoWrites = "Zxid: 0x0\nMode: follower\n";
constexpr const char* kNotServing =
    "This ZooKeeper instance is not currently serving requests\n";

TEST_CASE("zoo.cfg names every server and binds the client port",
          "[zookeeper]") {
  ZooCfg cfg;
  cfg.tick_ms = 200;
  cfg.init_limit = 20;
  cfg.sync_limit = 5;
  cfg.data_dir = "/w/n2/data";
  cfg.client_ip = "10.77.40.2";
  cfg.server_ips = {"10.77.40.1", "10.77.40.2", "10.77.40.3"};
  const std::string text = RenderZooCfg(cfg);
  CHECK(text.find("tickTime=200\n") != std::string::npos);
  CHECK(text.find("initLimit=20\n") != std::string::npos);
  CHECK(text.find("syncLimit=5\n") != std::string::npos);
  CHECK(text.find("dataDir=/w/n2/data\n") != std::string::npos);
  CHECK(text.find("clientPort=2181\n") != std::string::npos);
  CHECK(text.find("clientPortAddress=10.77.40.2\n") != std::string::npos);
  CHECK(text.find("4lw.commands.whitelist=srvr,mntr\n") != std::string::npos);
  CHECK(text.find("admin.enableServer=false\n") != std::string::npos);
  CHECK(text.find("maxClientCnxns=0\n") != std::string::npos);
  CHECK(text.find("server.1=10.77.40.1:2888:3888\n") != std::string::npos);
  CHECK(text.find("server.2=10.77.40.2:2888:3888\n") != std::string::npos);
  CHECK(text.find("server.3=10.77.40.3:2888:3888\n") != std::string::npos);
  CHECK(text.find("server.4") == std::string::npos);
}

TEST_CASE("a one-node zoo.cfg has no server lines (standalone)",
          "[zookeeper]") {
  ZooCfg cfg;
  cfg.data_dir = "/w/n1/data";
  cfg.client_ip = "10.77.40.1";
  cfg.server_ips = {"10.77.40.1"};
  CHECK(RenderZooCfg(cfg).find("server.") == std::string::npos);
}

TEST_CASE("the java command runs QuorumPeerMain on the node's zoo.cfg",
          "[zookeeper]") {
  auto argv = JavaCommand("/usr/bin/java", "a.jar:b.jar", "/w/n1/zoo.cfg",
                          "/w/n1", true);
  REQUIRE(argv.size() >= 4);
  CHECK(argv.front() == "/usr/bin/java");
  CHECK(argv.back() == "/w/n1/zoo.cfg");
  CHECK(argv[argv.size() - 2] ==
        "org.apache.zookeeper.server.quorum.QuorumPeerMain");
  auto cp = std::find(argv.begin(), argv.end(), "-cp");
  REQUIRE(cp != argv.end());
  CHECK(*(cp + 1) == "a.jar:b.jar");
}

TEST_CASE("force_sync false turns the transaction log's fsync off",
          "[zookeeper]") {
  const char* kOff = "-Dzookeeper.forceSync=no";
  auto safe = JavaCommand("java", "a.jar", "/w/n1/zoo.cfg", "/w/n1", true);
  for (const auto& a : safe) CHECK(a.find("forceSync") == std::string::npos);
  auto off = JavaCommand("java", "a.jar", "/w/n1/zoo.cfg", "/w/n1", false);
  CHECK(off.size() == safe.size() + 1);
  auto it = std::find(off.begin(), off.end(), kOff);
  REQUIRE(it != off.end());
  // A JVM option: before -cp and the main class, so java reads it.
  CHECK(it < std::find(off.begin(), off.end(), "-cp"));
  CHECK(off[off.size() - 2] ==
        "org.apache.zookeeper.server.quorum.QuorumPeerMain");
}

TEST_CASE("srvr of a leader gives mode and epoch", "[zookeeper]") {
  auto info = ParseSrvr(kSrvrLeader);
  REQUIRE(info);
  CHECK(info->serving);
  CHECK(info->mode == "leader");
  REQUIRE(info->zxid);
  CHECK(*info->zxid == 0x100000036ULL);
  CHECK(info->epoch() == 1);
}

TEST_CASE("srvr of a follower gives its mode and epoch", "[zookeeper]") {
  auto info = ParseSrvr(kSrvrFollower);
  REQUIRE(info);
  CHECK(info->serving);
  CHECK(info->mode == "follower");
  CHECK(info->epoch() == 1);
}

TEST_CASE("srvr of a fresh follower has zxid 0", "[zookeeper]") {
  auto info = ParseSrvr(kSrvrFollowerNoWrites);
  REQUIRE(info);
  CHECK(info->mode == "follower");
  CHECK(info->zxid == 0ULL);
}

TEST_CASE("a server that is electing is not serving", "[zookeeper]") {
  auto info = ParseSrvr(kNotServing);
  REQUIRE(info);
  CHECK_FALSE(info->serving);
  CHECK(info->mode.empty());
}

TEST_CASE("text that is no srvr answer is rejected", "[zookeeper]") {
  CHECK_FALSE(ParseSrvr(""));
  CHECK_FALSE(
      ParseSrvr("srvr is not executed because it is not in the "
                "whitelist.\n"));
  auto bad_zxid = ParseSrvr("Zxid: 0xZZ\nMode: follower\n");
  REQUIRE(bad_zxid);
  CHECK_FALSE(bad_zxid->zxid);
}

TEST_CASE("session timeouts are clamped to 2..20 ticks", "[zookeeper]") {
  CHECK(ClampSessionTimeout(1000, 200) == 1000);
  CHECK(ClampSessionTimeout(100, 200) == 400);
  CHECK(ClampSessionTimeout(10000, 200) == 4000);
  CHECK(ClampSessionTimeout(10000, 2000) == 10000);
}

TEST_CASE("sequence numbers are the last ten digits", "[zookeeper]") {
  CHECK(SequenceOf("lock-0000000042") == 42);
  CHECK(SequenceOf("lock-") == -1);
  CHECK(SequenceOf("lock-00000000x2") == -1);
}

TEST_CASE(
    "the lock goes to the lowest sequence; others watch the next "
    "lower one",
    "[zookeeper]") {
  const std::vector<std::string> kids = {"lock-0000000007", "lock-0000000003",
                                         "lock-0000000005"};
  CHECK(LockPredecessor(kids, "lock-0000000003") == std::string());
  CHECK(LockPredecessor(kids, "lock-0000000005") ==
        std::string("lock-0000000003"));
  CHECK(LockPredecessor(kids, "lock-0000000007") ==
        std::string("lock-0000000005"));
  // Our znode is gone (the session expired): not ours to wait for.
  CHECK_FALSE(LockPredecessor(kids, "lock-0000000004"));
  CHECK_FALSE(LockPredecessor(kids, "garbage"));
}

TEST_CASE("register keys map to znodes under /faultline/registers",
          "[zookeeper]") {
  using checkers::Value;
  CHECK(ZkRegisterClient::PathFor(Value::Int(3)) == "/faultline/registers/3");
  CHECK(ZkRegisterClient::PathFor(Value::String("k1")) ==
        "/faultline/registers/k1");
  CHECK(ZkRegisterClient::PathFor(Value::String("a/b")).empty());
  CHECK(ZkRegisterClient::PathFor(Value::String("..")).empty());
}

TEST_CASE(
    "a zookeeper config loads; a lock ttl outside the session clamp "
    "is rejected",
    "[zookeeper][config]") {
  const std::string base =
      "name: zk\n"
      "cluster: {nodes: 3, subnet: 10.77.43.0/24}\n"
      "target: {name: zookeeper, tick_ms: 100, sync_reads: false}\n";
  auto ok = harness::LoadConfigText(base, "zk.yaml");
  REQUIRE(ok.ok());
  CHECK(ok.spec->target.name == "zookeeper");
  CHECK(ok.spec->target.zookeeper.tick_ms == 100);
  CHECK_FALSE(ok.spec->target.zookeeper.sync_reads);
  // DescribeSpec writes the zookeeper keys and loads back the same.
  auto again =
      harness::LoadConfigText(harness::DescribeSpec(*ok.spec), "again.yaml");
  REQUIRE(again.ok());
  CHECK(again.spec->target == ok.spec->target);
  auto bad = harness::LoadConfigText(
      base + "workload: {name: lock, ttl_ms: 5000}\n", "zk.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.FormatErrors().find("2..20 x target.tick_ms") != std::string::npos);
  auto foreign = harness::LoadConfigText(
      "name: zk\ntarget: {name: etcd, tick_ms: 100}\n", "zk.yaml");
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.FormatErrors().find("zookeeper target") != std::string::npos);
}

}  // namespace
}  // namespace faultline::targets::zookeeper

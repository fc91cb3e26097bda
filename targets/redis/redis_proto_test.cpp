// Unit tests of the pure parts of the Redis target: config rendering and
// the parsers of INFO, ROLE and SENTINEL replies. (The Lua scripts can only
// be tested against a real server: tests/e2e_redis.sh.)
#include "targets/redis/redis_proto.h"

#include <catch2/catch.hpp>

namespace {

using faultline::harness::RedisSpec;
namespace redis = faultline::targets::redis;
using redis::resp::Value;

Value Bulk(std::string s) {
  Value v;
  v.kind = Value::Kind::kBulk;
  v.str = std::move(s);
  return v;
}
Value Int(long long i) {
  Value v;
  v.kind = Value::Kind::kInteger;
  v.integer = i;
  return v;
}
Value Array(std::vector<Value> a) {
  Value v;
  v.kind = Value::Kind::kArray;
  v.array = std::move(a);
  return v;
}
bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST_CASE("redis.conf: primary, replica, min-replicas, appendonly", "[redis]") {
  RedisSpec spec;
  std::string primary = redis::RenderRedisConf(spec, "10.77.44.1", "/w/n1", "");
  CHECK(Has(primary, "bind 10.77.44.1"));
  CHECK(Has(primary, "protected-mode no"));
  CHECK(Has(primary, "daemonize no"));
  CHECK(Has(primary, "dir /w/n1"));
  CHECK(Has(primary, "appendonly no"));
  CHECK(primary.find("replicaof") == std::string::npos);
  CHECK(primary.find("min-replicas") == std::string::npos);

  spec.min_replicas_to_write = 1;
  spec.min_replicas_max_lag_s = 4;
  spec.appendonly = true;
  std::string replica =
      redis::RenderRedisConf(spec, "10.77.44.2", "/w/n2", "10.77.44.1");
  CHECK(Has(replica, "replicaof 10.77.44.1 6379"));
  CHECK(Has(replica, "min-replicas-to-write 1"));
  CHECK(Has(replica, "min-replicas-max-lag 4"));
  CHECK(Has(replica, "appendonly yes"));
}

TEST_CASE("redis.conf: appendfsync policy and data directory", "[redis]") {
  RedisSpec spec;
  std::string d = redis::RenderRedisConf(spec, "10.77.44.1", "/w/n1/data", "");
  CHECK(Has(d, "appendfsync everysec"));  // the default, as before
  CHECK(Has(d, "dir /w/n1/data"));
  CHECK(std::string(redis::kDataSubdir) == "data");
  spec.appendonly = true;
  for (const char* policy : {"always", "everysec", "no"}) {
    spec.appendfsync = policy;
    std::string c =
        redis::RenderRedisConf(spec, "10.77.44.1", "/w/n1/data", "");
    INFO(c);
    CHECK(Has(c, "appendonly yes"));
    CHECK(Has(c, std::string("appendfsync ") + policy));
    // One appendfsync line only: the policy is not overridden later.
    CHECK(c.find("appendfsync") == c.rfind("appendfsync"));
  }
}

TEST_CASE("sentinel.conf and quorum", "[redis]") {
  CHECK(redis::SentinelQuorum(1) == 1);
  CHECK(redis::SentinelQuorum(3) == 2);
  CHECK(redis::SentinelQuorum(4) == 3);
  CHECK(redis::SentinelQuorum(5) == 3);
  RedisSpec spec;
  spec.down_after_ms = 1500;
  spec.failover_timeout_ms = 7000;
  std::string c =
      redis::RenderSentinelConf(spec, "10.77.44.3", "/w/n3", "10.77.44.1", 2);
  CHECK(Has(c, "port 26379"));
  CHECK(Has(c, "bind 10.77.44.3"));
  CHECK(Has(c, "sentinel monitor faultline 10.77.44.1 6379 2"));
  CHECK(Has(c, "sentinel down-after-milliseconds faultline 1500"));
  CHECK(Has(c, "sentinel failover-timeout faultline 7000"));
}

TEST_CASE("INFO parsing skips sections and blank lines", "[redis]") {
  auto m = redis::ParseInfo(
      "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
      "slave0:ip=10.77.44.2,port=6379,state=online,offset=42,lag=0\r\n"
      "\r\n# Other\nweird line\nmaster_repl_offset:42\n");
  CHECK(redis::Field(m, "role") == "master");
  CHECK(redis::FieldInt(m, "connected_slaves", -1) == 2);
  CHECK(redis::Field(m, "slave0") ==
        "ip=10.77.44.2,port=6379,state=online,offset=42,lag=0");
  CHECK(redis::FieldInt(m, "master_repl_offset", -1) == 42);
  CHECK(redis::FieldInt(m, "role", -1) == -1);
  CHECK(redis::Field(m, "weird line").empty());
}

TEST_CASE("ROLE parsing: master, slave, malformed", "[redis]") {
  auto master = redis::ParseRole(
      Array({Bulk("master"), Int(100),
             Array({Array({Bulk("10.77.44.2"), Bulk("6379"), Bulk("100")})})}));
  CHECK(master.role == "master");
  CHECK(master.replicas == 1);
  CHECK(redis::NormalizeRole(master.role) == "leader");

  auto slave =
      redis::ParseRole(Array({Bulk("slave"), Bulk("10.77.44.1"), Int(6379),
                              Bulk("connected"), Int(100)}));
  CHECK(slave.role == "slave");
  CHECK(slave.master_ip == "10.77.44.1");
  CHECK(slave.master_port == 6379);
  CHECK(slave.link == "connected");
  CHECK(redis::NormalizeRole(slave.role) == "follower");

  CHECK(redis::ParseRole(Array({Bulk("slave"), Bulk("x")})).role.empty());
  CHECK(redis::ParseRole(Bulk("master")).role.empty());
  CHECK(redis::NormalizeRole("sentinel").empty());
}

TEST_CASE("SENTINEL replies: pairs and master address", "[redis]") {
  auto f = redis::ParsePairs(
      Array({Bulk("name"), Bulk("faultline"), Bulk("ip"), Bulk("10.77.44.2"),
             Bulk("config-epoch"), Bulk("3")}));
  CHECK(redis::Field(f, "ip") == "10.77.44.2");
  CHECK(redis::FieldInt(f, "config-epoch", -1) == 3);
  CHECK(redis::ParsePairs(Array({Bulk("odd")})).empty());

  auto addr = redis::ParseMasterAddr(Array({Bulk("10.77.44.2"), Bulk("6379")}));
  REQUIRE(addr);
  CHECK(addr->host == "10.77.44.2");
  CHECK(addr->port == 6379);
  CHECK_FALSE(redis::ParseMasterAddr(Value{}));  // null: unknown master
  CHECK_FALSE(
      redis::ParseMasterAddr(Array({Bulk("10.77.44.2"), Bulk("port")})));
}

TEST_CASE("error codes: what had no effect, what needs rediscovery",
          "[redis]") {
  CHECK(redis::ErrorCode("READONLY You can't write against a read only "
                         "replica.") == "READONLY");
  CHECK(redis::NoEffect("READONLY"));
  CHECK(redis::NoEffect("NOREPLICAS"));
  CHECK_FALSE(redis::NoEffect("UNKNOWNCODE"));
  CHECK(redis::Rediscover("READONLY"));
  CHECK(redis::Rediscover("NOREPLICAS"));
  CHECK_FALSE(redis::Rediscover("ERR"));
  CHECK_FALSE(redis::Rediscover("WRONGTYPE"));
}

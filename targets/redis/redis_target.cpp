#include "targets/redis/redis_target.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "targets/raftkv/resp_conn.h"
#include "targets/redis/redis_client.h"
#include "targets/redis/redis_collections_client.h"
#include "targets/redis/redis_proto.h"
#include "targets/redis/redis_txn_client.h"

namespace faultline::targets::redis {
namespace {

using Clock = std::chrono::steady_clock;
using harness::Fail;
using harness::Node;
using harness::NodeStatus;
using harness::Ok;
using harness::Result;
using raftkv::CallError;
using raftkv::CallResult;
using raftkv::RespConn;

constexpr const char* kRedis = "redis";
constexpr const char* kSentinel = "sentinel";
constexpr auto kAskTimeout = std::chrono::milliseconds(500);
constexpr auto kTermGrace = std::chrono::milliseconds(2000);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

// Asks ip:port one command; nullopt when there is no (non-error) reply.
std::optional<resp::Value> Ask(const std::string& ip, int port,
                               const std::vector<std::string>& command) {
  RespConn conn(ip, port);
  CallResult r = conn.Call(command, Clock::now() + kAskTimeout);
  if (r.error != CallError::kNone ||
      r.reply.kind == resp::Value::Kind::kError) {
    return std::nullopt;
  }
  return r.reply;
}

// Writes `text` to `remote_path` on the node (through a local temp file).
harness::Status WriteFile(const Node& node, const std::string& remote_path,
                          const std::string& text) {
  std::string local = (std::filesystem::temp_directory_path() /
                       ("faultline-redis-" + std::to_string(getpid()) + "-" +
                        node.name + ".conf"))
                          .string();
  {
    std::ofstream out(local, std::ios::trunc);
    out << text;
    if (!out.flush()) return Fail("redis: cannot write " + local);
  }
  auto up = node.remote->Upload(local, remote_path);
  std::remove(local.c_str());
  if (!up) return Fail("redis: " + node.name + ": " + up.error());
  return Ok();
}

}  // namespace

RedisTarget::RedisTarget(const harness::RedisSpec& spec,
                         const harness::WorkloadSpec& workload,
                         harness::Ledger* ledger, const std::string& work_dir,
                         const std::string& binary)
    : DaemonTarget("redis", kRedis, ledger, work_dir),
      spec_(spec),
      workload_(workload),
      binary_(binary.empty() ? spec.binary : binary) {
  sentinel_binary_ = spec.sentinel_binary;
  if (sentinel_binary_.find('/') == std::string::npos) {
    std::string found = harness::FindSystemTool(sentinel_binary_);
    if (!found.empty()) sentinel_binary_ = found;
  }
}

RedisTarget::~RedisTarget() = default;

std::string RedisTarget::version() {
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  auto result = harness::RunCommand({binary_, "--version"}, options);
  // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 ..."
  auto at = result.out.find("v=");
  if (!result.ok() || at == std::string::npos) return "redis unknown";
  auto end = result.out.find_first_of(" \n", at);
  return "redis " + result.out.substr(at + 2, end - at - 2);
}

std::vector<std::string> RedisTarget::RedisCommand(const Node& node) const {
  return {binary_, NodeDir(node) + "/redis.conf"};
}

std::vector<std::string> RedisTarget::SentinelCommand(const Node& node) const {
  return {sentinel_binary_, NodeDir(node) + "/sentinel.conf"};
}

std::string RedisTarget::NameOfIp(const std::string& ip) const {
  for (const Node& n : daemons_.nodes()) {
    if (n.ip == ip) return n.name;
  }
  return "";
}

harness::Status RedisTarget::Setup(harness::Cluster& cluster) {
  const auto& nodes = cluster.nodes();
  if (auto reset = ResetNodes(nodes, 9); !reset) return reset;
  const std::string primary = nodes.front().ip;
  const int quorum = SentinelQuorum(static_cast<int>(nodes.size()));
  for (const Node& node : nodes) {
    const std::string dir = NodeDir(node);
    auto rm = node.remote->Run({"rm", "-rf", dir});
    const std::string data = dir + "/" + kDataSubdir;
    auto mk = node.remote->Run({"mkdir", "-p", data});
    if (!rm.ok() || !mk.ok()) {
      return Fail("redis: cannot prepare " + dir + " on " + node.name + ": " +
                  rm.err + mk.err + rm.error + mk.error);
    }
    const bool is_primary = node.ip == primary;
    auto conf = WriteFile(
        node, dir + "/redis.conf",
        RenderRedisConf(spec_, node.ip, data, is_primary ? "" : primary));
    if (!conf) return conf;
    auto sconf =
        WriteFile(node, dir + "/sentinel.conf",
                  RenderSentinelConf(spec_, node.ip, dir, primary, quorum));
    if (!sconf) return sconf;
  }
  return Ok();
}

harness::Status RedisTarget::Start(const Node& node) {
  if (daemons_.Find(node.name) == nullptr) {
    return Fail("redis: unknown node " + node.name);
  }
  const std::string dir = NodeDir(node);
  auto env = ClockEnv(node);  // {} unless clock faults are on
  if (!env.ok()) return Fail("redis: " + env.error());
  if (!env->empty()) {
    const std::string shim = harness::FindFaketimeShim();
    if (shim.empty())
      return Fail(std::string("redis: clock faults need ") +
                  harness::kFaketimeShimName +
                  " (built beside faultline; or set FAULTLINE_FAKETIME_SHIM): "
                  "without it libfaketime hangs redis-server at start");
    *env = harness::PreloadFirst(std::move(*env), shim);
  }
  if (auto s = daemons_.Start(node, kRedis, RedisCommand(node),
                              dir + "/redis.log", *env);
      !s) {
    return s;
  }
  return daemons_.Start(node, kSentinel, SentinelCommand(node),
                        dir + "/sentinel.log", *env);
}

NodeStatus RedisTarget::Inspect(const Node& node) {
  NodeStatus status;
  const Node* n = daemons_.Find(node.name);
  if (n == nullptr) return status;
  auto role = Ask(n->ip, kRedisPort, {"ROLE"});
  if (!role) return status;
  status.reachable = true;
  status.role = NormalizeRole(ParseRole(*role).role);
  auto master = Ask(n->ip, kSentinelPort, {"SENTINEL", "MASTER", kMasterName});
  if (!master) return status;
  const auto fields = ParsePairs(*master);
  // The sentinel leading a failover raises config-epoch before it switches
  // the address: mid-failover its (epoch, primary) pair is not one it
  // believes, so it is left unknown.
  if (Field(fields, "flags").find("failover") != std::string::npos) {
    return status;
  }
  status.leader = NameOfIp(Field(fields, "ip"));
  // A node saying master is in the epoch of its sentinel only if that
  // sentinel names it; a replica promoted before its own sentinel heard of
  // the new epoch would otherwise claim the old one.
  if (status.role != "leader" || status.leader == node.name) {
    status.term = FieldInt(fields, "config-epoch", -1);
  }
  return status;
}

std::string RedisTarget::HealthProblem() {
  const std::vector<Node> redis = daemons_.RunningNodes(kRedis);
  const std::vector<Node> sentinels = daemons_.RunningNodes(kSentinel);
  if (sentinels.empty()) return "no sentinel is running";
  std::string primary_ip;
  for (const Node& s : sentinels) {
    auto reply = Ask(s.ip, kSentinelPort, {"SENTINEL", "MASTER", kMasterName});
    if (!reply) return "sentinel on " + s.name + " does not answer";
    const auto f = ParsePairs(*reply);
    const std::string ip = Field(f, "ip");
    if (Field(f, "flags") != "master") {
      return "sentinel on " + s.name + " flags the primary '" +
             Field(f, "flags") + "'";
    }
    if (!primary_ip.empty() && ip != primary_ip) {
      return "sentinels disagree on the primary";
    }
    primary_ip = ip;
    const long long others = FieldInt(f, "num-other-sentinels", -1);
    if (others != static_cast<long long>(sentinels.size()) - 1) {
      return "sentinel on " + s.name + " sees " + std::to_string(others) +
             " other sentinels, not " + std::to_string(sentinels.size() - 1);
    }
  }
  const std::string primary = NameOfIp(primary_ip);
  bool running = false;
  for (const Node& r : redis) running = running || r.name == primary;
  if (!running) return "the primary " + primary_ip + " is not running";
  auto role = Ask(primary_ip, kRedisPort, {"ROLE"});
  if (!role || ParseRole(*role).role != "master") {
    return primary + " does not say ROLE master";
  }
  auto info = Ask(primary_ip, kRedisPort, {"INFO", "replication"});
  if (!info || info->kind != resp::Value::Kind::kBulk) {
    return primary + " does not answer INFO replication";
  }
  const auto fields = ParseInfo(info->str);
  for (const Node& r : redis) {
    if (r.name == primary) continue;
    bool online = false;
    for (long long i = 0; i < FieldInt(fields, "connected_slaves", 0); ++i) {
      const std::string slave = Field(fields, "slave" + std::to_string(i));
      online = online || (slave.find("ip=" + r.ip + ",") != std::string::npos &&
                          slave.find("state=online") != std::string::npos);
    }
    if (!online) return r.name + " is not an online replica of " + primary;
  }
  return "";
}

harness::Status RedisTarget::AwaitHealthy(std::chrono::milliseconds timeout) {
  return PollUntilHealthy(timeout, kPollInterval,
                          [this] { return HealthProblem(); });
}

harness::Status RedisTarget::Teardown(const std::string& log_dir) {
  return StopAndCollect(kTermGrace, [this] { return TeardownClock(); }, log_dir,
                        {{kRedis, {"redis.log", "redis.conf"}},
                         {kSentinel, {"sentinel.log", "sentinel.conf"}}},
                        {kDataSubdir});
}

Result<std::unique_ptr<harness::Client>> RedisTarget::OpenClient(
    const Node& node, const std::string& workload) {
  const auto txn = TxnKindOf(workload);
  const auto collection = CollectionOf(workload);
  if (workload != "register" && workload != "lock" && !txn && !collection) {
    return Fail("redis: no client for workload '" + workload +
                "' (supported: register, lock, list-append, rw-register, "
                "set, bank, counter)");
  }
  const Node* own = daemons_.Find(node.name);
  if (own == nullptr) return Fail("redis: unknown node " + node.name);
  RedisClientOptions options;
  options.sentinels.push_back(own->ip);
  for (const Node& n : daemons_.nodes()) {
    if (n.name != own->name) options.sentinels.push_back(n.ip);
  }
  options.op_timeout_ms = workload_.op_timeout_ms;
  options.lock_ttl_ms = workload_.ttl_ms;
  if (txn) {
    return std::unique_ptr<harness::Client>(
        std::make_unique<RedisTxnClient>(std::move(options), *txn));
  }
  if (collection) {
    CollectionOptions what;
    what.workload = *collection;
    what.accounts = std::max(2, workload_.accounts);
    what.total = workload_.total;
    return std::unique_ptr<harness::Client>(
        std::make_unique<RedisCollectionsClient>(std::move(options), what));
  }
  return std::unique_ptr<harness::Client>(
      std::make_unique<RedisClient>(std::move(options)));
}

}  // namespace faultline::targets::redis

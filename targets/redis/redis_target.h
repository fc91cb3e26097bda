// RedisTarget: Redis 7 with Sentinel (docs/targets/redis.md) as a
// harness::Target. On every node two daemons (harness::Daemons):
//   "redis"     redis-server on <node.ip>:6379; node 0 starts as primary,
//               the others `replicaof` it
//   "sentinel"  redis-sentinel on <node.ip>:26379, monitoring the primary
//               as "faultline" with a majority quorum
// Files, per node, on the node (through its Remote), written fresh by Setup:
//   <work_dir>/<node>/redis.conf, sentinel.conf   (both rewritten by Redis)
//   <work_dir>/<node>/redis.log, sentinel.log     (the daemons' stdout)
//   <work_dir>/<node>/data/                       (redis-server's `dir`:
//                                                  dump.rdb, appendonlydir/;
//                                                  the only durable state)
//
// Faults: Kill, Pause and Resume hit the data process (redis-server) only;
// the sentinels keep running, as in Jepsen's Redis tests. Start starts
// whichever of the two is not running (after a Kill: redis-server again,
// with its possibly rewritten redis.conf and, without appendonly, no data).
// Running reports redis-server.
//
// Inspect asks the node (500 ms per question): ROLE of its redis-server
// (master -> "leader", slave -> "follower"; reachable = it answered), and
// its sentinel's SENTINEL MASTER faultline: term = config-epoch, leader =
// the node whose address that sentinel names as primary. Both are unknown
// (-1, "") while that sentinel leads a failover (flags
// failover_in_progress: the epoch is raised before the address changes),
// and the term is unknown for a node that says master while its sentinel
// names another node.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness/clock/clock.h"
#include "harness/config/spec.h"
#include "harness/interfaces/target.h"
#include "harness/process/daemon_target.h"

namespace faultline::targets::redis {

// ClockSkewable: with clock faults, both daemons of a node run under
// libfaketime with the node's clock, and with libfaultline-faketime-shim.so
// (targets/redis/faketime_shim.c, found by harness::FindFaketimeShim)
// preloaded first, without which redis-server hangs at start.
// name, Kill, Pause, Resume, Running and Pid: harness::DaemonTarget, on the
// "redis" daemon (redis-server), not on "sentinel".
class RedisTarget : public harness::DaemonTarget,
                    public harness::ClockSkewable {
 public:
  // `binary`: the redis-server executable (FindTargetBinary's answer); ""
  // means spec.binary. The sentinel executable is spec.sentinel_binary,
  // looked up on PATH when it is a bare name. `ledger` may be nullptr.
  // `work_dir` is made absolute against the current directory.
  RedisTarget(const harness::RedisSpec& spec,
              const harness::WorkloadSpec& workload, harness::Ledger* ledger,
              const std::string& work_dir, const std::string& binary = "");
  ~RedisTarget() override;

  // "redis <version>" from `redis-server --version`, "redis unknown" else.
  std::string version() override;

  // Remembers the nodes and writes fresh per-node directories and config
  // files. 1..9 nodes.
  harness::Status Setup(harness::Cluster& cluster) override;
  harness::Status Start(const harness::Node& node) override;
  // Until every running sentinel names the same primary (flags "master",
  // no s_down/o_down), sees the other running sentinels, and that primary
  // says ROLE master and has every other running redis-server as an online
  // replica (INFO replication). Error on timeout, naming what is missing.
  harness::Status AwaitHealthy(std::chrono::milliseconds timeout) override;
  harness::NodeStatus Inspect(const harness::Node& node) override;
  // Stops both daemons everywhere (bounded), copies the logs and the
  // (rewritten) config files to <log_dir>/<node>/, deletes the data files.
  // Idempotent; an empty `log_dir` skips the copy.
  harness::Status Teardown(const std::string& log_dir) override;

  // Workloads "register" and "lock" (RedisClient), "list-append" and
  // "rw-register" (RedisTxnClient), "set", "bank" and "counter"
  // (RedisCollectionsClient), asking the sentinel of `node` first.
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node& node, const std::string& workload) override;

  // The argv Start uses for each daemon (tests, docs). Valid after Setup.
  std::vector<std::string> RedisCommand(const harness::Node& node) const;
  std::vector<std::string> SentinelCommand(const harness::Node& node) const;

 private:
  std::string NameOfIp(const std::string& ip) const;  // "" if unknown
  // One healthy-check round; "" when healthy, else what is missing.
  std::string HealthProblem();

  harness::RedisSpec spec_;
  harness::WorkloadSpec workload_;
  std::string binary_;
  std::string sentinel_binary_;
};

}  // namespace faultline::targets::redis

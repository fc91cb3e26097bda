// ZookeeperTarget: Apache ZooKeeper 3.8 (Debian `zookeeper`, run on Java
// 17) as a harness::Target (docs/targets/zookeeper.md). Node i of the
// cluster (0-based) is server i+1 (its myid); each listens on
// <node.ip>:2181 (clients, clientPortAddress), :2888 (quorum) and :3888
// (election). One node runs standalone.
//
// Files, per node, on the node (through its Remote):
//   <work_dir>/<node>/zoo.cfg        written by Setup (RenderZooCfg)
//   <work_dir>/<node>/data/myid      the server id
//   <work_dir>/<node>/data/          snapshots and transaction logs
//   <work_dir>/<node>/zookeeper.log  the JVM's stdout/stderr
//   <work_dir>/zk-client.log         the C client's error log
//
// Processes: the java command line is built here (no zkServer.sh, whose
// shell would sit between us and the JVM); the daemon "zookeeper" runs
// through harness::Daemons, so Kill/Pause/Resume signal the JVM itself and
// pauses are in the fault ledger.
//
// Inspect() sends the four-letter word `srvr` (whitelisted in zoo.cfg) to
// <ip>:2181 with a 500 ms timeout. role: "leader" for Mode leader or
// standalone, "follower" for follower (and observer), "candidate" when the
// server answers that it is not serving (it is LOOKING: electing). term:
// the epoch, zxid >> 32, or -1 when unknown (a follower reports zxid 0
// until its first write in an epoch). leader: the node's own name when it
// leads, else "": ZooKeeper servers do not name their leader over the 4lw
// (only the AdminServer's /commands/leader does, which we keep off), and a
// name taken from anywhere else would not be what the node itself believes.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/clock/clock.h"
#include "harness/config/spec.h"
#include "harness/interfaces/target.h"
#include "harness/process/daemon_target.h"

namespace faultline::targets::zookeeper {

// ClockSkewable: with clock faults, the JVM runs under libfaketime with the
// node's clock (the JVM reads time through libc, so libfaketime moves it).
// name, Kill, Pause, Resume, Running and Pid: harness::DaemonTarget, on the
// "zookeeper" daemon, one per node.
class ZookeeperTarget : public harness::DaemonTarget,
                        public harness::ClockSkewable {
 public:
  // `java` is the java executable to run (FindTargetBinary's answer); ""
  // means spec.java as given. `ledger` may be nullptr. `work_dir` is made
  // absolute against the controller's current directory.
  ZookeeperTarget(const harness::ZookeeperSpec& spec,
                  const harness::WorkloadSpec& workload,
                  harness::Ledger* ledger, const std::string& work_dir,
                  const std::string& java = "");
  ~ZookeeperTarget() override;

  // "zookeeper <version>" from the Debian package, else "zookeeper".
  std::string version() override;

  // Writes fresh per-node directories, zoo.cfg and myid. 1..9 nodes.
  harness::Status Setup(harness::Cluster& cluster) override;
  harness::Status Start(const harness::Node& node) override;
  // Every running node answers srvr with a mode, and exactly one of them
  // is the leader (or the one node is standalone).
  harness::Status AwaitHealthy(std::chrono::milliseconds timeout) override;
  harness::NodeStatus Inspect(const harness::Node& node) override;
  // Stops every server (SIGTERM, grace, SIGKILL), copies zookeeper.log to
  // <log_dir>/<node>/ and zk-client.log to <log_dir>/, removes the data.
  harness::Status Teardown(const std::string& log_dir) override;

  // Workloads "register" and "lock" (zk_client.h), "list-append" and
  // "rw-register" (zk_txn_client.h), "set", "bank" and "counter"
  // (zk_collections_client.h).
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node& node, const std::string& workload) override;

  // The argv Start uses for `node`. Valid after Setup.
  std::vector<std::string> CommandLine(const harness::Node& node) const;
  // The session timeout the lock client asks for (workload.ttl_ms) and the
  // one the servers grant (clamped to 2..20 x tick_ms).
  int LockSessionTimeoutMs() const;

 private:
  harness::ZookeeperSpec spec_;
  harness::WorkloadSpec workload_;
  std::string java_;
};

}  // namespace faultline::targets::zookeeper

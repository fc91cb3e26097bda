// EtcdTarget: etcd 3.4 as a harness::Target. Static bootstrap of every node
// of the cluster, one member per node listening ONLY on <node.ip>:2379
// (client) and <node.ip>:2380 (peer), so several members can share a host
// on distinct loopback addresses. Clients speak the v3 JSON gateway.
//
// Files, per node, on the node (through its Remote):
//   <work_dir>/<node>/data      data dir (about 62 MB of WAL; deleted by
//                               Teardown)
//   <work_dir>/<node>/etcd.log  zap JSON log (stdout+stderr)
//
// Inspect() reports what the member's Raft node itself says (GET
// /debug/vars, "raft.status", ~500 ms timeout): role "leader", "follower" or
// "candidate" (also for a pre-candidate) from raftState, its CURRENT term,
// and the node it knows as leader. (The gateway's maintenance status gives
// only the term of the last applied entry, with which a new leader looks
// like its predecessor's term for a moment: useless for one leader per
// term.)
//
//
// Liveness and reaping use the local process table (ProcessAlive), which is
// right for the local and netns Remotes (daemons are our children); a Remote
// on another host would need its own liveness check.
//
// Thread-safety: every method may be called from any thread; per-node state
// is under a mutex, HTTP calls are made outside it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/config/spec.h"
#include "harness/interfaces/target.h"
#include "harness/process/daemon_target.h"

namespace faultline::targets::etcd {

// name, Kill, Pause, Resume, Running and Pid: harness::DaemonTarget, on the
// "etcd" daemon, one per node.
class EtcdTarget : public harness::DaemonTarget {
 public:
  // `ledger` may be nullptr (no crash recovery of paused members).
  // `work_dir` is the directory on the nodes for data and logs (a relative
  // path is made absolute against the controller's current directory).
  // `spec.extra_args` are appended to every member's command line.
  EtcdTarget(const harness::EtcdSpec& spec,
             const harness::WorkloadSpec& workload, harness::Ledger* ledger,
             std::string work_dir);
  ~EtcdTarget() override;

  // "etcd 3.4.23", from `<binary> --version`; "etcd (unknown version)" when
  // the binary cannot be run.
  std::string version() override;

  // Remembers the cluster's nodes (the cluster must outlive this target) and
  // creates fresh, empty per-node directories (an old data dir is removed).
  harness::Status Setup(harness::Cluster& cluster) override;
  // Starts the member on `node` (with its existing data after a Kill). A
  // no-op when it is already running.
  harness::Status Start(const harness::Node& node) override;
  // Polls GET /health on every running member until all answer
  // {"health":"true"} (which etcd only does with a leader) and their status
  // agrees on one leader. Error on timeout, naming the members not healthy.
  harness::Status AwaitHealthy(std::chrono::milliseconds timeout) override;
  harness::NodeStatus Inspect(const harness::Node& node) override;
  // SIGTERM to all members, ~3 s bounded wait, then SIGKILL; copies each
  // node's etcd.log to <log_dir>/<node>/etcd.log; deletes the data dirs.
  // Idempotent. An empty `log_dir` skips the copy.
  harness::Status Teardown(const std::string& log_dir) override;

  // Workload "register" only.
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node& node, const std::string& workload) override;

  // The argv Start uses for `node` (exposed for tests and docs).
  std::vector<std::string> CommandLine(const harness::Node& node) const;

 private:
  std::string InitialCluster() const;
  std::string IpOf(const harness::Node& node) const;  // "" if unknown
  // Maps a member id to a node name, refreshing the cache from
  // /v3/cluster/member/list on `ip` on a miss. "" when unknown.
  std::string MemberName(std::uint64_t id, const std::string& ip);

  harness::EtcdSpec spec_;
  harness::WorkloadSpec workload_;
  std::string token_;

  std::mutex mu_;                                    // guards id_to_name_
  std::map<std::uint64_t, std::string> id_to_name_;  // member id -> node name
};

}  // namespace faultline::targets::etcd

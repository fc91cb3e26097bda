// RaftkvTarget: this repository's raftkv server (docs/targets/raftkv.md) as a
// harness::Target. Node i of the cluster (0-based) is raftkv member i+1; each
// listens ONLY on <node.ip>:7001 (Raft peers) and <node.ip>:6379 (RESP
// clients), so members on distinct addresses can share a host.
//
// Files, per node, on the node (through its Remote):
//   <work_dir>/<node>/data        WAL and snapshots (deleted by Teardown)
//   <work_dir>/<node>/raftkv.log  the server's stderr, one line per event
//   <work_dir>/<node>/raftkv      on a node reached over SSH (its Remote's
//                                 descriptor kind is "ssh"), a copy of the
//                                 controller's binary, uploaded by Setup and
//                                 run from there (the node needs the same
//                                 architecture and a compatible libc)
//
// Inspect() asks the node itself (STATUS, ~500 ms timeout): role "leader",
// "follower" or "candidate" (a pre-candidate is reported as "candidate" with
// its unchanged term), its current term, and the node name of the leader it
// knows ("" if none).
//
// Processes: Start goes through Remote::Start (the netns Remote records a
// `process` ledger entry); Pause records a `stop` entry before SIGSTOP and
// marks it healed on SIGCONT or when the process is gone, like the etcd
// target. Liveness uses the local process table (harness::ProcessAlive),
// right for the local and netns Remotes.
//
// Thread-safety: every method may be called from any thread; per-node state
// is under a mutex, network calls are made outside it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/clock/clock.h"
#include "harness/config/spec.h"
#include "harness/interfaces/target.h"
#include "harness/process/daemon_target.h"

namespace faultline::targets::raftkv {

constexpr int kPeerPort = 7001;
constexpr int kClientPort = 6379;

// ClockSkewable: with clock faults, every member runs under libfaketime
// (harness/clock/clock.h); raftkv reads time through libc, so it is affected.
// name, Kill, Pause, Resume, Running and Pid: harness::DaemonTarget, on the
// "raftkv" daemon, one per node; member id = node index + 1.
class RaftkvTarget : public harness::DaemonTarget,
                     public harness::ClockSkewable {
 public:
  // `binary` is the raftkv executable to run (FindTargetBinary's answer);
  // "" means spec.binary as given. `ledger` may be nullptr. `work_dir` is
  // the directory on the nodes for data and logs (made absolute against the
  // controller's current directory).
  RaftkvTarget(const harness::RaftkvSpec& spec,
               const harness::WorkloadSpec& workload, harness::Ledger* ledger,
               std::string work_dir, std::string binary = "");
  ~RaftkvTarget() override;

  // "raftkv <version>" from `<binary> --version` when it answers, else
  // "raftkv <faultline version>" (raftkv is built from this repository).
  std::string version() override;

  // Remembers the nodes (the cluster must outlive this target) and creates
  // fresh, empty per-node directories (old data is removed). 1..9 nodes.
  harness::Status Setup(harness::Cluster& cluster) override;
  // Starts the member on `node` (with its existing data after a Kill). A
  // no-op when it is already running.
  harness::Status Start(const harness::Node& node) override;
  // Polls STATUS on every running member until each answers, all name the
  // same leader, and that leader reports itself leader. Error on timeout,
  // naming what was missing.
  harness::Status AwaitHealthy(std::chrono::milliseconds timeout) override;
  harness::NodeStatus Inspect(const harness::Node& node) override;
  // SIGTERM to every member (paused ones are resumed first), a bounded
  // grace, then SIGKILL; copies raftkv.log to <log_dir>/<node>/raftkv.log;
  // deletes the data dirs. Idempotent. An empty `log_dir` skips the copy.
  harness::Status Teardown(const std::string& log_dir) override;

  // Workloads "register", "lock", "list-append", "rw-register", "set",
  // "bank" and "counter"; all get a RaftkvClient (list-append: list_reads
  // set; docs/collections.md has the collections' commands).
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node& node, const std::string& workload) override;

  // The argv Start uses for `node` (for tests and docs). Valid after Setup.
  std::vector<std::string> CommandLine(const harness::Node& node) const;

 private:
  std::string Peers(const std::vector<harness::Node>& nodes) const;
  std::string IpOf(const harness::Node& node);  // "" if unknown
  std::string NameOfId(long long id);           // "" if unknown

  harness::RaftkvSpec spec_;
  harness::WorkloadSpec workload_;
  std::string binary_;
  // SSH nodes run a copy of binary_ uploaded by Setup to
  // <node dir>/raftkv; by node name.
  std::map<std::string, std::string> node_binary_;
};

}  // namespace faultline::targets::raftkv

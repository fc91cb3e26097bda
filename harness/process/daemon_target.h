// DaemonTarget: the part every daemon-based Target (etcd, raftkv, Redis,
// ZooKeeper) shares. It owns the target's Daemons (daemons.h) and its work
// dir, and forwards the Target faults to one daemon slot per node, the
// "primary" daemon named at construction (Redis: "redis", not "sentinel"):
//
//   name    the owner given to the constructor ("etcd", ...)
//   Kill    Daemons::Kill     SIGKILL, bounded wait
//   Pause   Daemons::Pause    ledger `stop` entry, then SIGSTOP
//   Resume  Daemons::Resume   SIGCONT, entry marked healed
//   Running Daemons::Running  whether the primary daemon's process runs
//   Pid     Daemons::Pid      its pid, 0 when it is not running
//
// and helpers for the subclass:
//
//   ResetNodes        Setup's checks: an absolute work dir, 1..max nodes;
//                     then Daemons::Reset.
//   NodeDir           <work_dir>/<node>, the node's directory on the node.
//   PollUntilHealthy  AwaitHealthy's loop: one round, Ok when it finds no
//                     problem, else sleep `interval` and try again, giving
//                     up with "<owner>: not healthy after N ms (<problem>)"
//                     once the next round would start at or after the
//                     deadline.
//   StopAndCollect    Teardown's shape: Daemons::StopAll, then (only if every
//                     process stopped) `after_stop`, then
//                     Daemons::CollectAndClean in the NodeDirs;
//                     "<owner> teardown: <what>;" naming every problem, or Ok.
//
// DurableData (harness/interfaces/target.h): the data directory is
// <NodeDir>/data; the before-clean hook runs in StopAndCollect.
//
// Errors name the owner, which is also the Daemons owner. version, Setup,
// Start, AwaitHealthy, Inspect, Teardown and OpenClient stay with the
// subclass.
//
// Thread-safety: name/Kill/Pause/Resume/Running/Pid/NodeDir may be called
// from any thread (Daemons locks). The other helpers block the calling
// thread and may be called from any thread; `round` and `after_stop` run on
// it. ResetNodes, like Setup, must not race with the other methods.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"
#include "harness/interfaces/target.h"
#include "harness/process/daemons.h"

namespace faultline::harness {

class Ledger;

class DaemonTarget : public Target, public DurableData {
 public:
  // DurableData: <NodeDir>/data on every daemon target; the hook runs in
  // StopAndCollect after StopAll (and `after_stop`), before CollectAndClean.
  std::string DataDir(const Node& node) const override {
    return NodeDir(node) + "/data";
  }
  void SetBeforeClean(std::function<Status()> hook) override {
    before_clean_ = std::move(hook);
  }
  std::string name() const override { return owner_; }
  Status Kill(const Node& node) override;
  Status Pause(const Node& node) override;
  Status Resume(const Node& node) override;
  bool Running(const Node& node) override;
  // The pid of the primary daemon on `node`, 0 when it is not running (for
  // tests and for reporting).
  pid_t Pid(const Node& node);

 protected:
  // `owner` is the target's name and prefixes error messages (here and in
  // Daemons); `primary` is the daemon the faults hit; `ledger` may be
  // nullptr. `work_dir`, the directory on the nodes for data and logs, is
  // made absolute against the controller's current directory ("" stays "",
  // and ResetNodes rejects it).
  DaemonTarget(std::string owner, std::string primary, Ledger* ledger,
               const std::string& work_dir);

  const std::string& work_dir() const { return work_dir_; }
  std::string NodeDir(const Node& node) const;

  // Fails with "<owner>: work dir must be an absolute path, got '<dir>'", or
  // when `max_nodes` > 0 and `nodes` are not 1..max_nodes with "<owner>:
  // needs 1 to <max_nodes> nodes, got N"; else Daemons::Reset(nodes).
  Status ResetNodes(const std::vector<Node>& nodes, std::size_t max_nodes);

  // One health round: "" when healthy, else what is missing; an error stops
  // the polling and is returned as it is.
  using HealthRound = std::function<Result<std::string>()>;
  // Runs `round` until it finds no problem, for at most `timeout` from now:
  // after a round with a problem, fails with the owner, `timeout` and that
  // problem if now + `interval` is at or past the deadline, else sleeps
  // `interval`. Always runs at least one round.
  Status PollUntilHealthy(std::chrono::milliseconds timeout,
                          std::chrono::milliseconds interval,
                          const HealthRound& round) const;
  // The same, with the deadline the caller took (now + `timeout` when its
  // AwaitHealthy began); `timeout` is only for the message.
  Status PollUntilHealthy(std::chrono::steady_clock::time_point deadline,
                          std::chrono::milliseconds timeout,
                          std::chrono::milliseconds interval,
                          const HealthRound& round) const;

  // Teardown's process and file work: StopAll(`grace`); if that succeeded,
  // `after_stop` (may be empty; e.g. TeardownClock); then
  // CollectAndClean(log_dir, NodeDir, logs, remove) (see daemons.h). Fails
  // with "<owner> teardown:" and every problem, each " <what>;".
  Status StopAndCollect(std::chrono::milliseconds grace,
                        const std::function<Status()>& after_stop,
                        const std::string& log_dir,
                        const std::vector<Daemons::DaemonFiles>& logs,
                        const std::vector<std::string>& remove);

  // Every daemon of the target (the primary one and any others), for the
  // subclass's Start, Inspect and health rounds.
  Daemons daemons_;

 private:
  const std::string owner_;
  const std::string primary_;
  std::function<Status()> before_clean_;
  const std::string work_dir_;
};

}  // namespace faultline::harness

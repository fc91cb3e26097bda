// Daemons: the server processes a Target runs on its nodes, with the
// lifecycle every target shares. A node may run several named daemons
// (Redis: "redis" and "sentinel"); each (node, daemon name) is one slot that
// holds at most one process at a time.
//
//   Start   Remote::Start(argv, log_path, env) on the node (the netns Remote
//           records a `process` ledger entry itself; for a Remote with its
//           own pids and a descriptor, e.g. SSH, Start records one with the
//           node's start time and the descriptor, marked healed once the
//           process is known gone). A no-op when the slot's process runs.
//   Kill    SIGKILL, then waits (bounded) until the process is gone.
//   Pause   records a `stop` ledger entry (with the node's start time and
//           the descriptor on SSH nodes), then SIGSTOP; Resume sends
//           SIGCONT and marks the entry healed. When a paused process dies
//           or is killed, its entry is marked healed too, so `faultline
//           heal` never signals a pid that may have been reused.
//   StopAll SIGCONT to paused processes, SIGTERM to all, `grace`, then
//           SIGKILL to the rest and a bounded wait. Idempotent.
//
// Liveness asks the node's Remote (Remote::Alive): the local process table
// for the local and netns Remotes, whose daemons are the controller's
// children; /proc/<pid>/stat read over SSH for SSH nodes.
//
// Errors name the owner ("zookeeper: kill n2: ..."). Thread-safety: every
// method may be called from any thread (one internal mutex; signals are
// sent under it; over SSH that includes network calls).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

class Ledger;

class Daemons {
 public:
  // `owner` prefixes error messages; `ledger` may be nullptr.
  Daemons(std::string owner, Ledger* ledger);
  Daemons(const Daemons&) = delete;
  Daemons& operator=(const Daemons&) = delete;

  // Remembers `nodes` (their Remotes must outlive this object) and forgets
  // every slot. Fails if a process of an earlier Reset still runs, if a
  // node has no Remote or if a node name is empty or contains '/'.
  Status Reset(const std::vector<Node>& nodes);
  std::vector<Node> nodes() const;
  // The node called `name`, or nullptr. The pointer stays valid until the
  // next Reset.
  const Node* Find(const std::string& name) const;
  // The node's 0-based position in the Reset list, or -1.
  int IndexOf(const std::string& name) const;

  Status Start(const Node& node, const std::string& daemon,
               const std::vector<std::string>& argv,
               const std::string& log_path,
               const std::vector<std::string>& env = {});
  Status Kill(const Node& node, const std::string& daemon);
  Status Pause(const Node& node, const std::string& daemon);
  Status Resume(const Node& node, const std::string& daemon);
  // The slot's pid, 0 when it is not running (a dead process is reaped).
  pid_t Pid(const Node& node, const std::string& daemon);
  bool Running(const Node& node, const std::string& daemon) {
    return Pid(node, daemon) != 0;
  }
  bool Paused(const Node& node, const std::string& daemon);
  // Whether the slot ever had a process (i.e. there is a log to collect).
  bool EverStarted(const Node& node, const std::string& daemon) const;
  // The nodes whose `daemon` is running now, in Reset order.
  std::vector<Node> RunningNodes(const std::string& daemon);

  // Stops every process of every slot (see the header comment). Fails,
  // naming them, if some process survived SIGKILL.
  Status StopAll(std::chrono::milliseconds grace);

  // Teardown's file work, on every node in Reset order: for each (daemon,
  // files) of `logs` whose slot ever had a process on the node, downloads
  // <dir>/<file> to <log_dir>/<node>/<file> (nothing when `log_dir` is
  // empty); then `rm -rf` of <dir>/<path> for every path of `remove`, in one
  // command. <dir> is `dir_of(node)`. Returns the problems, each as
  // " <what>;", or "" when there were none. Call after StopAll.
  using DaemonFiles = std::pair<std::string, std::vector<std::string>>;
  std::string CollectAndClean(
      const std::string& log_dir,
      const std::function<std::string(const Node&)>& dir_of,
      const std::vector<DaemonFiles>& logs,
      const std::vector<std::string>& remove);

 private:
  struct Slot {
    std::string node;
    std::string daemon;
    Remote* remote = nullptr;
    pid_t pid = 0;
    bool paused = false;
    long stop_seq = 0;     // ledger seq of the active `stop` entry, 0 if none
    long process_seq = 0;  // ledger seq of a remote `process` entry, or 0
    bool ever_started = false;
  };
  Slot* FindLocked(const std::string& node, const std::string& daemon);
  const Slot* FindLocked(const std::string& node,
                         const std::string& daemon) const;
  Slot& SlotLocked(const Node& node, const std::string& daemon);
  void ReapLocked(Slot& s);
  // For a Remote with its own pids and a descriptor: records `kind`
  // (process / stop) for the slot's pid with the node's start time and the
  // descriptor; returns the seq, 0 when nothing is to be recorded.
  Result<long> RecordRemoteLocked(const Slot& s, const char* kind);
  std::string Where(const Node& node, const std::string& daemon) const;

  const std::string owner_;
  Ledger* const ledger_;
  mutable std::mutex mu_;
  std::vector<Node> nodes_;
  std::vector<Slot> slots_;
};

}  // namespace faultline::harness

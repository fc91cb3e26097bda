// Target: the lifecycle of one system (etcd, ...) on a cluster, plus its
// clients and its own view of who leads. One instance per test run.
//
// Thread-safety: Start/Kill/Pause/Resume/Inspect may be called from the
// nemesis thread while clients run on worker threads; implementations lock.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/client.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

class Ledger;

// What a node reports about itself.
struct NodeStatus {
  bool reachable = false;
  std::string role;     // "leader", "follower", "candidate", "" if unknown
  long long term = -1;  // -1 if unknown
  std::string leader;   // node name the node believes leads, "" if none
  // Log positions the node reports (-1 if unknown or not reported; only
  // raftkv reports them): its commit index and its last log index.
  long long commit = -1;
  long long last_index = -1;
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;
  // Version string of the installed system, e.g. "etcd 3.4.23".
  virtual std::string version() = 0;

  // Prepares every node (data dirs, config files). Nothing runs yet.
  virtual Status Setup(Cluster& cluster) = 0;
  // Starts the system on one node (again, after Kill).
  virtual Status Start(const Node& node) = 0;
  // Waits until every node that should be up serves requests.
  virtual Status AwaitHealthy(std::chrono::milliseconds timeout) = 0;
  virtual Status Kill(const Node& node) = 0;    // SIGKILL
  virtual Status Pause(const Node& node) = 0;   // SIGSTOP the system's pid
  virtual Status Resume(const Node& node) = 0;  // SIGCONT
  virtual bool Running(const Node& node) = 0;
  // What the node reports about itself. (Named Inspect, not Status: Status
  // is the harness result type in harness/interfaces/result.h.)
  virtual NodeStatus Inspect(const Node& node) = 0;
  // Stops every node (bounded wait, then SIGKILL) and copies logs into
  // `log_dir/<node>/`. Idempotent.
  virtual harness::Status Teardown(const std::string& log_dir) = 0;

  // A client bound to `node` for the named workload ("register", ...).
  virtual Result<std::unique_ptr<Client>> OpenClient(
      const Node& node, const std::string& workload) = 0;
};

// Optional ability of a Target whose clients can tell that the run cannot
// go on (the process target's exec clients that keep crashing or lying).
// The interpreter asks after every info completion and after every client
// it could not open; a non-empty answer stops the run with that message.
// Thread-safety: called from worker threads.
class ClientHealth {
 public:
  virtual ~ClientHealth() = default;
  virtual std::string Fatal() = 0;
};

// Optional ability of a Target whose durable data can be put on the lazy
// file system of the disk faults (nemesis/disk/): everything the system must
// keep across a power loss lives in one directory per node, which the
// campaign mounts the file system over after Setup and before the first
// Start, and unmounts in Teardown through the hook, after every process
// stopped and before the target removes its files.
// Thread-safety: DataDir may be called from any thread; SetBeforeClean
// before Setup.
class DurableData {
 public:
  virtual ~DurableData() = default;
  // The node's data directory (absolute, on the node); Setup creates it.
  virtual std::string DataDir(const Node& node) const = 0;
  // `hook` runs once in Teardown, after the processes were stopped (or
  // could not be) and before the node directories are cleaned; its error
  // joins Teardown's.
  virtual void SetBeforeClean(std::function<Status()> hook) = 0;
};

}  // namespace faultline::harness

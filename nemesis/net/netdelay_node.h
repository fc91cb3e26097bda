// NetdelayNodes: runs the faultline-netdelay daemon
// (nemesis/programs/netdelay_main.cpp) on the nodes for the delay, kill-voter
// and figure8 faults, whichever provider made them:
//
//   netns  the controller's binary, spawned inside the node's namespace
//          (harness::Spawn), log <run dir>/netdelay-<node>.log; a `process`
//          ledger entry with the controller's pid and start time.
//   remote (ssh, docker: a Remote with pids of its own) a copy of the
//          controller's binary uploaded to <node dir>/netdelay-<node>/ by
//          Prepare (or by the first Start), started with Remote::Start, log
//          beside it (downloaded to <run dir>/netdelay-<node>.log when the
//          daemon stops); a `process` ledger entry with the node's pid, its
//          start time read over the Remote, and the Remote's descriptor, so
//          `faultline heal` can SIGKILL it there after a controller crash.
//          The copy needs the node to have the daemon's shared libraries
//          (libnetfilter_queue.so.1, libnfnetlink.so.0, libmnl.so.0, C++
//          runtime): Prepare runs `faultline-netdelay --help` there and names
//          the library the node lacks. <node dir> is the run's directory on
//          the node, which the provider removes at teardown and `faultline
//          heal` through its `dir` ledger entry.
//
// Start returns once the daemon has bound the queue (its namespace lists it
// in /proc/<pid>/net/netfilter/nfnetlink_queue), within 5 s. The daemon
// needs CAP_NET_ADMIN where it runs (root, or sudo on ssh nodes; NET_ADMIN
// in containers) and the kernel's nfnetlink_queue.
//
// Thread-safety: every method may be called from any thread (one mutex for
// the copies' table); the ledger is thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger.h"

namespace faultline::nemesis {

class NetdelayNodes {
 public:
  explicit NetdelayNodes(harness::Ledger& ledger) : ledger_(ledger) {}

  // The controller's executable; "" (default): beside the running
  // executable, then PATH. Call before Prepare/Start.
  void SetBinary(std::string path) { binary_ = std::move(path); }
  // The run's directory on remote nodes (an absolute path that exists
  // there). Call before Prepare/Start; without it remote nodes fail.
  void SetNodeDir(std::string dir) { node_dir_ = std::move(dir); }

  // The controller's executable, "" when not found.
  std::string BinaryPath() const;

  // Copies the binary to every remote node of `nodes` that has no copy
  // yet and checks that it runs there. netns nodes need nothing.
  harness::Status Prepare(const std::vector<harness::Node>& nodes);

  struct Daemon {
    pid_t pid = 0;       // on the node (the controller's for netns)
    long proc_seq = -1;  // its `process` ledger entry
  };
  // Starts `faultline-netdelay args...` on `node` and waits until it has
  // bound `queue`. Whatever was started is in *out also on failure (so the
  // caller's Stop undoes it).
  harness::Status Start(const harness::Node& node,
                        const std::vector<std::string>& args, int queue,
                        Daemon* out);
  // SIGTERM (the daemon accepts what it holds), waits up to 3 s for it to
  // exit and marks its ledger entry healed; d is cleared on success.
  harness::Status Stop(const harness::Node& node, Daemon& d);

 private:
  bool Remote(const harness::Node& node) const;
  std::string RemoteDir(const harness::Node& node) const;
  harness::Status PrepareOne(const harness::Node& node,
                             const std::string& binary);
  std::string LocalLog(const harness::Node& node) const;
  // The last line of the daemon's log, for errors.
  std::string LastLogLine(const harness::Node& node) const;

  harness::Ledger& ledger_;
  std::string binary_;
  std::string node_dir_;
  std::mutex mu_;
  std::map<std::string, std::string> copies_;  // node name -> path there
};

// What a failed `faultline-netdelay --help` on a node says, for the error:
// "the node lacks libnetfilter_queue.so.1 ..." when the dynamic loader
// could not find a library (its message in `err`), else exit code and
// stderr. Pure.
std::string DescribeNetdelayCheck(int exit_code, const std::string& err);

}  // namespace faultline::nemesis

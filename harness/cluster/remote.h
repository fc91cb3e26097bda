// Remote: how the controller acts on one node. Netns (here), SSH and docker
// are implementations. Commands are argv vectors, never shell strings.
//
// Thread-safety: implementations allow concurrent calls.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "harness/cluster/remote_descriptor.h"
#include "harness/interfaces/result.h"
#include "harness/process/process.h"

namespace faultline::harness {

class Remote {
 public:
  virtual ~Remote() = default;

  // Runs argv on the node to completion.
  virtual CommandResult Run(const std::vector<std::string>& argv,
                            const CommandOptions& options = {}) = 0;

  // Starts a daemon on the node; the returned pid is the daemon's own, valid
  // for Signal. stdout/stderr go to `log_path` on the node.
  virtual Result<pid_t> Start(const std::vector<std::string>& argv,
                              const std::string& log_path,
                              const std::vector<std::string>& env) = 0;

  // Sends a signal to a process started with Start.
  virtual Status Signal(pid_t pid, int sig) = 0;

  // True while `pid` (from Start) is a live, non-zombie process on the node.
  // The default reads the controller's process table, which is right when
  // the node's daemons are the controller's children (local, netns). A
  // Remote on another host overrides it; when it cannot tell (the node is
  // unreachable) it answers true, so nothing is declared dead by mistake.
  virtual bool Alive(pid_t pid) { return ProcessAlive(pid); }

  // True when the node's pids are the controller's own (local, netns), so a
  // pid and its start time read on the controller identify the node's
  // process, e.g. in a fault-ledger entry that `faultline heal` acts on.
  virtual bool SharesControllerPids() const { return true; }

  // How a fresh process (`faultline heal`) reaches this node again; empty
  // (kind "") when the node's pids are the controller's. Ledger entries of
  // a Remote with a non-empty descriptor carry it (harness/ledger/ledger.h).
  virtual RemoteDescriptor Descriptor() const { return {}; }

  // Copies a file between the controller and the node.
  virtual Status Upload(const std::string& local,
                        const std::string& remote) = 0;
  virtual Status Download(const std::string& remote,
                          const std::string& local) = 0;
};

}  // namespace faultline::harness

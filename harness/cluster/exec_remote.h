// ExecRemote: the Remote calls that are plain commands on the node, shared
// by the Remotes that reach their node by running argv there (SshRemote: an
// exec channel; DockerRemote: `docker exec`). A subclass gives Run, Start
// and NodeLabel; this class builds the rest on Run:
//
//   Signal    `kill -s NAME PID` on the node.
//   Alive     reads /proc/PID/stat on the node (a zombie is dead); when the
//             node cannot answer it says true, so nothing is declared dead
//             by mistake.
//   Upload    the file fed to `mkdir -p -- DIR && cat > PATH` on stdin.
//   Download  `cat -- PATH`, written to the local path (parents created).
//
// Pids are the node's, never the controller's (SharesControllerPids false).
// Thread-safety: as the subclass's Run (every Remote allows concurrent
// calls).
#pragma once

#include <string>

#include "harness/cluster/remote.h"

namespace faultline::harness {

class ExecRemote : public Remote {
 public:
  Status Signal(pid_t pid, int sig) override;
  bool Alive(pid_t pid) override;
  bool SharesControllerPids() const override { return false; }
  Status Upload(const std::string& local, const std::string& remote) override;
  Status Download(const std::string& remote, const std::string& local) override;

 protected:
  // The node in messages: the host or the container name.
  virtual std::string NodeLabel() const = 0;
};

// Why a command failed, for messages: its `error` when the transport failed,
// else "exit N" and the first line of its stderr.
std::string DescribeFailure(const CommandResult& r);

// The daemon's pid from the output of the BuildStartArgv script (its first
// line); `where` prefixes the error ("start raftkv on 10.0.0.2").
Result<pid_t> PidFromStartOutput(const std::string& out,
                                 const std::string& where);

}  // namespace faultline::harness

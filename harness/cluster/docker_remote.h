// DockerRemote: a Remote whose node is a running container, reached through
// the docker CLI (`docker [--host H] exec ...`), run with harness RunCommand.
//
// Commands are argv vectors handed to `docker exec` as separate words; no
// shell ever sees them on the controller, and in the container only the
// fixed scripts below run under `sh -c` with the values as arguments.
//
//   Run     `docker exec [-i] C timeout -s KILL SECS ARGV...`: the command
//           runs under timeout(1) inside the container (killing the local
//           docker client would leave it running there); the controller
//           waits a little longer. Past the timeout the result has
//           exit_code -1 and an error "timed out ...". A docker failure (no
//           engine, no such container, container stopped, exec refused) is
//           never mistaken for the command's answer: exit_code -1 and an
//           `error` beginning with "docker:". CommandOptions::netns is
//           ignored (the command runs in the container's namespaces).
//   Start   the detached-daemon script of BuildStartArgv (ssh_remote.h); the
//           pid it prints is the daemon's own, in the container's pid
//           namespace. The container should run an init that reaps
//           (`docker run --init`), else killed daemons stay zombies (Alive
//           still reports them dead).
//   Signal  `kill -s NAME PID` in the container; Alive reads
//           /proc/PID/stat there (zombies are dead; a docker failure answers
//           true, so nothing is declared dead by mistake).
//   Upload  `cat > path` fed from stdin (`docker exec -i`), parent
//           directories created; Download `cat -- path`.
//
// The container needs sh, cat, kill, mkdir, dirname, setsid and timeout
// (coreutils, util-linux, procps or busybox), and iptables with NET_ADMIN
// for network faults.
//
// Thread-safety: every method may be called concurrently (each call runs its
// own docker client process; no shared mutable state).
#pragma once

#include <string>
#include <vector>

#include "harness/cluster/exec_remote.h"
#include "harness/cluster/remote.h"

namespace faultline::harness {

struct DockerOptions {
  std::string container;          // name or id
  std::string docker_host;        // passed as --host ("" = docker's default:
                                  // $DOCKER_HOST, else the local socket)
  std::string docker = "docker";  // the docker CLI (path or name on PATH)
  std::string working_dir;        // daemons from Start run here ("" = the
                                  // container's working directory)
};

// The docker CLI words before a subcommand: {docker} or
// {docker, --host, H}.
std::vector<std::string> DockerBase(const DockerOptions& options);

// True when a `docker exec` result is docker's own failure rather than the
// command's answer: the docker client could not run or finish, or it exited
// 125..127 with one of docker's error messages on stderr.
bool IsDockerFailure(const CommandResult& r);

class DockerRemote : public ExecRemote {
 public:
  explicit DockerRemote(DockerOptions options);

  // Checks that the container exists and is running (`docker inspect`), so
  // a wrong name or a stopped engine is reported before a campaign starts.
  Status Check();

  CommandResult Run(const std::vector<std::string>& argv,
                    const CommandOptions& options = {}) override;
  Result<pid_t> Start(const std::vector<std::string>& argv,
                      const std::string& log_path,
                      const std::vector<std::string>& env) override;
  // Kind "docker": the container and the engine (docker_host, else
  // $DOCKER_HOST as it is now, so `faultline heal` reaches the same engine).
  RemoteDescriptor Descriptor() const override;

  const DockerOptions& options() const { return options_; }

 protected:
  std::string NodeLabel() const override;

 private:
  // docker exec of argv (not under timeout(1) when `timeout` is 0), with
  // docker failures turned into "docker:" errors.
  CommandResult Exec(const std::vector<std::string>& argv,
                     const CommandOptions& options,
                     std::chrono::milliseconds node_timeout);

  const DockerOptions options_;
};

}  // namespace faultline::harness

// LocalRemote: a Remote whose "node" is the controller host itself. Commands
// run through RunCommand/Spawn without entering a network namespace, and file
// transfer is a local copy. Used by tests (several nodes sharing one host on
// distinct loopback addresses) and by a future "local" cluster provider.
//
// Thread-safety: every method may be called concurrently (no shared state).
// Processes started with Start are children of the calling process; the
// caller reaps them (ProcessAlive / TerminateProcess do).
#pragma once

#include <string>
#include <vector>

#include "harness/cluster/remote.h"

namespace faultline::harness {

class LocalRemote : public Remote {
 public:
  // `working_dir`: directory daemons started with Start run in ("" = the
  // controller's current directory).
  explicit LocalRemote(std::string working_dir = "");

  CommandResult Run(const std::vector<std::string>& argv,
                    const CommandOptions& options = {}) override;

  // Spawns argv with stdout+stderr appended to `log_path` (created, with its
  // parent directories). The pid is the program's own.
  Result<pid_t> Start(const std::vector<std::string>& argv,
                      const std::string& log_path,
                      const std::vector<std::string>& env) override;

  // kill(pid, sig); ESRCH is an error ("no such process").
  Status Signal(pid_t pid, int sig) override;

  // Copies a regular file, creating the destination's parent directories and
  // overwriting an existing destination.
  Status Upload(const std::string& local, const std::string& remote) override;
  Status Download(const std::string& remote, const std::string& local) override;

 private:
  std::string working_dir_;
};

}  // namespace faultline::harness

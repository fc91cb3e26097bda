// SshRemote: a Remote whose node is a host reached over SSH (libssh).
//
// Commands are argv vectors. The remote sshd always hands a command line to
// the user's login shell (`$SHELL -c LINE`), so argv is turned into LINE by
// quoting every word (ShellQuote, BuildCommandLine below): no value from a
// config (node name, path, env entry) can inject shell syntax.
//
//   Run     one exec channel per command on a pooled, authenticated session.
//           Exit status, stdout and stderr are returned apart. The command
//           runs under `timeout -s KILL` on the node (sshd ignores channel
//           signal requests for root); past its timeout the result has
//           exit_code -1 and an error "timed out ...". An SSH failure is
//           never mistaken for the command's answer: it gives exit_code -1
//           and `error` beginning with "ssh:". CommandOptions::netns is
//           ignored: the command runs wherever the node's sshd runs.
//   Start   `sh -c 'checks; setsid sh -c "echo $$; exec ..." &'`: the
//           checks (log dir, working dir, env, program found) fail Start
//           with the reason; the daemon runs detached in
//           its own session, stdout+stderr appended to log_path (parent
//           directories created), stdin /dev/null, env via `env`; the pid
//           printed is the daemon's own because the shell execs it.
//   Signal  `kill -s NAME pid`; Alive reads /proc/<pid>/stat (zombies are
//           dead).
//   Upload  `cat > path` fed from stdin; Download `cat -- path`. These go
//           through the same channels as Run, so they work with sudo too.
//
// Sessions: at most `max_sessions` per Remote, opened on demand and reused.
// A session that fails is dropped and reopened (bounded attempts) when the
// failure happened before the command was started; a connection lost while
// a command ran is reported, not retried (it may have run).
//
// Host keys: kStrict accepts only keys already in known_hosts, kAcceptNew
// adds unknown hosts to known_hosts and rejects changed keys (ssh's
// StrictHostKeyChecking=accept-new), kOff accepts any key (tests only).
//
// Thread-safety: every method may be called concurrently; each call holds one
// session of the pool for its duration.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cluster/exec_remote.h"
#include "harness/cluster/remote.h"

namespace faultline::harness {

// Quotes one word for a POSIX shell: words made only of safe characters
// (letters, digits, and % + , - . / : = @ _) are returned as they are,
// everything else in single quotes with each ' written as '\''. The empty
// word becomes ''.
std::string ShellQuote(std::string_view word);

// The quoted words joined by single spaces.
std::string BuildCommandLine(const std::vector<std::string>& argv);

// The argv that Start runs on the node (before sudo and quoting):
// `sh -c SCRIPT sh LOG_PATH WORKING_DIR N NAME=value... ARGV...`, which
// exits non-zero with a reason on stderr when the daemon cannot be started,
// else prints the detached daemon's pid as its first output line. Fails on an
// empty argv, an empty log_path or an env entry that is not NAME=value with a
// valid NAME.
Result<std::vector<std::string>> BuildStartArgv(
    const std::vector<std::string>& argv, const std::string& log_path,
    const std::vector<std::string>& env, const std::string& working_dir);

// The signal's name without "SIG" ("KILL", "STOP"), for `kill -s`; "" when
// the number is not a signal.
std::string SignalName(int sig);

enum class HostKeyPolicy { kStrict, kAcceptNew, kOff };

struct SshOptions {
  std::string host;  // address or name to connect to
  int port = 22;
  std::string user = "root";
  std::string key_path;     // private key file; "" = agent and default keys
  std::string known_hosts;  // "" = ~/.ssh/known_hosts
  HostKeyPolicy host_key_policy = HostKeyPolicy::kStrict;
  bool sudo = false;        // run every command under `sudo -n --`
  std::string working_dir;  // daemons from Start run here ("" = home)
  std::chrono::milliseconds connect_timeout{5000};
  int connect_attempts = 3;  // per operation, with a short backoff
  int max_sessions = 4;
};

class SshRemote : public ExecRemote {
 public:
  explicit SshRemote(SshOptions options);
  ~SshRemote() override;
  SshRemote(const SshRemote&) = delete;
  SshRemote& operator=(const SshRemote&) = delete;

  // Opens one session now (connect, host key check, authentication), so a
  // bad address, key or host key is reported before a campaign starts.
  Status Connect();

  CommandResult Run(const std::vector<std::string>& argv,
                    const CommandOptions& options = {}) override;
  Result<pid_t> Start(const std::vector<std::string>& argv,
                      const std::string& log_path,
                      const std::vector<std::string>& env) override;
  // kind "ssh" with this Remote's host, port, user, key, known_hosts, host
  // key policy and sudo.
  RemoteDescriptor Descriptor() const override;

  const SshOptions& options() const { return options_; }
  // How many sessions were opened so far (tests check reuse).
  int sessions_opened() const;

 protected:
  std::string NodeLabel() const override;

 private:
  struct Session;
  // Takes an idle session or opens one (up to max_sessions, else waits).
  Result<Session*> Acquire();
  void Release(Session* s, bool broken);
  Result<std::unique_ptr<Session>> Open();
  // argv under `sudo -n --` (when configured) and `timeout -s KILL SECS`
  // (when `timeout` > 0).
  std::vector<std::string> Wrap(const std::vector<std::string>& argv,
                                std::chrono::milliseconds timeout) const;
  // Runs an already quoted command line on a pooled session, retrying the
  // connection (not the command) on failure.
  CommandResult RunLine(const std::string& line, const CommandOptions& options);

  const SshOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<Session*> idle_;
  int opened_ = 0;
};

}  // namespace faultline::harness

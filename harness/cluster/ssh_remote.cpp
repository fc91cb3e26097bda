#include "harness/cluster/ssh_remote.h"

#include <libssh/libssh.h>
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

// How much longer than a command's timeout the controller waits for the
// node's timeout(1) to end it.
constexpr auto kTimeoutSlack = std::chrono::milliseconds(2000);

constexpr const char* kNoExitStatus =
    "command ended without an exit status (killed by a signal?)";

bool SafeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("%+,-./:=@_").find(c) != std::string_view::npos;
}

bool ValidEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// Runs in `sh -c` on the node: $1 log path, $2 working dir ("" = stay),
// $3 number of NAME=value entries that follow, then the daemon's argv.
// Prints its own pid, then execs the daemon, which keeps that pid.
constexpr const char* kStartScript =
    "log=$1; wd=$2; n=$3; shift 3; "
    "mkdir -p -- \"$(dirname -- \"$log\")\" || exit 1; "
    "if [ -n \"$wd\" ]; then cd -- \"$wd\" || exit 1; fi; "
    "while [ \"$n\" -gt 0 ]; do export \"$1\" || exit 1; shift; n=$((n-1)); "
    "done; "
    "command -v -- \"$1\" >/dev/null 2>&1 || "
    "{ echo \"cannot run $1: not found\" >&2; exit 127; }; "
    "setsid sh -c 'echo $$; exec \"$@\" >>\"$0\" 2>&1 </dev/null' "
    "\"$log\" \"$@\" &";

void InitLibssh() {
  static std::once_flag once;
  std::call_once(once, [] { ssh_init(); });
}

// known_hosts updates from several Remotes must not interleave.
std::mutex& KnownHostsMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

std::string ShellQuote(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), SafeChar)) {
    return std::string(word);
  }
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string BuildCommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& word : argv) {
    if (!line.empty()) line += ' ';
    line += ShellQuote(word);
  }
  return line;
}

Result<std::vector<std::string>> BuildStartArgv(
    const std::vector<std::string>& argv, const std::string& log_path,
    const std::vector<std::string>& env, const std::string& working_dir) {
  if (argv.empty() || argv[0].empty()) return Fail("start: empty command");
  if (log_path.empty()) return Fail("start: empty log path");
  for (const std::string& entry : env) {
    std::size_t eq = entry.find('=');
    if (eq == std::string::npos || !ValidEnvName(entry.substr(0, eq))) {
      return Fail("start: env entry '" + entry + "' is not NAME=value");
    }
  }
  std::vector<std::string> out = {"sh",
                                  "-c",
                                  kStartScript,
                                  "sh",
                                  log_path,
                                  working_dir,
                                  std::to_string(env.size())};
  out.insert(out.end(), env.begin(), env.end());
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string SignalName(int sig) {
  if (sig <= 0 || sig >= NSIG) return "";
  const char* name = sigabbrev_np(sig);
  return name == nullptr ? "" : std::string(name);
}

// One authenticated libssh session. Used by one thread at a time.
struct SshRemote::Session {
  ssh_session ssh = nullptr;
  ~Session() {
    if (ssh != nullptr) {
      ssh_disconnect(ssh);
      ssh_free(ssh);
    }
  }
};

SshRemote::SshRemote(SshOptions options) : options_(std::move(options)) {
  InitLibssh();
}

SshRemote::~SshRemote() = default;

RemoteDescriptor SshRemote::Descriptor() const {
  RemoteDescriptor d;
  d.kind = "ssh";
  d.host = options_.host;
  d.port = options_.port;
  d.user = options_.user;
  d.key = options_.key_path;
  d.known_hosts = options_.known_hosts;
  switch (options_.host_key_policy) {
    case HostKeyPolicy::kStrict:
      d.host_key_policy = "strict";
      break;
    case HostKeyPolicy::kAcceptNew:
      d.host_key_policy = "accept-new";
      break;
    case HostKeyPolicy::kOff:
      d.host_key_policy = "off";
      break;
  }
  d.sudo = options_.sudo;
  return d;
}

int SshRemote::sessions_opened() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opened_;
}

Result<std::unique_ptr<SshRemote::Session>> SshRemote::Open() {
  const std::string where = "ssh: " + options_.user + "@" + options_.host +
                            ":" + std::to_string(options_.port) + ": ";
  auto s = std::make_unique<Session>();
  s->ssh = ssh_new();
  if (s->ssh == nullptr) return Fail(where + "ssh_new failed");
  ssh_session ssh = s->ssh;
  int port = options_.port;
  long timeout_us = static_cast<long>(options_.connect_timeout.count()) * 1000;
  long timeout_s = timeout_us / 1000000;
  timeout_us %= 1000000;
  bool no = false;
  ssh_options_set(ssh, SSH_OPTIONS_HOST, options_.host.c_str());
  ssh_options_set(ssh, SSH_OPTIONS_PORT, &port);
  ssh_options_set(ssh, SSH_OPTIONS_USER, options_.user.c_str());
  ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT, &timeout_s);
  ssh_options_set(ssh, SSH_OPTIONS_TIMEOUT_USEC, &timeout_us);
  ssh_options_set(ssh, SSH_OPTIONS_PROCESS_CONFIG, &no);
  if (!options_.known_hosts.empty()) {
    ssh_options_set(ssh, SSH_OPTIONS_KNOWNHOSTS, options_.known_hosts.c_str());
  }
  if (ssh_connect(ssh) != SSH_OK) {
    return Fail(where + "connect: " + ssh_get_error(ssh));
  }

  if (options_.host_key_policy != HostKeyPolicy::kOff) {
    std::lock_guard<std::mutex> lock(KnownHostsMutex());
    switch (ssh_session_is_known_server(ssh)) {
      case SSH_KNOWN_HOSTS_OK:
        break;
      case SSH_KNOWN_HOSTS_NOT_FOUND:
      case SSH_KNOWN_HOSTS_UNKNOWN:
        if (options_.host_key_policy != HostKeyPolicy::kAcceptNew) {
          return Fail(where + "host key not in known_hosts (" +
                      options_.known_hosts +
                      "); add it, or set the host key policy to accept-new");
        }
        if (ssh_session_update_known_hosts(ssh) != SSH_OK) {
          return Fail(where +
                      "cannot write known_hosts: " + ssh_get_error(ssh));
        }
        break;
      case SSH_KNOWN_HOSTS_CHANGED:
      case SSH_KNOWN_HOSTS_OTHER:
        return Fail(where +
                    "HOST KEY MISMATCH: the key differs from known_hosts (" +
                    options_.known_hosts + "); refusing to connect");
      case SSH_KNOWN_HOSTS_ERROR:
      default:
        return Fail(where + "host key check: " + ssh_get_error(ssh));
    }
  }

  int rc = SSH_AUTH_ERROR;
  if (options_.key_path.empty()) {
    rc = ssh_userauth_publickey_auto(ssh, nullptr, nullptr);
  } else {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(options_.key_path.c_str(), nullptr, nullptr,
                                    nullptr, &key) != SSH_OK) {
      return Fail(where + "cannot read private key " + options_.key_path);
    }
    rc = ssh_userauth_publickey(ssh, nullptr, key);
    ssh_key_free(key);
  }
  if (rc != SSH_AUTH_SUCCESS) {
    return Fail(where +
                "public key authentication failed: " + ssh_get_error(ssh));
  }
  return s;
}

Status SshRemote::Connect() {
  auto s = Acquire();
  if (!s) return Fail(s.error());
  Release(*s, false);
  return Ok();
}

Result<SshRemote::Session*> SshRemote::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  const std::size_t limit =
      static_cast<std::size_t>(std::max(1, options_.max_sessions));
  cv_.wait(lock, [&] { return !idle_.empty() || sessions_.size() < limit; });
  if (!idle_.empty()) {
    Session* s = idle_.back();
    idle_.pop_back();
    return s;
  }
  sessions_.push_back(nullptr);  // reserves the slot while connecting
  lock.unlock();
  auto opened = Open();
  lock.lock();
  auto slot = std::find(sessions_.begin(), sessions_.end(), nullptr);
  if (!opened) {
    sessions_.erase(slot);
    cv_.notify_one();
    return Fail(opened.error());
  }
  ++opened_;
  *slot = std::move(*opened);
  return slot->get();
}

void SshRemote::Release(Session* s, bool broken) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken) {
    // The idle sessions most likely share the failure (node rebooted, sshd
    // restarted, network cut): drop them too, so a retry connects afresh
    // instead of using up its attempts on stale sessions.
    std::erase_if(sessions_, [&](const std::unique_ptr<Session>& p) {
      return p != nullptr &&
             (p.get() == s ||
              std::find(idle_.begin(), idle_.end(), p.get()) != idle_.end());
    });
    idle_.clear();
  } else {
    idle_.push_back(s);
  }
  cv_.notify_one();
}

CommandResult SshRemote::RunLine(const std::string& line,
                                 const CommandOptions& options) {
  CommandResult result;
  const auto deadline = Clock::now() + options.timeout;
  std::string last_error;
  const int attempts = std::max(1, options_.connect_attempts);
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
    }
    auto session = Acquire();
    if (!session) {
      last_error = session.error();
      continue;
    }
    ssh_session ssh = (*session)->ssh;
    ssh_channel ch = ssh_channel_new(ssh);
    if (ch == nullptr || ssh_channel_open_session(ch) != SSH_OK ||
        ssh_channel_request_exec(ch, line.c_str()) != SSH_OK) {
      // Not started: drop the session and retry on a fresh one.
      last_error = std::string("ssh: ") + options_.host +
                   ": cannot start command: " + ssh_get_error(ssh);
      if (ch != nullptr) ssh_channel_free(ch);
      Release(*session, true);
      continue;
    }

    bool broken = false;
    bool timed_out = false;
    if (!options.stdin_data.empty()) {
      const std::string& in = options.stdin_data;
      std::size_t done = 0;
      while (done < in.size() && !broken) {
        int n = ssh_channel_write(ch, in.data() + done,
                                  static_cast<uint32_t>(std::min<std::size_t>(
                                      in.size() - done, 1 << 16)));
        if (n < 0) {
          broken = true;
        } else {
          done += static_cast<std::size_t>(n);
        }
      }
    }
    if (!broken) ssh_channel_send_eof(ch);

    char buf[16384];
    while (!broken && ssh_channel_is_eof(ch) == 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - Clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      int wait_ms = static_cast<int>(std::min<long>(left.count(), 100));
      int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, wait_ms);
      if (n == SSH_ERROR) {
        broken = true;
        break;
      }
      if (n > 0) result.out.append(buf, static_cast<std::size_t>(n));
      int e = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
      if (e == SSH_ERROR) {
        broken = true;
        break;
      }
      if (e > 0) result.err.append(buf, static_cast<std::size_t>(e));
    }
    if (!broken && !timed_out) {
      int e = 0;
      while ((e = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1)) > 0) {
        result.err.append(buf, static_cast<std::size_t>(e));
      }
      int code = ssh_channel_get_exit_status(ch);
      if (code < 0) {
        // No exit status: killed by a signal (exit-signal) or lost.
        result.exit_code = -1;
        result.error = "ssh: " + options_.host + ": " + kNoExitStatus;
      } else {
        result.exit_code = code;
      }
    }
    if (timed_out) {
      ssh_channel_request_send_signal(ch, "KILL");
      result.exit_code = -1;
      result.error =
          "timed out after " + std::to_string(options.timeout.count()) + " ms";
    }
    if (broken) {
      result.exit_code = -1;
      result.error =
          std::string("ssh: ") + options_.host +
          ": connection lost while the command ran: " + ssh_get_error(ssh);
    }
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    Release(*session, broken);
    return result;
  }
  result.exit_code = -1;
  result.error = last_error;
  return result;
}

std::vector<std::string> SshRemote::Wrap(
    const std::vector<std::string>& argv,
    std::chrono::milliseconds timeout) const {
  std::vector<std::string> full;
  if (options_.sudo) full = {"sudo", "-n", "--"};
  if (timeout.count() > 0) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3f",
                  static_cast<double>(timeout.count()) / 1000.0);
    full.insert(full.end(), {"timeout", "-s", "KILL", secs});
  }
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

CommandResult SshRemote::Run(const std::vector<std::string>& argv,
                             const CommandOptions& options) {
  if (argv.empty()) {
    CommandResult r;
    r.error = "empty command";
    return r;
  }
  // The node enforces the timeout (timeout(1) SIGKILLs the command; sshd
  // ignores channel signal requests for root sessions here); the
  // controller waits a little longer in case the node itself hangs.
  CommandOptions wait = options;
  wait.timeout = options.timeout + kTimeoutSlack;
  const auto t0 = Clock::now();
  CommandResult r =
      RunLine(BuildCommandLine(Wrap(argv, options.timeout)), wait);
  // timeout(1) SIGKILLs its process group, itself included: the exit is
  // 128+9 through a shell, or no exit status at all (exit-signal).
  const bool killed =
      r.exit_code == 128 + SIGKILL ||
      (r.exit_code == -1 && r.error.find(kNoExitStatus) != std::string::npos);
  if (killed && Clock::now() - t0 >= options.timeout) {
    r.exit_code = -1;
    r.error =
        "timed out after " + std::to_string(options.timeout.count()) + " ms";
  } else if (r.exit_code == -1 && r.error.rfind("timed out", 0) == 0) {
    r.error = "timed out after " + std::to_string(options.timeout.count()) +
              " ms (the node did not answer in time)";
  }
  return r;
}

Result<pid_t> SshRemote::Start(const std::vector<std::string>& argv,
                               const std::string& log_path,
                               const std::vector<std::string>& env) {
  auto start = BuildStartArgv(argv, log_path, env, options_.working_dir);
  if (!start) return Fail(start.error());
  CommandOptions opts;
  opts.timeout = std::chrono::milliseconds(15000);
  // Not under timeout(1), which would wait for (and later kill) the daemon.
  CommandResult r = RunLine(
      BuildCommandLine(Wrap(*start, std::chrono::milliseconds(0))), opts);
  if (!r.ok()) {
    return Fail(
        "start " + argv[0] + " on " + options_.host + ": " +
        (r.error.empty() ? "exit " + std::to_string(r.exit_code) : r.error) +
        (r.err.empty() ? "" : ": " + r.err));
  }
  return PidFromStartOutput(r.out, "start " + argv[0] + " on " + options_.host);
}

std::string SshRemote::NodeLabel() const { return options_.host; }

}  // namespace faultline::harness

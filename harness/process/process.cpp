#include "harness/process/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

// argv as a NULL-terminated char* array; `storage` keeps the strings alive.
std::vector<char*> MakeArgv(const std::vector<std::string>& args) {
  std::vector<char*> out;
  out.reserve(args.size() + 1);
  for (const auto& a : args) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child, after fork: the controller blocks SIGINT/SIGTERM (it waits
// for them on a thread) and the mask survives exec, so without this a
// SIGTERM could never stop the system under test cleanly. Async-signal-safe.
// Also gives SIGPIPE back its default action: the controller may ignore
// it (the CLI does), and an ignored signal would stay ignored across exec.
void UnblockAllSignals() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
}

// In the child, after fork: enter the namespace, or exit 127 with a message
// on fd 2. Only async-signal-safe calls.
void EnterNetnsOrDie(const std::string& netns) {
  if (netns.empty()) return;
  std::string path = "/run/netns/" + netns;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    const char msg[] = "faultline: cannot enter network namespace\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(fd);
}

void ExecOrDie(const std::vector<char*>& argv) {
  execvp(argv[0], argv.data());
  const char msg[] = "faultline: exec failed: ";
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, argv[0], strlen(argv[0]));
  (void)!write(2, "\n", 1);
  _exit(127);
}

}  // namespace

std::string DescribeResult(const CommandResult& r) {
  std::string msg = !r.error.empty() ? r.error : r.err;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
    msg.pop_back();
  if (msg.empty()) msg = "exit " + std::to_string(r.exit_code);
  return msg;
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const CommandOptions& options) {
  CommandResult result;
  if (argv.empty()) {
    result.error = "empty command";
    return result;
  }
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + strerror(errno);
    return result;
  }
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    result.error = std::string("pipe: ") + strerror(errno);
    return result;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) close(fd);
    result.error = std::string("pipe: ") + strerror(errno);
    return result;
  }
  auto cargv = MakeArgv(argv);
  pid_t pid = fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + strerror(errno);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1],
                   err_pipe[0], err_pipe[1]})
      close(fd);
    return result;
  }
  if (pid == 0) {
    UnblockAllSignals();
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    setpgid(0, 0);
    EnterNetnsOrDie(options.netns);
    ExecOrDie(cargv);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);

  // Feed stdin and drain stdout/stderr with poll, so no pipe fills up.
  std::size_t in_off = 0;
  int in_fd = in_pipe[1];
  if (options.stdin_data.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  const auto deadline = Clock::now() + options.timeout;
  bool timed_out = false;
  int open_outputs = 2;
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  char buf[65536];
  while (open_outputs > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - Clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    int r = poll(fds, n, static_cast<int>(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < n && r > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_fd) {
        ssize_t w = write(in_fd, options.stdin_data.data() + in_off,
                          options.stdin_data.size() - in_off);
        if (w > 0) in_off += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN) in_off = options.stdin_data.size();
        if (in_off >= options.stdin_data.size()) {
          close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        (fds[i].fd == out_fd ? result.out : result.err)
            .append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        if (fds[i].fd == out_fd) {
          close(out_fd);
          out_fd = -1;
        } else {
          close(err_fd);
          err_fd = -1;
        }
        --open_outputs;
      }
    }
  }
  for (int fd : {in_fd, out_fd, err_fd})
    if (fd >= 0) close(fd);
  if (timed_out) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    result.exit_code = -1;
    result.error =
        "timed out after " + std::to_string(options.timeout.count()) + " ms";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
    if (result.exit_code == 127 && result.err.rfind("faultline: ", 0) == 0) {
      result.error = result.err;
    }
  } else {
    result.exit_code = -1;
    result.error =
        std::string("killed by signal ") + std::to_string(WTERMSIG(status));
  }
  return result;
}

Result<pid_t> Spawn(const std::vector<std::string>& argv,
                    const SpawnOptions& options) {
  if (argv.empty()) return Fail("spawn: empty command");
  // A pipe that closes on exec tells the parent whether exec succeeded.
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0)
    return Fail(std::string("pipe: ") + strerror(errno));
  auto cargv = MakeArgv(argv);
  std::vector<std::string> env_store = options.env;
  pid_t pid = fork();
  if (pid < 0) {
    close(status_pipe[0]);
    close(status_pipe[1]);
    return Fail(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    close(status_pipe[0]);
    UnblockAllSignals();
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    const char* log =
        options.log_path.empty() ? "/dev/null" : options.log_path.c_str();
    int log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    if (!options.working_dir.empty() && chdir(options.working_dir.c_str()) != 0)
      _exit(126);
    for (auto& kv : env_store) putenv(kv.data());
    if (!options.netns.empty()) {
      std::string path = "/run/netns/" + options.netns;
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        int e = errno;
        (void)!write(status_pipe[1], &e, sizeof e);
        _exit(127);
      }
    }
    execvp(cargv[0], cargv.data());
    int e = errno;
    (void)!write(status_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(status_pipe[1]);
  int child_errno = 0;
  ssize_t got;
  do {
    got = read(status_pipe[0], &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (got > 0) {
    waitpid(pid, nullptr, 0);
    return Fail("cannot start " + argv[0] +
                (options.netns.empty() ? "" : " in netns " + options.netns) +
                ": " + strerror(child_errno));
  }
  return pid;
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0) return false;
  // For our own child waitpid is authoritative: 0 means some thread of it is
  // still running; its pid means it exited (and is now reaped).
  int status = 0;
  pid_t w = waitpid(pid, &status, WNOHANG);
  if (w == pid) return false;
  if (w == 0) return true;
  // Not our child (e.g. an orphan found by heal): read /proc. A multi-
  // threaded process whose main thread has exited shows state Z while its
  // other threads still run (and hold its sockets), so count live tasks.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= line.size())
    return false;
  char state = line[close_paren + 2];
  if (state != 'Z' && state != 'X') return true;
  std::error_code ec;
  int tasks = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task", ec)) {
    (void)entry;
    if (++tasks > 1) return true;
  }
  return false;
}

std::optional<unsigned long long> ProcessStartTime(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  std::string line;
  std::getline(stat, line);
  auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close_paren + 2));
  // Fields after comm start at field 3 (state); starttime is field 22.
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return std::nullopt;
  }
  return std::stoull(field);
}

bool TerminateProcess(pid_t pid, int sig, std::chrono::milliseconds grace) {
  if (!ProcessAlive(pid)) return true;
  kill(pid, SIGCONT);  // a stopped process cannot act on SIGTERM
  kill(pid, sig);
  auto wait_gone = [pid](std::chrono::milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      if (!ProcessAlive(pid)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return !ProcessAlive(pid);
  };
  if (wait_gone(grace)) return true;
  kill(pid, SIGKILL);
  return wait_gone(std::chrono::milliseconds(5000));
}

}  // namespace faultline::harness

#include "harness/process/pipe_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

extern char** environ;

namespace faultline::harness {
namespace {

using Clock = PipeProcess::Clock;

// What failed in the child before exec, sent to the parent over the status
// pipe with the errno.
enum ChildStage : int { kChdir = 1, kExec = 2 };

struct ChildReport {
  int stage = 0;
  int err = 0;
};

// Milliseconds left until `deadline`, rounded up, at least 0, at most
// INT_MAX (for poll).
int MillisLeft(Clock::time_point deadline) {
  auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, 1 << 30));
}

// The child's environment: ours, minus names that `extra` sets, then
// `extra`. Built before fork (the child may only make async-signal-safe
// calls).
std::vector<std::string> MergedEnv(const std::vector<std::string>& extra) {
  auto name_of = [](std::string_view entry) {
    return entry.substr(0, entry.find('='));
  };
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool replaced = std::any_of(
        extra.begin(), extra.end(),
        [&](const std::string& x) { return name_of(x) == name_of(entry); });
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child: marks every descriptor from 3 on close-on-exec. Only
// async-signal-safe calls.
void CloexecFrom3() {
#ifdef SYS_close_range
  constexpr unsigned kCloexec = 1U << 2;  // CLOSE_RANGE_CLOEXEC
  if (syscall(SYS_close_range, 3U, ~0U, kCloexec) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (int fd = 3; fd < max; ++fd) {
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

Result<std::unique_ptr<PipeProcess>> PipeProcess::Start(
    const std::vector<std::string>& argv, const PipeProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) return Fail("empty command");
  const std::string log =
      options.log_path.empty() ? "/dev/null" : options.log_path;
  int log_fd =
      open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return Fail("cannot open log " + log + ": " + strerror(errno));
  }
  std::uint64_t log_offset = 0;
  struct stat st {};
  if (fstat(log_fd, &st) == 0 && S_ISREG(st.st_mode)) {
    log_offset = static_cast<std::uint64_t>(st.st_size);
  }
  int in[2] = {-1, -1}, out[2] = {-1, -1}, report[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd :
         {&in[0], &in[1], &out[0], &out[1], &report[0], &report[1], &log_fd}) {
      CloseFd(*fd);
    }
  };
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
      pipe2(report, O_CLOEXEC) != 0) {
    std::string why = std::string("pipe: ") + strerror(errno);
    close_all();
    return Fail(why);
  }
  const std::vector<std::string> env = MergedEnv(options.env);
  const std::vector<char*> cargv = CStrings(argv);
  const std::vector<char*> cenv = CStrings(env);
  const pid_t parent = getpid();
  const char* cwd =
      options.working_dir.empty() ? nullptr : options.working_dir.c_str();

  pid_t pid = fork();
  if (pid < 0) {
    std::string why = std::string("fork: ") + strerror(errno);
    close_all();
    return Fail(why);
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the controller is already gone
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(log_fd, 2);
    ChildReport r;
    if (cwd != nullptr && chdir(cwd) != 0) {
      r = {kChdir, errno};
      (void)!write(report[1], &r, sizeof r);
      _exit(126);
    }
    CloexecFrom3();
    execvpe(cargv[0], cargv.data(), cenv.data());
    r = {kExec, errno};
    (void)!write(report[1], &r, sizeof r);
    _exit(127);
  }
  CloseFd(in[0]);
  CloseFd(out[1]);
  CloseFd(report[1]);
  CloseFd(log_fd);
  ChildReport r;
  ssize_t got;
  do {
    got = read(report[0], &r, sizeof r);
  } while (got < 0 && errno == EINTR);
  CloseFd(report[0]);
  if (got == static_cast<ssize_t>(sizeof r)) {
    close_all();
    waitpid(pid, nullptr, 0);
    if (r.stage == kChdir) {
      return Fail("cannot start " + argv[0] + ": cannot enter " +
                  options.working_dir + ": " + strerror(r.err));
    }
    return Fail("cannot start " + argv[0] + ": " + strerror(r.err));
  }

  std::unique_ptr<PipeProcess> p(new PipeProcess());
  p->options_ = options;
  p->pid_ = pid;
  p->stdin_fd_ = in[1];
  p->stdout_fd_ = out[0];
  p->log_offset_ = log_offset;
  fcntl(p->stdin_fd_, F_SETFL, fcntl(p->stdin_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(p->stdout_fd_, F_SETFL, fcntl(p->stdout_fd_, F_GETFL) | O_NONBLOCK);
#ifdef SYS_pidfd_open
  p->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (p->pidfd_ >= 0) fcntl(p->pidfd_, F_SETFD, FD_CLOEXEC);
#endif
  return p;
}

PipeProcess::~PipeProcess() {
  Kill();
  CloseFd(pidfd_);
}

Status PipeProcess::WriteLine(std::string_view line, Clock::time_point deadline,
                              std::size_t* written) {
  if (written != nullptr) *written = 0;
  if (stdin_fd_ < 0) return Fail("stdin closed");
  std::string data(line);
  data.push_back('\n');
  // A write to a pipe without reader raises SIGPIPE in the writing thread:
  // unless the process ignores it (the CLI does; then one sigaction call is
  // all this costs), block it here, and take back the one our write raised.
  struct sigaction current {};
  const bool ignored = sigaction(SIGPIPE, nullptr, &current) == 0 &&
                       current.sa_handler == SIG_IGN;
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  bool was_pending = false;
  if (!ignored) {
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    sigpending(&pending);
    was_pending = sigismember(&pending, SIGPIPE) == 1;
  }
  std::size_t done = 0;
  Status result = Ok();
  while (done < data.size()) {
    ssize_t n = write(stdin_fd_, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      int ms = MillisLeft(deadline);
      if (ms == 0) {
        result = Fail("timeout writing to the client's stdin");
        break;
      }
      pollfd pfd{stdin_fd_, POLLOUT, 0};
      poll(&pfd, 1, ms);
      continue;
    }
    if (n < 0 && errno == EPIPE) {
      if (!ignored && !was_pending) {
        timespec zero{0, 0};
        sigtimedwait(&pipe_set, nullptr, &zero);
      }
      result = Fail("stdin closed");
    } else {
      result = Fail(std::string("write: ") + strerror(errno));
    }
    break;
  }
  if (!ignored) pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (written != nullptr) *written = done;
  return result;
}

PipeProcess::ReadResult PipeProcess::ReadLine(Clock::time_point deadline) {
  ReadResult out;
  std::size_t scanned = 0;
  while (true) {
    auto nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos && nl <= options_.max_line) {
      out.status = ReadStatus::kLine;
      out.line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return out;
    }
    if (nl != std::string::npos || buffer_.size() > options_.max_line) {
      out.status = ReadStatus::kTooLong;
      out.line = buffer_.substr(0, options_.max_line);
      buffer_.clear();
      return out;
    }
    scanned = buffer_.size();
    if (eof_ || stdout_fd_ < 0) {
      out.status = ReadStatus::kEof;
      out.line = buffer_;  // an unterminated last line, if any
      return out;
    }
    int ms = MillisLeft(deadline);
    if (ms == 0) {
      out.status = ReadStatus::kTimeout;
      return out;
    }
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int ready = poll(&pfd, 1, ms);
    if (ready < 0 && errno != EINTR) {
      out.status = ReadStatus::kError;
      out.error = std::string("poll: ") + strerror(errno);
      return out;
    }
    if (ready <= 0) continue;
    char chunk[65536];
    ssize_t n = read(stdout_fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      eof_ = true;
    } else if (errno != EINTR && errno != EAGAIN) {
      out.status = ReadStatus::kError;
      out.error = std::string("read: ") + strerror(errno);
      return out;
    }
  }
}

void PipeProcess::CloseStdin() { CloseFd(stdin_fd_); }

void PipeProcess::Reaped(int status) {
  reaped_ = true;
  status_ = status;
  CloseFd(pidfd_);
}

std::optional<int> PipeProcess::WaitExit(Clock::time_point deadline) {
  while (!reaped_) {
    int status = 0;
    pid_t w = waitpid(pid_, &status, WNOHANG);
    if (w == pid_) {
      Reaped(status);
      break;
    }
    if (w < 0 && errno != EINTR) {  // not our child any more
      reaped_ = true;
      break;
    }
    int ms = MillisLeft(deadline);
    if (ms == 0) return std::nullopt;
    if (pidfd_ >= 0) {
      pollfd pfd{pidfd_, POLLIN, 0};
      poll(&pfd, 1, ms);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(ms, 5)));
    }
  }
  return status_;
}

std::optional<int> PipeProcess::Kill() {
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
  if (reaped_ || pid_ <= 0) return std::nullopt;
  // The group cannot have been reused: its leader is not reaped yet.
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  int status = 0;
  pid_t w;
  do {
    w = waitpid(pid_, &status, 0);
  } while (w < 0 && errno == EINTR);
  if (w == pid_) {
    Reaped(status);
    return status;
  }
  reaped_ = true;
  return std::nullopt;
}

std::string PipeProcess::DescribeStatus(int status) {
  if (WIFEXITED(status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (abbrev != nullptr ? std::string(" (SIG") + abbrev + ")" : "");
  }
  return "stopped (wait status " + std::to_string(status) + ")";
}

std::string LogTail(const std::string& path, std::uint64_t from, int max_lines,
                    std::size_t max_bytes) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto end = static_cast<std::uint64_t>(in.tellg());
  if (end <= from) return "";
  std::uint64_t start =
      std::max<std::uint64_t>(from, end > max_bytes ? end - max_bytes : 0);
  // From one byte earlier: a line that starts right at `start` is whole.
  const bool partial = start > from;
  if (partial) --start;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(static_cast<std::size_t>(end - start), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (partial) {  // cut the partial first line
    auto nl = text.find('\n');
    text = nl == std::string::npos ? "" : text.substr(nl + 1);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' ||
                           text.back() == '\r' || text.back() == '\t')) {
    text.pop_back();
  }
  std::size_t cut = text.size();
  for (int lines = 0; lines < max_lines && cut != std::string::npos; ++lines) {
    cut = cut == 0 ? std::string::npos : text.rfind('\n', cut - 1);
  }
  if (cut != std::string::npos) text = text.substr(cut + 1);
  return text;
}

}  // namespace faultline::harness

#define FUSE_USE_VERSION 314
#include "nemesis/disk/lazy_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>
#include <thread>

#include "nemesis/disk/control.h"
#include "nemesis/disk/lazy_fs_state.h"

namespace faultline::nemesis::disk {

namespace {

CacheOptions CacheOptionsFor(const LazyFsOptions& o) {
  CacheOptions c;
  c.max_held_bytes = o.max_held_mb << 20;
  return c;
}

std::string Timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

LazyFsState::LazyFsState(const LazyFsOptions& options,
                         std::unique_ptr<NamespaceJournal> journal,
                         std::string hidden)
    : options_(options),
      cache_(backing_, CacheOptionsFor(options)),
      journal_(std::move(journal)),
      hidden_(std::move(hidden)) {
  if (!options_.log.empty()) log_ = std::fopen(options_.log.c_str(), "ae");
}

LazyFsState::~LazyFsState() {
  if (log_ != nullptr) std::fclose(log_);
}

std::optional<std::string> LazyFsState::Rel(const char* path) const {
  std::string_view p = path == nullptr ? "" : path;
  while (!p.empty() && p.front() == '/') p.remove_prefix(1);
  if (!hidden_.empty() && p.substr(0, hidden_.size()) == hidden_ &&
      (p.size() == hidden_.size() || p[hidden_.size()] == '/')) {
    return std::nullopt;
  }
  return std::string(p);
}

bool LazyFsState::Hidden(const std::string& rel_dir, const char* name) const {
  if (hidden_.empty()) return false;
  const std::string full = rel_dir.empty() ? name : rel_dir + "/" + name;
  return full == hidden_;
}

IoResult<FileId> LazyFsState::Pin(const std::string& rel, bool read_only_ok) {
  const char* p = rel.empty() ? "." : rel.c_str();
  int fd = openat(root_fd(), p, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && read_only_ok &&
      (errno == EACCES || errno == ETXTBSY || errno == EROFS ||
       errno == EPERM)) {
    fd = openat(root_fd(), p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) {
    const int code = errno;
    return IoFail(code, "open " + rel + ": " + std::strerror(code));
  }
  return PinFd(fd, rel);
}

IoResult<FileId> LazyFsState::PinFd(int fd, const std::string& rel) {
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int code = errno;
    close(fd);
    return IoFail(code, "fstat " + rel);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return IoFail(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                  rel + " is not a regular file");
  }
  const FileId id = st.st_ino;
  std::lock_guard lock(inodes_mu_);
  auto [it, fresh] = inodes_.try_emplace(id);
  if (fresh) {
    backing_.Adopt(id, fd);
  } else {
    close(fd);
  }
  ++it->second.pins;
  it->second.path = "/" + rel;
  return id;
}

bool LazyFsState::TryPin(FileId file) {
  std::lock_guard lock(inodes_mu_);
  auto it = inodes_.find(file);
  if (it == inodes_.end()) return false;
  ++it->second.pins;
  return true;
}

void LazyFsState::Unpin(FileId file) {
  std::lock_guard lock(inodes_mu_);
  auto it = inodes_.find(file);
  if (it == inodes_.end() || it->second.pins == 0) return;
  if (--it->second.pins == 0 && cache_.HeldWrites(file) == 0) {
    backing_.Close(file);
    inodes_.erase(it);
  }
}

void LazyFsState::Sweep() {
  std::lock_guard lock(inodes_mu_);
  for (auto it = inodes_.begin(); it != inodes_.end();) {
    bool close_it = false;
    if (it->second.pins == 0) {
      if (cache_.HeldWrites(it->first) == 0) {
        close_it = true;
      } else if (auto fd = backing_.Fd(it->first); fd.ok()) {
        struct stat st {};
        if (fstat(*fd, &st) == 0 && st.st_nlink == 0) {
          cache_.Discard(it->first);
          close_it = true;
        }
      }
    }
    if (close_it) {
      backing_.Close(it->first);
      it = inodes_.erase(it);
    } else {
      ++it;
    }
  }
}

void LazyFsState::InvalidateKnown() {
  std::vector<std::string> paths;
  {
    std::lock_guard lock(inodes_mu_);
    for (const auto& [id, inode] : inodes_) paths.push_back(inode.path);
  }
  if (fuse_ == nullptr) return;
  for (const std::string& p : paths) fuse_invalidate_path(fuse_, p.c_str());
}

namespace {
std::string BaseName(const char* path) {
  const std::string_view p = path == nullptr ? "" : path;
  const std::size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}
}  // namespace

bool LazyFsState::IsHiddenName(const char* path) {
  return BaseName(path).rfind(".fuse_hidden", 0) == 0;
}

void LazyFsState::Hide(const char* path, FileId file) {
  std::lock_guard lock(hidden_mu_);
  hidden_files_[BaseName(path)] = file;
}

std::optional<FileId> LazyFsState::HiddenFile(const char* path) {
  if (!IsHiddenName(path)) return std::nullopt;
  std::lock_guard lock(hidden_mu_);
  auto it = hidden_files_.find(BaseName(path));
  if (it == hidden_files_.end()) return std::nullopt;
  return it->second;
}

bool LazyFsState::Unhide(const char* path) {
  if (!IsHiddenName(path)) return false;
  FileId file = 0;
  {
    std::lock_guard lock(hidden_mu_);
    auto it = hidden_files_.find(BaseName(path));
    if (it == hidden_files_.end()) return false;
    file = it->second;
    hidden_files_.erase(it);
  }
  Unpin(file);
  return true;
}

void LazyFsState::Delay() {
  const auto latency = cache_.Latency();
  if (latency.count() > 0) std::this_thread::sleep_for(latency);
}

void LazyFsState::Log(std::string_view line) {
  if (log_ == nullptr) return;
  std::lock_guard lock(log_mu_);
  std::fprintf(log_, "%s %.*s\n", Timestamp().c_str(),
               static_cast<int>(line.size()), line.data());
  std::fflush(log_);
}

std::string LazyFsState::RunCommand(std::string_view line) {
  std::lock_guard lock(command_mu_);
  auto parsed = ParseControlLine(line);
  if (!parsed) return FormatErrorAnswer(parsed.error());
  const ControlCommand& c = *parsed;
  auto with_undo = [&](std::string answer, const UndoReport& undo) {
    answer = WithNumber(std::move(answer), "undone_ops", undo.undone);
    answer = WithNumber(std::move(answer), "undo_errors", undo.failed);
    if (undo.failed > 0) {
      answer =
          WithString(std::move(answer), "first_undo_error", undo.first_error);
      Log("undo errors: " + std::to_string(undo.failed) +
          ", first: " + undo.first_error);
    }
    return answer;
  };
  std::string answer;
  switch (c.op) {
    case ControlOp::kDrop: {
      std::string crash = FormatCrashAnswer(cache_.DropAll());
      answer = with_undo(std::move(crash), journal_->UndoAll());
      Sweep();
      InvalidateKnown();
      break;
    }
    case ControlOp::kTorn: {
      std::string crash = FormatCrashAnswer(cache_.Torn(c.seed));
      answer = with_undo(std::move(crash), journal_->UndoAll());
      Sweep();
      InvalidateKnown();
      break;
    }
    case ControlOp::kFlip:
      answer = RunControl(cache_, c);
      Sweep();
      InvalidateKnown();
      break;
    case ControlOp::kSync:
      answer = RunControl(cache_, c);
      answer =
          WithNumber(std::move(answer), "committed_ops", journal_->CommitAll());
      Sweep();
      break;
    case ControlOp::kStatus: {
      const JournalStatus j = journal_->Status();
      answer = RunControl(cache_, c);
      answer =
          WithString(std::move(answer), "namespace",
                     journal_->mode() == CommitMode::kDirFsync ? "dir-fsync"
                                                               : "any-fsync");
      answer = WithNumber(std::move(answer), "namespace_pending", j.pending);
      answer =
          WithNumber(std::move(answer), "namespace_committed", j.committed);
      answer = WithNumber(std::move(answer), "namespace_undone", j.undone);
      answer =
          WithNumber(std::move(answer), "namespace_undo_errors", j.undo_failed);
      break;
    }
    default:
      answer = RunControl(cache_, c);
      break;
  }
  return answer;
}

namespace {

// The control socket: accepts connections, reads lines, answers each.
class ControlServer {
 public:
  // `signals`: a signalfd for SIGTERM/SIGINT/SIGHUP; on one, the FUSE
  // session `se` is told to exit and the mount at `mount` is poked so a
  // worker wakes up and sees it.
  ControlServer(LazyFsState& state, std::string path, int signals,
                fuse_session* se, std::string mount)
      : state_(state),
        path_(std::move(path)),
        signals_(signals),
        se_(se),
        mount_(std::move(mount)) {}
  ~ControlServer() { Stop(); }

  harness::Status Start() {
    sockaddr_un addr{};
    if (path_.size() >= sizeof addr.sun_path) {
      return harness::Fail("control socket path too long: " + path_);
    }
    struct stat st {};
    if (lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      unlink(path_.c_str());  // left by a killed daemon
    }
    listen_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    if (listen_ < 0 ||
        bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_, 16) != 0) {
      return harness::Fail("control socket " + path_ + ": " +
                           std::strerror(errno));
    }
    chmod(path_.c_str(), 0600);
    wake_ = eventfd(0, EFD_CLOEXEC);
    thread_ = std::thread([this] { Loop(); });
    return harness::Ok();
  }

  void Stop() {
    if (thread_.joinable()) {
      const std::uint64_t one = 1;
      (void)!write(wake_, &one, sizeof one);
      thread_.join();
    }
    for (auto& [fd, buf] : clients_) close(fd);
    clients_.clear();
    if (listen_ >= 0) {
      close(listen_);
      unlink(path_.c_str());
      listen_ = -1;
    }
    if (wake_ >= 0) close(wake_);
    wake_ = -1;
  }

 private:
  void Loop() {
    for (;;) {
      std::vector<pollfd> fds{
          {wake_, POLLIN, 0}, {signals_, POLLIN, 0}, {listen_, POLLIN, 0}};
      for (const auto& [fd, buf] : clients_) fds.push_back({fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        state_.Log(std::string("control: poll: ") + std::strerror(errno));
        return;
      }
      if (fds[0].revents != 0) return;
      if (fds[1].revents & POLLIN) {
        signalfd_siginfo info{};
        (void)!read(signals_, &info, sizeof info);
        state_.Log("signal " + std::to_string(info.ssi_signo) + ": unmounting");
        fuse_session_exit(se_);
        // A request wakes a worker to see the exit. From a thread of its
        // own: the loop may end before a worker serves it (the request
        // then fails when the session is destroyed), and this thread is
        // joined by the loop's caller.
        std::thread([mount = mount_] {
          struct stat st {};
          (void)stat(mount.c_str(), &st);
        }).detach();
        return;
      }
      if (fds[2].revents & POLLIN) {
        const int c = accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) clients_[c];
      }
      for (std::size_t i = 3; i < fds.size(); ++i) {
        if (fds[i].revents != 0) Serve(fds[i].fd);
      }
    }
  }

  void Serve(int fd) {
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
      close(fd);
      clients_.erase(fd);
      return;
    }
    std::string& pending = clients_[fd];
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      const std::string answer = state_.RunCommand(line);
      state_.Log("control: " + line + " -> " + answer);
      const std::string out = answer + "\n";
      std::size_t off = 0;
      while (off < out.size()) {
        const ssize_t w = write(fd, out.data() + off, out.size() - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
    }
    if (pending.size() > (1u << 16)) {  // no newline in 64 KiB: not ours
      close(fd);
      clients_.erase(fd);
    }
  }

  LazyFsState& state_;
  const std::string path_;
  const int signals_;
  fuse_session* const se_;
  const std::string mount_;
  int listen_ = -1;
  int wake_ = -1;
  std::thread thread_;
  std::map<int, std::string> clients_;  // used by the loop thread only
};

bool IsEmptyDir(const std::string& path) {
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return false;
  bool empty = true;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
      empty = false;
      break;
    }
  }
  closedir(d);
  return empty;
}

int SetupError(const std::string& message) {
  std::cerr << "faultline-lazyfs: " << message << "\n";
  return 2;
}

// The trash directory's path relative to the backing, when inside it.
std::string HiddenPath(const std::string& backing, const std::string& trash) {
  char* b = realpath(backing.c_str(), nullptr);
  char* t = realpath(trash.c_str(), nullptr);
  std::string out;
  if (b != nullptr && t != nullptr) {
    const std::string bs = b, ts = t;
    if (ts.size() > bs.size() + 1 && ts.compare(0, bs.size(), bs) == 0 &&
        ts[bs.size()] == '/') {
      out = ts.substr(bs.size() + 1);
    }
  }
  std::free(b);
  std::free(t);
  return out;
}

}  // namespace

int RunLazyFs(const LazyFsOptions& o) {
  for (const auto* p : {&o.backing, &o.trash, &o.mount, &o.control}) {
    if (p->empty() || p->front() != '/') {
      return SetupError("paths must be absolute, got '" + *p + "'");
    }
  }
  struct stat st {};
  if (stat(o.mount.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return SetupError("mount directory " + o.mount + " does not exist");
  }
  if (!IsEmptyDir(o.mount)) {
    return SetupError("mount directory " + o.mount + " is not empty");
  }
  auto journal = NamespaceJournal::Open(o.backing, o.trash, o.namespace_mode);
  if (!journal) return SetupError(journal.error());
  LazyFsState state(o, std::move(*journal), HiddenPath(o.backing, o.trash));

  // SIGTERM/SIGINT/SIGHUP are blocked in every thread (the FUSE workers
  // inherit the mask) and read from a signalfd by the control thread.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);
  const int signals = signalfd(-1, &stop, SFD_CLOEXEC);
  if (signals < 0) return SetupError("signalfd failed");

  const std::string mount_opts =
      "fsname=faultline-lazyfs,subtype=faultline-lazyfs,allow_other,"
      "default_permissions";
  const char* argv[] = {"faultline-lazyfs", "-o", mount_opts.c_str()};
  fuse_args args = FUSE_ARGS_INIT(3, const_cast<char**>(argv));
  struct fuse* f =
      fuse_new(&args, LazyFsOperations(), sizeof(fuse_operations), &state);
  if (f == nullptr) return SetupError("fuse_new failed");
  if (fuse_mount(f, o.mount.c_str()) != 0) {
    fuse_destroy(f);
    return SetupError("cannot mount on " + o.mount);
  }
  fuse_session* se = fuse_get_session(f);
  state.set_fuse(f);
  ControlServer server(state, o.control, signals, se, o.mount);
  if (auto started = server.Start(); !started) {
    fuse_unmount(f);
    fuse_destroy(f);
    return SetupError(started.error());
  }
  state.Log("mounted " + o.mount + " over " + o.backing);
  // Write-back by age (--writeback-ms): a thread that wakes a few times per
  // period and writes back what expired.
  std::mutex writeback_mu;
  std::condition_variable writeback_cv;
  bool writeback_stop = false;
  std::thread writeback;
  if (o.writeback_ms > 0) {
    writeback = std::thread([&] {
      const auto age = std::chrono::milliseconds(o.writeback_ms);
      const auto period = std::min<std::chrono::milliseconds>(
          std::chrono::milliseconds(1000),
          std::max<std::chrono::milliseconds>(std::chrono::milliseconds(1),
                                              age / 4));
      std::unique_lock<std::mutex> lock(writeback_mu);
      while (!writeback_cv.wait_for(lock, period,
                                    [&] { return writeback_stop; })) {
        lock.unlock();
        (void)state.cache().WriteBackOlderThan(age);
        lock.lock();
      }
    });
  }
  fuse_loop_config* loop = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(loop, 16);
  const int rc = fuse_loop_mt(f, loop);
  fuse_loop_cfg_destroy(loop);
  if (writeback.joinable()) {
    {
      std::lock_guard<std::mutex> lock(writeback_mu);
      writeback_stop = true;
    }
    writeback_cv.notify_all();
    writeback.join();
  }
  server.Stop();
  state.set_fuse(nullptr);
  fuse_unmount(f);
  // Exit is a crash like `drop`: held writes are discarded, and the
  // namespace records not durable yet are undone.
  const std::string last = state.RunCommand("drop");
  state.Log("exit (loop returned " + std::to_string(rc) + "): " + last);
  fuse_destroy(f);
  close(signals);
  return 0;
}

int RunLazyFsCtl(const std::string& path, const std::string& line) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) {
    std::cerr << "faultline-lazyfs ctl: socket path too long\n";
    return 2;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::cerr << "faultline-lazyfs ctl: cannot connect to " << path << ": "
              << std::strerror(errno) << "\n";
    if (fd >= 0) close(fd);
    return 2;
  }
  const std::string out = line + "\n";
  if (write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) {
    std::cerr << "faultline-lazyfs ctl: write: " << std::strerror(errno)
              << "\n";
    close(fd);
    return 2;
  }
  std::string answer;
  char buf[4096];
  while (answer.find('\n') == std::string::npos) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  const std::size_t nl = answer.find('\n');
  if (nl == std::string::npos) {
    std::cerr << "faultline-lazyfs ctl: no answer from " << path << "\n";
    return 2;
  }
  answer.resize(nl);
  std::cout << answer << "\n";
  return answer.rfind("{\"ok\":true", 0) == 0 ? 0 : 1;
}

}  // namespace faultline::nemesis::disk

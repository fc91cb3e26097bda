#include "nemesis/disk/lazyfs_nodes.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "checkers/json_parser.h"
#include "harness/cluster/remote_factory.h"
#include "harness/cluster/upload.h"
#include "harness/ledger/ledger_mount.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"

namespace faultline::nemesis::disk {

namespace {

using harness::CommandResult;
using harness::Fail;
using harness::Status;
using std::chrono::milliseconds;

constexpr milliseconds kReadyLimit{10000};
constexpr milliseconds kStopLimit{5000};

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string LazyDir(const std::string& data_dir) {
  return data_dir + ".lazyfs";
}

std::string ControlSocket(const std::string& data_dir) {
  return LazyDir(data_dir) + "/control.sock";
}

// `binary ctl SOCKET WORDS...` for one control command (words split on
// spaces, as the daemon's ctl mode joins them again).
std::vector<std::string> CtlArgv(const std::string& binary,
                                 const std::string& data_dir,
                                 const std::string& command) {
  std::vector<std::string> argv = {binary, "ctl", ControlSocket(data_dir)};
  std::string word;
  for (char c : command + " ") {
    if (c == ' ') {
      if (!word.empty()) argv.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return argv;
}

}  // namespace

LazyfsNodes::LazyfsNodes(harness::Ledger& ledger, std::string namespace_mode)
    : ledger_(ledger), namespace_mode_(std::move(namespace_mode)) {}

std::string LazyfsNodes::BinaryPath() const {
  return harness::FindCompanion(binary_, "faultline-lazyfs");
}

bool LazyfsNodes::IsRemote(const harness::Node& node) const {
  return node.netns.empty() && node.remote != nullptr &&
         !node.remote->SharesControllerPids();
}

CommandResult LazyfsNodes::Run(const harness::Node& node,
                               const std::vector<std::string>& argv,
                               int timeout_ms) const {
  harness::CommandOptions o;
  o.timeout = milliseconds(timeout_ms);
  if (IsRemote(node)) return node.remote->Run(argv, o);
  return harness::RunCommand(argv, o);
}

std::string LazyfsNodes::LogPath(const harness::Node& node,
                                 const std::string& data_dir) const {
  if (IsRemote(node)) return LazyDir(data_dir) + "/lazyfs.log";
  return (std::filesystem::path(ledger_.path()).parent_path() /
          ("lazyfs-" + node.name + ".log"))
      .string();
}

Status LazyfsNodes::Prepare(const std::vector<harness::Node>& nodes) {
  if (BinaryPath().empty())
    return Fail(
        "faultline-lazyfs not found (it is built next to faultline when "
        "libfuse3-dev is installed: scripts/install-deps.sh)");
  for (const auto& node : nodes)
    if (Status s = PrepareOne(node); !s.ok()) return s;
  return harness::Ok();
}

Status LazyfsNodes::PrepareOne(const harness::Node& node) {
  std::string binary = BinaryPath();
  if (IsRemote(node)) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = copies_.find(node.name);
    if (it != copies_.end()) binary = it->second;
  }
  if (IsRemote(node) && binary == BinaryPath()) {
    if (node_dir_.empty() || node_dir_.front() != '/')
      return Fail("faultline-lazyfs on " + node.name +
                  ": no run directory on the node to copy it to");
    const std::string copy =
        node_dir_ + "/lazyfs-" + node.name + "/faultline-lazyfs";
    if (Status up = harness::UploadExecutable(*node.remote, node.name, binary,
                                              copy, milliseconds(15000));
        !up.ok())
      return up;
    std::lock_guard<std::mutex> lock(mu_);
    copies_[node.name] = copy;
    binary = copy;
  }
  const std::string where = IsRemote(node) ? " on " + node.name : "";
  if (auto help = Run(node, {binary, "--help"}); !help.ok())
    return Fail("faultline-lazyfs cannot run" + where + ": " +
                harness::DescribeResult(help));
  if (!Run(node, {"test", "-c", "/dev/fuse"}).ok())
    return Fail(node.name +
                " has no /dev/fuse, which the disk faults' file system needs "
                "(a container needs --device /dev/fuse --cap-add SYS_ADMIN; "
                "a host needs the fuse module)");
  if (!Run(node, {"sh", "-c", "command -v umount || command -v fusermount3"})
           .ok())
    return Fail(node.name +
                " has neither umount nor fusermount3 (Debian: "
                "mount, fuse3)");
  return harness::Ok();
}

Status LazyfsNodes::Mount(const harness::Node& node,
                          const std::string& data_dir) {
  if (data_dir.empty() || data_dir.front() != '/')
    return Fail("lazy file system on " + node.name +
                ": the data directory must be absolute, got '" + data_dir +
                "'");
  if (Status s = PrepareOne(node); !s.ok()) return s;
  std::string binary = BinaryPath();
  if (IsRemote(node)) {
    std::lock_guard<std::mutex> lock(mu_);
    binary = copies_[node.name];
  }
  const std::string lazy = LazyDir(data_dir);
  const std::string backing = lazy + "/backing";
  const std::string trash = lazy + "/trash";
  const std::string sock = ControlSocket(data_dir);
  auto step = [&](const std::vector<std::string>& argv) -> Status {
    auto r = Run(node, argv);
    if (r.ok()) return harness::Ok();
    return Fail("lazy file system on " + node.name + ": " + argv[0] + " " +
                argv.back() + ": " + harness::DescribeResult(r));
  };
  // The data directory's files become the backing's: durable at mount time.
  if (Status s = step({"mkdir", "-p", data_dir, trash}); !s.ok()) return s;
  if (Status s = step({"mv", "-T", data_dir, backing}); !s.ok()) return s;
  if (Status s = step({"mkdir", data_dir}); !s.ok()) return s;

  MountState m;
  m.node = node;
  m.data_dir = data_dir;
  m.binary = binary;
  harness::LedgerEntry me;
  me.kind = "mount";
  me.name = data_dir;
  me.node = node.name;
  if (IsRemote(node)) me.remote = node.remote->Descriptor();
  m.mount_seq = ledger_.Record(me);
  if (m.mount_seq < 0)
    return Fail("cannot write the fault ledger " + ledger_.path());

  std::vector<std::string> argv = {binary,      "mount",       "--backing",
                                   backing,     "--trash",     trash,
                                   "--control", sock,          "--mount",
                                   data_dir,    "--namespace", namespace_mode_};
  if (writeback_ms_ > 0) {
    argv.push_back("--writeback-ms");
    argv.push_back(std::to_string(writeback_ms_));
  }
  argv.push_back("--log");
  argv.push_back(LogPath(node, data_dir));
  harness::LedgerEntry proc;
  proc.kind = "process";
  proc.node = node.name;
  if (IsRemote(node)) {
    auto pid = node.remote->Start(argv, LogPath(node, data_dir), {});
    if (!pid.ok()) return Fail("starting faultline-lazyfs: " + pid.error());
    m.pid = *pid;
    auto st = harness::RemoteProcessStartTime(*node.remote, *pid);
    proc.start_time = st.ok() ? *st : 0;
    proc.remote = node.remote->Descriptor();
  } else {
    harness::SpawnOptions so;
    so.log_path = LogPath(node, data_dir);
    auto pid = harness::Spawn(argv, so);
    if (!pid.ok()) return Fail("starting faultline-lazyfs: " + pid.error());
    m.pid = *pid;
    proc.start_time = harness::ProcessStartTime(*pid).value_or(0);
  }
  proc.pid = m.pid;
  m.proc_seq = ledger_.Record(proc);
  {
    std::lock_guard<std::mutex> lock(mu_);
    mounts_[node.name] = m;
  }
  if (m.proc_seq < 0)
    return Fail("cannot write the fault ledger " + ledger_.path());

  const auto deadline = std::chrono::steady_clock::now() + kReadyLimit;
  for (;;) {
    auto r = Run(node, CtlArgv(binary, data_dir, "status"), 5000);
    if (r.ok()) return harness::Ok();
    const bool alive = IsRemote(node) ? node.remote->Alive(m.pid)
                                      : harness::ProcessAlive(m.pid);
    std::string why = Trim(r.err.empty() ? r.out : r.err);
    if (!alive || std::chrono::steady_clock::now() > deadline) {
      auto tail = Run(node, {"tail", "-n", "3", LogPath(node, data_dir)});
      return Fail(
          "faultline-lazyfs on " + node.name +
          (alive ? " did not answer within 10 s" : " exited") + ": " +
          (tail.ok() && !Trim(tail.out).empty() ? Trim(tail.out) : why));
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

bool LazyfsNodes::Mounted(const std::string& node_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return mounts_.count(node_name) != 0;
}

harness::Result<checkers::Value> LazyfsNodes::Control(
    const harness::Node& node, const std::string& command) {
  MountState m;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = mounts_.find(node.name);
    if (it == mounts_.end())
      return Fail("no lazy file system is mounted on " + node.name);
    m = it->second;
  }
  auto r = Run(node, CtlArgv(m.binary, m.data_dir, command), 60000);
  const std::string line = Trim(r.out);
  checkers::Value answer;
  std::string error;
  if (line.empty() || !checkers::ParseJson(line, answer, &error) ||
      !answer.is_object())
    return Fail("lazy file system on " + node.name + ": `" + command +
                "`: " + harness::DescribeResult(r));
  const checkers::Value* ok = answer.Find("ok");
  if (ok == nullptr || ok->kind() != checkers::Value::Kind::kBool ||
      !ok->as_bool()) {
    const checkers::Value* e = answer.Find("error");
    return Fail("lazy file system on " + node.name + ": `" + command + "`: " +
                (e != nullptr && e->is_string() ? e->as_string() : line));
  }
  return answer;
}

Status LazyfsNodes::StopOne(MountState& m, const std::string& keep_dir) {
  const harness::Node& node = m.node;
  const bool remote = IsRemote(node);
  std::string problems;
  // The processes stopped: everything they wrote goes to the backing, so a
  // kept disk shows the files as the system left them (the daemon would
  // otherwise crash its cache on exit, as `drop` does).
  if (m.pid > 0 && !keep_dir.empty()) {
    auto synced = Run(node, CtlArgv(m.binary, m.data_dir, "sync"), 60000);
    if (!synced.ok())
      problems +=
          " sync before keeping: " + harness::DescribeResult(synced) + ";";
  }
  if (m.pid > 0) {
    if (remote) {
      (void)node.remote->Signal(m.pid, SIGTERM);
      auto deadline = std::chrono::steady_clock::now() + kStopLimit;
      while (node.remote->Alive(m.pid) &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(milliseconds(20));
      if (node.remote->Alive(m.pid)) (void)node.remote->Signal(m.pid, SIGKILL);
      (void)node.remote->Download(
          LogPath(node, m.data_dir),
          (std::filesystem::path(ledger_.path()).parent_path() /
           ("lazyfs-" + node.name + ".log"))
              .string());
    } else if (!harness::TerminateProcess(m.pid, SIGTERM, kStopLimit)) {
      problems +=
          " faultline-lazyfs pid " + std::to_string(m.pid) + " did not exit;";
    }
  }
  // Whatever the daemon left (it died, or the kernel kept a busy mount).
  auto mounts = Run(node, {"cat", "/proc/self/mounts"});
  if (!mounts.ok()) {
    problems +=
        " cannot read the mounts: " + harness::DescribeResult(mounts) + ";";
  } else if (Status u = harness::UnmountLazyfs(
                 [&](const std::vector<std::string>& argv) {
                   return Run(node, argv);
                 },
                 mounts.out, m.data_dir, " on " + node.name, nullptr);
             !u.ok()) {
    problems += " " + u.error() + ";";
  }
  if (problems.empty()) {
    if (m.proc_seq > 0) ledger_.MarkHealed(m.proc_seq);
    if (m.mount_seq > 0) ledger_.MarkHealed(m.mount_seq);
  }
  if (!keep_dir.empty()) {
    const std::string backing = LazyDir(m.data_dir) + "/backing";
    const std::string to = keep_dir + "/" + node.name;
    std::error_code ec;
    std::filesystem::create_directories(keep_dir, ec);
    if (!remote) {
      std::filesystem::copy(backing, to,
                            std::filesystem::copy_options::recursive |
                                std::filesystem::copy_options::copy_symlinks,
                            ec);
      if (ec) problems += " keeping " + backing + ": " + ec.message() + ";";
    } else {
      const std::string tar = LazyDir(m.data_dir) + "/backing.tar";
      auto t =
          Run(node, {"tar", "-C", LazyDir(m.data_dir), "-cf", tar, "backing"},
              120000);
      Status d = t.ok() ? node.remote->Download(tar, to + ".tar")
                        : Fail(harness::DescribeResult(t));
      if (!d.ok()) problems += " keeping " + backing + ": " + d.error() + ";";
    }
  }
  m.pid = 0;
  if (!problems.empty() && problems.back() == ';') problems.pop_back();
  if (!problems.empty())
    return Fail("lazy file system on " + node.name + ":" + problems);
  return harness::Ok();
}

Status LazyfsNodes::UnmountAll(const std::string& keep_dir) {
  std::map<std::string, MountState> mounts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    mounts.swap(mounts_);
  }
  std::string problems;
  for (auto& [name, m] : mounts)
    if (Status s = StopOne(m, keep_dir); !s.ok())
      problems += (problems.empty() ? "" : "; ") + s.error();
  if (!problems.empty()) return Fail(problems);
  return harness::Ok();
}

}  // namespace faultline::nemesis::disk

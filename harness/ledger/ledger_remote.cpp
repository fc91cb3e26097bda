#include "harness/ledger/ledger_remote.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "harness/clock/clock.h"
#include "harness/cluster/remote_factory.h"
#include "harness/ledger/ledger_mount.h"
#include "harness/ledger/ledger_names.h"
#include "harness/process/process.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

void Log(std::vector<std::string>* log, std::string line) {
  if (log) log->push_back(std::move(line));
}

std::string Where(const LedgerEntry& e) {
  std::string s = e.remote.kind + " " + e.remote.host;
  if (!e.node.empty()) s += " (" + e.node + ")";
  return s;
}

// The pid's start time on the node: a value, 0 when the process is gone (a
// zombie counts as gone: it holds nothing and cannot be signalled), or an
// error when the node could not be asked.
Result<unsigned long long> StartTimeOnNode(Remote& remote, pid_t pid) {
  CommandOptions options;
  options.timeout = std::chrono::milliseconds(10000);
  auto r =
      remote.Run({"cat", "/proc/" + std::to_string(pid) + "/stat"}, options);
  if (!r.error.empty()) return Fail(r.error);
  if (!r.ok()) return 0ULL;  // no such process
  if (auto close = r.out.rfind(')'); close != std::string::npos &&
                                     close + 2 < r.out.size() &&
                                     r.out[close + 2] == 'Z')
    return 0ULL;
  auto st = ParseStatStartTime(r.out);
  if (!st) return Fail("pid " + std::to_string(pid) + ": " + st.error());
  return *st;
}

// rm -rf of the entry's path on the node.
Status RemoveOnNode(const LedgerEntry& e, Remote& remote,
                    std::vector<std::string>* log) {
  auto r = remote.Run({"rm", "-rf", "--", e.name});
  if (!r.ok())
    return Fail("rm -rf " + e.name + " on " + Where(e) + ": " +
                DescribeResult(r));
  Log(log, "rm -r " + e.name + " on " + Where(e));
  return Ok();
}

// The path without its last component.
std::string Parent(const std::string& p) {
  std::string s = p;
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  auto slash = s.rfind('/');
  return slash == std::string::npos ? "" : s.substr(0, slash);
}

}  // namespace

Result<Remote*> RemoteCache::Get(const RemoteDescriptor& d) {
  const std::string key = RemoteDescriptorToJson(d);
  if (auto it = open_.find(key); it != open_.end()) return it->second.get();
  if (auto it = failed_.find(key); it != failed_.end()) return Fail(it->second);
  auto remote = OpenRemote(d);
  if (!remote) {
    failed_[key] = remote.error();
    return Fail(remote.error());
  }
  Remote* raw = remote->get();
  open_[key] = std::move(*remote);
  return raw;
}

Status UndoRemoteLedgerEntry(const LedgerEntry& e, RemoteCache& remotes,
                             std::vector<std::string>* log) {
  if (e.kind == "healed" || e.kind == "closed") return Ok();
  auto opened = remotes.Get(e.remote);
  if (!opened)
    return Fail("cannot reach " + Where(e) + " to undo " + e.kind + ": " +
                opened.error());
  Remote& remote = **opened;
  if (e.kind == "stop" || e.kind == "process") {
    const bool is_stop = e.kind == "stop";
    const std::string pid = "pid " + std::to_string(e.pid) + " on " + Where(e);
    if (e.pid <= 0) return Ok();
    auto st = StartTimeOnNode(remote, e.pid);
    if (!st) return Fail(pid + ": " + st.error());
    if (*st == 0 || *st != e.start_time) {
      Log(log, pid + " gone or reused; nothing to " +
                   (is_stop ? "continue" : "kill"));
      return Ok();
    }
    Status sent = remote.Signal(e.pid, is_stop ? SIGCONT : SIGKILL);
    if (!sent) {
      // Gone between the check and the signal: nothing left to undo.
      auto again = StartTimeOnNode(remote, e.pid);
      if (again.ok() && *again != e.start_time) {
        Log(log,
            pid + " exited; nothing to " + (is_stop ? "continue" : "kill"));
        return Ok();
      }
      return Fail((is_stop ? "SIGCONT " : "SIGKILL ") + pid + ": " +
                  sent.error());
    }
    Log(log, (is_stop ? "SIGCONT " : "SIGKILL ") + pid);
    if (is_stop) return Ok();
    const auto deadline = Clock::now() + std::chrono::milliseconds(5000);
    while (remote.Alive(e.pid)) {
      if (Clock::now() >= deadline) return Fail(pid + " survived SIGKILL");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Ok();
  }
  if (e.kind == "iptables") {
    // Only the fault's own chain and the rules that jump to it or carry its
    // comment: the node's other rules and chains stay.
    return HealIptablesTag(
        [&](const std::vector<std::string>& args) {
          std::vector<std::string> argv = {"iptables"};
          argv.insert(argv.end(), args.begin(), args.end());
          CommandOptions options;
          options.timeout = std::chrono::milliseconds(15000);
          return remote.Run(argv, options);
        },
        e.name, Where(e), log);
  }
  // The names were checked (RefusalReason): faultline-* paths only.
  if (e.kind == "faketime") return RemoveOnNode(e, remote, log);
  if (e.kind == "dir") {
    if (Status s = RemoveOnNode(e, remote, log); !s) return s;
    // The run's processes are gone (dir is undone last): what libfaketime
    // left in the node's /dev/shm for those that were SIGKILLed (a clock
    // fault's run, whose ClockControl records nothing on the controller).
    if (Status s = RemoveStaleFaketimeShmOn(remote); !s)
      return Fail(Where(e) + ": " + s.error());
    return Ok();
  }
  if (e.kind == "sysclock") {
    // The system clock fault's state file, beside the tool that reads it
    // (nemesis/clock/sysclock_tool.h); `reset` is idempotent.
    const std::string dir = Parent(e.name);
    if (!remote.Run({"test", "-e", e.name}).ok()) {
      Log(log, "clock on " + Where(e) + " already at its baseline");
      return Ok();
    }
    auto r = remote.Run({dir + "/faultline-clock", "reset", "--state", e.name});
    if (!r.ok())
      return Fail("faultline-clock reset on " + Where(e) + ": " +
                  DescribeResult(r));
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    Log(log, "clock reset on " + Where(e) + " (" + out + ")");
    return Ok();
  }
  if (e.kind == "disk") {
    Log(log, "disk fault " + e.name + " on " + Where(e) +
                 ": ends with its file system (the mount entry)");
    return Ok();
  }
  if (e.kind == "mount") {
    // Only a faultline-lazyfs mount at exactly that path (ledger_mount.h).
    CommandOptions options;
    options.timeout = std::chrono::milliseconds(15000);
    auto mounts = remote.Run({"cat", "/proc/self/mounts"}, options);
    if (!mounts.ok())
      return Fail("cannot read the mounts of " + Where(e) + ": " +
                  DescribeResult(mounts));
    return UnmountLazyfs(
        [&](const std::vector<std::string>& argv) {
          return remote.Run(argv, options);
        },
        mounts.out, e.name, " on " + Where(e), log);
  }
  Log(log, "ledger entry kind '" + e.kind + "' (seq " + std::to_string(e.seq) +
               ") has no undo on " + Where(e) + "; skipped");
  return Ok();
}

}  // namespace faultline::harness

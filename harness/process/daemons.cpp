#include "harness/process/daemons.h"

#include <signal.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "harness/cluster/remote_factory.h"
#include "harness/ledger/ledger.h"
#include "harness/process/process.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

// How long a SIGKILLed process may take to disappear from the process table.
constexpr auto kKillWait = std::chrono::milliseconds(5000);

// Liveness through the node's Remote (the local process table for netns
// and local nodes, /proc/<pid>/stat read over SSH).
bool Exited(Remote* remote, pid_t pid) {
  return remote != nullptr ? !remote->Alive(pid) : !ProcessAlive(pid);
}

// A process on a node: pids of different hosts may be equal.
struct Proc {
  Remote* remote = nullptr;
  pid_t pid = 0;
  bool operator==(const Proc&) const = default;
};

// Waits until every process is gone (ProcessAlive reaps our children), at
// most `limit`. Returns the processes still alive.
std::vector<Proc> AwaitGone(std::vector<Proc> pids,
                            std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    std::erase_if(pids, [](const Proc& p) { return Exited(p.remote, p.pid); });
    if (pids.empty() || Clock::now() >= deadline) return pids;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

Daemons::Daemons(std::string owner, Ledger* ledger)
    : owner_(std::move(owner)), ledger_(ledger) {}

Status Daemons::Reset(const std::vector<Node>& nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Slot& s : slots_) {
    if (s.pid != 0 && !Exited(s.remote, s.pid)) {
      return Fail(owner_ + ": " + s.daemon + " on " + s.node +
                  " is still running");
    }
  }
  for (const Node& node : nodes) {
    if (node.remote == nullptr) {
      return Fail(owner_ + ": node " + node.name + " has no remote");
    }
    if (node.name.empty() || node.name.find('/') != std::string::npos) {
      return Fail(owner_ + ": bad node name '" + node.name + "'");
    }
  }
  nodes_ = nodes;
  slots_.clear();
  return Ok();
}

std::vector<Node> Daemons::nodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return nodes_;
}

const Node* Daemons::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Node& n : nodes_) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

int Daemons::IndexOf(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Daemons::Slot* Daemons::FindLocked(const std::string& node,
                                   const std::string& daemon) {
  for (Slot& s : slots_) {
    if (s.node == node && s.daemon == daemon) return &s;
  }
  return nullptr;
}

const Daemons::Slot* Daemons::FindLocked(const std::string& node,
                                         const std::string& daemon) const {
  for (const Slot& s : slots_) {
    if (s.node == node && s.daemon == daemon) return &s;
  }
  return nullptr;
}

Daemons::Slot& Daemons::SlotLocked(const Node& node,
                                   const std::string& daemon) {
  if (Slot* s = FindLocked(node.name, daemon)) return *s;
  Slot s;
  s.node = node.name;
  s.daemon = daemon;
  for (const Node& n : nodes_) {
    if (n.name == node.name) s.remote = n.remote;
  }
  slots_.push_back(std::move(s));
  return slots_.back();
}

std::string Daemons::Where(const Node& node, const std::string& daemon) const {
  return daemon + " on " + node.name;
}

void Daemons::ReapLocked(Slot& s) {
  if (s.paused && s.stop_seq != 0 && ledger_ != nullptr) {
    ledger_->MarkHealed(s.stop_seq);  // the stopped process is gone
  }
  if (s.process_seq != 0 && ledger_ != nullptr) {
    ledger_->MarkHealed(s.process_seq);  // the remote process is gone
  }
  s.pid = 0;
  s.paused = false;
  s.stop_seq = 0;
  s.process_seq = 0;
}

Result<long> Daemons::RecordRemoteLocked(const Slot& s, const char* kind) {
  if (ledger_ == nullptr || s.remote->SharesControllerPids()) return 0L;
  RemoteDescriptor where = s.remote->Descriptor();
  if (where.empty()) return 0L;  // a Remote heal cannot reach again
  auto start_time = RemoteProcessStartTime(*s.remote, s.pid);
  if (!start_time) return Fail(start_time.error());
  LedgerEntry entry;
  entry.kind = kind;
  entry.node = s.node;
  entry.pid = s.pid;
  entry.start_time = *start_time;
  entry.remote = std::move(where);
  long seq = ledger_->Record(entry);
  if (seq < 0) return Fail("cannot record it in the fault ledger");
  return seq;
}

Status Daemons::Start(const Node& node, const std::string& daemon,
                      const std::vector<std::string>& argv,
                      const std::string& log_path,
                      const std::vector<std::string>& env) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& s = SlotLocked(node, daemon);
  if (s.remote == nullptr) return Fail(owner_ + ": unknown node " + node.name);
  if (s.pid != 0 && !Exited(s.remote, s.pid)) return Ok();
  ReapLocked(s);
  auto pid = s.remote->Start(argv, log_path, env);
  if (!pid) {
    return Fail(owner_ + ": start " + Where(node, daemon) + ": " + pid.error());
  }
  s.pid = *pid;
  s.ever_started = true;
  // A process on a node with its own pids: recorded with the node's start
  // time so `faultline heal` can kill it there (the netns Remote records
  // its own processes).
  auto seq = RecordRemoteLocked(s, "process");
  if (!seq) {
    return Fail(owner_ + ": start " + Where(node, daemon) + ": " + seq.error());
  }
  s.process_seq = *seq;
  return Ok();
}

Status Daemons::Kill(const Node& node, const std::string& daemon) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = FindLocked(node.name, daemon);
  if (s == nullptr || s->pid == 0 || Exited(s->remote, s->pid)) {
    if (s != nullptr) ReapLocked(*s);
    return Ok();
  }
  auto sent = s->remote->Signal(s->pid, SIGKILL);
  if (!sent && !Exited(s->remote, s->pid)) {
    return Fail(owner_ + ": kill " + Where(node, daemon) + ": " + sent.error());
  }
  if (!AwaitGone({Proc{s->remote, s->pid}}, kKillWait).empty()) {
    return Fail(owner_ + ": " + Where(node, daemon) + " (pid " +
                std::to_string(s->pid) + ") survived SIGKILL");
  }
  ReapLocked(*s);
  return Ok();
}

Status Daemons::Pause(const Node& node, const std::string& daemon) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = FindLocked(node.name, daemon);
  if (s == nullptr || s->pid == 0 || Exited(s->remote, s->pid)) {
    return Fail(owner_ + ": pause " + Where(node, daemon) + ": not running");
  }
  if (s->paused) return Ok();
  long seq = 0;
  // A `stop` entry names the pid and its start time: from the controller's
  // process table (local, netns) or read on the node, with the Remote's
  // descriptor (SSH), so `faultline heal` resumes it after a crash.
  if (ledger_ != nullptr && s->remote->SharesControllerPids()) {
    auto start_time = ProcessStartTime(s->pid);
    if (!start_time) {
      return Fail(owner_ + ": pause " + Where(node, daemon) + ": process gone");
    }
    LedgerEntry entry;
    entry.kind = "stop";
    entry.node = node.name;
    entry.pid = s->pid;
    entry.start_time = *start_time;
    seq = ledger_->Record(entry);
    if (seq < 0) {
      return Fail(owner_ + ": pause " + Where(node, daemon) +
                  ": cannot record the stop in the fault ledger");
    }
  } else {
    auto recorded = RecordRemoteLocked(*s, "stop");
    if (!recorded) {
      return Fail(owner_ + ": pause " + Where(node, daemon) + ": " +
                  recorded.error());
    }
    seq = *recorded;
  }
  auto sent = s->remote->Signal(s->pid, SIGSTOP);
  if (!sent) {
    if (ledger_ != nullptr && seq != 0) ledger_->MarkHealed(seq);
    return Fail(owner_ + ": pause " + Where(node, daemon) + ": " +
                sent.error());
  }
  s->paused = true;
  s->stop_seq = seq;
  return Ok();
}

Status Daemons::Resume(const Node& node, const std::string& daemon) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = FindLocked(node.name, daemon);
  if (s == nullptr || !s->paused) return Ok();
  if (s->pid == 0 || Exited(s->remote, s->pid)) {
    ReapLocked(*s);
    return Ok();
  }
  auto sent = s->remote->Signal(s->pid, SIGCONT);
  if (!sent) {
    return Fail(owner_ + ": resume " + Where(node, daemon) + ": " +
                sent.error());
  }
  if (ledger_ != nullptr && s->stop_seq != 0) ledger_->MarkHealed(s->stop_seq);
  s->paused = false;
  s->stop_seq = 0;
  return Ok();
}

pid_t Daemons::Pid(const Node& node, const std::string& daemon) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = FindLocked(node.name, daemon);
  if (s == nullptr) return 0;
  if (s->pid != 0 && Exited(s->remote, s->pid)) ReapLocked(*s);
  return s->pid;
}

bool Daemons::Paused(const Node& node, const std::string& daemon) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot* s = FindLocked(node.name, daemon);
  if (s == nullptr) return false;
  if (s->pid != 0 && Exited(s->remote, s->pid)) ReapLocked(*s);
  return s->paused;
}

bool Daemons::EverStarted(const Node& node, const std::string& daemon) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Slot* s = FindLocked(node.name, daemon);
  return s != nullptr && s->ever_started;
}

std::vector<Node> Daemons::RunningNodes(const std::string& daemon) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Node> out;
  for (const Node& n : nodes_) {
    Slot* s = FindLocked(n.name, daemon);
    if (s == nullptr) continue;
    if (s->pid != 0 && Exited(s->remote, s->pid)) ReapLocked(*s);
    if (s->pid != 0) out.push_back(n);
  }
  return out;
}

Status Daemons::StopAll(std::chrono::milliseconds grace) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Proc> pids;
  for (Slot& s : slots_) {
    if (s.pid == 0 || Exited(s.remote, s.pid)) {
      ReapLocked(s);
      continue;
    }
    if (s.paused) {
      (void)s.remote->Signal(s.pid, SIGCONT);
      if (ledger_ != nullptr && s.stop_seq != 0)
        ledger_->MarkHealed(s.stop_seq);
      s.paused = false;
      s.stop_seq = 0;
    }
    (void)s.remote->Signal(s.pid, SIGTERM);
    pids.push_back(Proc{s.remote, s.pid});
  }
  std::vector<Proc> stuck = AwaitGone(pids, grace);
  for (Slot& s : slots_) {
    if (std::find(stuck.begin(), stuck.end(), Proc{s.remote, s.pid}) !=
        stuck.end()) {
      (void)s.remote->Signal(s.pid, SIGKILL);
    }
  }
  stuck = AwaitGone(stuck, kKillWait);
  std::string problems;
  for (Slot& s : slots_) {
    if (s.pid == 0) continue;
    if (std::find(stuck.begin(), stuck.end(), Proc{s.remote, s.pid}) !=
        stuck.end()) {
      problems += " " + s.daemon + " on " + s.node + " (pid " +
                  std::to_string(s.pid) + ") would not die;";
    } else {
      ReapLocked(s);
    }
  }
  if (!problems.empty()) return Fail(owner_ + ": stop:" + problems);
  return Ok();
}

std::string Daemons::CollectAndClean(
    const std::string& log_dir,
    const std::function<std::string(const Node&)>& dir_of,
    const std::vector<DaemonFiles>& logs,
    const std::vector<std::string>& remove) {
  std::string problems;
  for (const Node& node : nodes()) {
    const std::string dir = dir_of(node);
    for (const auto& [daemon, files] : logs) {
      if (log_dir.empty() || !EverStarted(node, daemon)) continue;
      for (const std::string& file : files) {
        auto copied = node.remote->Download(
            dir + "/" + file, log_dir + "/" + node.name + "/" + file);
        if (!copied) problems += " " + copied.error() + ";";
      }
    }
    if (remove.empty()) continue;
    std::vector<std::string> argv = {"rm", "-rf"};
    std::string paths;
    for (const std::string& path : remove) {
      argv.push_back(dir + "/" + path);
      paths += (paths.empty() ? "" : " ") + argv.back();
    }
    auto rm = node.remote->Run(argv);
    if (!rm.ok()) problems += " cannot remove " + paths + ": " + rm.err + ";";
  }
  return problems;
}

}  // namespace faultline::harness

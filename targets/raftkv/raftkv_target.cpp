#include "targets/raftkv/raftkv_target.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include "harness/ledger.h"
#include "harness/process.h"
#include "targets/raftkv/raftkv_client.h"
#include "targets/raftkv/resp_conn.h"

#ifndef FAULTLINE_VERSION
#define FAULTLINE_VERSION "0.1.0"  // keep in step with project() in CMake
#endif

namespace faultline::targets::raftkv {
namespace {

using Clock = std::chrono::steady_clock;
using harness::Fail;
using harness::Node;
using harness::NodeStatus;
using harness::Ok;
using harness::Result;

constexpr auto kStatusTimeout = std::chrono::milliseconds(500);
// raftkv answers pending requests -SHUTDOWN and exits at once on SIGTERM;
// the grace only covers an fsync in progress.
constexpr auto kTermGrace = std::chrono::milliseconds(2000);
constexpr auto kKillWait = std::chrono::milliseconds(5000);
constexpr auto kPollInterval = std::chrono::milliseconds(50);

bool Exited(pid_t pid) { return !harness::ProcessAlive(pid); }

// Waits until every pid is gone (reaping our children), at most `limit`.
// Returns the pids still alive.
std::vector<pid_t> AwaitGone(std::vector<pid_t> pids,
                             std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    std::erase_if(pids, [](pid_t p) { return Exited(p); });
    if (pids.empty() || Clock::now() >= deadline) return pids;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

std::string NormalizeRole(const std::string& role) {
  if (role == "leader" || role == "follower" || role == "candidate") {
    return role;
  }
  if (role == "precandidate" || role == "pre-candidate" ||
      role == "pre_candidate") {
    return "candidate";
  }
  return "";
}

long long ToInt(const std::string& s, long long fallback) {
  try {
    std::size_t used = 0;
    long long v = std::stoll(s, &used);
    return used == s.size() ? v : fallback;
  } catch (...) {
    return fallback;
  }
}

}  // namespace

RaftkvTarget::RaftkvTarget(const harness::RaftkvSpec& spec,
                           const harness::WorkloadSpec& workload,
                           harness::Ledger* ledger, std::string work_dir,
                           std::string binary)
    : spec_(spec),
      workload_(workload),
      ledger_(ledger),
      work_dir_(AbsolutePath(work_dir)),
      binary_(binary.empty() ? spec.binary : std::move(binary)) {}

RaftkvTarget::~RaftkvTarget() = default;

std::string RaftkvTarget::version() {
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  auto result = harness::RunCommand({binary_, "--version"}, options);
  if (result.ok()) {
    std::string line = result.out.substr(0, result.out.find('\n'));
    if (line.rfind("raftkv ", 0) == 0) return line;
  }
  return std::string("raftkv ") + FAULTLINE_VERSION;
}

std::string RaftkvTarget::NodeDir(const Node& node) const {
  return work_dir_ + "/" + node.name;
}

std::string RaftkvTarget::Peers() const {
  std::string out;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (!out.empty()) out += ",";
    out += std::to_string(i + 1) + "=" + members_[i].node.ip + ":" +
           std::to_string(kPeerPort) + "/" + std::to_string(kClientPort);
  }
  return out;
}

std::vector<std::string> RaftkvTarget::CommandLine(const Node& node) const {
  std::size_t index = 0;
  for (; index < members_.size(); ++index) {
    if (members_[index].node.name == node.name) break;
  }
  const std::string dir = NodeDir(node);
  // clang-format off
  std::vector<std::string> argv = {
      binary_,
      "--id", std::to_string(index + 1),
      "--peers", Peers(),
      "--listen", node.ip + ":" + std::to_string(kClientPort),
      "--data-dir", dir + "/data",
      "--read-mode", spec_.read_mode,
      "--heartbeat-ms", std::to_string(spec_.heartbeat_ms),
      "--election-ms", std::to_string(spec_.election_timeout_ms),
      "--follower-lease-ms", std::to_string(spec_.follower_lease_ms),
      "--snapshot-entries", std::to_string(spec_.snapshot_entries),
      "--unsafe", spec_.unsafe};
  // clang-format on
  if (!spec_.pre_vote) argv.push_back("--no-pre-vote");
  if (!spec_.check_quorum) argv.push_back("--no-check-quorum");
  argv.insert(argv.end(), spec_.extra_args.begin(), spec_.extra_args.end());
  return argv;
}

harness::Status RaftkvTarget::Setup(harness::Cluster& cluster) {
  if (work_dir_.empty() || work_dir_.front() != '/') {
    return Fail("raftkv: work dir must be an absolute path, got '" + work_dir_ +
                "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& m : members_) {
    if (m.pid != 0 && !Exited(m.pid)) {
      return Fail("raftkv: Setup while member " + m.node.name + " is running");
    }
  }
  const auto& nodes = cluster.nodes();
  if (nodes.empty() || nodes.size() > 9) {
    return Fail("raftkv: needs 1 to 9 nodes, got " +
                std::to_string(nodes.size()));
  }
  members_.clear();
  for (const Node& node : nodes) {
    if (node.remote == nullptr) {
      return Fail("raftkv: node " + node.name + " has no remote");
    }
    if (node.name.empty() || node.name.find('/') != std::string::npos) {
      return Fail("raftkv: bad node name '" + node.name + "'");
    }
    Member m;
    m.node = node;
    members_.push_back(std::move(m));
  }
  for (const auto& m : members_) {
    const std::string dir = NodeDir(m.node);
    auto rm = m.node.remote->Run({"rm", "-rf", dir});
    auto mk = m.node.remote->Run({"mkdir", "-p", dir + "/data"});
    if (!rm.ok() || !mk.ok()) {
      return Fail("raftkv: cannot prepare " + dir + " on " + m.node.name +
                  ": " + rm.err + mk.err + rm.error + mk.error);
    }
  }
  return Ok();
}

RaftkvTarget::Member* RaftkvTarget::FindLocked(const std::string& name) {
  for (Member& m : members_) {
    if (m.node.name == name) return &m;
  }
  return nullptr;
}

void RaftkvTarget::ReapLocked(Member& m) {
  if (m.paused && m.stop_seq != 0 && ledger_ != nullptr) {
    ledger_->MarkHealed(m.stop_seq);  // the stopped process is gone
  }
  m.pid = 0;
  m.paused = false;
  m.stop_seq = 0;
}

harness::Status RaftkvTarget::Start(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindLocked(node.name);
  if (m == nullptr) return Fail("raftkv: unknown node " + node.name);
  if (m->pid != 0 && !Exited(m->pid)) return Ok();
  auto pid = m->node.remote->Start(CommandLine(m->node),
                                   NodeDir(m->node) + "/raftkv.log", {});
  if (!pid) return Fail("raftkv: start on " + node.name + ": " + pid.error());
  m->pid = *pid;
  m->ever_started = true;
  m->paused = false;
  m->stop_seq = 0;
  return Ok();
}

harness::Status RaftkvTarget::Kill(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindLocked(node.name);
  if (m == nullptr) return Fail("raftkv: unknown node " + node.name);
  if (m->pid == 0 || Exited(m->pid)) {
    ReapLocked(*m);
    return Ok();
  }
  auto sent = m->node.remote->Signal(m->pid, SIGKILL);
  if (!sent && !Exited(m->pid)) {
    return Fail("raftkv: kill " + node.name + ": " + sent.error());
  }
  if (!AwaitGone({m->pid}, kKillWait).empty()) {
    return Fail("raftkv: " + node.name + " (pid " + std::to_string(m->pid) +
                ") survived SIGKILL");
  }
  ReapLocked(*m);
  return Ok();
}

harness::Status RaftkvTarget::Pause(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindLocked(node.name);
  if (m == nullptr) return Fail("raftkv: unknown node " + node.name);
  if (m->pid == 0 || Exited(m->pid)) {
    return Fail("raftkv: pause " + node.name + ": not running");
  }
  if (m->paused) return Ok();
  long seq = 0;
  if (ledger_ != nullptr) {
    auto start_time = harness::ProcessStartTime(m->pid);
    if (!start_time) {
      return Fail("raftkv: pause " + node.name + ": process gone");
    }
    harness::LedgerEntry entry;
    entry.kind = "stop";
    entry.node = node.name;
    entry.pid = m->pid;
    entry.start_time = *start_time;
    seq = ledger_->Record(entry);
    if (seq < 0) {
      return Fail("raftkv: pause " + node.name +
                  ": cannot record the stop in the fault ledger");
    }
  }
  auto sent = m->node.remote->Signal(m->pid, SIGSTOP);
  if (!sent) {
    if (ledger_ != nullptr) ledger_->MarkHealed(seq);
    return Fail("raftkv: pause " + node.name + ": " + sent.error());
  }
  m->paused = true;
  m->stop_seq = seq;
  return Ok();
}

harness::Status RaftkvTarget::Resume(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindLocked(node.name);
  if (m == nullptr) return Fail("raftkv: unknown node " + node.name);
  if (!m->paused) return Ok();
  if (m->pid == 0 || Exited(m->pid)) {
    ReapLocked(*m);
    return Ok();
  }
  auto sent = m->node.remote->Signal(m->pid, SIGCONT);
  if (!sent) return Fail("raftkv: resume " + node.name + ": " + sent.error());
  if (ledger_ != nullptr && m->stop_seq != 0) ledger_->MarkHealed(m->stop_seq);
  m->paused = false;
  m->stop_seq = 0;
  return Ok();
}

bool RaftkvTarget::Running(const Node& node) { return Pid(node) != 0; }

pid_t RaftkvTarget::Pid(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindLocked(node.name);
  if (m == nullptr) return 0;
  if (m->pid != 0 && Exited(m->pid)) ReapLocked(*m);
  return m->pid;
}

std::string RaftkvTarget::IpOf(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* m = FindLocked(node.name);
  return m == nullptr ? "" : m->node.ip;
}

std::string RaftkvTarget::NameOfId(long long id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id < 1 || id > static_cast<long long>(members_.size())) return "";
  return members_[static_cast<std::size_t>(id - 1)].node.name;
}

NodeStatus RaftkvTarget::Inspect(const Node& node) {
  NodeStatus status;
  const std::string ip = IpOf(node);
  if (ip.empty()) return status;
  RespConn conn(ip, kClientPort);
  CallResult r = conn.Call({"STATUS"}, Clock::now() + kStatusTimeout);
  if (r.error != CallError::kNone || r.reply.kind != resp::Value::Kind::kBulk) {
    return status;
  }
  const auto fields = ParseStatusFields(r.reply.str);
  status.reachable = true;
  status.role = NormalizeRole(StatusField(fields, "role"));
  status.term = ToInt(StatusField(fields, "term"), -1);
  status.leader = NameOfId(ToInt(StatusField(fields, "leader"), 0));
  return status;
}

harness::Status RaftkvTarget::AwaitHealthy(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<Node> nodes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& m : members_) {
      if (m.pid != 0 && Exited(m.pid)) ReapLocked(m);
      if (m.pid != 0) nodes.push_back(m.node);
    }
  }
  if (nodes.empty()) return Fail("raftkv: no member is running");
  std::string problem;
  while (true) {
    problem.clear();
    std::string leader;
    std::string leader_role;
    for (const Node& node : nodes) {
      NodeStatus s = Inspect(node);
      if (!s.reachable) {
        problem = node.name + " unreachable";
      } else if (s.role.empty()) {
        problem = node.name + " reports no role";
      } else if (s.leader.empty()) {
        problem = node.name + " knows no leader";
      } else if (!leader.empty() && s.leader != leader) {
        problem = "members disagree on the leader";
      }
      if (!problem.empty()) break;
      leader = s.leader;
      if (node.name == leader) leader_role = s.role;
    }
    if (problem.empty() && leader_role != "leader") {
      // The named leader must be running and say so itself.
      bool asked = false;
      for (const Node& node : nodes) asked = asked || node.name == leader;
      if (!asked) {
        problem = "the leader " + leader + " is not running";
      } else {
        problem = leader + " does not report itself leader";
      }
    }
    if (problem.empty()) return Ok();
    if (Clock::now() + kPollInterval >= deadline) {
      return Fail("raftkv: not healthy after " +
                  std::to_string(timeout.count()) + " ms (" + problem + ")");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

harness::Status RaftkvTarget::Teardown(const std::string& log_dir) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string problems;
  std::vector<pid_t> pids;
  for (auto& m : members_) {
    if (m.pid == 0 || Exited(m.pid)) {
      ReapLocked(m);
      continue;
    }
    if (m.paused) {
      (void)m.node.remote->Signal(m.pid, SIGCONT);
      if (ledger_ != nullptr && m.stop_seq != 0) {
        ledger_->MarkHealed(m.stop_seq);
      }
      m.paused = false;
      m.stop_seq = 0;
    }
    (void)m.node.remote->Signal(m.pid, SIGTERM);
    pids.push_back(m.pid);
  }
  std::vector<pid_t> stuck = AwaitGone(pids, kTermGrace);
  for (auto& m : members_) {
    if (std::find(stuck.begin(), stuck.end(), m.pid) != stuck.end()) {
      (void)m.node.remote->Signal(m.pid, SIGKILL);
    }
  }
  stuck = AwaitGone(stuck, kKillWait);
  for (auto& m : members_) {
    if (m.pid == 0) continue;
    if (std::find(stuck.begin(), stuck.end(), m.pid) != stuck.end()) {
      problems += " " + m.node.name + " (pid " + std::to_string(m.pid) +
                  ") would not die;";
    } else {
      ReapLocked(m);
    }
  }
  for (auto& m : members_) {
    const std::string dir = NodeDir(m.node);
    if (!log_dir.empty() && m.ever_started) {
      auto copied = m.node.remote->Download(
          dir + "/raftkv.log", log_dir + "/" + m.node.name + "/raftkv.log");
      if (!copied) problems += " " + copied.error() + ";";
    }
    auto rm = m.node.remote->Run({"rm", "-rf", dir + "/data"});
    if (!rm.ok()) {
      problems += " cannot remove " + dir + "/data: " + rm.err + ";";
    }
  }
  if (!problems.empty()) return Fail("raftkv teardown:" + problems);
  return Ok();
}

Result<std::unique_ptr<harness::Client>> RaftkvTarget::OpenClient(
    const Node& node, const std::string& workload) {
  if (workload != "register" && workload != "lock") {
    return Fail("raftkv: no client for workload '" + workload +
                "' (supported: register, lock)");
  }
  const std::string ip = IpOf(node);
  if (ip.empty()) return Fail("raftkv: unknown node " + node.name);
  RaftkvClientOptions options;
  options.host = ip;
  options.port = kClientPort;
  options.op_timeout_ms = workload_.op_timeout_ms;
  options.lock_ttl_ms = workload_.ttl_ms;
  return std::unique_ptr<harness::Client>(
      std::make_unique<RaftkvClient>(std::move(options)));
}

}  // namespace faultline::targets::raftkv

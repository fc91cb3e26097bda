#include "targets/etcd/etcd_target.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

#include "harness/ledger.h"
#include "harness/process.h"
#include "targets/etcd/etcd_client.h"
#include "targets/etcd/gateway.h"
#include "targets/etcd/http.h"

namespace faultline::targets::etcd {
namespace {

using Clock = std::chrono::steady_clock;
using harness::Fail;
using harness::Node;
using harness::NodeStatus;
using harness::Ok;
using harness::Result;

constexpr long kStatusTimeoutMs = 500;
// SIGTERM grace at teardown. etcd often hangs in "leadership transfer" when
// all members stop at once, and a run discards the data anyway; zap writes
// its log unbuffered, so SIGKILL after a short grace loses nothing.
constexpr auto kTermGrace = std::chrono::milliseconds(500);
constexpr auto kKillWait = std::chrono::milliseconds(5000);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

// FNV-1a, so the cluster token is stable for a given work dir.
std::string HashHex(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string ClientUrl(const std::string& ip) {
  return "http://" + ip + ":2379";
}
std::string PeerUrl(const std::string& ip) { return "http://" + ip + ":2380"; }

// True once `pid` has completely exited (reaped when it is our child).
bool Exited(pid_t pid) { return !harness::ProcessAlive(pid); }

// Waits until every pid in `pids` is gone (reaping our children), at most
// `limit`. Returns the pids still alive.
std::vector<pid_t> AwaitGone(std::vector<pid_t> pids,
                             std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    pids.erase(std::remove_if(pids.begin(), pids.end(),
                              [](pid_t p) { return Exited(p); }),
               pids.end());
    if (pids.empty() || Clock::now() >= deadline) return pids;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The work dir as an absolute path (resolved on the controller, which shares
// its file system with local and netns nodes); "" stays "" (Setup rejects
// it).
std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

EtcdTarget::EtcdTarget(const harness::EtcdSpec& spec,
                       const harness::WorkloadSpec& workload,
                       harness::Ledger* ledger, std::string work_dir)
    : spec_(spec),
      workload_(workload),
      ledger_(ledger),
      work_dir_(AbsolutePath(work_dir)),
      token_("faultline-" + HashHex(work_dir_)) {}

EtcdTarget::~EtcdTarget() = default;

std::string EtcdTarget::version() {
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  auto result = harness::RunCommand({spec_.binary, "--version"}, options);
  if (!result.ok()) return "etcd (unknown version)";
  std::string line = result.out.substr(0, result.out.find('\n'));
  const std::string marker = "etcd Version: ";
  if (line.rfind(marker, 0) == 0) return "etcd " + line.substr(marker.size());
  return line.empty() ? "etcd (unknown version)" : line;
}

std::string EtcdTarget::NodeDir(const Node& node) const {
  return work_dir_ + "/" + node.name;
}

std::string EtcdTarget::InitialCluster() const {
  std::string out;
  for (const auto& m : members_) {
    if (!out.empty()) out += ",";
    out += m.node.name + "=" + PeerUrl(m.node.ip);
  }
  return out;
}

std::vector<std::string> EtcdTarget::CommandLine(const Node& node) const {
  const std::string dir = NodeDir(node);
  // clang-format off
  std::vector<std::string> argv = {
      spec_.binary,
      "--name", node.name,
      "--data-dir", dir + "/data",
      "--listen-client-urls", ClientUrl(node.ip),
      "--advertise-client-urls", ClientUrl(node.ip),
      "--listen-peer-urls", PeerUrl(node.ip),
      "--initial-advertise-peer-urls", PeerUrl(node.ip),
      "--initial-cluster", InitialCluster(),
      "--initial-cluster-state", "new",
      "--initial-cluster-token", token_,
      "--heartbeat-interval", std::to_string(spec_.heartbeat_ms),
      "--election-timeout", std::to_string(spec_.election_timeout_ms),
      std::string("--pre-vote=") + (spec_.pre_vote ? "true" : "false"),
      "--logger", "zap",
      "--log-outputs", "stderr"};
  // clang-format on
  argv.insert(argv.end(), spec_.extra_args.begin(), spec_.extra_args.end());
  return argv;
}

harness::Status EtcdTarget::Setup(harness::Cluster& cluster) {
  if (work_dir_.empty() || work_dir_.front() != '/') {
    return Fail("etcd: work dir must be an absolute path, got '" + work_dir_ +
                "'");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& m : members_) {
    if (m.pid != 0 && !Exited(m.pid)) {
      return Fail("etcd: Setup while member " + m.node.name + " is running");
    }
  }
  members_.clear();
  id_to_name_.clear();
  for (const Node& node : cluster.nodes()) {
    if (node.remote == nullptr)
      return Fail("etcd: node " + node.name + " has no remote");
    if (node.name.empty() || node.name.find('/') != std::string::npos) {
      return Fail("etcd: bad node name '" + node.name + "'");
    }
    Member m;
    m.node = node;
    members_.push_back(std::move(m));
  }
  for (const auto& m : members_) {
    const std::string dir = NodeDir(m.node);
    // etcd creates the data dir itself (it insists on mode 0700).
    auto rm = m.node.remote->Run({"rm", "-rf", dir});
    auto mk = m.node.remote->Run({"mkdir", "-p", dir});
    if (!rm.ok() || !mk.ok()) {
      return Fail("etcd: cannot prepare " + dir + " on " + m.node.name + ": " +
                  rm.err + mk.err + rm.error + mk.error);
    }
  }
  return Ok();
}

harness::Status EtcdTarget::Start(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* it = FindLocked(node);
  if (it == nullptr) return Fail("etcd: unknown node " + node.name);
  if (it->pid != 0 && !Exited(it->pid)) return Ok();
  auto pid = it->node.remote->Start(CommandLine(it->node),
                                    NodeDir(it->node) + "/etcd.log", {});
  if (!pid) return Fail("etcd: start on " + node.name + ": " + pid.error());
  it->pid = *pid;
  it->ever_started = true;
  it->paused = false;
  it->stop_seq = 0;
  return Ok();
}

EtcdTarget::Member* EtcdTarget::FindLocked(const Node& node) {
  for (Member& m : members_) {
    if (m.node.name == node.name) return &m;
  }
  return nullptr;
}

void EtcdTarget::ReapLocked(Member& m) {
  if (m.paused && m.stop_seq != 0 && ledger_ != nullptr) {
    ledger_->MarkHealed(m.stop_seq);  // the stopped process is gone
  }
  m.pid = 0;
  m.paused = false;
  m.stop_seq = 0;
}

harness::Status EtcdTarget::Kill(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* it = FindLocked(node);
  if (it == nullptr) return Fail("etcd: unknown node " + node.name);
  if (it->pid == 0 || Exited(it->pid)) {
    ReapLocked(*it);
    return Ok();
  }
  auto sent = it->node.remote->Signal(it->pid, SIGKILL);
  if (!sent && !Exited(it->pid)) {
    return Fail("etcd: kill " + node.name + ": " + sent.error());
  }
  if (!AwaitGone({it->pid}, kKillWait).empty()) {
    return Fail("etcd: " + node.name + " (pid " + std::to_string(it->pid) +
                ") survived SIGKILL");
  }
  ReapLocked(*it);
  return Ok();
}

harness::Status EtcdTarget::Pause(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* it = FindLocked(node);
  if (it == nullptr) return Fail("etcd: unknown node " + node.name);
  if (it->pid == 0 || Exited(it->pid)) {
    return Fail("etcd: pause " + node.name + ": not running");
  }
  if (it->paused) return Ok();
  long seq = 0;
  if (ledger_ != nullptr) {
    auto start_time = harness::ProcessStartTime(it->pid);
    if (!start_time) return Fail("etcd: pause " + node.name + ": process gone");
    harness::LedgerEntry entry;
    entry.kind = "stop";
    entry.node = node.name;
    entry.pid = it->pid;
    entry.start_time = *start_time;
    seq = ledger_->Record(entry);
    if (seq < 0) {
      return Fail("etcd: pause " + node.name +
                  ": cannot record the stop in the fault ledger");
    }
  }
  auto sent = it->node.remote->Signal(it->pid, SIGSTOP);
  if (!sent) {
    if (ledger_ != nullptr) ledger_->MarkHealed(seq);
    return Fail("etcd: pause " + node.name + ": " + sent.error());
  }
  it->paused = true;
  it->stop_seq = seq;
  return Ok();
}

harness::Status EtcdTarget::Resume(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  Member* it = FindLocked(node);
  if (it == nullptr) return Fail("etcd: unknown node " + node.name);
  if (!it->paused) return Ok();
  if (it->pid == 0 || Exited(it->pid)) {
    ReapLocked(*it);
    return Ok();
  }
  auto sent = it->node.remote->Signal(it->pid, SIGCONT);
  if (!sent) return Fail("etcd: resume " + node.name + ": " + sent.error());
  if (ledger_ != nullptr && it->stop_seq != 0)
    ledger_->MarkHealed(it->stop_seq);
  it->paused = false;
  it->stop_seq = 0;
  return Ok();
}

bool EtcdTarget::Running(const Node& node) { return Pid(node) != 0; }

pid_t EtcdTarget::Pid(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& m : members_) {
    if (m.node.name != node.name) continue;
    if (m.pid != 0 && Exited(m.pid)) ReapLocked(m);
    return m.pid;
  }
  return 0;
}

std::string EtcdTarget::MemberName(std::uint64_t id, const std::string& ip) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = id_to_name_.find(id);
    if (it != id_to_name_.end()) return it->second;
  }
  HttpSession http;
  auto reply = http.Post(ClientUrl(ip) + "/v3/cluster/member/list", "{}",
                         kStatusTimeoutMs);
  if (reply.transport != Transport::kOk || reply.status != 200) return "";
  auto members = ParseMemberList(reply.body);
  if (!members) return "";
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& m : *members) {
    if (!m.name.empty()) id_to_name_[m.id] = m.name;
  }
  auto it = id_to_name_.find(id);
  return it == id_to_name_.end() ? "" : it->second;
}

NodeStatus EtcdTarget::Inspect(const Node& node) {
  NodeStatus status;
  std::string ip;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& m : members_) {
      if (m.node.name == node.name) ip = m.node.ip;
    }
  }
  if (ip.empty()) return status;
  HttpSession http;
  auto reply = http.Post(ClientUrl(ip) + "/v3/maintenance/status", "{}",
                         kStatusTimeoutMs);
  if (reply.transport != Transport::kOk || reply.status != 200) return status;
  auto parsed = ParseStatusReply(reply.body);
  if (!parsed) return status;
  status.reachable = true;
  status.term = parsed->raft_term;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id_to_name_[parsed->member_id] = node.name;
  }
  if (parsed->leader == 0) return status;  // no leader known: role unknown
  status.role = parsed->leader == parsed->member_id ? "leader" : "follower";
  status.leader = MemberName(parsed->leader, ip);
  return status;
}

harness::Status EtcdTarget::AwaitHealthy(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<Node> nodes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& m : members_) {
      if (m.pid != 0 && Exited(m.pid)) ReapLocked(m);
      if (m.pid != 0) nodes.push_back(m.node);
    }
  }
  if (nodes.empty()) return Fail("etcd: no member is running");
  HttpSession http;
  std::string problem;
  while (true) {
    // 1. Every member names the same leader. Status answers at once even
    //    without a leader, whereas /health then blocks for its own timeout.
    std::string leader;
    problem.clear();
    for (const Node& node : nodes) {
      NodeStatus s = Inspect(node);
      if (!s.reachable) {
        problem = node.name + " unreachable";
      } else if (s.leader.empty()) {
        problem = node.name + " knows no leader";
      } else if (!leader.empty() && s.leader != leader) {
        problem = "members disagree on the leader";
      }
      if (!problem.empty()) break;
      leader = s.leader;
    }
    // 2. Every member serves a quorum read (/health does one).
    for (std::size_t i = 0; problem.empty() && i < nodes.size(); ++i) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - Clock::now())
                      .count();
      auto reply = http.Get(ClientUrl(nodes[i].ip) + "/health",
                            std::clamp<long>(left, 50, 1000));
      bool healthy = false;
      if (reply.transport == Transport::kOk && reply.status == 200) {
        auto h = ParseHealthReply(reply.body);
        healthy = h && *h;
      }
      if (!healthy) problem = nodes[i].name + " not healthy";
    }
    if (problem.empty()) return Ok();
    if (Clock::now() + kPollInterval >= deadline) {
      return Fail("etcd: not healthy after " + std::to_string(timeout.count()) +
                  " ms (" + problem + ")");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

harness::Status EtcdTarget::Teardown(const std::string& log_dir) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string problems;
  // SIGTERM everyone at once (resuming paused members first), bounded wait.
  std::vector<pid_t> pids;
  for (auto& m : members_) {
    if (m.pid == 0 || Exited(m.pid)) {
      ReapLocked(m);
      continue;
    }
    if (m.paused) {
      (void)m.node.remote->Signal(m.pid, SIGCONT);
      if (ledger_ != nullptr && m.stop_seq != 0)
        ledger_->MarkHealed(m.stop_seq);
      m.paused = false;
      m.stop_seq = 0;
    }
    (void)m.node.remote->Signal(m.pid, SIGTERM);
    pids.push_back(m.pid);
  }
  // etcd can hang in "leadership transfer" after SIGTERM: escalate.
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
          dir + "/etcd.log", log_dir + "/" + m.node.name + "/etcd.log");
      if (!copied) problems += " " + copied.error() + ";";
    }
    auto rm = m.node.remote->Run({"rm", "-rf", dir + "/data"});
    if (!rm.ok())
      problems += " cannot remove " + dir + "/data: " + rm.err + ";";
  }
  if (!problems.empty()) return Fail("etcd teardown:" + problems);
  return Ok();
}

Result<std::unique_ptr<harness::Client>> EtcdTarget::OpenClient(
    const Node& node, const std::string& workload) {
  // The lock vocabulary (acquire/renew/release) serves the lock and the
  // election workloads (the election asks for "lock").
  if (workload != "register" && workload != "lock") {
    return Fail("etcd: no client for workload '" + workload +
                "' (supported: register, lock)");
  }
  std::string ip;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& m : members_) {
      if (m.node.name == node.name) ip = m.node.ip;
    }
  }
  if (ip.empty()) return Fail("etcd: unknown node " + node.name);
  EtcdClientOptions options;
  options.ip = ip;
  options.op_timeout_ms = workload_.op_timeout_ms;
  options.serializable_reads = spec_.serializable_reads;
  options.lock_ttl_ms = workload_.ttl_ms;
  options.acquire_timeout_ms = workload_.op_timeout_ms;
  return std::unique_ptr<harness::Client>(
      std::make_unique<EtcdClient>(std::move(options)));
}

}  // namespace faultline::targets::etcd

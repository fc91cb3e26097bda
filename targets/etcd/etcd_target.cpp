#include "targets/etcd/etcd_target.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "harness/process/process.h"
#include "targets/etcd/etcd_client.h"
#include "targets/etcd/etcd_collections_client.h"
#include "targets/etcd/etcd_txn_client.h"
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

constexpr const char* kDaemon = "etcd";
constexpr long kStatusTimeoutMs = 500;
// SIGTERM grace at teardown. etcd often hangs in "leadership transfer" when
// all members stop at once, and a run discards the data anyway; zap writes
// its log unbuffered, so SIGKILL after a short grace loses nothing.
constexpr auto kTermGrace = std::chrono::milliseconds(500);
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

}  // namespace

EtcdTarget::EtcdTarget(const harness::EtcdSpec& spec,
                       const harness::WorkloadSpec& workload,
                       harness::Ledger* ledger, std::string work_dir)
    : DaemonTarget("etcd", kDaemon, ledger, work_dir),
      spec_(spec),
      workload_(workload),
      token_("faultline-" + HashHex(this->work_dir())) {}

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

std::string EtcdTarget::InitialCluster() const {
  std::string out;
  for (const Node& node : daemons_.nodes()) {
    if (!out.empty()) out += ",";
    out += node.name + "=" + PeerUrl(node.ip);
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
  if (auto reset = ResetNodes(cluster.nodes(), 0); !reset) return reset;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id_to_name_.clear();
  }
  for (const Node& node : cluster.nodes()) {
    const std::string dir = NodeDir(node);
    // etcd creates the data dir itself (it insists on mode 0700).
    auto rm = node.remote->Run({"rm", "-rf", dir});
    auto mk = node.remote->Run({"mkdir", "-p", dir});
    if (!rm.ok() || !mk.ok()) {
      return Fail("etcd: cannot prepare " + dir + " on " + node.name + ": " +
                  rm.err + mk.err + rm.error + mk.error);
    }
  }
  return Ok();
}

harness::Status EtcdTarget::Start(const Node& node) {
  if (daemons_.Find(node.name) == nullptr) {
    return Fail("etcd: unknown node " + node.name);
  }
  return daemons_.Start(node, kDaemon, CommandLine(node),
                        NodeDir(node) + "/etcd.log");
}

std::string EtcdTarget::IpOf(const Node& node) const {
  const Node* n = daemons_.Find(node.name);
  return n == nullptr ? "" : n->ip;
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
  const std::string ip = IpOf(node);
  if (ip.empty()) return status;
  // The Raft node's own state from /debug/vars: its current term and role.
  // (The maintenance status's raftTerm is the term of the last applied
  // entry: a new leader reports its predecessor's term until its first
  // entry applies, which would look like two leaders in one term.)
  HttpSession http;
  auto reply = http.Get(ClientUrl(ip) + "/debug/vars", kStatusTimeoutMs);
  if (reply.transport != Transport::kOk || reply.status != 200) return status;
  auto raft = ParseRaftStatus(reply.body);
  if (!raft) return status;
  status.reachable = true;
  status.term = raft->term;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id_to_name_[raft->id] = node.name;
  }
  if (raft->state == "StateLeader") {
    status.role = "leader";
  } else if (raft->state == "StateFollower") {
    status.role = "follower";
  } else if (raft->state == "StateCandidate" ||
             raft->state == "StatePreCandidate") {
    status.role = "candidate";
  }
  if (raft->lead != 0) status.leader = MemberName(raft->lead, ip);
  return status;
}

harness::Status EtcdTarget::AwaitHealthy(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::vector<Node> nodes = daemons_.RunningNodes(kDaemon);
  if (nodes.empty()) return Fail("etcd: no member is running");
  HttpSession http;
  return PollUntilHealthy(deadline, timeout, kPollInterval, [&] {
    // 1. Every member names the same leader. Status answers at once even
    //    without a leader, whereas /health then blocks for its own timeout.
    std::string leader;
    std::string problem;
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
    return problem;
  });
}

harness::Status EtcdTarget::Teardown(const std::string& log_dir) {
  // etcd can hang in "leadership transfer" after SIGTERM: StopAll escalates.
  return StopAndCollect(kTermGrace, nullptr, log_dir, {{kDaemon, {"etcd.log"}}},
                        {"data"});
}

Result<std::unique_ptr<harness::Client>> EtcdTarget::OpenClient(
    const Node& node, const std::string& workload) {
  // The lock vocabulary (acquire/renew/release) serves the lock and the
  // election workloads (the election asks for "lock").
  const bool txn = workload == "list-append" || workload == "rw-register";
  const bool collection =
      workload == "set" || workload == "bank" || workload == "counter";
  if (workload != "register" && workload != "lock" && !txn && !collection) {
    return Fail("etcd: no client for workload '" + workload +
                "' (supported: register, lock, list-append, rw-register, "
                "set, bank, counter)");
  }
  const std::string ip = IpOf(node);
  if (ip.empty()) return Fail("etcd: unknown node " + node.name);
  EtcdClientOptions options;
  options.ip = ip;
  options.op_timeout_ms = workload_.op_timeout_ms;
  options.serializable_reads = spec_.serializable_reads;
  options.lock_ttl_ms = workload_.ttl_ms;
  options.acquire_timeout_ms = workload_.op_timeout_ms;
  if (collection) {
    CollectionOptions what;
    what.workload = workload == "set"    ? CollectionWorkload::kSet
                    : workload == "bank" ? CollectionWorkload::kBank
                                         : CollectionWorkload::kCounter;
    what.accounts = std::max(2, workload_.accounts);
    what.total = workload_.total;
    return std::unique_ptr<harness::Client>(
        std::make_unique<EtcdCollectionsClient>(std::move(options), what));
  }
  if (txn) {
    return std::unique_ptr<harness::Client>(std::make_unique<EtcdTxnClient>(
        std::move(options), workload == "list-append"
                                ? TxnWorkload::kListAppend
                                : TxnWorkload::kRwRegister));
  }
  return std::unique_ptr<harness::Client>(
      std::make_unique<EtcdClient>(std::move(options)));
}

}  // namespace faultline::targets::etcd

#include "targets/raftkv/raftkv_target.h"

#include <algorithm>
#include <charconv>
#include <system_error>
#include <utility>

#include "harness/cluster/upload.h"
#include "harness/process/process.h"
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

constexpr const char* kDaemon = "raftkv";
constexpr auto kStatusTimeout = std::chrono::milliseconds(500);
// raftkv answers pending requests -SHUTDOWN and exits at once on SIGTERM;
// the grace only covers an fsync in progress.
constexpr auto kTermGrace = std::chrono::milliseconds(2000);
constexpr auto kPollInterval = std::chrono::milliseconds(50);

// The shortest text that reads back as `v` ("0.001", "0.2").
std::string ShortestNumber(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : "0";
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
    : DaemonTarget("raftkv", kDaemon, ledger, work_dir),
      spec_(spec),
      workload_(workload),
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

std::string RaftkvTarget::Peers(const std::vector<Node>& nodes) const {
  std::string out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!out.empty()) out += ",";
    out += std::to_string(i + 1) + "=" + nodes[i].ip + ":" +
           std::to_string(kPeerPort) + "/" + std::to_string(kClientPort);
  }
  return out;
}

std::vector<std::string> RaftkvTarget::CommandLine(const Node& node) const {
  const int index = daemons_.IndexOf(node.name);
  const std::string dir = NodeDir(node);
  // clang-format off
  auto copy = node_binary_.find(node.name);
  std::vector<std::string> argv = {
      copy != node_binary_.end() ? copy->second : binary_,
      "--id", std::to_string(index + 1),
      "--peers", Peers(daemons_.nodes()),
      "--listen", node.ip + ":" + std::to_string(kClientPort),
      "--data-dir", dir + "/data",
      "--read-mode", spec_.read_mode,
      "--heartbeat-ms", std::to_string(spec_.heartbeat_ms),
      "--election-ms", std::to_string(spec_.election_timeout_ms),
      "--follower-lease-ms", std::to_string(spec_.follower_lease_ms),
      "--lease-drift-bound", ShortestNumber(spec_.lease_drift_bound),
      "--snapshot-entries", std::to_string(spec_.snapshot_entries),
      "--unsafe", spec_.unsafe};
  // clang-format on
  if (!spec_.pre_vote) argv.push_back("--no-pre-vote");
  if (!spec_.check_quorum) argv.push_back("--no-check-quorum");
  argv.insert(argv.end(), spec_.extra_args.begin(), spec_.extra_args.end());
  return argv;
}

harness::Status RaftkvTarget::Setup(harness::Cluster& cluster) {
  const auto& nodes = cluster.nodes();
  if (auto reset = ResetNodes(nodes, 9); !reset) return reset;
  for (const Node& node : nodes) {
    const std::string dir = NodeDir(node);
    auto rm = node.remote->Run({"rm", "-rf", dir});
    auto mk = node.remote->Run({"mkdir", "-p", dir + "/data"});
    if (!rm.ok() || !mk.ok()) {
      return Fail("raftkv: cannot prepare " + dir + " on " + node.name + ": " +
                  rm.err + mk.err + rm.error + mk.error);
    }
    const std::string kind = node.remote->Descriptor().kind;
    if (kind != "ssh" && kind != "docker") continue;
    // A host reached over SSH, or a container: run a copy of the
    // controller's binary (the same build as the client talking to it).
    const std::string copy = dir + "/raftkv";
    if (auto up =
            harness::UploadExecutable(*node.remote, node.name, binary_, copy);
        !up)
      return Fail("raftkv: " + up.error());
    node_binary_[node.name] = copy;
  }
  return Ok();
}

harness::Status RaftkvTarget::Start(const Node& node) {
  if (daemons_.Find(node.name) == nullptr) {
    return Fail("raftkv: unknown node " + node.name);
  }
  auto env = ClockEnv(node);  // {} unless clock faults are on
  if (!env.ok()) return Fail("raftkv: " + env.error());
  return daemons_.Start(node, kDaemon, CommandLine(node),
                        NodeDir(node) + "/raftkv.log", *env);
}

std::string RaftkvTarget::IpOf(const Node& node) {
  const Node* n = daemons_.Find(node.name);
  return n == nullptr ? "" : n->ip;
}

std::string RaftkvTarget::NameOfId(long long id) {
  const auto nodes = daemons_.nodes();
  if (id < 1 || id > static_cast<long long>(nodes.size())) return "";
  return nodes[static_cast<std::size_t>(id - 1)].name;
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
  status.commit = ToInt(StatusField(fields, "commit"), -1);
  status.last_index = ToInt(StatusField(fields, "last_index"), -1);
  return status;
}

harness::Status RaftkvTarget::AwaitHealthy(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::vector<Node> nodes = daemons_.RunningNodes(kDaemon);
  if (nodes.empty()) return Fail("raftkv: no member is running");
  return PollUntilHealthy(deadline, timeout, kPollInterval, [&] {
    std::string problem;
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
    return problem;
  });
}

harness::Status RaftkvTarget::Teardown(const std::string& log_dir) {
  return StopAndCollect(kTermGrace, [this] { return TeardownClock(); }, log_dir,
                        {{kDaemon, {"raftkv.log"}}}, {"data"});
}

Result<std::unique_ptr<harness::Client>> RaftkvTarget::OpenClient(
    const Node& node, const std::string& workload) {
  if (workload != "register" && workload != "lock" &&
      workload != "list-append" && workload != "rw-register" &&
      workload != "set" && workload != "bank" && workload != "counter") {
    return Fail("raftkv: no client for workload '" + workload +
                "' (supported: register, lock, list-append, rw-register, "
                "set, bank, counter)");
  }
  const std::string ip = IpOf(node);
  if (ip.empty()) return Fail("raftkv: unknown node " + node.name);
  RaftkvClientOptions options;
  options.host = ip;
  options.port = kClientPort;
  options.op_timeout_ms = workload_.op_timeout_ms;
  options.lock_ttl_ms = workload_.ttl_ms;
  options.list_reads = workload == "list-append";
  options.workload = workload;
  options.accounts = workload_.accounts;
  options.total = workload_.total;
  return std::unique_ptr<harness::Client>(
      std::make_unique<RaftkvClient>(std::move(options)));
}

}  // namespace faultline::targets::raftkv

#include "targets/zookeeper/zk_target.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "harness/process/process.h"
#include "targets/zookeeper/zk_client.h"
#include "targets/zookeeper/zk_collections_client.h"
#include "targets/zookeeper/zk_config.h"
#include "targets/zookeeper/zk_session.h"
#include "targets/zookeeper/zk_txn_client.h"

namespace faultline::targets::zookeeper {
namespace {

using harness::Fail;
using harness::Node;
using harness::NodeStatus;
using harness::Ok;
using harness::Result;

constexpr const char* kDaemon = "zookeeper";
constexpr auto kSrvrTimeout = std::chrono::milliseconds(500);
// The JVM exits within a second of SIGTERM; the grace covers a slow one.
constexpr auto kTermGrace = std::chrono::milliseconds(3000);
constexpr auto kPollInterval = std::chrono::milliseconds(100);

// Sends a four-letter word to ip:port and returns everything the server
// wrote before it closed the connection; nullopt on any failure or when
// `timeout` passes first.
std::optional<std::string> FourLetterWord(const std::string& ip, int port,
                                          const std::string& word,
                                          std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left_ms = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<long long>(0, left.count()));
  };
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) return std::nullopt;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
      errno != EINPROGRESS) {
    return std::nullopt;
  }
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, left_ms()) != 1) return std::nullopt;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    return std::nullopt;
  }
  if (send(fd, word.data(), word.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(word.size())) {
    return std::nullopt;
  }
  std::string out;
  char buf[4096];
  while (true) {
    p = {fd, POLLIN, 0};
    if (poll(&p, 1, left_ms()) != 1) return std::nullopt;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) return out;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return std::nullopt;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace

ZookeeperTarget::ZookeeperTarget(const harness::ZookeeperSpec& spec,
                                 const harness::WorkloadSpec& workload,
                                 harness::Ledger* ledger,
                                 const std::string& work_dir,
                                 const std::string& java)
    : DaemonTarget("zookeeper", kDaemon, ledger, work_dir),
      spec_(spec),
      workload_(workload),
      java_(java.empty() ? spec.java : java) {}

ZookeeperTarget::~ZookeeperTarget() = default;

std::string ZookeeperTarget::version() {
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  auto r = harness::RunCommand(
      {"dpkg-query", "-W", "-f=${Version}", "zookeeper"}, options);
  if (r.ok() && !r.out.empty()) return "zookeeper " + r.out;
  return "zookeeper";
}

int ZookeeperTarget::LockSessionTimeoutMs() const {
  return ClampSessionTimeout(workload_.ttl_ms, spec_.tick_ms);
}

std::vector<std::string> ZookeeperTarget::CommandLine(const Node& node) const {
  const std::string dir = NodeDir(node);
  std::vector<std::string> argv = JavaCommand(
      java_, spec_.classpath.empty() ? kDefaultClasspath : spec_.classpath,
      dir + "/zoo.cfg", dir, spec_.force_sync);
  // JVM options go before the class name.
  argv.insert(argv.end() - 2, spec_.jvm_args.begin(), spec_.jvm_args.end());
  return argv;
}

harness::Status ZookeeperTarget::Setup(harness::Cluster& cluster) {
  const auto& nodes = cluster.nodes();
  if (auto reset = ResetNodes(nodes, 9); !reset) return reset;
  ZooCfg cfg;
  cfg.tick_ms = spec_.tick_ms;
  cfg.init_limit = spec_.init_limit;
  cfg.sync_limit = spec_.sync_limit;
  for (const Node& n : nodes) cfg.server_ips.push_back(n.ip);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    const std::string dir = NodeDir(node);
    cfg.data_dir = dir + "/data";
    cfg.client_ip = node.ip;
    auto rm = node.remote->Run({"rm", "-rf", dir});
    auto mk = node.remote->Run({"mkdir", "-p", dir + "/data"});
    harness::CommandOptions cfg_in;
    cfg_in.stdin_data = RenderZooCfg(cfg);
    auto zoo = node.remote->Run({"tee", dir + "/zoo.cfg"}, cfg_in);
    harness::CommandOptions id_in;
    id_in.stdin_data = std::to_string(i + 1) + "\n";
    auto myid = node.remote->Run({"tee", dir + "/data/myid"}, id_in);
    if (!rm.ok() || !mk.ok() || !zoo.ok() || !myid.ok()) {
      return Fail("zookeeper: cannot prepare " + dir + " on " + node.name +
                  ": " + rm.err + mk.err + zoo.err + myid.err + rm.error +
                  mk.error + zoo.error + myid.error);
    }
  }
  return Ok();
}

harness::Status ZookeeperTarget::Start(const Node& node) {
  if (daemons_.Find(node.name) == nullptr) {
    return Fail("zookeeper: unknown node " + node.name);
  }
  auto env = ClockEnv(node);  // {} unless clock faults are on
  if (!env.ok()) return Fail("zookeeper: " + env.error());
  return daemons_.Start(node, kDaemon, CommandLine(node),
                        NodeDir(node) + "/zookeeper.log", *env);
}

NodeStatus ZookeeperTarget::Inspect(const Node& node) {
  NodeStatus status;
  const Node* n = daemons_.Find(node.name);
  if (n == nullptr) return status;
  auto text = FourLetterWord(n->ip, kClientPort, "srvr", kSrvrTimeout);
  if (!text) return status;
  auto info = ParseSrvr(*text);
  if (!info) return status;
  status.reachable = true;
  if (!info->serving) {
    status.role = "candidate";  // LOOKING: no quorum, electing
    return status;
  }
  if (info->mode == "leader" || info->mode == "standalone") {
    status.role = "leader";
    status.leader = node.name;
  } else if (info->mode == "follower" || info->mode == "observer") {
    status.role = "follower";
  }
  // Zxid 0 is a follower that has seen no write yet: the epoch is unknown.
  if (info->zxid && *info->zxid != 0) status.term = *info->epoch();
  return status;
}

harness::Status ZookeeperTarget::AwaitHealthy(
    std::chrono::milliseconds timeout) {
  return PollUntilHealthy(timeout, kPollInterval, [&]() -> Result<std::string> {
    const std::vector<Node> nodes = daemons_.RunningNodes(kDaemon);
    std::string problem;
    int leaders = 0;
    if (nodes.empty()) return Fail("zookeeper: no server is running");
    for (const Node& node : nodes) {
      NodeStatus s = Inspect(node);
      if (!s.reachable) {
        problem = node.name + " does not answer srvr";
      } else if (s.role != "leader" && s.role != "follower") {
        problem = node.name + " is not serving (electing)";
      }
      if (!problem.empty()) break;
      if (s.role == "leader") ++leaders;
    }
    if (problem.empty() && leaders != 1) {
      problem = std::to_string(leaders) + " servers say they lead";
    }
    return problem;
  });
}

harness::Status ZookeeperTarget::Teardown(const std::string& log_dir) {
  harness::Status stopped =
      StopAndCollect(kTermGrace, [this] { return TeardownClock(); }, log_dir,
                     {{kDaemon, {"zookeeper.log"}}}, {"data"});
  const std::string client_log = work_dir() + "/zk-client.log";
  std::error_code ec;
  if (!log_dir.empty() && std::filesystem::exists(client_log, ec)) {
    std::filesystem::create_directories(log_dir, ec);
    std::filesystem::copy_file(
        client_log, log_dir + "/zk-client.log",
        std::filesystem::copy_options::overwrite_existing, ec);
  }
  return stopped;
}

Result<std::unique_ptr<harness::Client>> ZookeeperTarget::OpenClient(
    const Node& node, const std::string& workload) {
  const bool txn = workload == "list-append" || workload == "rw-register";
  const bool collection =
      workload == "set" || workload == "bank" || workload == "counter";
  if (workload != "register" && workload != "lock" && !txn && !collection) {
    return Fail("zookeeper: no client for workload '" + workload +
                "' (supported: register, lock, list-append, rw-register, "
                "set, bank, counter)");
  }
  const Node* n = daemons_.Find(node.name);
  if (n == nullptr) return Fail("zookeeper: unknown node " + node.name);
  std::error_code ec;
  std::filesystem::create_directories(work_dir(), ec);
  SetClientLog(work_dir() + "/zk-client.log");
  if (collection) {
    ZkCollectionsOptions c;
    c.host = n->ip;
    c.op_timeout_ms = workload_.op_timeout_ms;
    c.sync_reads = spec_.sync_reads;
    c.workload = workload == "set"    ? ZkCollection::kSet
                 : workload == "bank" ? ZkCollection::kBank
                                      : ZkCollection::kCounter;
    c.accounts = std::max(2, workload_.accounts);
    c.total = workload_.total;
    // Like a register client's: outlives a few timed-out operations.
    c.session_timeout_ms =
        ClampSessionTimeout(2 * workload_.op_timeout_ms, spec_.tick_ms);
    return std::unique_ptr<harness::Client>(
        std::make_unique<ZkCollectionsClient>(std::move(c)));
  }
  if (txn) {
    ZkTxnOptions t;
    t.host = n->ip;
    t.op_timeout_ms = workload_.op_timeout_ms;
    t.sync_reads = spec_.sync_reads;
    t.workload = workload == "list-append" ? ZkTxnWorkload::kListAppend
                                           : ZkTxnWorkload::kRwRegister;
    // Like a register client's: outlives a few timed-out transactions.
    t.session_timeout_ms =
        ClampSessionTimeout(2 * workload_.op_timeout_ms, spec_.tick_ms);
    return std::unique_ptr<harness::Client>(
        std::make_unique<ZkTxnClient>(std::move(t)));
  }
  ZkClientOptions options;
  options.host = n->ip;
  options.op_timeout_ms = workload_.op_timeout_ms;
  options.sync_reads = spec_.sync_reads;
  if (workload == "lock") {
    options.session_timeout_ms = LockSessionTimeoutMs();
    return std::unique_ptr<harness::Client>(
        std::make_unique<ZkLockClient>(std::move(options)));
  }
  // A register client's session outlives a few timed-out operations.
  options.session_timeout_ms =
      ClampSessionTimeout(2 * workload_.op_timeout_ms, spec_.tick_ms);
  return std::unique_ptr<harness::Client>(
      std::make_unique<ZkRegisterClient>(std::move(options)));
}

}  // namespace faultline::targets::zookeeper

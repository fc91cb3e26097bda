// Tests of the netns cluster provider. They need root, `ip` and `iptables`,
// and FAIL (not skip) without them. They use only 10.78.0.0/24 and names
// carrying a per-process run id, and remove everything they create.
#include "harness/cluster/netns.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/process/find_program.h"
#include "harness/process/process.h"

namespace fs = std::filesystem;
using namespace faultline::harness;
using std::chrono::milliseconds;

namespace {

constexpr const char* kSubnet = "10.78.0.0/24";
constexpr int kPort = 7811;

void RequireRoot() {
  INFO("this test needs root (network namespaces, iptables); run as root");
  REQUIRE(geteuid() == 0);
  INFO("this test needs `ip` (iproute2) and `iptables`");
  REQUIRE_FALSE(FindSystemTool("ip").empty());
  REQUIRE_FALSE(FindSystemTool("iptables").empty());
}

// A run id unique to this process and call: "nt<pid><n>" (<= 8 chars).
std::string FreshRunId() {
  static int n = 0;
  std::string id =
      "nt" + std::to_string(getpid() % 100000) + std::to_string(n++ % 10);
  return id.substr(0, 8);
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/faultline-netns-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string Run(const std::vector<std::string>& argv,
                const std::string& ns = "") {
  CommandOptions o;
  o.netns = ns;
  return RunCommand(argv, o).out;
}

// Nothing with this short id is left: namespaces, links, FORWARD rules.
void CheckNothingLeft(const std::string& id) {
  const std::string ns = Run({FindSystemTool("ip"), "netns", "list"});
  const std::string links = Run({FindSystemTool("ip"), "-o", "link"});
  const std::string forward =
      Run({FindSystemTool("iptables"), "-w", "-S", "FORWARD"});
  INFO("netns list:\n" << ns << "links:\n" << links);
  CHECK(ns.find("fl-" + id + "-") == std::string::npos);
  CHECK(links.find("flb-" + id) == std::string::npos);
  CHECK(links.find("flv-" + id + "-") == std::string::npos);
  CHECK(forward.find("flb-" + id) == std::string::npos);
}

struct Fixture {
  TempDir dir;
  std::string run_id = FreshRunId();
  std::unique_ptr<Ledger> ledger;
  Fixture() {
    auto l = Ledger::Create((dir.path / "ledger.jsonl").string(), run_id,
                            (dir.path / "active").string());
    REQUIRE(l.ok());
    ledger = std::move(*l);
  }
};

}  // namespace

TEST_CASE("ShortRunId keeps short ids and hashes long ones", "[netns]") {
  CHECK(ShortRunId("abc123") == "abc123");
  const std::string h = ShortRunId("etcd-register-20240101T120000");
  CHECK(h.size() == 8);
  CHECK(h == ShortRunId("etcd-register-20240101T120000"));
  CHECK(h != ShortRunId("etcd-register-20240101T120001"));
  CHECK(ShortRunId("UPPER").size() == 8);
  // The longest names fit Linux's 15-character interface limit.
  CHECK(std::string("flv-" + h + "-99").size() <= 15);
}

TEST_CASE("netns cluster refuses a non-root caller with one line", "[netns]") {
  RequireRoot();
  TempDir dir;
  auto ledger = Ledger::Create((dir.path / "l.jsonl").string(), "nonroot", "");
  REQUIRE(ledger.ok());
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (setresuid(65534, 65534, 65534) != 0) _exit(3);
    ClusterSpec spec;
    spec.subnet = kSubnet;
    auto c = CreateNetnsCluster(spec, "nonroot", **ledger);
    bool ok = !c.ok() && c.error().find("needs root") != std::string::npos &&
              c.error().find('\n') == std::string::npos;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("netns cluster refuses bad and overlapping subnets", "[netns]") {
  RequireRoot();
  Fixture f;
  ClusterSpec spec;
  spec.nodes = 2;
  spec.subnet = "8.8.8.0/24";
  auto public_net = CreateNetnsCluster(spec, f.run_id, *f.ledger);
  REQUIRE_FALSE(public_net.ok());
  CHECK(public_net.error().find("private") != std::string::npos);

  // Our own first cluster occupies 10.78.0.0/25; a second one on the /24
  // overlaps its bridge address and must be refused.
  spec.subnet = "10.78.0.0/25";
  auto first = CreateNetnsCluster(spec, f.run_id, *f.ledger);
  REQUIRE(first.ok());
  spec.subnet = kSubnet;
  Fixture g;
  auto second = CreateNetnsCluster(spec, g.run_id, *g.ledger);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().find("overlaps") != std::string::npos);
  CHECK(second.error().find('\n') == std::string::npos);
  REQUIRE((*first)->Destroy().ok());
  CheckNothingLeft(ShortRunId(f.run_id));
  CheckNothingLeft(ShortRunId(g.run_id));
}

TEST_CASE("netns cluster: addresses, reachability, teardown", "[netns][root]") {
  RequireRoot();
  Fixture f;
  ClusterSpec spec;
  spec.nodes = 3;
  spec.subnet = kSubnet;
  auto cluster = CreateNetnsCluster(spec, f.run_id, *f.ledger);
  REQUIRE(cluster.ok());
  auto& c = **cluster;
  CHECK(c.controller_ip() == "10.78.0.254");
  REQUIRE(c.nodes().size() == 3);

  std::vector<int> listeners;
  for (const Node& n : c.nodes()) {
    CHECK(n.name == "n" + std::to_string(n.index + 1));
    CHECK(n.ip == "10.78.0." + std::to_string(n.index + 1));
    CHECK(n.netns == "fl-" + ShortRunId(f.run_id) + "-" + n.name);
    REQUIRE(n.remote != nullptr);
    auto addr = n.remote->Run({"ip", "-o", "-4", "addr", "show"});
    REQUIRE(addr.ok());
    CHECK(addr.out.find("eth0") != std::string::npos);
    CHECK(addr.out.find(n.ip + "/24") != std::string::npos);
    CHECK(addr.out.find("127.0.0.1/8") != std::string::npos);  // lo is up
    // No default route: traffic stays on the bridge.
    auto route = n.remote->Run({"ip", "-4", "route", "show", "default"});
    CHECK(route.out.empty());
    auto fd = ListenTcpIn(n.netns, n.ip, kPort);
    REQUIRE(fd.ok());
    listeners.push_back(*fd);
  }
  const Node& n1 = c.nodes()[0];
  const Node& n2 = c.nodes()[1];
  // Node to node through Remote::Run (bash /dev/tcp), and through sockets.
  auto bash = n1.remote->Run(
      {"bash", "-c",
       "exec 3<>/dev/tcp/" + n2.ip + "/" + std::to_string(kPort)});
  CHECK(bash.ok());
  for (const Node& a : c.nodes())
    for (const Node& b : c.nodes())
      CHECK(TcpReachableFrom(a.netns, b.ip, kPort, milliseconds(3000)));
  for (const Node& n : c.nodes())
    CHECK(TcpReachableFrom("", n.ip, kPort, milliseconds(3000)));

  // A process started through the Remote is recorded and dies on Destroy.
  auto pid = n1.remote->Start({"sleep", "300"}, "", {});
  REQUIRE(pid.ok());
  CHECK(ProcessAlive(*pid));
  auto entries = ReadLedger(f.ledger->path());
  REQUIRE(entries.ok());
  CHECK(entries->back().kind == "process");
  CHECK(entries->back().pid == *pid);
  CHECK(entries->back().start_time == ProcessStartTime(*pid).value());
  CHECK(n1.remote->Signal(*pid, 0).ok());

  // Upload/Download are file copies.
  TempDir files;
  { std::ofstream(files.path / "a.txt") << "hello"; }
  REQUIRE(n1.remote
              ->Upload((files.path / "a.txt").string(),
                       (files.path / "n1" / "b.txt").string())
              .ok());
  REQUIRE(n1.remote
              ->Download((files.path / "n1" / "b.txt").string(),
                         (files.path / "c.txt").string())
              .ok());
  std::ifstream copied(files.path / "c.txt");
  std::string text;
  copied >> text;
  CHECK(text == "hello");
  CHECK_FALSE(n1.remote->Download("/nonexistent/x", "/tmp/x").ok());

  for (int fd : listeners) close(fd);
  REQUIRE(c.Destroy().ok());
  CHECK_FALSE(ProcessAlive(*pid));
  REQUIRE(c.Destroy().ok());  // idempotent
  CheckNothingLeft(ShortRunId(f.run_id));
  // Everything the cluster recorded is marked healed.
  std::vector<std::string> log;
  REQUIRE(HealLedger(f.ledger->path(), &log).ok());
  for (const auto& line : log) CHECK(line.find("ip ") == std::string::npos);
}

TEST_CASE("netns cluster adds and removes a FORWARD rule when needed",
          "[netns][root]") {
  RequireRoot();
  Fixture f;
  ClusterSpec spec;
  spec.nodes = 2;
  spec.subnet = kSubnet;
  NetnsOptions options;
  options.force_forward_rule = true;
  auto cluster = CreateNetnsCluster(spec, f.run_id, *f.ledger, options);
  REQUIRE(cluster.ok());
  const std::string bridge = "flb-" + ShortRunId(f.run_id);
  auto check = RunCommand({FindSystemTool("iptables"), "-w", "-C", "FORWARD",
                           "-i", bridge, "-o", bridge, "-j", "ACCEPT"});
  CHECK(check.ok());
  REQUIRE((*cluster)->Destroy().ok());
  CheckNothingLeft(ShortRunId(f.run_id));
}

TEST_CASE("HealLedger removes a cluster whose controller died",
          "[netns][root]") {
  RequireRoot();
  Fixture f;
  ClusterSpec spec;
  spec.nodes = 3;
  spec.subnet = kSubnet;
  NetnsOptions options;
  options.force_forward_rule = true;
  auto cluster = CreateNetnsCluster(spec, f.run_id, *f.ledger, options);
  REQUIRE(cluster.ok());
  const Node& n1 = (*cluster)->nodes()[0];
  const Node& n2 = (*cluster)->nodes()[1];

  // A partition rule in n1, recorded first.
  LedgerEntry ipt;
  ipt.kind = "iptables";
  ipt.netns = n1.netns;
  REQUIRE(f.ledger->Record(ipt) > 0);
  auto applied = n1.remote->Run({FindSystemTool("iptables"), "-w", "-A",
                                 "INPUT", "-s", n2.ip, "-j", "DROP"});
  REQUIRE(applied.ok());
  // A SIGSTOPped process in n2, recorded as started and stopped.
  auto pid = n2.remote->Start({"sleep", "300"}, "", {});
  REQUIRE(pid.ok());
  LedgerEntry stop;
  stop.kind = "stop";
  stop.pid = *pid;
  stop.start_time = ProcessStartTime(*pid).value();
  REQUIRE(f.ledger->Record(stop) > 0);
  REQUIRE(kill(*pid, SIGSTOP) == 0);

  // The controller "dies": no Destroy, the ledger file is all that is left.
  std::vector<std::string> log;
  Status healed = HealLedger(f.ledger->path(), &log);
  std::string joined;
  for (const auto& l : log) joined += l + "\n";
  INFO("heal log:\n" << joined);
  REQUIRE(healed.ok());
  CHECK_FALSE(ProcessAlive(*pid));
  CheckNothingLeft(ShortRunId(f.run_id));
  // Idempotent.
  REQUIRE(HealLedger(f.ledger->path(), &log).ok());
  // Destroy afterwards finds everything gone and still succeeds.
  REQUIRE((*cluster)->Destroy().ok());
}

TEST_CASE("netns cluster of 5 nodes: creation and teardown time",
          "[netns][root]") {
  RequireRoot();
  Fixture f;
  ClusterSpec spec;
  spec.nodes = 5;
  spec.subnet = kSubnet;
  auto t0 = std::chrono::steady_clock::now();
  auto cluster = CreateNetnsCluster(spec, f.run_id, *f.ledger);
  auto t1 = std::chrono::steady_clock::now();
  REQUIRE(cluster.ok());
  REQUIRE((*cluster)->nodes().size() == 5);
  auto t2 = std::chrono::steady_clock::now();
  REQUIRE((*cluster)->Destroy().ok());
  auto t3 = std::chrono::steady_clock::now();
  auto ms = [](auto d) {
    return std::chrono::duration_cast<milliseconds>(d).count();
  };
  std::printf("netns 5 nodes: create %lld ms, destroy %lld ms\n",
              static_cast<long long>(ms(t1 - t0)),
              static_cast<long long>(ms(t3 - t2)));
  CHECK(ms(t1 - t0) < 10000);
  CHECK(ms(t3 - t2) < 10000);
  CheckNothingLeft(ShortRunId(f.run_id));
}

// NetnsNemesis: pause/kill against a fake target running `sleep` processes
// (no root needed), and partitions on a real netns cluster (root needed:
// those tests FAIL without it). Network tests use only 10.78.16.0/24 and
// 10.78.32.0/24 (delay; the harness netns tests use 10.78.0.0/24; ctest runs
// both binaries at once).
#include "nemesis/netns_nemesis.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "harness/cluster/netns.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "nemesis/test_fakes.h"

namespace fs = std::filesystem;
using namespace faultline;
using harness::Node;
using nemesis::testing::ListCluster;
using nemesis::testing::SleepTarget;
using nemesis::testing::TempDir;
using std::chrono::milliseconds;

namespace {

char ProcState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size()
             ? '?'
             : line[paren + 2];
}

bool AwaitState(pid_t pid, char want) {
  auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ProcState(pid) == want) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

std::vector<std::string> NodesOf(const checkers::Value& v, const char* field) {
  std::vector<std::string> out;
  const checkers::Value* list = v.Find(field);
  if (!list || !list->is_list()) return out;
  for (const auto& item : list->as_list()) out.push_back(item.as_string());
  return out;
}

struct Setup {
  TempDir dir;
  std::unique_ptr<harness::Ledger> ledger;
  explicit Setup(const std::string& run_id) {
    auto l = harness::Ledger::Create((dir.path / "ledger.jsonl").string(),
                                     run_id, (dir.path / "active").string());
    REQUIRE(l.ok());
    ledger = std::move(*l);
  }
};

}  // namespace

TEST_CASE("pause stops the chosen nodes and Stop resumes them", "[nemesis]") {
  Setup s("pause");
  ListCluster cluster(5);
  SleepTarget target(cluster);
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  auto started = nem.Start({"pause", "minority", 11});
  REQUIRE(started.ok());
  CHECK(started->Find("kind")->as_string() == "pause");
  auto paused = NodesOf(*started, "nodes");
  REQUIRE(paused.size() == 2);
  for (const auto& name : paused) CHECK(AwaitState(target.pids[name], 'T'));
  // Same seed, same choice.
  {
    SleepTarget other(cluster);
    nemesis::NetnsNemesis again(cluster, other, *s.ledger);
    auto r = again.Start({"pause", "minority", 11});
    REQUIRE(r.ok());
    CHECK(NodesOf(*r, "nodes") == paused);
    REQUIRE(again.HealAll().ok());
  }
  // One fault at a time.
  CHECK_FALSE(nem.Start({"kill", "one", 1}).ok());
  auto stopped = nem.Stop();
  REQUIRE(stopped.ok());
  CHECK(NodesOf(*stopped, "resumed") == paused);
  for (const auto& name : paused) CHECK(AwaitState(target.pids[name], 'S'));
  auto none = nem.Stop();
  REQUIRE(none.ok());
  CHECK(none->Find("kind")->as_string() == "none");
}

TEST_CASE("selectors: leader, majority, all", "[nemesis]") {
  Setup s("selectors");
  ListCluster cluster(5);
  SleepTarget target(cluster);
  target.roles = {{"n2", 3}, {"n4", 5}};  // a stale leader and the real one
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  CHECK(nem.FindLeader() == 3);
  auto leader = nem.Start({"pause", "leader", 1});
  REQUIRE(leader.ok());
  CHECK(NodesOf(*leader, "nodes") == std::vector<std::string>{"n4"});
  CHECK(leader->Find("leader_known")->as_bool());
  REQUIRE(nem.Stop().ok());

  auto majority = nem.Start({"kill", "majority", 2});
  REQUIRE(majority.ok());
  auto killed = NodesOf(*majority, "nodes");
  CHECK(killed.size() == 3);
  for (const auto& name : killed)
    CHECK_FALSE(harness::ProcessAlive(target.pids[name]));
  auto restarted = nem.Stop();
  REQUIRE(restarted.ok());
  CHECK(NodesOf(*restarted, "restarted") == killed);
  for (const Node& n : cluster.nodes()) CHECK(target.Running(n));

  auto all = nem.Start({"pause", "all", 3});
  REQUIRE(all.ok());
  CHECK(NodesOf(*all, "nodes").size() == 5);
  REQUIRE(nem.HealAll().ok());
  REQUIRE(nem.HealAll().ok());  // idempotent
  for (const Node& n : cluster.nodes())
    CHECK(AwaitState(target.pids[n.name], 'S'));

  target.roles.clear();
  auto no_leader = nem.Start({"pause", "leader", 4});
  REQUIRE(no_leader.ok());
  CHECK_FALSE(no_leader->Find("leader_known")->as_bool());
  CHECK(NodesOf(*no_leader, "nodes").size() == 1);
  REQUIRE(nem.Stop().ok());
}

TEST_CASE("selector same acts on exactly the bound nodes", "[nemesis]") {
  Setup s("same");
  ListCluster cluster(5);
  SleepTarget target(cluster);
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  harness::FaultStep step{"pause", "same", 1};
  step.nodes = {"n4", "n2"};
  auto paused = nem.Start(step);
  REQUIRE(paused.ok());
  CHECK(paused->Find("selector")->as_string() == "same");
  CHECK(NodesOf(*paused, "nodes") == std::vector<std::string>{"n2", "n4"});
  for (const char* name : {"n2", "n4"})
    CHECK(AwaitState(target.pids[name], 'T'));
  REQUIRE(nem.Stop().ok());
  // Unbound or unknown nodes: refused, nothing applied.
  harness::FaultStep unbound{"pause", "same", 1};
  auto none = nem.Start(unbound);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().find("without the nodes") != std::string::npos);
  harness::FaultStep stranger{"kill", "same", 1};
  stranger.nodes = {"n9"};
  auto unknown = nem.Start(stranger);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().find("n9") != std::string::npos);
  for (const Node& n : cluster.nodes()) CHECK(target.Running(n));
  CHECK(nem.Stop()->Find("kind")->as_string() == "none");
}

TEST_CASE("a half-applied fault is undone and reported", "[nemesis]") {
  Setup s("halfway");
  ListCluster cluster(3);
  SleepTarget target(cluster);
  target.fail_on = "n3";
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  auto r = nem.Start({"pause", "all", 1});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("n3") != std::string::npos);
  for (const char* name : {"n1", "n2"})
    CHECK(AwaitState(target.pids[name], 'S'));
  // Nothing left active: a new fault may start.
  target.fail_on.clear();
  REQUIRE(nem.Start({"pause", "one", 1}).ok());
  REQUIRE(nem.HealAll().ok());
}

TEST_CASE("bad steps fail without applying anything", "[nemesis]") {
  Setup s("bad");
  ListCluster cluster(3);
  SleepTarget target(cluster);
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  CHECK_FALSE(nem.Start({"clock", "one", 1}).ok());
  CHECK_FALSE(nem.Start({"pause", "everyone", 1}).ok());
  auto no_ns = nem.Start({"partition", "halves", 1});
  REQUIRE_FALSE(no_ns.ok());
  CHECK(no_ns.error().find("namespace") != std::string::npos);
  CHECK(nem.Stop()->Find("kind")->as_string() == "none");
}

TEST_CASE("HealAll from another thread heals an active pause", "[nemesis]") {
  Setup s("thread");
  ListCluster cluster(3);
  SleepTarget target(cluster);
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  auto r = nem.Start({"pause", "all", 9});
  REQUIRE(r.ok());
  auto healed = std::async(std::launch::async, [&] { return nem.HealAll(); });
  REQUIRE(healed.get().ok());
  for (const Node& n : cluster.nodes())
    CHECK(AwaitState(target.pids[n.name], 'S'));
}

namespace {

// Reachability between every ordered pair of nodes, checked concurrently.
std::map<std::pair<int, int>, bool> Matrix(const harness::Cluster& c,
                                           int port) {
  std::map<std::pair<int, int>, std::future<bool>> pending;
  for (const Node& a : c.nodes())
    for (const Node& b : c.nodes())
      if (a.index != b.index)
        pending[{a.index, b.index}] = std::async(std::launch::async, [&, port] {
          return harness::TcpReachableFrom(a.netns, b.ip, port,
                                           milliseconds(1500));
        });
  std::map<std::pair<int, int>, bool> out;
  for (auto& [k, f] : pending) out[k] = f.get();
  return out;
}

}  // namespace

TEST_CASE("partitions cut node traffic both ways, never the controller",
          "[nemesis][root]") {
  INFO("this test needs root (network namespaces, iptables)");
  REQUIRE(geteuid() == 0);
  const std::string run_id = "nm" + std::to_string(getpid() % 100000);
  Setup s(run_id);
  harness::ClusterSpec spec;
  spec.nodes = 5;
  spec.subnet = "10.78.16.0/24";
  auto cluster = harness::CreateNetnsCluster(spec, run_id, *s.ledger);
  REQUIRE(cluster.ok());
  harness::Cluster& c = **cluster;
  constexpr int kPort = 7812;
  std::vector<int> fds;
  for (const Node& n : c.nodes()) {
    auto fd = harness::ListenTcpIn(n.netns, n.ip, kPort);
    REQUIRE(fd.ok());
    fds.push_back(*fd);
  }
  ListCluster fake_for_target(0);
  SleepTarget target(fake_for_target);
  nemesis::NetnsNemesis nem(c, target, *s.ledger);

  for (const char* shape : {"halves", "bridge", "majorities-ring"}) {
    INFO("shape " << shape);
    auto started = nem.Start({"partition", shape, 5});
    REQUIRE(started.ok());
    const checkers::Value* grudge = started->Find("grudge");
    REQUIRE(grudge);
    auto drops = [&](int a, int b) {
      const checkers::Value* g = grudge->Find(c.nodes()[a].name);
      if (!g) return false;
      for (const auto& v : g->as_list())
        if (v.as_string() == c.nodes()[b].name) return true;
      return false;
    };
    for (const auto& [pair, ok] : Matrix(c, kPort)) {
      INFO(c.nodes()[pair.first].name << " -> " << c.nodes()[pair.second].name);
      CHECK(ok == !drops(pair.first, pair.second));
    }
    for (const Node& n : c.nodes())
      CHECK(harness::TcpReachableFrom("", n.ip, kPort, milliseconds(1500)));
    auto healed = nem.Stop();
    REQUIRE(healed.ok());
    // The cut connection attempts above were counted by the rules, per
    // node that dropped anything, just before they were removed.
    const checkers::Value* dropped = healed->Find("dropped");
    REQUIRE(dropped);
    REQUIRE(dropped->is_object());
    std::int64_t sum = 0;
    for (const auto& [node, n] : dropped->as_object()) {
      INFO(node);
      CHECK(n.as_int() >= 0);
      sum += n.as_int();
    }
    CHECK(sum > 0);
    for (const auto& [pair, ok] : Matrix(c, kPort)) CHECK(ok);
  }
  // The ledger shows every iptables entry healed.
  auto entries = harness::ReadLedger(s.ledger->path());
  REQUIRE(entries.ok());
  std::set<long> ipt, healed;
  for (const auto& e : *entries) {
    if (e.kind == "iptables") ipt.insert(e.seq);
    if (e.kind == "healed") healed.insert(e.ref);
  }
  CHECK_FALSE(ipt.empty());
  for (long seq : ipt) CHECK(healed.count(seq));

  // HealAll also heals a partition; rules are gone from every namespace.
  REQUIRE(nem.Start({"partition", "one", 3}).ok());
  REQUIRE(nem.HealAll().ok());
  for (const Node& n : c.nodes()) {
    auto rules = n.remote->Run(
        {harness::FindSystemTool("iptables"), "-w", "-S", "INPUT"});
    CHECK(rules.out.find("DROP") == std::string::npos);
  }
  for (int fd : fds) close(fd);
  REQUIRE(c.Destroy().ok());
}

#ifndef FAULTLINE_NETDELAY_BIN
#define FAULTLINE_NETDELAY_BIN ""  // not built: the delay test fails clearly
#endif

namespace {

// Milliseconds a TCP handshake from `netns` to ip:port takes (the best of
// three), or -1 when it does not complete within 5 s.
long HandshakeMs(const std::string& netns, const std::string& ip, int port) {
  long best = -1;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (!harness::TcpReachableFrom(netns, ip, port, milliseconds(5000)))
      return -1;
    long ms = static_cast<long>(std::chrono::duration_cast<milliseconds>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count());
    if (best < 0 || ms < best) best = ms;
  }
  return best;
}

bool DelayRulesIn(const Node& n) {
  auto rules = n.remote->Run({harness::FindSystemTool("iptables"), "-w", "-S"});
  return rules.out.find("NFQUEUE") != std::string::npos;
}

}  // namespace

TEST_CASE("delay holds packets from other nodes to the chosen node and heals",
          "[nemesis][root][delay]") {
  INFO("this test needs root (network namespaces, iptables, NFQUEUE)");
  REQUIRE(geteuid() == 0);
  const std::string run_id = "nd" + std::to_string(getpid() % 100000);
  Setup s(run_id);
  harness::ClusterSpec spec;
  spec.nodes = 3;
  spec.subnet = "10.78.32.0/24";
  auto cluster = harness::CreateNetnsCluster(spec, run_id, *s.ledger);
  REQUIRE(cluster.ok());
  harness::Cluster& c = **cluster;
  constexpr int kPort = 7813;
  std::vector<int> fds;
  for (const Node& n : c.nodes()) {
    auto fd = harness::ListenTcpIn(n.netns, n.ip, kPort);
    REQUIRE(fd.ok());
    fds.push_back(*fd);
  }
  ListCluster fake_for_target(0);
  SleepTarget target(fake_for_target);
  target.roles["n1"] = 4;  // n1 leads: "follower" picks n2 or n3
  nemesis::NetnsNemesis nem(c, target, *s.ledger);
  nem.SetNetdelayBinary(FAULTLINE_NETDELAY_BIN);
  const auto& nodes = c.nodes();
  for (const Node& n : nodes)
    REQUIRE(HandshakeMs(nodes[0].netns, n.ip, kPort) < 100);

  constexpr int kDelay = 300;
  harness::FaultStep step{"delay", "follower", 9};
  step.delay_ms = kDelay;
  auto started = nem.Start(step);
  REQUIRE(started.ok());
  auto chosen = NodesOf(*started, "nodes");
  REQUIRE(chosen.size() == 1);
  REQUIRE(chosen[0] != "n1");
  CHECK(started->Find("delay_ms")->as_int() == kDelay);
  const Node& slow = chosen[0] == "n2" ? nodes[1] : nodes[2];
  const Node& other = chosen[0] == "n2" ? nodes[2] : nodes[1];
  CHECK(DelayRulesIn(slow));
  // A handshake between the chosen node and another node waits once for a
  // packet into the chosen node, whichever side starts it.
  long to_slow = HandshakeMs(nodes[0].netns, slow.ip, kPort);
  long from_slow = HandshakeMs(slow.netns, other.ip, kPort);
  CHECK(to_slow >= kDelay - 5);
  CHECK(to_slow < kDelay + 200);
  CHECK(from_slow >= kDelay - 5);
  // Not delayed: the controller, and pairs without the chosen node.
  CHECK(HandshakeMs("", slow.ip, kPort) < 100);
  CHECK(HandshakeMs(nodes[0].netns, other.ip, kPort) < 100);
  CHECK_FALSE(nem.Start(step).ok());  // one fault at a time

  auto healed = nem.Stop();
  REQUIRE(healed.ok());
  CHECK(NodesOf(*healed, "healed") == chosen);
  CHECK_FALSE(DelayRulesIn(slow));
  CHECK(HandshakeMs(nodes[0].netns, slow.ip, kPort) < 100);
  auto entries = harness::ReadLedger(s.ledger->path());
  REQUIRE(entries.ok());
  std::set<long> recorded, healed_seqs;
  std::vector<pid_t> daemons;
  for (const auto& e : *entries) {
    if (e.kind == "iptables" || e.kind == "process") recorded.insert(e.seq);
    if (e.kind == "process") daemons.push_back(e.pid);
    if (e.kind == "healed") healed_seqs.insert(e.ref);
  }
  CHECK(recorded.size() == 2);
  for (long seq : recorded) CHECK(healed_seqs.count(seq));
  REQUIRE(daemons.size() == 1);
  CHECK_FALSE(harness::ProcessAlive(daemons[0]));

  // A crashed controller: the ledger alone removes rules and daemon.
  step.selector = "minority";
  REQUIRE(nem.Start(step).ok());
  entries = harness::ReadLedger(s.ledger->path());
  REQUIRE(entries.ok());
  std::set<long> done;
  for (const auto& e : *entries)
    if (e.kind == "healed") done.insert(e.ref);
  std::vector<harness::LedgerEntry> open;
  pid_t daemon = 0;
  for (const auto& e : *entries) {
    if ((e.kind == "iptables" || e.kind == "process") && !done.count(e.seq)) {
      open.push_back(e);
      if (e.kind == "process") daemon = e.pid;
    }
  }
  REQUIRE(open.size() == 2);
  REQUIRE(daemon > 0);
  CHECK(harness::ProcessAlive(daemon));
  REQUIRE(harness::UndoLedgerEntries(open, nullptr).ok());
  CHECK_FALSE(harness::ProcessAlive(daemon));
  for (const Node& n : nodes) {
    CHECK_FALSE(DelayRulesIn(n));
    CHECK(HandshakeMs(nodes[(n.index + 1) % 3].netns, n.ip, kPort) < 100);
  }
  for (int fd : fds) close(fd);
  REQUIRE(c.Destroy().ok());
}

TEST_CASE("a dead delay daemon lets packets pass (queue bypass)",
          "[nemesis][root][delay]") {
  INFO("this test needs root (network namespaces, iptables, NFQUEUE)");
  REQUIRE(geteuid() == 0);
  const std::string run_id = "nb" + std::to_string(getpid() % 100000);
  Setup s(run_id);
  harness::ClusterSpec spec;
  spec.nodes = 2;
  spec.subnet = "10.78.32.0/24";
  auto cluster = harness::CreateNetnsCluster(spec, run_id, *s.ledger);
  REQUIRE(cluster.ok());
  harness::Cluster& c = **cluster;
  constexpr int kPort = 7814;
  const auto& nodes = c.nodes();
  auto fd = harness::ListenTcpIn(nodes[1].netns, nodes[1].ip, kPort);
  REQUIRE(fd.ok());
  ListCluster fake_for_target(0);
  SleepTarget target(fake_for_target);
  nemesis::NetnsNemesis nem(c, target, *s.ledger);
  nem.SetNetdelayBinary(FAULTLINE_NETDELAY_BIN);
  harness::FaultStep step{"delay", "all", 1};
  step.delay_ms = 400;
  REQUIRE(nem.Start(step).ok());
  CHECK(HandshakeMs(nodes[0].netns, nodes[1].ip, kPort) >= 395);
  auto entries = harness::ReadLedger(s.ledger->path());
  REQUIRE(entries.ok());
  for (const auto& e : *entries)
    if (e.kind == "process")  // the daemons of both nodes
      REQUIRE(harness::TerminateProcess(e.pid, SIGKILL, milliseconds(2000)));
  CHECK(DelayRulesIn(nodes[1]));  // the rules stay, but nobody listens
  CHECK(HandshakeMs(nodes[0].netns, nodes[1].ip, kPort) < 100);
  auto healed = nem.Stop();  // a daemon that is gone already is fine
  INFO((healed.ok() ? std::string() : healed.error()));
  CHECK(healed.ok());
  CHECK_FALSE(DelayRulesIn(nodes[1]));
  close(*fd);
  REQUIRE(c.Destroy().ok());
}

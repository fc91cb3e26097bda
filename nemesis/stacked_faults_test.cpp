// NetnsNemesis with several faults active at once, one-way partitions and
// the reset partition mode, on a real netns cluster (root needed: these
// tests FAIL without it) in 10.77.78.0/24, and stacking rules against a
// fake cluster (no root).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "harness/cluster/netns.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "nemesis/net/iptables_chain.h"
#include "nemesis/netns_nemesis.h"
#include "nemesis/test_fakes.h"

#ifndef FAULTLINE_NETDELAY_BIN
#define FAULTLINE_NETDELAY_BIN ""  // not built: the delay section fails
#endif

namespace fs = std::filesystem;
using namespace faultline;
using harness::Node;
using nemesis::testing::ListCluster;
using nemesis::testing::SleepTarget;
using nemesis::testing::TempDir;
using std::chrono::milliseconds;

namespace {

struct Ledgered {
  TempDir dir{"faultline-stack"};
  std::unique_ptr<harness::Ledger> ledger;
  explicit Ledgered(const std::string& run_id) {
    auto l = harness::Ledger::Create((dir.path / "ledger.jsonl").string(),
                                     run_id, (dir.path / "active").string());
    REQUIRE(l.ok());
    ledger = std::move(*l);
  }
};

harness::FaultStep Step(const std::string& kind, const std::string& selector,
                        std::uint64_t seed) {
  harness::FaultStep s;
  s.kind = kind;
  s.selector = selector;
  s.seed = seed;
  return s;
}

// A UDP socket bound to ip:port inside namespace `netns`.
int UdpIn(const std::string& netns, const std::string& ip, int port) {
  int fd = -1;
  std::thread([&] {
    int ns = open(("/var/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) return;
    if (setns(ns, CLONE_NEWNET) == 0) {
      fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
      if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        fd = -1;
      }
    }
    close(ns);
  }).join();
  return fd;
}

// Whether a datagram sent from `from` reaches `to` (both from UdpIn).
bool Delivered(int from, int to, const std::string& to_ip, int port) {
  char byte = 'x';
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, to_ip.c_str(), &a.sin_addr);
  // A few tries: a single datagram could in principle be lost.
  for (int i = 0; i < 3; ++i) {
    sendto(from, &byte, 1, 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
    pollfd p{to, POLLIN, 0};
    if (poll(&p, 1, 300) == 1) {
      char buf[16];
      while (recv(to, buf, sizeof buf, MSG_DONTWAIT) > 0) {
      }
      return true;
    }
  }
  return false;
}

std::string Rules(const Node& n) {
  return n.remote->Run({harness::FindSystemTool("iptables"), "-w", "-S"}).out;
}

bool NoRules(const Node& n) {
  std::string rules = Rules(n);
  return rules.find("-A ") == std::string::npos &&
         rules.find("-N ") == std::string::npos;
}

std::vector<std::string> Strings(const checkers::Value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->is_list()) return out;
  for (const auto& x : v->as_list()) out.push_back(x.as_string());
  return out;
}

}  // namespace

TEST_CASE("stacking: one fault per kind, pause and kill exclude each other",
          "[nemesis][stack]") {
  Ledgered s("stack");
  ListCluster cluster(3, "10.77.78");
  SleepTarget target(cluster);
  nemesis::NetnsNemesis nem(cluster, target, *s.ledger);
  REQUIRE(nem.Start(Step("pause", "one", 1)).ok());
  auto again = nem.Start(Step("pause", "all", 2));
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().find("pause fault is still active") != std::string::npos);
  CHECK_FALSE(nem.Start(Step("kill", "one", 2)).ok());
  CHECK_FALSE(nem.Start(Step("kill-voter", "one", 2)).ok());
  CHECK(target.paused == 1);  // the refused starts changed nothing
  // A failing start (no namespaces) leaves the pause active and stacked.
  CHECK_FALSE(nem.Start(Step("partition", "halves", 3)).ok());
  auto healed = nem.Stop();
  REQUIRE(healed.ok());
  CHECK(healed->Find("kind")->as_string() == "pause");
  CHECK(target.paused == 0);
  CHECK(nem.Stop()->Find("kind")->as_string() == "none");
}

TEST_CASE(
    "one-way and reset partitions, stacked with loss and pause, heal apart",
    "[nemesis][root][stack]") {
  INFO("this test needs root (network namespaces, iptables)");
  REQUIRE(geteuid() == 0);
  const std::string run_id = "fs" + std::to_string(getpid() % 100000);
  Ledgered s(run_id);
  harness::ClusterSpec spec;
  spec.nodes = 3;
  spec.subnet = "10.77.78.0/24";
  auto made = harness::CreateNetnsCluster(spec, run_id, *s.ledger);
  REQUIRE(made.ok());
  harness::Cluster& c = **made;
  struct Teardown {  // also when a check fails half-way through a section
    harness::Cluster& cluster;
    ~Teardown() { (void)cluster.Destroy(); }
  } teardown{c};
  const auto& nodes = c.nodes();
  SleepTarget target(c);
  nemesis::NetnsNemesis nem(c, target, *s.ledger);
  constexpr int kPort = 7878;
  std::vector<int> udp, tcp;
  for (const Node& n : nodes) {
    udp.push_back(UdpIn(n.netns, n.ip, kPort));
    REQUIRE(udp.back() >= 0);
    auto fd = harness::ListenTcpIn(n.netns, n.ip, kPort);
    REQUIRE(fd.ok());
    tcp.push_back(*fd);
  }
  auto index_of = [&](const std::string& name) {
    for (const Node& n : nodes)
      if (n.name == name) return n.index;
    FAIL("no node " << name);
    return -1;
  };

  SECTION("one-way: the deaf node hears nobody, everybody hears it") {
    auto started = nem.Start(Step("partition", "one-way-one", 4));
    REQUIRE(started.ok());
    INFO(started->ToJson());
    CHECK(started->Find("direction")->as_string() == "one-way");
    const auto components = started->Find("components")->as_list();
    REQUIRE(components.size() == 2);
    const int deaf = index_of(components[0].as_list()[0].as_string());
    std::set<std::string> blocked;
    for (const auto& b : Strings(started->Find("blocked"))) blocked.insert(b);
    CHECK(blocked.size() == 2);
    for (const Node& n : nodes) {
      if (n.index == deaf) continue;
      CHECK(blocked.count(n.name + "->" + nodes[deaf].name) == 1);
      CHECK_FALSE(Delivered(udp[n.index], udp[deaf], nodes[deaf].ip, kPort));
      CHECK(Delivered(udp[deaf], udp[n.index], n.ip, kPort));
      CHECK(NoRules(n));  // only the deaf side has rules
    }
    CHECK(nemesis::ChainState(Rules(nodes[deaf]), nemesis::kPartitionChain)
              .rules == 2);
    REQUIRE(nem.Stop().ok());
    for (const Node& n : nodes) CHECK(NoRules(n));
    for (const Node& n : nodes)
      if (n.index != deaf)
        CHECK(Delivered(udp[n.index], udp[deaf], nodes[deaf].ip, kPort));
  }

  SECTION("reset: connections into the cut side fail at once") {
    for (const std::string mode : {"drop", "reset"}) {
      INFO("mode " << mode);
      auto step = Step("partition", "one", 2);
      step.partition_mode = mode;
      auto started = nem.Start(step);
      REQUIRE(started.ok());
      CHECK(started->Find("mode")->as_string() == mode);
      CHECK(started->Find("direction")->as_string() == "both");
      const int alone = index_of(
          started->Find("components")->as_list()[0].as_list()[0].as_string());
      const int other = (alone + 1) % 3;
      auto t0 = std::chrono::steady_clock::now();
      CHECK_FALSE(harness::TcpReachableFrom(nodes[other].netns, nodes[alone].ip,
                                            kPort, milliseconds(2000)));
      auto ms = std::chrono::duration_cast<milliseconds>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
      if (mode == "reset") {
        CHECK(ms < 1000);  // refused by a reset, not timed out
      } else {
        CHECK(ms >= 1900);  // silently dropped: the connect times out
      }
      REQUIRE(nem.Stop().ok());
      CHECK(harness::TcpReachableFrom(nodes[other].netns, nodes[alone].ip,
                                      kPort, milliseconds(2000)));
    }
  }

  SECTION("partition + loss + pause stack; each Stop heals only its own") {
    auto part = nem.Start(Step("partition", "one", 6));
    REQUIRE(part.ok());
    auto loss_step = Step("loss", "all", 7);
    loss_step.loss_probability = 0.5;
    auto loss = nem.Start(loss_step);
    REQUIRE(loss.ok());
    REQUIRE(nem.Start(Step("pause", "one", 8)).ok());
    CHECK(target.paused == 1);
    CHECK_FALSE(nem.Start(Step("partition", "halves", 9)).ok());
    // Newest first: pause, then loss, and the partition stays meanwhile.
    auto first = nem.Stop();
    REQUIRE(first.ok());
    CHECK(first->Find("kind")->as_string() == "pause");
    CHECK(target.paused == 0);
    auto second = nem.Stop();
    REQUIRE(second.ok());
    CHECK(second->Find("kind")->as_string() == "loss");
    int with_chain = 0;
    for (const Node& n : nodes) {
      std::string rules = Rules(n);
      CHECK(rules.find("faultline-loss") == std::string::npos);
      with_chain += nemesis::ChainState(rules, nemesis::kPartitionChain).exists;
    }
    CHECK(with_chain == 3);  // "one" cuts both ways: every node has rules
    auto third = nem.Stop();
    REQUIRE(third.ok());
    CHECK(third->Find("kind")->as_string() == "partition");
    for (const Node& n : nodes) CHECK(NoRules(n));
  }

  SECTION("a delay and a partition stack; healing one keeps the other") {
    nem.SetNetdelayBinary(FAULTLINE_NETDELAY_BIN);
    auto delay_step = Step("delay", "all", 4);
    delay_step.delay_ms = 50;
    auto delayed = nem.Start(delay_step);
    REQUIRE(delayed.ok());
    REQUIRE(nem.Start(Step("partition", "one-way-one", 5)).ok());
    for (const Node& n : nodes) {
      auto state = nemesis::ChainState(Rules(n), nemesis::kDelayChain);
      CHECK(state.jumps == 1);
      CHECK(state.rules == 2);
    }
    auto part = nem.Stop();
    REQUIRE(part.ok());
    CHECK(part->Find("kind")->as_string() == "partition");
    for (const Node& n : nodes) {
      std::string rules = Rules(n);
      CHECK_FALSE(nemesis::ChainState(rules, nemesis::kPartitionChain).exists);
      CHECK(nemesis::ChainState(rules, nemesis::kDelayChain).rules == 2);
    }
    auto delay = nem.Stop();
    REQUIRE(delay.ok());
    CHECK(delay->Find("kind")->as_string() == "delay");
    for (const Node& n : nodes) CHECK(NoRules(n));
  }

  SECTION("HealAll heals every stacked fault; the ledger agrees") {
    REQUIRE(nem.Start(Step("partition", "one-way-halves", 1)).ok());
    auto loss_step = Step("loss", "one", 2);
    loss_step.loss_probability = 1.0;
    REQUIRE(nem.Start(loss_step).ok());
    REQUIRE(nem.Start(Step("pause", "all", 3)).ok());
    CHECK(target.paused == 3);
    REQUIRE(nem.HealAll().ok());
    CHECK(target.paused == 0);
    for (const Node& n : nodes) CHECK(NoRules(n));
    CHECK(nem.Stop()->Find("kind")->as_string() == "none");
    auto entries = harness::ReadLedger(s.ledger->path());
    REQUIRE(entries.ok());
    std::set<long> ipt, healed;
    for (const auto& e : *entries) {
      if (e.kind == "iptables") ipt.insert(e.seq);
      if (e.kind == "healed") healed.insert(e.ref);
    }
    CHECK_FALSE(ipt.empty());
    for (long seq : ipt) CHECK(healed.count(seq));
  }

  for (int fd : udp) close(fd);
  for (int fd : tcp) close(fd);
}

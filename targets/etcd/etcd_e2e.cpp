// End-to-end test of EtcdTarget and EtcdClient against real etcd members.
//
// Needs: the `etcd` binary (Debian package etcd-server) on PATH, and the
// loopback addresses 127.0.0.11-13 ports 2379/2380 free. No root: members
// share the host and listen on distinct loopback addresses (LocalRemote).
// Label "e2e" (not "unit"): it starts a real 3-member cluster and takes
// about 15-30 s.
#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/cluster/local_remote.h"
#include "harness/ledger/ledger.h"
#include "harness/process/process.h"
#include "targets/etcd/etcd_target.h"

namespace faultline::targets::etcd {
namespace {

namespace fs = std::filesystem;
using checkers::Value;
using Clock = std::chrono::steady_clock;
using harness::Completion;
using harness::Node;
using harness::NodeStatus;
using harness::Operation;
using harness::Outcome;

// Three nodes on 127.0.0.11..13 of the controller host.
class LoopbackCluster : public harness::Cluster {
 public:
  explicit LoopbackCluster(int n) {
    for (int i = 0; i < n; ++i) {
      remotes_.push_back(std::make_unique<harness::LocalRemote>());
      Node node;
      node.index = i;
      node.name = "n" + std::to_string(i + 1);
      node.ip = "127.0.0." + std::to_string(11 + i);
      node.remote = remotes_.back().get();
      nodes_.push_back(node);
    }
  }
  const std::vector<Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return "127.0.0.1"; }
  harness::Status Destroy() override { return harness::Ok(); }

 private:
  std::vector<std::unique_ptr<harness::LocalRemote>> remotes_;
  std::vector<Node> nodes_;
};

// Polls `done` every 50 ms until it holds or `limit` passes.
bool AwaitCondition(const std::function<bool()>& done,
                    std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

Operation Op(std::string f, Value key, Value value) {
  return Operation{std::move(f), std::move(key), std::move(value)};
}

Value Cas(std::int64_t from, std::int64_t to) {
  return Value::MakeList({Value::Int(from), Value::Int(to)});
}

// The leader name all `nodes` agree on, "" when they do not (or one is
// unreachable / without leader).
std::string AgreedLeader(harness::Target& target,
                         const std::vector<Node>& nodes) {
  std::string leader;
  for (const Node& node : nodes) {
    NodeStatus s = target.Inspect(node);
    if (!s.reachable || s.leader.empty()) return "";
    if (!leader.empty() && s.leader != leader) return "";
    leader = s.leader;
  }
  return leader;
}

bool PidGone(pid_t pid) {
  return !harness::ProcessAlive(pid) && kill(pid, 0) != 0 && errno == ESRCH;
}

// A temporary directory removed at scope exit.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/faultline-etcd-e2e-XXXXXX";
    char* made = mkdtemp(tmpl);
    if (made != nullptr) path = made;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
  std::string path;
};

TEST_CASE("etcd 3-member cluster on loopback: lifecycle, client, faults",
          "[etcd][e2e]") {
  auto version = harness::RunCommand({"etcd", "--version"});
  if (!version.ok()) {
    FAIL(
        "this test needs the etcd binary on PATH (Debian: apt-get install "
        "etcd-server): " +
        version.error + version.err);
  }

  TempDir tmp;
  REQUIRE_FALSE(tmp.path.empty());
  const std::string work_dir = tmp.path + "/work";
  const std::string log_dir = tmp.path + "/logs";
  const std::string ledger_path = tmp.path + "/ledger.jsonl";
  auto ledger =
      harness::Ledger::Create(ledger_path, "etcd-e2e", tmp.path + "/active");
  REQUIRE(ledger.ok());

  harness::EtcdSpec spec;  // pre-vote on, 100/1000 ms
  harness::WorkloadSpec workload;
  workload.op_timeout_ms = 1500;
  LoopbackCluster cluster(3);
  const auto& nodes = cluster.nodes();
  EtcdTarget target(spec, workload, ledger->get(), work_dir);
  // Whatever happens below, no member outlives the test.
  struct TeardownGuard {
    EtcdTarget& t;
    ~TeardownGuard() { (void)t.Teardown(""); }
  } guard{target};

  CHECK(target.version() == "etcd 3.4.23");
  auto no_client = target.OpenClient(nodes[0], "lock");
  CHECK_FALSE(no_client.ok());

  // --- start -----------------------------------------------------------------
  REQUIRE(target.Setup(cluster).ok());
  const auto t_start = Clock::now();
  for (const Node& node : nodes) REQUIRE(target.Start(node).ok());
  auto healthy = target.AwaitHealthy(std::chrono::seconds(30));
  INFO((healthy.ok() ? std::string() : healthy.error()));
  REQUIRE(healthy.ok());
  const double start_to_healthy = SecondsSince(t_start);
  std::printf("METRIC etcd start->healthy (3 members): %.2f s\n",
              start_to_healthy);
  std::vector<pid_t> pids;
  for (const Node& node : nodes) {
    pids.push_back(target.Pid(node));
    CHECK(pids.back() > 0);
    CHECK(target.Running(node));
  }

  // --- clients on different members -----------------------------------------
  std::vector<std::unique_ptr<harness::Client>> clients;
  for (const Node& node : nodes) {
    auto c = target.OpenClient(node, "register");
    REQUIRE(c.ok());
    clients.push_back(std::move(c.value()));
  }
  const Value k = Value::String("k");
  Completion c;
  c = clients[0]->Invoke(Op("read", k, Value::Null()));
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value.is_null());  // absent key reads null
  c = clients[0]->Invoke(Op("write", k, Value::Int(1)));
  CHECK(c.type == Outcome::kOk);
  c = clients[1]->Invoke(Op("read", k, Value::Null()));
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value == Value::Int(1));
  c = clients[2]->Invoke(Op("cas", k, Cas(1, 2)));
  CHECK(c.type == Outcome::kOk);
  c = clients[0]->Invoke(Op("cas", k, Cas(1, 3)));
  CHECK(c.type == Outcome::kFail);  // compare mismatch: guaranteed no effect
  CHECK(c.error == "mismatch");
  CHECK(c.value == Cas(1, 3));
  c = clients[1]->Invoke(Op("read", k, Value::Null()));
  CHECK(c.value == Value::Int(2));
  c = clients[2]->Invoke(Op("cas", Value::Int(7), Cas(5, 6)));
  CHECK(c.type == Outcome::kFail);  // absent key never equals 5
  c = clients[2]->Invoke(Op("frobnicate", k, Value::Null()));
  CHECK(c.type == Outcome::kFail);

  // --- status: exactly one leader, everyone agrees --------------------------
  std::string leader;
  REQUIRE(AwaitCondition(
      [&] { return !(leader = AgreedLeader(target, nodes)).empty(); },
      std::chrono::seconds(10)));
  int leaders = 0;
  long long term = -1;
  for (const Node& node : nodes) {
    NodeStatus s = target.Inspect(node);
    CHECK(s.reachable);
    CHECK(s.leader == leader);
    CHECK(s.term > 0);
    if (term < 0) term = s.term;
    if (s.role == "leader") {
      ++leaders;
      CHECK(node.name == leader);
    } else {
      CHECK(s.role == "follower");
    }
  }
  CHECK(leaders == 1);

  // --- throughput of one client doing sequential writes ---------------------
  {
    int ok = 0, other = 0;
    const auto t0 = Clock::now();
    while (SecondsSince(t0) < 2.0) {
      auto w = clients[0]->Invoke(
          Op("write", Value::String("tput"), Value::Int(ok + other + 100)));
      (w.type == Outcome::kOk ? ok : other) += 1;
    }
    const double secs = SecondsSince(t0);
    std::printf(
        "METRIC etcd sequential writes, 1 client: %.0f ops/s (%d ok, "
        "%d not ok in %.2f s)\n",
        ok / secs, ok, other, secs);
    CHECK(ok > 0);
    CHECK(other == 0);
  }

  // --- pause the leader: the others elect a new one -------------------------
  const Node* old_leader = nullptr;
  std::vector<Node> others;
  for (const Node& node : nodes) {
    if (node.name == leader) {
      old_leader = &node;
    } else {
      others.push_back(node);
    }
  }
  REQUIRE(old_leader != nullptr);
  const pid_t leader_pid = target.Pid(*old_leader);
  REQUIRE(target.Pause(*old_leader).ok());
  const auto t_pause = Clock::now();
  {
    auto entries = harness::ReadLedger(ledger_path);
    REQUIRE(entries.ok());
    bool found = false;
    for (const auto& e : *entries) {
      if (e.kind == "stop" && e.pid == leader_pid && e.node == leader) {
        found = true;
        CHECK(e.start_time == harness::ProcessStartTime(leader_pid).value());
      }
    }
    CHECK(found);
  }
  std::string new_leader;
  bool elected = AwaitCondition(
      [&] {
        new_leader = AgreedLeader(target, others);
        return !new_leader.empty() && new_leader != leader;
      },
      std::chrono::seconds(20));
  const double election_s = SecondsSince(t_pause);
  REQUIRE(elected);
  std::printf(
      "METRIC etcd leader SIGSTOP -> new leader agreed by the others: "
      "%.2f s\n",
      election_s);
  {
    // The stopped member answers nothing: unreachable, and quickly.
    const auto t0 = Clock::now();
    NodeStatus s = target.Inspect(*old_leader);
    CHECK_FALSE(s.reachable);
    CHECK(SecondsSince(t0) < 1.5);
    // A write sent to it is indeterminate (it may apply after SIGCONT).
    auto paused_client = target.OpenClient(*old_leader, "register");
    REQUIRE(paused_client.ok());
    auto w = (*paused_client)->Invoke(Op("write", k, Value::Int(99)));
    CHECK(w.type == Outcome::kInfo);
    CHECK(w.error == "timeout");
    auto r = (*paused_client)->Invoke(Op("read", k, Value::Null()));
    CHECK(r.type == Outcome::kFail);  // reads have no effect
    CHECK(r.error == "timeout");
  }
  // The majority keeps serving writes.
  c = clients[others[0].index]->Invoke(Op("write", k, Value::Int(10)));
  CHECK(c.type == Outcome::kOk);
  REQUIRE(target.Resume(*old_leader).ok());
  {
    auto entries = harness::ReadLedger(ledger_path);
    REQUIRE(entries.ok());
    long stop_seq = 0;
    bool healed = false;
    for (const auto& e : *entries) {
      if (e.kind == "stop" && e.pid == leader_pid) stop_seq = e.seq;
      if (e.kind == "healed" && stop_seq != 0 && e.ref == stop_seq) {
        healed = true;
      }
    }
    CHECK(healed);
  }
  REQUIRE(target.AwaitHealthy(std::chrono::seconds(20)).ok());
  CHECK(AgreedLeader(target, nodes) == new_leader);

  // --- kill a follower, start it again ---------------------------------------
  const Node* follower = nullptr;
  for (const Node& node : nodes) {
    if (node.name != new_leader) follower = &node;
  }
  REQUIRE(follower != nullptr);
  const pid_t follower_pid = target.Pid(*follower);
  REQUIRE(target.Kill(*follower).ok());
  CHECK_FALSE(target.Running(*follower));
  CHECK(PidGone(follower_pid));
  {
    auto dead = target.OpenClient(*follower, "register");
    REQUIRE(dead.ok());
    auto w = (*dead)->Invoke(Op("write", k, Value::Int(98)));
    CHECK(w.type == Outcome::kFail);  // refused: never delivered
    CHECK(w.error == "connection-refused");
    auto r = (*dead)->Invoke(Op("read", k, Value::Null()));
    CHECK(r.type == Outcome::kFail);
    auto x = (*dead)->Invoke(Op("cas", k, Cas(10, 11)));
    CHECK(x.type == Outcome::kFail);
    CHECK(x.error == "connection-refused");
  }
  c = clients[0]->Invoke(Op("write", k, Value::Int(20)));  // may be any member
  const bool wrote_20 = c.type == Outcome::kOk;
  const auto t_restart = Clock::now();
  REQUIRE(target.Start(*follower).ok());
  CHECK(target.Pid(*follower) != follower_pid);
  auto back = target.AwaitHealthy(std::chrono::seconds(30));
  INFO((back.ok() ? std::string() : back.error()));
  REQUIRE(back.ok());
  std::printf("METRIC etcd follower restart -> healthy: %.2f s\n",
              SecondsSince(t_restart));
  c = clients[follower->index]->Invoke(Op("read", k, Value::Null()));
  CHECK(c.type == Outcome::kOk);
  // Linearizable read on the restarted member sees the latest write.
  CHECK(c.value == Value::Int(wrote_20 ? 20 : 10));

  // --- teardown
  // ----------------------------------------------------------------
  std::vector<pid_t> final_pids;
  for (const Node& node : nodes) final_pids.push_back(target.Pid(node));
  const auto t_down = Clock::now();
  auto down = target.Teardown(log_dir);
  INFO((down.ok() ? std::string() : down.error()));
  CHECK(down.ok());
  std::printf("METRIC etcd teardown: %.2f s\n", SecondsSince(t_down));
  for (pid_t pid : final_pids) CHECK(PidGone(pid));
  for (const Node& node : nodes) {
    CHECK_FALSE(target.Running(node));
    const std::string log = log_dir + "/" + node.name + "/etcd.log";
    CHECK(fs::exists(log));
    CHECK(fs::file_size(log) > 0);
    CHECK_FALSE(fs::exists(work_dir + "/" + node.name + "/data"));
  }
  CHECK(target.Teardown(log_dir).ok());  // idempotent
  (*ledger)->Close();
}

}  // namespace
}  // namespace faultline::targets::etcd

// The figure8 fault's pure watches (figure8.h), its refusals before it
// touches anything, and its config rules. The scenario itself runs against
// real raftkv processes in tests/e2e_raftkv_unsafe.sh
// (configs/known/raftkv-commit-old-terms*.yaml).
#include "nemesis/scenarios/figure8.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "harness/config/config.h"
#include "harness/ledger/ledger.h"
#include "nemesis/netns_nemesis.h"
#include "nemesis/test_fakes.h"

namespace fs = std::filesystem;
using namespace faultline;
using harness::NodeStatus;
using nemesis::testing::ListCluster;

namespace {

NodeStatus St(const char* role, long long term, long long commit,
              long long last) {
  NodeStatus s;
  s.reachable = true;
  s.role = role;
  s.term = term;
  s.commit = commit;
  s.last_index = last;
  return s;
}

// Records every process fault; reports n1 leading term 2.
class Recorder : public harness::Target {
 public:
  std::string name() const override { return "scripted"; }
  std::string version() override { return "1"; }
  harness::Status Setup(harness::Cluster&) override { return harness::Ok(); }
  harness::Status Start(const harness::Node& n) override {
    return Note("start " + n.name);
  }
  harness::Status AwaitHealthy(std::chrono::milliseconds) override {
    return harness::Ok();
  }
  harness::Status Kill(const harness::Node& n) override {
    return Note("kill " + n.name);
  }
  harness::Status Pause(const harness::Node& n) override {
    return Note("pause " + n.name);
  }
  harness::Status Resume(const harness::Node& n) override {
    return Note("resume " + n.name);
  }
  bool Running(const harness::Node&) override { return true; }
  NodeStatus Inspect(const harness::Node& n) override {
    return St(n.name == "n1" ? "leader" : "follower", 2, 10, 10);
  }
  harness::Status Teardown(const std::string&) override {
    return harness::Ok();
  }
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node&, const std::string&) override {
    return harness::Fail("no clients");
  }
  harness::Status Note(std::string e) {
    events.push_back(std::move(e));
    return harness::Ok();
  }
  std::vector<std::string> events;
};

}  // namespace

TEST_CASE(
    "figure8: a backlog is a leader of the term with uncommitted "
    "entries",
    "[figure8]") {
  CHECK(nemesis::HasBacklog(St("leader", 4, 10, 12), 4, 2));
  CHECK_FALSE(nemesis::HasBacklog(St("leader", 4, 10, 11), 4, 2));
  CHECK_FALSE(nemesis::HasBacklog(St("leader", 5, 10, 12), 4, 2));  // newer
  CHECK_FALSE(nemesis::HasBacklog(St("follower", 4, 10, 12), 4, 2));
  CHECK_FALSE(nemesis::HasBacklog(St("leader", 4, -1, 12), 4, 2));  // unknown
  NodeStatus down = St("leader", 4, 10, 12);
  down.reachable = false;
  CHECK_FALSE(nemesis::HasBacklog(down, 4, 2));
}

TEST_CASE("figure8: the conflict is reached by a leader of a newer term",
          "[figure8]") {
  CHECK(nemesis::ReachedConflict(St("leader", 7, 11, 14), 5, 11));
  CHECK(nemesis::ReachedConflict(St("leader", 7, 15, 15), 5, 11));
  CHECK_FALSE(nemesis::ReachedConflict(St("leader", 7, 10, 14), 5, 11));
  CHECK_FALSE(nemesis::ReachedConflict(St("leader", 5, 11, 14), 5, 11));
  CHECK_FALSE(nemesis::ReachedConflict(St("follower", 7, 11, 14), 5, 11));
  CHECK_FALSE(nemesis::ReachedConflict(St("leader", 7, 11, 14), 5, -1));
}

TEST_CASE("figure8: PollUntil stops at the first match or at the limit",
          "[figure8]") {
  using Clock = std::chrono::steady_clock;
  Clock::time_point t{};
  auto now = [&] { return t; };
  int looks = 0;
  auto inspect = [&](int i) {
    ++looks;
    t += std::chrono::milliseconds(1);
    return St("follower", i == 2 && looks >= 5 ? 9 : 3, 0, 0);
  };
  auto newer = [](int, const NodeStatus& s) { return s.term > 3; };
  nemesis::Poll p =
      nemesis::PollUntil({1, 2}, inspect, newer, std::chrono::milliseconds(100),
                         std::chrono::microseconds(0), now);
  REQUIRE(p.node);
  CHECK(*p.node == 2);
  CHECK(p.status.term == 9);
  CHECK(p.polls == 6);  // 1, 2, 1, 2, 1, 2: the 6th look is the 5th+

  looks = 0;
  t = Clock::time_point{};
  auto never = [](int, const NodeStatus&) { return false; };
  nemesis::Poll q =
      nemesis::PollUntil({1}, inspect, never, std::chrono::milliseconds(20),
                         std::chrono::microseconds(0), now);
  CHECK_FALSE(q.node);
  CHECK(q.polls == 20);
  CHECK(nemesis::PollUntil({}, inspect, never, std::chrono::milliseconds(5),
                           std::chrono::microseconds(0), now)
            .polls == 0);
}

TEST_CASE("figure8 refuses clusters it cannot play before touching them",
          "[figure8]") {
  char tmpl[] = "/tmp/faultline-figure8-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  auto ledger = harness::Ledger::Create((dir / "ledger.jsonl").string(), "kv",
                                        (dir / "active").string());
  REQUIRE(ledger.ok());
  harness::FaultStep step{"figure8", "leader", 7};
  step.delay_ms = 20;
  {
    ListCluster five(5);
    for (harness::Node& n : five.mutable_nodes())
      n.netns = "fl-none-" + std::to_string(n.index);
    Recorder target;
    nemesis::NetnsNemesis nem(five, target, **ledger);
    auto r = nem.Start(step);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("exactly 3 nodes") != std::string::npos);
    CHECK(target.events.empty());
  }
  {
    ListCluster three(3);  // no namespaces
    Recorder target;
    nemesis::NetnsNemesis nem(three, target, **ledger);
    auto r = nem.Start(step);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("no network namespace") != std::string::npos);
    CHECK(target.events.empty());
    auto none = nem.Stop();
    REQUIRE(none.ok());
    CHECK(none->Find("kind")->as_string() == "none");
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("figure8 in a config: 3 raftkv nodes", "[figure8][config]") {
  using harness::LoadConfigText;
  const std::string fault = "nemesis:\n  faults: [figure8]\n";
  auto ok = LoadConfigText(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: raftkv}\n" + fault,
      "t.yaml");
  INFO(ok.FormatErrors());
  REQUIRE(ok.ok());

  auto five = LoadConfigText(
      "name: x\ncluster: {nodes: 5}\ntarget: {name: raftkv}\n" + fault,
      "t.yaml");
  REQUIRE(five.errors.size() == 1);
  CHECK(five.errors[0].message.find("figure8 needs exactly 3 nodes") !=
        std::string::npos);
  CHECK(five.errors[0].line == 2);

  auto etcd = LoadConfigText(
      "name: x\ncluster: {nodes: 3}\ntarget: {name: etcd}\n" + fault, "t.yaml");
  REQUIRE(etcd.errors.size() == 1);
  CHECK(etcd.errors[0].message.find("only the raftkv target") !=
        std::string::npos);
  CHECK(etcd.errors[0].line == 3);
}

TEST_CASE(
    "the commit-old-terms known configs load and differ only in the "
    "switch",
    "[figure8][config]") {
  auto load = [](const char* name) {
    auto k = harness::LoadConfigFile(std::string(FAULTLINE_SOURCE_DIR) +
                                     "/configs/known/" + name + ".yaml");
    INFO(name << ": " << k.FormatErrors());
    REQUIRE(k.ok());
    return *k.spec;
  };
  harness::TestSpec bad = load("raftkv-commit-old-terms");
  harness::TestSpec control = load("raftkv-commit-old-terms-control");
  CHECK(bad.nemesis.faults == std::vector<std::string>{"figure8"});
  CHECK(bad.target.raftkv.unsafe == "commit-old-terms");
  CHECK(bad.expect == "invalid");
  CHECK(control.target.raftkv.unsafe == "none");
  CHECK(control.expect == "valid");
  // Everything else is the same campaign (batching included).
  control.target.raftkv.unsafe = bad.target.raftkv.unsafe;
  control.expect = bad.expect;
  control.name = bad.name;
  control.description = bad.description;
  control.source_file = bad.source_file;
  control.cluster.subnet = bad.cluster.subnet;
  CHECK(control.target == bad.target);
  CHECK(control.workload == bad.workload);
  CHECK(control.nemesis == bad.nemesis);
  CHECK(control.time_limit_s == bad.time_limit_s);
  CHECK(control.recovery_s == bad.recovery_s);
}

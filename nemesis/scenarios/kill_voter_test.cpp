// NetnsNemesis "kill-voter" against a scripted target: no processes, no
// network (the watch reads only Inspect; Kill/Start are recorded).
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "harness/ledger/ledger.h"
#include "nemesis/netns_nemesis.h"
#include "nemesis/test_fakes.h"

namespace fs = std::filesystem;
using namespace faultline;
using harness::Node;
using nemesis::testing::ListCluster;

namespace {

// n1 leads term 4. Once n1 is killed, n2 campaigns for term 5 and n3
// answers it on its `vote_after`-th look; dead nodes are unreachable.
class ElectionTarget : public harness::Target {
 public:
  std::string name() const override { return "scripted"; }
  std::string version() override { return "1"; }
  harness::Status Setup(harness::Cluster&) override { return harness::Ok(); }
  harness::Status Start(const Node& n) override {
    events.push_back("start " + n.name);
    dead.erase(n.name);
    return harness::Ok();
  }
  harness::Status AwaitHealthy(std::chrono::milliseconds) override {
    return harness::Ok();
  }
  harness::Status Kill(const Node& n) override {
    events.push_back("kill " + n.name);
    dead.insert(n.name);
    return harness::Ok();
  }
  harness::Status Pause(const Node&) override { return harness::Ok(); }
  harness::Status Resume(const Node&) override { return harness::Ok(); }
  bool Running(const Node& n) override { return !dead.count(n.name); }
  harness::NodeStatus Inspect(const Node& n) override {
    harness::NodeStatus st;
    if (dead.count(n.name)) return st;
    st.reachable = true;
    if (!dead.count("n1")) {
      st.role = n.name == "n1" ? "leader" : "follower";
      st.term = 4;
      st.leader = "n1";
      return st;
    }
    st.term = 5;
    if (n.name == "n2") {
      st.role = "candidate";
    } else if (++looks_n3 >= vote_after) {
      st.role = "follower";  // voted, no leader known yet
    } else {
      st.role = "follower";  // still in term 4, following the dead leader
      st.term = 4;
      st.leader = "n1";
    }
    return st;
  }
  harness::Status Teardown(const std::string&) override {
    return harness::Ok();
  }
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const Node&, const std::string&) override {
    return harness::Fail("no clients");
  }

  std::vector<std::string> events;
  std::set<std::string> dead;
  int looks_n3 = 0;
  int vote_after = 3;
};

}  // namespace

TEST_CASE("kill-voter needs namespaces and kills nothing without them",
          "[nemesis][kill-voter]") {
  // The fault holds peer traffic with NFQUEUE rules inside the nodes'
  // namespaces; a cluster without namespaces must be refused before any
  // kill (the election itself is exercised by the known config
  // configs/known/raftkv-vote-not-persisted.yaml, the watch by
  // vote_watch_test.cpp).
  char tmpl[] = "/tmp/faultline-killvoter-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  auto ledger = harness::Ledger::Create((dir / "ledger.jsonl").string(), "kv",
                                        (dir / "active").string());
  REQUIRE(ledger.ok());
  ListCluster cluster(3);
  ElectionTarget target;
  nemesis::NetnsNemesis nem(cluster, target, **ledger);
  harness::FaultStep step{"kill-voter", "leader", 7};
  step.delay_ms = 10;
  auto started = nem.Start(step);
  REQUIRE_FALSE(started.ok());
  CHECK(started.error().find("no network namespace") != std::string::npos);
  CHECK(target.events.empty());
  auto none = nem.Stop();
  REQUIRE(none.ok());
  CHECK(none->Find("kind")->as_string() == "none");
  std::error_code ec;
  fs::remove_all(dir, ec);
}

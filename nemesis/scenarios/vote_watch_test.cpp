#include "nemesis/scenarios/vote_watch.h"

#include <catch2/catch.hpp>
#include <map>

using faultline::harness::NodeStatus;
using faultline::nemesis::LooksLikeFreshVoter;
using faultline::nemesis::WatchForVoter;

namespace {
NodeStatus St(const char* role, long long term, const char* leader) {
  NodeStatus s;
  s.reachable = true;
  s.role = role;
  s.term = term;
  s.leader = leader;
  return s;
}
}  // namespace

TEST_CASE("a fresh voter: newer term, follower, no leader", "[vote_watch]") {
  CHECK(LooksLikeFreshVoter(St("follower", 6, ""), 5));
  CHECK_FALSE(LooksLikeFreshVoter(St("follower", 5, ""), 5));    // same term
  CHECK_FALSE(LooksLikeFreshVoter(St("follower", 6, "n1"), 5));  // has leader
  CHECK_FALSE(LooksLikeFreshVoter(St("candidate", 6, ""), 5));
  CHECK_FALSE(LooksLikeFreshVoter(St("leader", 6, "n2"), 5));
  NodeStatus down = St("follower", 6, "");
  down.reachable = false;
  CHECK_FALSE(LooksLikeFreshVoter(down, 5));
  CHECK_FALSE(LooksLikeFreshVoter(St("follower", 6, ""), -1));  // no base
}

TEST_CASE("the watch returns the first node that votes", "[vote_watch]") {
  // n1 campaigns at term 8, n2 answers it on its third poll.
  std::map<int, int> calls;
  auto inspect = [&](int i) {
    int c = calls[i]++;
    if (i == 1)
      return St(c == 0 ? "follower" : "candidate", c == 0 ? 7 : 8,
                c == 0 ? "n3" : "");
    return c < 2 ? St("follower", 7, "n3") : St("follower", 8, "");
  };
  auto w = WatchForVoter({1, 2}, 7, inspect, std::chrono::seconds(5));
  REQUIRE(w.voter.has_value());
  CHECK(*w.voter == 2);
  CHECK(w.term == 8);
  CHECK(w.polls == 6);  // 1,2,1,2,1,2
}

TEST_CASE("the watch gives up at its limit", "[vote_watch]") {
  auto t = std::chrono::steady_clock::time_point{};
  auto clock = [&] { return t += std::chrono::milliseconds(10); };
  auto inspect = [](int) { return St("follower", 7, "n3"); };
  auto w =
      WatchForVoter({0, 1}, 7, inspect, std::chrono::milliseconds(100), clock);
  CHECK_FALSE(w.voter.has_value());
  CHECK(w.polls >= 9);
  CHECK(w.polls <= 11);
  CHECK_FALSE(WatchForVoter({}, 7, inspect, std::chrono::seconds(1)).voter);
}

TEST_CASE("the leader watch waits for the winner of the voter's term",
          "[vote_watch]") {
  using faultline::nemesis::WatchForLeader;
  int looks = 0;
  auto inspect = [&](int i) {
    ++looks;
    if (i == 0) return St("leader", 7, "n1");  // the old term does not count
    return looks < 6 ? St("candidate", 8, "") : St("leader", 8, "n2");
  };
  auto w = WatchForLeader({0, 1}, 8, inspect, std::chrono::seconds(5));
  REQUIRE(w.has_value());
  CHECK(*w == 1);
  CHECK(looks == 6);
  auto t = std::chrono::steady_clock::time_point{};
  auto clock = [&] { return t += std::chrono::milliseconds(10); };
  auto never = [](int) { return St("candidate", 8, ""); };
  CHECK_FALSE(
      WatchForLeader({0, 1}, 8, never, std::chrono::milliseconds(50), clock));
}

// The config side of the fault (harness/config/config_validate.cpp).
#include "harness/config/config.h"

TEST_CASE("kill-voter in a config: targets, at least 3 nodes",
          "[vote_watch][config]") {
  using faultline::harness::LoadConfigText;
  auto ok = LoadConfigText(
      "name: x\ncluster: {nodes: 3}\n"
      "nemesis:\n  faults: [kill-voter]\n  targets: [leader]\n",
      "t.yaml");
  INFO(ok.FormatErrors());
  REQUIRE(ok.ok());
  CHECK(ok.spec->nemesis.faults == std::vector<std::string>{"kill-voter"});

  auto two = LoadConfigText(
      "name: x\ncluster: {nodes: 2}\n"
      "nemesis:\n  faults: [kill-voter]\n  targets: [leader]\n",
      "t.yaml");
  REQUIRE(two.errors.size() == 1);
  CHECK(two.errors[0].message.find("kill-voter needs at least 3 nodes") !=
        std::string::npos);
  CHECK(two.errors[0].line == 2);

  auto none = LoadConfigText(
      "name: x\nnemesis:\n  faults: [kill-voter]\n  targets: []\n", "t.yaml");
  REQUIRE(none.errors.size() == 1);
  CHECK(none.errors[0].message.find("nemesis.targets is empty") !=
        std::string::npos);
}

TEST_CASE("the vote-not-persisted known configs load and use kill-voter",
          "[vote_watch][config]") {
  for (const char* name :
       {"raftkv-vote-not-persisted", "raftkv-vote-not-persisted-control"}) {
    auto k = faultline::harness::LoadConfigFile(
        std::string(FAULTLINE_SOURCE_DIR) + "/configs/known/" + name + ".yaml");
    INFO(name << ": " << k.FormatErrors());
    REQUIRE(k.ok());
    CHECK(k.spec->nemesis.faults == std::vector<std::string>{"kill-voter"});
    CHECK(k.spec->nemesis.targets == std::vector<std::string>{"leader"});
    CHECK(k.spec->workload.observe_ms > 0);
  }
}

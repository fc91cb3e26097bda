// Runs every scenario file in testdata/ (language: scenario.h), and checks
// the runner itself fails on wrong expectations.
#include "targets/raftkv/raft/sim/scenario.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace faultline::raftkv::raft::sim {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(RAFTKV_TESTDATA)) {
    if (e.path().extension() == ".scn") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("scenario files pass", "[sim][scenario]") {
  const std::vector<std::string> files = ScenarioFiles();
  REQUIRE(files.size() >= 10);
  for (const std::string& f : files) {
    DYNAMIC_SECTION(std::filesystem::path(f).filename().string()) {
      ScenarioResult r = RunScenarioFile(f);
      INFO(r.error);
      CHECK(r.ok);
      CHECK(r.commands > 3);
    }
  }
}

// RAFTKV_SCN=path runs one file (add `trace on` to it to see events).
TEST_CASE("run one scenario", "[.one]") {
  const char* path = std::getenv("RAFTKV_SCN");
  REQUIRE(path != nullptr);
  ScenarioResult r = RunScenarioFile(path);
  INFO(r.error);
  CHECK(r.ok);
}

TEST_CASE("scenario runner reports failed expectations with file:line",
          "[sim][scenario]") {
  ScenarioResult r = RunScenario("t.scn",
                                 "nodes 3\n"
                                 "campaign 1\n"
                                 "deliver\n"
                                 "# leader is 1, not 2\n"
                                 "expect leader 2\n");
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind("t.scn:5: `expect leader 2`: node 2 is follower", 0) ==
        0);
  r = RunScenario("t.scn", "nodes 3\nfrobnicate 1\n");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("unknown command 'frobnicate'") != std::string::npos);
  r = RunScenario("t.scn", "expect leader 1\n");
  CHECK_FALSE(r.ok);
  r = RunScenario("t.scn", "nodes 3\nexpect violation read-safety\n");
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("no violation found") != std::string::npos);
}

TEST_CASE("scenario runner fails on an invariant violation unless allowed",
          "[sim][scenario]") {
  const std::string body =
      "set unsafe leader-read-no-quorum\n"
      "nodes 3\n"
      "campaign 1\n"
      "deliver\n"
      "propose 1 k a\n"
      "deliver\n"
      "isolate 1\n"
      "campaign 2\n"
      "deliver\n"
      "propose 2 k b\n"
      "deliver\n"
      "read 1 k\n"
      "expect served 1 k a\n";
  ScenarioResult r = RunScenario("t.scn", body);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("invariant violated") != std::string::npos);
  CHECK(r.error.find("read-safety") != std::string::npos);
  r = RunScenario(
      "t.scn", "allow read-safety\n" + body + "expect violation read-safety\n");
  INFO(r.error);
  CHECK(r.ok);
}

}  // namespace
}  // namespace faultline::raftkv::raft::sim

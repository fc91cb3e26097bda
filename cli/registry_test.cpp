// `faultline list` describes every model and checker in one line each.
#include "cli/registry.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "checkers/linearizable.h"

namespace faultline::cli {
namespace {

TEST_CASE("every model and checker has a one-line description", "[registry]") {
  std::vector<Described> models = CheckModelDescriptions();
  std::vector<std::string> lin = checkers::LinearizableModelNames();
  const std::vector<std::string> others = {
      "mutex-fencing", "leader-per-term", "list-append", "rw-register", "set",
      "bank",          "counter"};
  REQUIRE(models.size() == lin.size() + others.size());
  for (std::size_t i = 0; i < lin.size(); ++i) CHECK(models[i].name == lin[i]);
  for (std::size_t i = 0; i < others.size(); ++i)
    CHECK(models[lin.size() + i].name == others[i]);
  std::vector<Described> checkers_ = CheckerDescriptions();
  CHECK(checkers_.size() == 9);
  std::vector<Described> all = models;
  all.insert(all.end(), checkers_.begin(), checkers_.end());
  for (const Described& d : all) {
    INFO(d.name);
    CHECK_FALSE(d.description.empty());
    CHECK(d.description != "(no description)");
    CHECK(d.description.find('\n') == std::string::npos);
  }
}

TEST_CASE("the collection workloads are made with their checkers",
          "[registry]") {
  for (const std::string name : {"set", "bank", "counter"}) {
    harness::TestSpec spec;
    spec.workload.name = name;
    auto w = MakeWorkload(spec);
    REQUIRE(w.ok());
    CHECK(w.value()->name() == name);
    CHECK(w.value()->client_kind() == name);
    // An empty history: the workload's checker, then stats.
    auto verdicts = w.value()->Check({}, {});
    REQUIRE(verdicts.size() == 2);
    CHECK(verdicts[0].checker == name);
    CHECK(verdicts[1].checker == "stats");
  }
  std::vector<Described> checkers_ = CheckerDescriptions();
  for (const std::string name : {"set", "bank", "counter"}) {
    CHECK(std::any_of(checkers_.begin(), checkers_.end(),
                      [&](const Described& d) { return d.name == name; }));
  }
}

}  // namespace
}  // namespace faultline::cli

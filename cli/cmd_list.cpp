// faultline list [--json]: what faultline can run and check, one line per
// name with what it is: targets, workloads, faults, partition shapes, node
// selectors (harness::Known()), the checkers a run applies and the models
// `check --model` takes (cli/registry.h). --json prints the same as one
// JSON object: {"targets": [{"name", "description"}...], "workloads",
// "faults", "partition_shapes", "node_selectors" (these three with
// "min_nodes"), "checkers", "models"}. Exit code 0.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/registry.h"
#include "harness/config/config.h"

namespace faultline::cli {
namespace {

using Json = nlohmann::ordered_json;

Json KnownJson(const std::vector<harness::KnownName>& names, bool min_nodes) {
  Json out = Json::array();
  for (const auto& n : names) {
    Json item = {{"name", n.name}, {"description", n.description}};
    if (min_nodes) item["min_nodes"] = n.min_nodes;
    out.push_back(item);
  }
  return out;
}

Json DescribedJson(const std::vector<Described>& names) {
  Json out = Json::array();
  for (const auto& n : names) {
    out.push_back({{"name", n.name}, {"description", n.description}});
  }
  return out;
}

std::string ListJson() {
  const harness::KnownNames& k = harness::Known();
  Json j;
  j["targets"] = KnownJson(k.targets, false);
  j["workloads"] = KnownJson(k.workloads, false);
  j["faults"] = KnownJson(k.faults, true);
  j["partition_shapes"] = KnownJson(k.partition_shapes, true);
  j["node_selectors"] = KnownJson(k.node_selectors, true);
  j["checkers"] = DescribedJson(CheckerDescriptions());
  j["models"] = DescribedJson(CheckModelDescriptions());
  return j.dump(2) + "\n";
}

std::string Group(const char* title, const std::vector<Described>& names) {
  std::size_t width = 0;
  for (const auto& n : names) width = std::max(width, n.name.size());
  std::string out = std::string("\n") + title + ":\n";
  for (const auto& n : names) {
    out += "  " + n.name + std::string(width - n.name.size() + 2, ' ') +
           n.description + "\n";
  }
  return out;
}

}  // namespace

void AddListCommand(CLI::App& root, int& exit_code) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = root.add_subcommand(
      "list",
      "List targets, workloads, faults, checkers and models, one line each");
  cmd->add_flag("--json", *json,
                "Print the lists as one JSON object (name, description)");
  cmd->footer(
      "Examples:\n  faultline list\n  faultline list --json | jq -r "
      "'.models[].name'");
  cmd->callback([json, &exit_code] {
    if (*json) {
      std::fputs(ListJson().c_str(), stdout);
    } else {
      std::string out = harness::FormatKnownNames();
      out +=
          Group("checkers (applied by run and analyze)", CheckerDescriptions());
      out +=
          Group("models (faultline check --model)", CheckModelDescriptions());
      std::fputs(out.c_str(), stdout);
    }
    exit_code = 0;
  });
}

}  // namespace faultline::cli

#include "nemesis/node_exec.h"

#include <chrono>

#include "harness/cluster/netns.h"
#include "harness/process/find_program.h"

namespace faultline::nemesis {

bool CanRunFaults(const harness::Node& node) {
  if (!node.netns.empty()) return true;
  return node.remote != nullptr && !node.remote->SharesControllerPids();
}

harness::CommandResult RunOnNode(const harness::Node& node,
                                 std::string_view tool,
                                 std::vector<std::string> args,
                                 const std::string& stdin_data) {
  harness::CommandOptions o;
  o.stdin_data = stdin_data;
  o.timeout = std::chrono::milliseconds(15000);
  if (node.netns.empty() && node.remote != nullptr) {
    args.insert(args.begin(), std::string(tool));
    return node.remote->Run(args, o);
  }
  const std::string path = harness::FindSystemTool(tool);
  if (path.empty()) {
    harness::CommandResult r;
    r.error = std::string(tool) + " not found";
    return r;
  }
  args.insert(args.begin(), path);
  o.netns = node.netns;
  return harness::RunCommand(args, o);
}

std::string NodeWhere(const harness::Node& node) {
  if (!node.netns.empty()) return node.netns;
  return "node " + node.name + " (" + node.ip + ")";
}

void LocateEntry(const harness::Node& node, harness::LedgerEntry* entry) {
  if (!node.netns.empty()) {
    entry->netns = node.netns;
  } else if (node.remote != nullptr) {
    entry->remote = node.remote->Descriptor();
  }
}

}  // namespace faultline::nemesis

// Running fault commands (iptables, iptables-restore) on a node, whichever
// provider made it: netns nodes run the tool from the controller inside the
// node's namespace (CommandOptions::netns, the tool's absolute path); other
// nodes (ssh) run it through node.remote->Run, by name from the node's PATH
// (under `sudo -n` when the Remote is configured so).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/ledger/ledger.h"
#include "harness/process/process.h"

namespace faultline::nemesis {

// True when iptables faults can be applied on `node`: it has a namespace or
// a Remote of its own host (not a plain local node).
bool CanRunFaults(const harness::Node& node);

// Runs `tool args...` on the node with `stdin_data` and a 15 s timeout. A
// tool missing on the controller (netns) gives exit_code -1 and an error.
harness::CommandResult RunOnNode(const harness::Node& node,
                                 std::string_view tool,
                                 std::vector<std::string> args,
                                 const std::string& stdin_data = "");

// "netns fl-x-n1" or "node n1 (10.0.0.2)", for messages.
std::string NodeWhere(const harness::Node& node);

// Sets where a ledger entry for `node` applies: entry.netns for a netns
// node, else entry.remote (the Remote's descriptor).
void LocateEntry(const harness::Node& node, harness::LedgerEntry* entry);

}  // namespace faultline::nemesis

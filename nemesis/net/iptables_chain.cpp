#include "nemesis/net/iptables_chain.h"

#include <sstream>

#include "harness/process/process.h"
#include "nemesis/node_exec.h"

namespace faultline::nemesis {

std::string ChainBatch(const std::string& chain,
                       const std::vector<std::string>& rules) {
  std::string batch = "*filter\n:" + chain + " - [0:0]\n";
  for (const auto& rule : rules) batch += "-A " + chain + " " + rule + "\n";
  batch += "-A INPUT -j " + chain + "\nCOMMIT\n";
  return batch;
}

ChainPresence ChainState(const std::string& iptables_s,
                         const std::string& chain) {
  ChainPresence p;
  std::istringstream in(iptables_s);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
      line.pop_back();
    if (line == "-N " + chain) p.exists = true;
    if (line == "-A INPUT -j " + chain) ++p.jumps;
    if (line.rfind("-A " + chain + " ", 0) == 0) ++p.rules;
  }
  return p;
}

harness::Status ApplyChain(const harness::Node& node, const std::string& chain,
                           const std::vector<std::string>& rules) {
  if (node.remote == nullptr)
    return harness::Fail("node " + node.name + " has no remote");
  auto r = RunOnNode(node, "iptables-restore", {"-w", "--noflush"},
                     ChainBatch(chain, rules));
  if (!r.ok())
    return harness::Fail("iptables-restore on " + node.name + ": " +
                         harness::DescribeResult(r));
  return harness::Ok();
}

harness::Status RemoveChain(const harness::Node& node,
                            const std::string& chain) {
  if (node.remote == nullptr)
    return harness::Fail("node " + node.name + " has no remote");
  // The same removal as the ledger's undo of the chain's entry.
  return harness::HealIptablesTag(
      [&](const std::vector<std::string>& args) {
        return RunOnNode(node, "iptables", args);
      },
      chain, NodeWhere(node), nullptr);
}

}  // namespace faultline::nemesis

#include "nemesis/net/iptables_chain.h"

#include <cstdlib>
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

std::optional<std::uint64_t> ChainDropped(const std::string& iptables_list,
                                          const std::string& chain) {
  std::istringstream in(iptables_list);
  std::string line;
  bool header = false;
  std::uint64_t total = 0;
  while (std::getline(in, line)) {
    if (line.rfind("Chain " + chain + " ", 0) == 0) {
      header = true;
      continue;
    }
    if (!header) continue;
    std::istringstream fields(line);
    std::string pkts, bytes, target;
    if (!(fields >> pkts >> bytes >> target)) continue;
    if (target != "DROP" && target != "REJECT") continue;
    char* end = nullptr;
    unsigned long long n = std::strtoull(pkts.c_str(), &end, 10);
    if (end == pkts.c_str() || *end != '\0') continue;  // the column titles
    total += n;
  }
  if (!header) return std::nullopt;
  return total;
}

harness::Result<std::uint64_t> ReadChainDropped(const harness::Node& node,
                                                const std::string& chain) {
  if (node.remote == nullptr)
    return harness::Fail("node " + node.name + " has no remote");
  auto r = RunOnNode(node, "iptables", {"-w", "-L", chain, "-v", "-x", "-n"});
  if (!r.ok())
    return harness::Fail("iptables -L " + chain + " in " + NodeWhere(node) +
                         ": " + harness::DescribeResult(r));
  auto n = ChainDropped(r.out, chain);
  if (!n) return harness::Fail("no chain " + chain + " in " + NodeWhere(node));
  return *n;
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

// A fault's iptables rules live in a chain of its own (one chain name per
// fault kind) that INPUT jumps to, so faults active at the same time on one
// node (e.g. a partition and a delay, see `together` in docs/config.md) add
// and remove only their own rules. Packet loss keeps its commented rules in
// INPUT (nemesis/net/loss.h), which these functions never touch.
//
// ChainBatch and ChainState are pure; ApplyChain and RemoveChain run
// iptables on the node through node.remote (so they work on any transport).
// A fault's "iptables" ledger entry names its chain (`name`), and the
// ledger's undo removes exactly that chain and the rules that jump to it
// (harness/ledger/ledger_names.h), as RemoveChain does; the chain names
// follow the ledger's naming rule (checked at compile time below).
//
// Thread-safety: pure functions from any thread; ApplyChain/RemoveChain for
// one node and chain must not run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger_names.h"

namespace faultline::nemesis {

inline constexpr const char* kPartitionChain = "faultline-part";
inline constexpr const char* kDelayChain = "faultline-delay";
// figure8's cuts (nemesis/scenarios/figure8.cpp); its jump is inserted first in
// INPUT, ahead of the delay chain's.
inline constexpr const char* kFigure8Chain = "faultline-fig8";
static_assert(harness::IsFaultlineTag(kPartitionChain) &&
                  harness::IsFaultlineTag(kDelayChain) &&
                  harness::IsFaultlineTag(kFigure8Chain),
              "heal only removes chains named by the ledger's rule");

// The iptables-restore batch (for --noflush) that creates `chain` with
// `rules` (each a rule spec without "-A <chain>", e.g. "-s 10.0.0.2/32 -j
// DROP") and appends "-A INPUT -j <chain>".
std::string ChainBatch(const std::string& chain,
                       const std::vector<std::string>& rules);

struct ChainPresence {
  int jumps = 0;        // "-A INPUT -j <chain>" lines
  bool exists = false;  // "-N <chain>" line
  int rules = 0;        // "-A <chain> ..." lines
};
// Reads the output of `iptables -S` (all chains of the filter table).
ChainPresence ChainState(const std::string& iptables_s,
                         const std::string& chain);

// Applies ChainBatch(chain, rules) in the node.
harness::Status ApplyChain(const harness::Node& node, const std::string& chain,
                           const std::vector<std::string>& rules);
// The packets `chain`'s DROP and REJECT rules stopped, summed, from the
// output of `iptables -L <chain> -v -x -n` (rule lines start with the packet
// and byte counters, then the target); nullopt when the listing is not the
// chain's (no "Chain <chain>" header).
std::optional<std::uint64_t> ChainDropped(const std::string& iptables_list,
                                          const std::string& chain);
// Lists `chain` in the node with its counters and returns ChainDropped of
// it; fails when iptables fails or the chain is not there. Read just before
// a fault removes its chain, so the fault can say how much it stopped.
harness::Result<std::uint64_t> ReadChainDropped(const harness::Node& node,
                                                const std::string& chain);
// Removes every rule that jumps to `chain` (harness::TagHealCommands), then
// the chain; succeeds when a new listing shows neither (also when they were
// already gone).
harness::Status RemoveChain(const harness::Node& node,
                            const std::string& chain);

}  // namespace faultline::nemesis

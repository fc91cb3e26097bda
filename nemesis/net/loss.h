// Packet loss: the "loss" fault's rules. NetnsNemesis applies them inside
// a chosen node's namespace (iptables-restore --noflush), so
// the node drops each packet it RECEIVES from the other nodes with
// probability p (iptables `-m statistic --mode random`); packets from the
// controller and packets the node sends are untouched. `tc netem` is not
// needed (the kernel here has no sch_netem).
//
// Every rule carries the comment kLossComment, so healing removes exactly
// these rules (`-D` of the same rule text) and leaves any other rule in
// the chain alone; the drop counters are read back from `iptables -L -v`.
// The fault's "iptables" ledger entry names kLossComment, and the ledger's
// undo deletes the rules that carry it (harness/ledger/ledger_names.h).
// See docs/faults.md ("loss").
//
// Thread-safety: every function may be called from any thread; only
// ApplyLoss and RemoveLoss do I/O (they run iptables on the node).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger_names.h"

namespace faultline::nemesis {

// Limits of the drop probability (also the config's bounds): 0 < p <= 1.
inline constexpr double kMinLossProbability = 0.0;  // exclusive
inline constexpr double kMaxLossProbability = 1.0;

inline constexpr const char* kLossComment = "faultline-loss";
static_assert(harness::IsFaultlineTag(kLossComment),
              "heal only removes rules tagged by the ledger's rule");

// The probability as iptables prints and parses it: fixed point, at most 6
// decimals, trailing zeros cut ("0.3", "1", "0.000001"). Precondition:
// kMinLossProbability < p <= kMaxLossProbability.
std::string FormatProbability(double p);

// One rule per source, in source order, e.g.
//   INPUT -s 10.77.56.2/32 -m statistic --mode random --probability 0.3
//   -m comment --comment faultline-loss -j DROP
// (without -A/-D; one line per rule).
std::vector<std::string> LossRuleSpecs(const std::vector<std::string>& sources,
                                       double probability);

// The iptables-restore batch (for --noflush) that adds (`add` true: -A) or
// deletes (-D) exactly LossRuleSpecs(sources, probability).
std::string LossRules(const std::vector<std::string>& sources,
                      double probability, bool add);

// The packets dropped by loss rules, summed, from the output of
// `iptables -w -L INPUT -v -x -n`: lines whose comment is kLossComment and
// whose target is DROP. nullopt when no such line exists.
std::optional<std::uint64_t> LossDropped(const std::string& iptables_list);

// Adds the rules on `node` (in its namespace, or over its Remote; see
// nemesis/node_exec.h). The caller records the ledger entry (name
// kLossComment) first.
harness::Status ApplyLoss(const harness::Node& node,
                          const std::vector<std::string>& sources,
                          double probability);
// Reads the drop counters (into `dropped` when not null; 0 when the rules
// are already gone), then deletes exactly the rules ApplyLoss added.
// Succeeds when they are gone.
harness::Status RemoveLoss(const harness::Node& node,
                           const std::vector<std::string>& sources,
                           double probability, std::uint64_t* dropped);

}  // namespace faultline::nemesis

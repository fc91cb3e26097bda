// Partition shapes as pure grudge computations (Jepsen's nemesis.combined
// vocabulary). No I/O: the caller applies the grudge (netns_nemesis.h).
//
// A partition is described twice:
//   components: the groups of nodes that still see each other (for the
//               history; groups may overlap, e.g. the "bridge" node or the
//               majority views of "majorities-ring");
//   grudge:     node -> nodes whose traffic it drops. Symmetric (a drops b
//               exactly when b drops a) for every shape except the one-way
//               ones. The controller is never in it.
// For "majorities-ring" the components are the nodes' views, in node order
// (components[i] = what node i sees) and i drops j exactly when j is not in
// i's view; for the one-way shapes the components are [deaf, rest]: every
// node of `deaf` drops what `rest` sends, while `rest` still receives from
// `deaf` (a one-way partition: INPUT rules on one side only); for every other
// shape i drops j exactly when no component holds both.
//
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/interfaces/result.h"

namespace faultline::nemesis {

struct Partition {
  std::string shape;
  bool one_way = false;  // a one-way shape: grudge is not symmetric
  std::vector<std::vector<int>> components;  // 0-based node indices, sorted
  std::map<int, std::set<int>> grudge;       // only nodes that drop someone
};

// The shapes ComputePartition knows, in a stable order.
const std::vector<std::string>& PartitionShapes();

// Computes `shape` for nodes 0..n-1 from `seed` (same inputs, same result):
//   "one"             one random node alone | the rest
//   "leader"          node `leader` alone | the rest (random node if none)
//   "halves"          random floor(n/2) nodes | the rest
//   "majorities-ring" every node sees a majority (itself included), no two
//                     nodes the same one; the exact ring for n = 5, a seeded
//                     greedy construction otherwise (n >= 3; n = 3 is a path)
//   "bridge"          two random halves of n-1 nodes, both connected to the
//                     remaining node (n >= 3)
//   "one-way-one", "one-way-leader", "one-way-halves"
//                     the groups of "one", "leader" resp. "halves" (same
//                     seed, same groups); the first group (the single node,
//                     the leader, the smaller half) stops receiving from the
//                     rest, which still receives from it
// Fails for unknown shapes, n < 2, or shapes that need more nodes.
harness::Result<Partition> ComputePartition(const std::string& shape, int n,
                                            std::uint64_t seed,
                                            std::optional<int> leader = {});

// Shape "same" (harness/run/fault_group.h): the nodes `side` (0-based indices
// of nodes 0..n-1) alone | the rest, both ways. Fails when `side` is empty,
// holds an index outside 0..n-1, or holds every node.
harness::Result<Partition> IsolateNodes(const std::vector<int>& side, int n);

inline constexpr const char* kOneWayPrefix = "one-way-";

// The rule specs (for a chain, see nemesis/net/iptables_chain.h) with which a
// node drops what `sources` send it. mode "drop": "-s <ip>/32 -j DROP" per
// source; "reset": first "-s <ip>/32 -p tcp --tcp-flags RST RST -j RETURN"
// (resets pass, so the other side's rejections reach this node too), then
// "-s <ip>/32 -p tcp -j REJECT --reject-with tcp-reset" (other TCP segments
// are answered with a reset, so connections fail at once instead of timing
// out), then the DROP rule for everything else.
std::vector<std::string> PartitionRuleSpecs(
    const std::vector<std::string>& sources, const std::string& mode);

// The directed flows a partition cuts, (sender, receiver), sorted.
std::vector<std::pair<int, int>> BlockedFlows(const Partition& p);

// The grudge for possibly overlapping `components` over n nodes.
std::map<int, std::set<int>> GrudgeFromComponents(
    int n, const std::vector<std::vector<int>>& components);

// Deterministic helpers shared by the nemesis code (independent of the
// standard library's distribution implementations, so a seed means the same
// schedule on every platform).
std::uint64_t SplitMix64(std::uint64_t x);
// Uniform in [0, bound), bound > 0.
std::uint64_t UniformBelow(std::mt19937_64& rng, std::uint64_t bound);
// Fisher-Yates shuffle of 0..n-1.
std::vector<int> ShuffledNodes(int n, std::mt19937_64& rng);

}  // namespace faultline::nemesis

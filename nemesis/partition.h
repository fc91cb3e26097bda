// Partition shapes as pure grudge computations (Jepsen's nemesis.combined
// vocabulary). No I/O: the caller applies the grudge (netns_nemesis.h).
//
// A partition is described twice:
//   components: the groups of nodes that still see each other (for the
//               history; groups may overlap, e.g. the "bridge" node or the
//               majority views of "majorities-ring");
//   grudge:     node -> nodes whose traffic it drops. Always symmetric: a
//               drops b exactly when b drops a. The controller is never in it.
// For "majorities-ring" the components are the nodes' views, in node order
// (components[i] = what node i sees) and i drops j exactly when j is not in
// i's view; for every other shape i drops j exactly when no component holds
// both.
//
// Thread-safety: pure functions; call from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "harness/result.h"

namespace faultline::nemesis {

struct Partition {
  std::string shape;
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
// Fails for unknown shapes, n < 2, or shapes that need more nodes.
harness::Result<Partition> ComputePartition(const std::string& shape, int n,
                                            std::uint64_t seed,
                                            std::optional<int> leader = {});

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

#include "nemesis/net/partition.h"

#include <algorithm>

namespace faultline::nemesis {
namespace {

using harness::Fail;
using harness::Result;

std::vector<int> Sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

Partition Split(const std::string& shape, int n,
                const std::vector<std::vector<int>>& groups) {
  Partition p;
  p.shape = shape;
  for (const auto& g : groups) p.components.push_back(Sorted(g));
  p.grudge = GrudgeFromComponents(n, p.components);
  return p;
}

// Majorities ring: node views as adjacency sets over ring positions.
// Returns the views (each includes the node itself) indexed by node.
std::optional<std::vector<std::set<int>>> MajoritiesRing(int n,
                                                         std::mt19937_64& rng) {
  const int majority = n / 2 + 1;
  const int degree = majority - 1;  // neighbours each node needs
  for (int attempt = 0; attempt < 32; ++attempt) {
    const std::vector<int> ring = ShuffledNodes(n, rng);
    // adjacency by ring position
    std::vector<std::set<int>> adj(static_cast<std::size_t>(n));
    auto link = [&](int a, int b) {
      adj[static_cast<std::size_t>(a)].insert(b);
      adj[static_cast<std::size_t>(b)].insert(a);
    };
    auto deg = [&](int p) {
      return static_cast<int>(adj[static_cast<std::size_t>(p)].size());
    };
    auto distance = [&](int a, int b) {
      int d = std::abs(a - b);
      return std::min(d, n - d);
    };
    for (int p = 0; p < n; ++p)
      for (int k = 1; k <= degree / 2; ++k) link(p, (p + k) % n);
    if (degree % 2 == 1) {
      if (n % 2 == 0) {
        for (int p = 0; p < n / 2; ++p) link(p, p + n / 2);
      } else {
        // Greedy chords: pair each short node with the farthest short node
        // it is not yet linked to; the last one links to any far node.
        for (int p = 0; p < n; ++p) {
          if (deg(p) >= degree) continue;
          int best = -1;
          for (bool short_only : {true, false}) {
            for (int q = 0; q < n; ++q) {
              if (q == p || adj[static_cast<std::size_t>(p)].count(q)) continue;
              if (short_only && deg(q) >= degree) continue;
              if (best < 0 || distance(p, q) > distance(p, best)) best = q;
            }
            if (best >= 0) break;
          }
          if (best >= 0) link(p, best);
        }
      }
    }
    // Views by node id.
    std::vector<std::set<int>> views(static_cast<std::size_t>(n));
    for (int p = 0; p < n; ++p) {
      auto& v =
          views[static_cast<std::size_t>(ring[static_cast<std::size_t>(p)])];
      v.insert(ring[static_cast<std::size_t>(p)]);
      for (int q : adj[static_cast<std::size_t>(p)])
        v.insert(ring[static_cast<std::size_t>(q)]);
    }
    bool ok = true, partial = false;
    std::set<std::set<int>> distinct;
    for (const auto& v : views) {
      ok = ok && static_cast<int>(v.size()) >= majority;
      partial = partial || static_cast<int>(v.size()) < n;
      distinct.insert(v);
    }
    if (ok && partial && static_cast<int>(distinct.size()) == n) return views;
  }
  return std::nullopt;
}

}  // namespace

std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t UniformBelow(std::mt19937_64& rng, std::uint64_t bound) {
  // Rejection sampling: no modulo bias, same result on every platform.
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % bound);
  std::uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % bound;
}

std::vector<int> ShuffledNodes(int n, std::mt19937_64& rng) {
  std::vector<int> v(static_cast<std::size_t>(std::max(n, 0)));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  for (int i = n - 1; i > 0; --i) {
    auto j = UniformBelow(rng, static_cast<std::uint64_t>(i) + 1);
    std::swap(v[static_cast<std::size_t>(i)], v[j]);
  }
  return v;
}

const std::vector<std::string>& PartitionShapes() {
  static const std::vector<std::string> kShapes = {
      "one",    "leader",      "halves",         "majorities-ring",
      "bridge", "one-way-one", "one-way-leader", "one-way-halves"};
  return kShapes;
}

std::map<int, std::set<int>> GrudgeFromComponents(
    int n, const std::vector<std::vector<int>>& components) {
  std::map<int, std::set<int>> grudge;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      bool together = false;
      for (const auto& c : components) {
        bool has_a = std::find(c.begin(), c.end(), a) != c.end();
        bool has_b = std::find(c.begin(), c.end(), b) != c.end();
        if (has_a && has_b) {
          together = true;
          break;
        }
      }
      if (!together) grudge[a].insert(b);
    }
  }
  return grudge;
}

Result<Partition> ComputePartition(const std::string& shape, int n,
                                   std::uint64_t seed,
                                   std::optional<int> leader) {
  if (std::find(PartitionShapes().begin(), PartitionShapes().end(), shape) ==
      PartitionShapes().end())
    return Fail("unknown partition shape '" + shape + "'");
  if (n < 2) return Fail("partition '" + shape + "' needs at least 2 nodes");
  if (shape.rfind(kOneWayPrefix, 0) == 0) {
    // The two-way shape's groups; the first one stops hearing the second.
    const std::string base = shape.substr(std::string(kOneWayPrefix).size());
    auto two_way = ComputePartition(base, n, seed, leader);
    if (!two_way.ok()) return Fail(two_way.error());
    Partition p;
    p.shape = shape;
    p.one_way = true;
    p.components = two_way->components;
    for (int deaf : p.components[0])
      p.grudge[deaf].insert(p.components[1].begin(), p.components[1].end());
    return p;
  }
  std::mt19937_64 rng(SplitMix64(seed));
  const std::vector<int> order = ShuffledNodes(n, rng);
  auto rest_without = [&](int x) {
    std::vector<int> rest;
    for (int i = 0; i < n; ++i)
      if (i != x) rest.push_back(i);
    return rest;
  };
  if (shape == "one" || shape == "leader") {
    int alone = order[0];
    if (shape == "leader" && leader && *leader >= 0 && *leader < n)
      alone = *leader;
    return Split(shape, n, {{alone}, rest_without(alone)});
  }
  if (shape == "halves") {
    const auto half = static_cast<std::ptrdiff_t>(n / 2);
    return Split(shape, n,
                 {std::vector<int>(order.begin(), order.begin() + half),
                  std::vector<int>(order.begin() + half, order.end())});
  }
  if (n < 3) return Fail("partition '" + shape + "' needs at least 3 nodes");
  if (shape == "bridge") {
    const int bridge = order[0];
    const auto half = static_cast<std::ptrdiff_t>(1 + (n - 1) / 2);
    std::vector<int> a(order.begin() + 1, order.begin() + half);
    std::vector<int> b(order.begin() + half, order.end());
    a.push_back(bridge);
    b.push_back(bridge);
    return Split(shape, n, {a, b});
  }
  // majorities-ring
  auto views = MajoritiesRing(n, rng);
  if (!views)
    return Fail("cannot build a majorities ring of " + std::to_string(n) +
                " nodes");
  Partition p;
  p.shape = shape;
  for (int i = 0; i < n; ++i) {
    const auto& v = (*views)[static_cast<std::size_t>(i)];
    p.components.emplace_back(v.begin(), v.end());
    for (int j = 0; j < n; ++j)
      if (!v.count(j)) p.grudge[i].insert(j);
  }
  return p;
}

Result<Partition> IsolateNodes(const std::vector<int>& side, int n) {
  std::vector<int> inside = Sorted(side);
  inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
  if (inside.empty()) return Fail("partition 'same' has no nodes to cut off");
  if (inside.front() < 0 || inside.back() >= n)
    return Fail("partition 'same': node index out of range");
  std::vector<int> rest;
  for (int i = 0; i < n; ++i)
    if (!std::binary_search(inside.begin(), inside.end(), i)) rest.push_back(i);
  if (rest.empty())
    return Fail(
        "partition 'same' would cut off every node (the group's first fault "
        "acted on all of them): nothing is left on the other side");
  return Split("same", n, {inside, rest});
}

std::vector<std::string> PartitionRuleSpecs(
    const std::vector<std::string>& sources, const std::string& mode) {
  std::vector<std::string> out;
  for (const auto& ip : sources) {
    if (mode == "reset") {
      out.push_back("-s " + ip + "/32 -p tcp --tcp-flags RST RST -j RETURN");
      out.push_back("-s " + ip +
                    "/32 -p tcp -j REJECT --reject-with tcp-reset");
    }
    out.push_back("-s " + ip + "/32 -j DROP");
  }
  return out;
}

std::vector<std::pair<int, int>> BlockedFlows(const Partition& p) {
  std::vector<std::pair<int, int>> out;
  for (const auto& [receiver, senders] : p.grudge)
    for (int sender : senders) out.emplace_back(sender, receiver);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace faultline::nemesis

// The analysis graph, its strongly connected components and the named-cycle
// search (checkers/txn/cycles.h).
//
// Real-time order uses the frontier technique: scanning invocations and ok
// completions in history order, the frontier F holds the ok transactions
// that completed and are not yet implied by a later completed one. Each
// invocation of T gets an edge from every member of F; each ok completion
// of T removes from F every transaction that completed before T was
// invoked (they reach T's successors through T) and adds T. |F| is bounded
// by the concurrency, so the edge count is O(n · concurrency).
//
// The cycle search runs a breadth-first search per start edge a→b, from b
// back to a, over the states (node, count of "special" edges so far,
// capped at 2) inside a.'s component, restricted to the edge kinds the
// class allows; the first state at a whose count fits the class closes a
// shortest cycle through that start edge.
#include "checkers/txn/cycles.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>
#include <vector>

#include "checkers/txn/flat_map.h"
#include "checkers/txn/infer_common.h"

namespace faultline::checkers::txn {
namespace {

constexpr std::uint8_t kData = kWW | kWR | kRW;
constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The weakest kind among `bits`: ww < wr < rw < process < realtime.
std::uint8_t Label(std::uint8_t bits) {
  if (bits & kWW) return kWW;
  if (bits & kWR) return kWR;
  if (bits & kRW) return kRW;
  if (bits & kProcess) return kProcess;
  if (bits & kRealtime) return kRealtime;
  return 0;
}

// One class of the search. Each start edge is labelled `start`; a cycle is
// accepted when its count of `special` labels is >= need (== need when
// exact).
struct ClassSpec {
  std::uint8_t mask;
  std::uint8_t start;
  std::uint8_t special;  // 0: none counted
  std::uint8_t need;
  bool exact;
  int type;  // index in kTypeNames of the class searched; -1: any cycle
};

// The twelve cycle classes, in the order SearchComponent searches them.
constexpr const char* kTypeNames[12] = {
    "G0",          "G1c",          "G-single",          "G2-item",
    "G0-process",  "G1c-process",  "G-single-process",  "G2-item-process",
    "G0-realtime", "G1c-realtime", "G-single-realtime", "G2-item-realtime"};

}  // namespace

const char* EdgeName(std::uint8_t bit) {
  switch (bit) {
    case kWW:
      return "ww";
    case kWR:
      return "wr";
    case kRW:
      return "rw";
    case kRealtime:
      return "realtime";
    case kProcess:
      return "process";
    default:
      return "?";
  }
}

std::uint8_t FullGraph::BitsBetween(TxnId from, TxnId to) const {
  std::uint8_t b = 0;
  for (std::uint32_t e = offsets[from]; e < offsets[from + 1]; ++e) {
    if (targets[e] == to) b |= bits[e];
  }
  return b;
}

std::uint64_t FullGraph::MemoryBytes() const {
  return Bytes(offsets) + Bytes(targets) + Bytes(bits);
}

void RealtimeEdges(const TxnSet& set, std::vector<Edge>& out) {
  const std::vector<Txn>& txns = set.txns;
  std::vector<TxnId> invokes;
  std::vector<TxnId> completes;
  invokes.reserve(txns.size());
  for (TxnId t = 0; t < txns.size(); ++t) {
    if (txns[t].status == Status::kFail) continue;
    invokes.push_back(t);
    if (txns[t].status == Status::kOk && txns[t].complete_index >= 0) {
      completes.push_back(t);
    }
  }
  auto by_invoke = [&](TxnId a, TxnId b) {
    return txns[a].invoke_index < txns[b].invoke_index;
  };
  if (!std::is_sorted(invokes.begin(), invokes.end(), by_invoke)) {
    std::stable_sort(invokes.begin(), invokes.end(), by_invoke);
  }
  std::sort(completes.begin(), completes.end(), [&](TxnId a, TxnId b) {
    return txns[a].complete_index < txns[b].complete_index;
  });
  std::vector<TxnId> frontier;
  std::size_t c = 0;
  for (TxnId t : invokes) {
    const std::int64_t at = txns[t].invoke_index;
    for (; c < completes.size() && txns[completes[c]].complete_index < at;
         ++c) {
      const TxnId d = completes[c];
      const std::int64_t d_invoked = txns[d].invoke_index;
      std::erase_if(frontier, [&](TxnId f) {
        return txns[f].complete_index < d_invoked;
      });
      frontier.push_back(d);
    }
    for (TxnId f : frontier) out.push_back(Edge{f, t, kRealtime});
  }
}

void ProcessEdges(const TxnSet& set, std::vector<Edge>& out) {
  FlatMap64 slot_of;        // process → index into `last`
  std::vector<TxnId> last;  // per process, its last non-fail txn
  for (TxnId t = 0; t < set.txns.size(); ++t) {
    const Txn& txn = set.txns[t];
    if (txn.status == Status::kFail) continue;
    const auto slot = static_cast<std::uint32_t>(last.size());
    const std::uint32_t had =
        slot_of.Insert(static_cast<std::uint64_t>(txn.process), slot);
    if (had == FlatMap64::kAbsent) {
      last.push_back(t);
      continue;
    }
    if (set.txns[last[had]].status == Status::kOk) {
      out.push_back(Edge{last[had], t, kProcess});
    }
    last[had] = t;
  }
}

FullGraph BuildFullGraph(const Graph& data, const TxnSet& set) {
  std::vector<Edge> order;
  order.reserve(set.txns.size() * 3);
  RealtimeEdges(set, order);
  const std::size_t realtime = order.size();
  ProcessEdges(set, order);
  FullGraph g;
  g.realtime_edges = realtime;
  g.process_edges = order.size() - realtime;
  const std::uint32_t n = std::max<std::uint32_t>(
      data.nodes(), static_cast<std::uint32_t>(set.txns.size()));
  g.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (TxnId v = 0; v < data.nodes(); ++v) {
    g.offsets[v + 1] += data.OutEnd(v) - data.OutBegin(v);
  }
  for (const Edge& e : order) ++g.offsets[e.from + 1];
  for (std::size_t i = 1; i < g.offsets.size(); ++i) {
    g.offsets[i] += g.offsets[i - 1];
  }
  g.targets.resize(g.offsets[n]);
  g.bits.resize(g.offsets[n]);
  std::vector<std::uint32_t> cursor(g.offsets.begin(), g.offsets.end() - 1);
  for (TxnId v = 0; v < data.nodes(); ++v) {
    for (std::uint32_t e = data.OutBegin(v); e < data.OutEnd(v); ++e) {
      const std::uint32_t at = cursor[v]++;
      g.targets[at] = data.Target(e);
      g.bits[at] = data.Bits(e);
    }
  }
  for (const Edge& e : order) {
    const std::uint32_t at = cursor[e.from]++;
    g.targets[at] = e.to;
    g.bits[at] = e.bits;
  }
  return g;
}

Components StronglyConnected(const FullGraph& g) {
  const std::uint32_t n = g.nodes();
  Components out;
  out.component.assign(n, kNone);
  std::vector<std::uint32_t> index(n, kNone);
  std::vector<std::uint32_t> low(n, 0);
  std::vector<std::uint8_t> on_stack(n, 0);
  std::vector<TxnId> stack;
  struct Frame {
    TxnId v;
    std::uint32_t next;
  };
  std::vector<Frame> calls;
  std::uint32_t counter = 0;
  auto visit = [&](TxnId v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = 1;
    calls.push_back(Frame{v, g.offsets[v]});
  };
  for (TxnId s = 0; s < n; ++s) {
    if (index[s] != kNone) continue;
    visit(s);
    while (!calls.empty()) {
      Frame& f = calls.back();
      const TxnId v = f.v;
      if (f.next < g.offsets[v + 1]) {
        const TxnId w = g.targets[f.next++];
        if (index[w] == kNone) {
          visit(w);  // invalidates f
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        std::uint32_t size = 0;
        TxnId w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          out.component[w] = out.count;
          ++size;
        } while (w != v);
        if (size > 1) ++out.nontrivial;
        ++out.count;
      }
      calls.pop_back();
      if (!calls.empty()) {
        const TxnId u = calls.back().v;
        low[u] = std::min(low[u], low[v]);
      }
    }
  }
  return out;
}

std::string CycleType(const std::vector<std::uint8_t>& labels) {
  int wr = 0;
  int rw = 0;
  bool realtime = false;
  bool process = false;
  for (std::uint8_t l : labels) {
    wr += l == kWR;
    rw += l == kRW;
    realtime |= l == kRealtime;
    process |= l == kProcess;
  }
  std::string type = rw >= 2   ? "G2-item"
                     : rw == 1 ? "G-single"
                     : wr      ? "G1c"
                               : "G0";
  if (realtime) {
    type += "-realtime";
  } else if (process) {
    type += "-process";
  }
  return type;
}

namespace {

class Searcher {
 public:
  Searcher(const FullGraph& g, const Components& comps,
           const CycleSearchOptions& options, CycleSearch& out)
      : g_(g),
        comps_(comps),
        options_(options),
        check_(options.limits),
        out_(out) {}

  void Run() {
    // Members of each non-trivial component, grouped.
    const std::uint32_t n = g_.nodes();
    std::vector<std::uint32_t> size(comps_.count, 0);
    for (TxnId v = 0; v < n; ++v) ++size[comps_.component[v]];
    std::vector<std::uint32_t> begin(comps_.count + 1, 0);
    for (std::uint32_t c = 0; c < comps_.count; ++c) {
      begin[c + 1] = begin[c] + (size[c] > 1 ? size[c] : 0);
    }
    members_.resize(begin[comps_.count]);
    local_.assign(n, kNone);
    std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
    std::uint32_t largest = 0;
    for (TxnId v = 0; v < n; ++v) {
      const std::uint32_t c = comps_.component[v];
      if (size[c] < 2) continue;
      local_[v] = fill[c] - begin[c];
      members_[fill[c]++] = v;
      largest = std::max(largest, size[c]);
    }
    stamp_.assign(static_cast<std::size_t>(largest) * 3, 0);
    parent_.assign(static_cast<std::size_t>(largest) * 3, kNone);
    for (std::uint32_t c = 0; c < comps_.count; ++c) {
      if (size[c] < 2) continue;
      if (check_.Expired()) {
        out_.gave_up = "deadline reached during the cycle search, after " +
                       std::to_string(out_.components_searched) + " of " +
                       std::to_string(comps_.nontrivial) +
                       " strongly connected components";
        return;
      }
      comp_ = c;
      comp_members_ = &members_[begin[c]];
      comp_size_ = size[c];
      SearchComponent();
      if (!out_.gave_up.empty()) return;
      ++out_.components_searched;
    }
  }

 private:
  // Whether the current component has a cycle using only edges with a
  // kind in `mask` (Kahn's algorithm over the component; O(members +
  // edges), remembered per mask for the component).
  bool CycleWithin(std::uint8_t mask) {
    for (const auto& [m, cyclic] : cyclic_cache_) {
      if (m == mask) return cyclic;
    }
    indegree_.assign(comp_size_, 0);
    auto each_edge = [&](TxnId a, auto&& fn) {
      for (std::uint32_t e = g_.offsets[a]; e < g_.offsets[a + 1]; ++e) {
        const TxnId b = g_.targets[e];
        if (comps_.component[b] == comp_ && (g_.bits[e] & mask) != 0) fn(b);
      }
    };
    for (std::uint32_t i = 0; i < comp_size_; ++i) {
      each_edge(comp_members_[i], [&](TxnId b) { ++indegree_[local_[b]]; });
    }
    order_.clear();
    for (std::uint32_t i = 0; i < comp_size_; ++i) {
      if (indegree_[i] == 0) order_.push_back(comp_members_[i]);
    }
    std::uint32_t removed = 0;
    for (std::size_t q = 0; q < order_.size(); ++q) {
      ++removed;
      each_edge(order_[q], [&](TxnId b) {
        if (--indegree_[local_[b]] == 0) order_.push_back(b);
      });
    }
    const bool cyclic = removed < comp_size_;
    cyclic_cache_.emplace_back(mask, cyclic);
    return cyclic;
  }

  void SearchComponent() {
    cyclic_cache_.clear();
    std::array<Cycle, 12> best;
    constexpr std::uint8_t kD = kData;
    const std::array<std::uint8_t, 3> extras = {0, kProcess,
                                                kProcess | kRealtime};
    for (std::size_t p = 0; p < extras.size(); ++p) {
      const std::uint8_t x = extras[p];
      const std::uint8_t order_start = p == 0   ? std::uint8_t{0}
                                       : p == 1 ? std::uint8_t{kProcess}
                                                : std::uint8_t{kRealtime};
      auto pick = [&](std::uint8_t data_start) {
        return p == 0 ? data_start : order_start;
      };
      auto mask = [&](int m) { return static_cast<std::uint8_t>(m | x); };
      const int t = static_cast<int>(p) * 4;
      const ClassSpec specs[4] = {
          {mask(kWW), pick(kWW), 0, 0, false, t},
          {mask(kWW | kWR), pick(kWR), kWR, 1, false, t + 1},
          {mask(kD), pick(kRW), kRW, 1, true, t + 2},
          {mask(kD), pick(kRW), kRW, 2, false, t + 3},
      };
      for (const ClassSpec& spec : specs) {
        SearchClass(spec, best);
        if (!out_.gave_up.empty()) break;
      }
      if (!out_.gave_up.empty()) break;
    }
    bool any = false;
    for (Cycle& c : best) {
      if (c.txns.empty()) continue;
      any = true;
      out_.cycles.push_back(std::move(c));
    }
    if (!any && out_.gave_up.empty()) {
      // The caps stopped every class: any cycle at all, so that a
      // non-trivial component is never silently passed.
      ClassSpec all{static_cast<std::uint8_t>(kD | kProcess | kRealtime),
                    0,
                    0,
                    0,
                    false,
                    -1};
      std::array<Cycle, 12> fallback;
      SearchClass(all, fallback, /*unbounded=*/true);
      for (Cycle& c : fallback) {
        if (!c.txns.empty()) out_.cycles.push_back(std::move(c));
      }
    }
  }

  static int TypeIndex(const std::string& type) {
    for (int i = 0; i < 12; ++i) {
      if (type == kTypeNames[i]) return i;
    }
    return 0;
  }

  // Tries start edges of `spec` (spec.start == 0: any edge within the
  // mask) and keeps the shortest cycle per resulting type in `best`.
  void SearchClass(const ClassSpec& spec, std::array<Cycle, 12>& best,
                   bool unbounded = false) {
    std::uint32_t starts = 0;
    std::uint32_t after_found = 0;
    bool found = false;
    steps_ = 0;
    for (std::uint32_t i = 0; i < comp_size_; ++i) {
      const TxnId a = comp_members_[i];
      for (std::uint32_t e = g_.offsets[a]; e < g_.offsets[a + 1]; ++e) {
        const TxnId b = g_.targets[e];
        if (comps_.component[b] != comp_) continue;
        const std::uint8_t label = Label(g_.bits[e] & spec.mask);
        if (label == 0 || (spec.start != 0 && label != spec.start)) continue;
        if (!unbounded &&
            (starts >= options_.max_starts || steps_ >= options_.max_steps)) {
          // Capped before a cycle of this class turned up: one may have
          // been missed, unless the component has no cycle at all over the
          // class's edge kinds.
          if (!found && CycleWithin(spec.mask)) {
            out_.capped = true;
            if (spec.type >= 0) {
              const std::string name = kTypeNames[spec.type];
              auto& t = out_.capped_types;
              if (std::find(t.begin(), t.end(), name) == t.end()) {
                t.push_back(name);
              }
            }
          }
          return;
        }
        ++starts;
        Cycle c;
        if (Bfs(spec, a, b, label, c)) {
          const int t = TypeIndex(c.type);
          if (best[t].txns.empty() || c.txns.size() < best[t].txns.size()) {
            best[t] = std::move(c);
          }
          if (found && ++after_found >= 8) return;
          found = true;
          if (unbounded) return;
        }
        if (!out_.gave_up.empty()) return;
      }
    }
  }

  // Shortest path b → a in the component over spec.mask edges, from
  // state (b, count of the start edge). Fills `c` and returns true on
  // success.
  bool Bfs(const ClassSpec& spec, TxnId a, TxnId b, std::uint8_t start_label,
           Cycle& c) {
    if (++epoch_ == 0) {
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    auto state = [&](TxnId v, std::uint32_t k) { return local_[v] * 3 + k; };
    auto fits = [&](std::uint32_t k) {
      return spec.exact ? k == spec.need : k >= spec.need;
    };
    const std::uint32_t k0 = spec.special && start_label == spec.special;
    queue_.clear();
    const std::uint32_t s0 = state(b, k0);
    stamp_[s0] = epoch_;
    parent_[s0] = kNone;
    queue_.push_back(s0);
    std::uint32_t goal = kNone;
    if (b == a && fits(k0)) goal = s0;
    for (std::size_t head = 0; head < queue_.size() && goal == kNone; ++head) {
      if (check_.Tick()) {
        out_.gave_up = "deadline reached during the cycle search, after " +
                       std::to_string(out_.components_searched) + " of " +
                       std::to_string(comps_.nontrivial) +
                       " strongly connected components";
        return false;
      }
      ++steps_;
      const std::uint32_t s = queue_[head];
      const TxnId v = comp_members_[s / 3];
      const std::uint32_t k = s % 3;
      for (std::uint32_t e = g_.offsets[v]; e < g_.offsets[v + 1]; ++e) {
        const TxnId w = g_.targets[e];
        if (comps_.component[w] != comp_) continue;
        const std::uint8_t label = Label(g_.bits[e] & spec.mask);
        if (label == 0) continue;
        std::uint32_t k2 = k + (spec.special && label == spec.special);
        if (spec.exact && k2 > spec.need) continue;
        k2 = std::min<std::uint32_t>(k2, 2);
        const std::uint32_t s2 = state(w, k2);
        if (stamp_[s2] == epoch_) continue;
        stamp_[s2] = epoch_;
        parent_[s2] = s;
        queue_.push_back(s2);
        if (w == a && fits(k2)) {
          goal = s2;
          break;
        }
      }
    }
    if (goal == kNone) return false;
    // Path b .. a, reversed from the parents; the cycle is a, b, ..., x.
    std::vector<TxnId> path;
    for (std::uint32_t s = goal; s != kNone; s = parent_[s]) {
      path.push_back(comp_members_[s / 3]);
    }
    std::reverse(path.begin(), path.end());  // b, ..., a
    c.txns.clear();
    c.txns.push_back(a);
    c.txns.insert(c.txns.end(), path.begin(), path.end() - 1);
    // A walk through a node twice (possible in the product graph) is not
    // a simple cycle: refused, so every reported cycle is simple.
    std::vector<TxnId> sorted = c.txns;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return false;
    }
    c.labels.clear();
    for (std::size_t i = 0; i < c.txns.size(); ++i) {
      const TxnId from = c.txns[i];
      const TxnId to = c.txns[(i + 1) % c.txns.size()];
      c.labels.push_back(Label(g_.BitsBetween(from, to) & spec.mask));
    }
    c.type = CycleType(c.labels);
    return true;
  }

  const FullGraph& g_;
  const Components& comps_;
  const CycleSearchOptions& options_;
  LimitCheck check_;
  CycleSearch& out_;
  std::vector<TxnId> members_;
  std::vector<std::uint32_t> local_;
  std::vector<std::uint32_t> stamp_;
  std::vector<std::uint32_t> parent_;
  std::vector<std::uint32_t> queue_;
  std::uint32_t epoch_ = 0;
  std::uint32_t comp_ = 0;
  const TxnId* comp_members_ = nullptr;
  std::uint32_t comp_size_ = 0;
  std::uint64_t steps_ = 0;
  // CycleWithin's scratch and its answers for the current component.
  std::vector<std::uint32_t> indegree_;
  std::vector<TxnId> order_;
  std::vector<std::pair<std::uint8_t, bool>> cyclic_cache_;
};

}  // namespace

CycleSearch FindCycles(const FullGraph& g, const Components& comps,
                       const CycleSearchOptions& options) {
  CycleSearch out;
  if (comps.nontrivial == 0) return out;
  Searcher(g, comps, options, out).Run();
  return out;
}

}  // namespace faultline::checkers::txn

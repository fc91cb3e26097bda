// Internal to checkers/txn: the analysis graph (data edges plus real-time
// and process order), its strongly connected components, and the search
// for named cycles inside them (Elle's approach: within each non-trivial
// component, a shortest cycle of each class, restricting which edge kinds
// the search may use).
//
// Cycle classes, weakest first (D = ww, wr, rw):
//   G0        ww edges only
//   G1c       ww and wr edges, at least one wr
//   G-single  exactly one rw edge, the rest ww / wr
//   G2-item   two or more rw edges, the rest ww / wr
// and each of them with "-process" (the cycle also needs process-order
// edges, and no real-time ones) or "-realtime" (it needs real-time edges).
// Every edge of a reported cycle is labelled with the weakest kind it
// carries (ww < wr < rw < process < realtime); the cycle is named from the
// labels.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {

// Data edges, real-time edges and process edges in compressed-row form.
// Parallel edges (a data edge and an order edge between the same pair) may
// appear as two entries; BitsBetween ORs them.
struct FullGraph {
  std::vector<std::uint32_t> offsets;  // nodes + 1
  std::vector<TxnId> targets;
  std::vector<std::uint8_t> bits;
  std::uint64_t realtime_edges = 0;
  std::uint64_t process_edges = 0;

  std::uint32_t nodes() const {
    return offsets.empty() ? 0 : static_cast<std::uint32_t>(offsets.size() - 1);
  }
  std::uint8_t BitsBetween(TxnId from, TxnId to) const;
  std::uint64_t MemoryBytes() const;
};

// The real-time order of `set` as few edges (O(n · concurrency)): an edge
// a→b for ok a and non-fail b when a completed before b was invoked and no
// ok c has a → c → b in real time. Their transitive closure is the full
// real-time order. Appended to `out` with bit kRealtime.
void RealtimeEdges(const TxnSet& set, std::vector<Edge>& out);

// For each process, an ok transaction → the next non-fail transaction of
// that process (bit kProcess).
void ProcessEdges(const TxnSet& set, std::vector<Edge>& out);

// `data` (finished) plus RealtimeEdges and ProcessEdges of `set`.
FullGraph BuildFullGraph(const Graph& data, const TxnSet& set);

// Strongly connected components (iterative Tarjan). component[v] is v's
// component; components are numbered 0..count-1.
struct Components {
  std::vector<std::uint32_t> component;
  std::uint32_t count = 0;
  std::uint32_t nontrivial = 0;  // components of two or more nodes
};
Components StronglyConnected(const FullGraph& g);

// A cycle: txns[i] → txns[(i + 1) % n] by an edge of kind labels[i]
// (exactly one EdgeBits bit each).
struct Cycle {
  std::string type;  // "G0", "G1c-realtime", ...
  std::vector<TxnId> txns;
  std::vector<std::uint8_t> labels;
};

// The class name of a cycle from its labels.
std::string CycleType(const std::vector<std::uint8_t>& labels);

struct CycleSearch {
  // One shortest-found cycle per (component, class), in discovery order.
  std::vector<Cycle> cycles;
  std::uint32_t components_searched = 0;
  // True when a per-component cap stopped a class's search before every
  // start edge was tried (a cycle of that class may have been missed).
  bool capped = false;
  // The classes whose search was capped that way (kTypeNames' names, e.g.
  // "G2-item-realtime"); a class whose edge kinds form no cycle in the
  // component is never capped, since it has no cycle to miss.
  std::vector<std::string> capped_types;
  // Non-empty when the deadline stopped the search.
  std::string gave_up;
};

struct CycleSearchOptions {
  Limits limits;
  // Start edges tried per class per component.
  std::uint32_t max_starts = 256;
  // BFS states visited per class per component before moving on.
  std::uint64_t max_steps = 4'000'000;
};

CycleSearch FindCycles(const FullGraph& g, const Components& comps,
                       const CycleSearchOptions& options);

// "ww", "wr", "rw", "realtime", "process" for one bit.
const char* EdgeName(std::uint8_t bit);

}  // namespace faultline::checkers::txn

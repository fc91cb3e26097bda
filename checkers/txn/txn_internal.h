// Internal to checkers/txn: the compact form of a transactional history,
// the dependency graph, and the seam between inference (which turns a
// History into transactions, data edges and anomalies found without a
// cycle) and analysis (which adds real-time and process order, finds and
// names cycles, and builds the Verdict).
//
//   History (or events one at a time) ──ExtractTxns / TxnExtractor──► TxnSet
//           ──InferListAppend / InferRwRegister──► Inference
//           ──Analyze──► Verdict
//
// Thread-safety: plain values; no shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/history_io.h"
#include "checkers/txn/txn.h"
#include "checkers/value.h"
#include "checkers/verdict.h"

namespace faultline::checkers::txn {

using TxnId = std::uint32_t;                      // index into TxnSet::txns
using KeyId = std::uint32_t;                      // index into TxnSet::keys
using ValueId = std::uint32_t;                    // index into TxnSet::values
inline constexpr ValueId kNoValue = 0xffffffffu;  // null / not known

enum class MopKind : std::uint8_t { kAppend, kWrite, kRead };

struct Mop {
  MopKind kind = MopKind::kRead;
  KeyId key = 0;
  // kAppend / kWrite: the value written. kRead in rw-register: the value
  // read, kNoValue for null (never written). Unused for list-append reads.
  ValueId value = kNoValue;
  // list-append kRead: the list read is read_elems[read_begin,
  // read_begin + read_len). read_known is false when the read's result is
  // not known (invoke, info, fail) — then value/read_len mean nothing.
  std::uint32_t read_begin = 0;
  std::uint32_t read_len = 0;
  bool read_known = false;
};

enum class Status : std::uint8_t { kOk, kInfo, kFail };

struct Txn {
  std::int64_t process = 0;
  Status status = Status::kInfo;
  // The invocation's line in the file (LineOf, history.h), for messages;
  // saturates at UINT32_MAX (it fills padding: Txn stays 40 bytes).
  std::uint32_t invoke_line = 0;
  // Event indices (History position, == Event::index for histories read
  // from a file). complete_index is -1 when the invoke never completed
  // (treated as info).
  std::int64_t invoke_index = 0;
  std::int64_t complete_index = -1;
  // The micro-ops: mops[mop_begin, mop_begin + mop_count). From the ok
  // completion (reads filled) when ok, else from the invocation.
  std::uint32_t mop_begin = 0;
  std::uint32_t mop_count = 0;
};

// Txn::invoke_line of an event.
inline std::uint32_t TxnLine(const Event& e) {
  const std::int64_t line = LineOf(e);
  return line >= static_cast<std::int64_t>(UINT32_MAX)
             ? UINT32_MAX
             : static_cast<std::uint32_t>(line);
}

// Every client transaction of a history, in invocation order. Keys and
// values are interned: keys[KeyId], values[ValueId].
struct TxnSet {
  std::vector<Txn> txns;
  std::vector<Mop> mops;
  std::vector<ValueId> read_elems;
  std::vector<Value> keys;
  std::vector<Value> values;
};

// Pairs invocations with completions (per process), skips nemesis events,
// interns keys and values. A transaction whose value has the wrong shape
// for `workload` (not a list of [f, k, v]; f not "append"/"r" for
// list-append or "w"/"r" for rw-register; a non-list read result in
// list-append; a completion whose micro-ops differ from the invocation's in
// f or key) is an error naming the event (line = index + 1).
struct ExtractResult {
  TxnSet set;
  std::optional<ReadError> error;
};
ExtractResult ExtractTxns(const History& history, Workload workload);

// ExtractTxns one event at a time (TxnHistoryBuilder's engine): Add the
// events in history order; an event's position (invoke_index,
// complete_index, an error's line - 1) is the number of events added
// before it. After an error the rest is ignored and what was extracted is
// dropped, as ExtractTxns does. Reserve(n) sizes the buffers for a history
// of n events as ExtractTxns does (same capacities, hence the same memory
// estimates); without it they grow as needed.
class TxnExtractor {
 public:
  explicit TxnExtractor(Workload workload);
  ~TxnExtractor();
  TxnExtractor(TxnExtractor&&) noexcept;
  TxnExtractor& operator=(TxnExtractor&&) noexcept;
  TxnExtractor(const TxnExtractor&) = delete;
  TxnExtractor& operator=(const TxnExtractor&) = delete;

  void Reserve(std::size_t events);
  void Add(const Event& e);
  std::size_t events() const;  // added so far
  bool failed() const;
  Workload workload() const;
  // The result so far; leaves the extractor empty.
  ExtractResult Take();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Edge kinds, as bits: an edge may carry several.
enum EdgeBits : std::uint8_t {
  kWW = 1,        // write-write: from's write precedes to's in version order
  kWR = 2,        // write-read: to read from's write
  kRW = 4,        // read-write (anti-dependency): to overwrote what from read
  kRealtime = 8,  // from completed before to was invoked
  kProcess = 16,  // same process, from before to
};

struct Edge {
  TxnId from = 0;
  TxnId to = 0;
  std::uint8_t bits = 0;
};

// Adjacency in compressed-row form. Build with Add, then Finish; a graph
// is read-only after Finish. Parallel edges are merged (bits OR'ed);
// self-edges are dropped.
class Graph {
 public:
  explicit Graph(std::uint32_t nodes = 0) : nodes_(nodes) {}
  void Add(TxnId from, TxnId to, std::uint8_t bits);
  void Finish();
  std::uint32_t nodes() const { return nodes_; }
  // Out-edges of `from` after Finish: targets and bits, parallel arrays.
  std::uint32_t OutBegin(TxnId from) const { return offsets_[from]; }
  std::uint32_t OutEnd(TxnId from) const { return offsets_[from + 1]; }
  TxnId Target(std::uint32_t e) const { return targets_[e]; }
  std::uint8_t Bits(std::uint32_t e) const { return bits_[e]; }
  std::size_t edge_count() const { return targets_.size(); }
  std::size_t MemoryBytes() const;

 private:
  std::uint32_t nodes_;
  std::vector<Edge> pending_;
  std::vector<std::uint32_t> offsets_;
  std::vector<TxnId> targets_;
  std::vector<std::uint8_t> bits_;
};

// An anomaly found without a cycle. `type` is one of "G1a", "G1b",
// "internal", "lost-update", "duplicate-elements", "incompatible-order",
// "garbage-read". `text` is one or more full sentences naming the
// transactions (as T<id>), the key and the values that prove it.
struct Anomaly {
  std::string type;
  std::vector<TxnId> txns;
  KeyId key = 0;
  std::string text;
};

// Says in one sentence why an edge of one kind (exactly one of kWW, kWR,
// kRW) from `from` to `to` exists: the key, and the value or order that
// proves it. Only called for edges the inference added with that bit.
class EdgeExplainer {
 public:
  virtual ~EdgeExplainer() = default;
  virtual std::string Why(TxnId from, TxnId to, EdgeBits kind) const = 0;
};

struct Limits {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::uint64_t memory_limit_bytes = 0;  // 0: none
  // TxnOptions::memory_in_use (may be null): when set, the limit bounds
  // what it reads rather than the checker's estimate.
  const std::function<std::uint64_t()>* meter = nullptr;
};

struct Inference {
  Workload workload = Workload::kListAppend;
  TxnSet set;
  Graph graph;  // data edges only (kWW, kWR, kRW), finished
  std::vector<Anomaly> anomalies;
  std::unique_ptr<EdgeExplainer> explainer;
  // Set when the input was malformed (see ExtractTxns).
  std::optional<ReadError> error;
  // Non-empty when a limit stopped the inference (deadline, memory): the
  // verdict must be unknown. Says which limit and how far it got.
  std::string gave_up;
};

// list-append: for each key, the longest ok read is the version order
// (every other ok read must be a prefix of it: incompatible-order
// otherwise); consecutive elements give ww, a read whose last element
// (not the reader's own append) is x gives wr from x's writer and rw to
// the writer of the element after x (or, for every ok append never
// observed, to its writer: it must follow every read of the key).
Inference InferListAppend(const History& history, const Limits& limits);
// The same on transactions already extracted (ExtractTxns or TxnExtractor
// with Workload::kListAppend).
Inference InferListAppend(ExtractResult extracted, const Limits& limits);

// rw-register: each ok read of v gives wr from v's (unique) writer; the
// version order of a key holds the initial null first and, for each
// committed transaction that read v and later wrote w to the same key,
// v before w; ww and rw follow from those pairs.
Inference InferRwRegister(const History& history, const Limits& limits);
Inference InferRwRegister(ExtractResult extracted, const Limits& limits);

// Adds real-time and process edges to a copy of the data graph, finds the
// cycles, names them, maps every anomaly to the models it violates, and
// builds the Verdict (checker name from inference.workload).
Verdict Analyze(Inference inference, const TxnOptions& options);

// "T12" — how explanations name a transaction — and a one-line rendering
// of it: "T12 (process 3, ok, events 40-45): [append 3 7] [r 4 [1 2]]".
std::string TxnName(TxnId id);
std::string DescribeTxn(const TxnSet& set, TxnId id);

}  // namespace faultline::checkers::txn

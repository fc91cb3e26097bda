// The transactional checkers "list-append" and "rw-register": dependency-
// graph checking of the class of Elle (Kingsbury & Alvaro, VLDB 2020).
//
// A history of these workloads holds transactions: events with f "txn"
// whose value is a list of micro-operations, each a 3-element list
// [f, key, value] (JSONL) or the same vector in Jepsen's EDN
// (`:value [[:append 1 2] [:r 1 [1 2]]]`, keywords read as strings):
//   ["append", k, v]  list-append: append v to key k's list
//   ["w", k, v]       rw-register: write v to key k
//   ["r", k, v]       read key k; null on invoke; on ok the whole list
//                     (list-append, [] or null when empty) or the value
//                     (rw-register, null when never written)
// Keys are strings or integers; appended and written values are unique per
// key over the whole history (an integer or a string). docs/transactions.md
// specifies the shapes, the inference and every anomaly's wording.
//
// The checker infers write-write, write-read and read-write dependencies
// from the traces (list-append: reads of whole lists recover each key's
// version order; rw-register: unique writes recover reads-from, and a
// transaction that reads v and then writes w orders v before w), adds
// real-time and per-process order, and searches the strongly connected
// components of the graph for cycles, each named as the literature does
// (G0, G1c, G-single, G2-item, with a "-realtime" or "-process" suffix when
// the cycle needs those edges). Anomalies found without a cycle: G1a
// (aborted read), G1b (intermediate read), internal (a read that disagrees
// with the transaction's own earlier reads and writes), lost-update,
// duplicate-elements, incompatible-order, garbage-read (a value no
// transaction wrote).
//
// Verdict: invalid when an anomaly violates `options.consistency_model`;
// valid when every transaction was checked and none does; unknown when the
// deadline or memory limit stopped the check, or when there was nothing to
// check (no ok transaction). The explanation names, for every reported
// cycle, each transaction and, for each edge, the value or order that
// proves it. details_json holds the anomalies, the cycles as steps (for
// report.html), and the strongest models satisfied and the weakest
// violated among strict-serializable, serializable, snapshot-isolation,
// repeatable-read, read-committed and read-uncommitted.
//
// Thread-safety: reentrant; no shared state.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers::txn {

inline constexpr char kListAppendChecker[] = "list-append";
inline constexpr char kRwRegisterChecker[] = "rw-register";

// The models this checker reports on, strongest first.
// "strict-serializable", "serializable", "snapshot-isolation",
// "repeatable-read", "read-committed", "read-uncommitted".
const std::vector<std::string>& ConsistencyModelNames();

struct TxnOptions {
  // The model the history must satisfy for `valid`; one of
  // ConsistencyModelNames().
  std::string consistency_model = "strict-serializable";
  // Give up (unknown) at this instant. nullopt: no deadline.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Give up (unknown) when the checker's own structures exceed this many
  // bytes (an estimate). 0: no limit.
  std::uint64_t memory_limit_bytes = 0;
  // When set, memory_limit_bytes bounds what this returns instead: the
  // caller's measure of all the memory it holds (faultline check passes the
  // process's resident set). Sampled where the estimate would be (every
  // 65,536 steps of the inference and once the graph is built).
  std::function<std::uint64_t()> memory_in_use;
  // Cycles explained in full per anomaly type (more are counted).
  int max_cycles_per_type = 3;
};

enum class Workload : std::uint8_t { kListAppend, kRwRegister };

class TxnExtractor;  // txn_internal.h

// A transactional history checked without keeping it: Add each event in
// history order (nemesis events included; messages cite an event's
// LineOf, history.h: its line in the file), then Finish.
// Only the checker's compact structures are kept (interned keys and values,
// micro-ops), not the events. Finish gives the verdict CheckListAppend
// (Workload::kListAppend) or CheckRwRegister (kRwRegister) gives on a
// History of the same events: the same validity, summary, explanation and
// details. A malformed event is kept as the error (the rest is ignored) and
// reported by Finish as unknown with its line.
//
// Reserve(n) is an optional hint: the history has about n events. With the
// exact count the buffers are sized as the History entry points size them,
// so memory estimates in a memory-limit verdict match theirs too; without
// it they grow as needed. Finish may be called once (it hands the
// structures to the inference). Not thread-safe; one builder per history.
class TxnHistoryBuilder {
 public:
  explicit TxnHistoryBuilder(Workload workload);
  ~TxnHistoryBuilder();
  TxnHistoryBuilder(TxnHistoryBuilder&&) noexcept;
  TxnHistoryBuilder& operator=(TxnHistoryBuilder&&) noexcept;
  TxnHistoryBuilder(const TxnHistoryBuilder&) = delete;
  TxnHistoryBuilder& operator=(const TxnHistoryBuilder&) = delete;

  void Reserve(std::size_t events);
  void Add(const Event& e);
  // Events added so far.
  std::size_t events() const;
  // True once an event was malformed (Finish will say which).
  bool failed() const;
  Verdict Finish(const TxnOptions& options);

 private:
  std::unique_ptr<TxnExtractor> extractor_;
};

// Checks a list-append history. A malformed transaction (wrong shape,
// unknown micro-op) gives unknown with the event's line in the summary;
// CheckWellFormed with model "list-append" refuses such histories first.
// The same as a TxnHistoryBuilder fed the history's events.
Verdict CheckListAppend(const History& history, const TxnOptions& options);

// Checks a rw-register history; the same contract.
Verdict CheckRwRegister(const History& history, const TxnOptions& options);

}  // namespace faultline::checkers::txn

// Internal to checkers/txn: what list_append.cpp and rw_register.cpp share —
// a view of a TxnSet's buffers for the edge explainers, the limit checks,
// and the short renderings of keys, values and lists used in sentences.
//
// Thread-safety: plain values.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {

// The buffers of a TxnSet, by pointer. An EdgeExplainer keeps one: the
// Inference's `set` is moved along with the explainer (into Analyze), and a
// moved std::vector keeps its buffer, so these stay valid as long as the
// set they came from (or the set it was moved into) lives unmodified.
struct SetView {
  const Txn* txns = nullptr;
  const Mop* mops = nullptr;
  const ValueId* elems = nullptr;
  const Value* keys = nullptr;
  const Value* values = nullptr;

  static SetView Of(const TxnSet& s) {
    return SetView{s.txns.data(), s.mops.data(), s.read_elems.data(),
                   s.keys.data(), s.values.data()};
  }
  std::string Key(KeyId k) const { return keys[k].ToJson(); }
  std::string Val(ValueId v) const {
    return v == kNoValue ? "nil" : values[v].ToJson();
  }
  // "[1 2 3]"; long lists shortened to "[1 2 3 ... 40 41 42] (42 elements)".
  std::string List(const ValueId* e, std::uint32_t n) const {
    constexpr std::uint32_t kShown = 3;
    const bool cut = n > 2 * kShown + 2;
    std::string out = "[";
    for (std::uint32_t i = 0; i < n; ++i) {
      if (cut && i == kShown) {
        out += " ...";
        i = n - kShown - 1;
        continue;
      }
      if (i > 0) out += ' ';
      values[e[i]].AppendJson(out);
    }
    out += ']';
    if (cut) out += " (" + std::to_string(n) + " elements)";
    return out;
  }
  std::string List(const std::vector<ValueId>& v) const {
    return List(v.data(), static_cast<std::uint32_t>(v.size()));
  }
  // "[.. 7]": a list's last element, or "[]" for the empty list.
  std::string Tail(const ValueId* e, std::uint32_t n) const {
    if (n == 0) return "[]";
    return (n > 1 ? "[.. " : "[") + Val(e[n - 1]) + "]";
  }
  const Mop& MopAt(TxnId t, std::uint32_t i) const {
    return mops[txns[t].mop_begin + i];
  }
};

// Deadline and memory checks, sampled: Tick() is cheap; every `kEvery`
// ticks it reads the clock.
class LimitCheck {
 public:
  static constexpr std::uint32_t kEvery = 1u << 16;
  explicit LimitCheck(const Limits& limits) : limits_(limits) {}
  // True when the deadline has passed (checked every kEvery calls).
  bool Tick() {
    if (++ticks_ < kEvery) return false;
    ticks_ = 0;
    return Expired();
  }
  bool Expired() const {
    return limits_.deadline &&
           std::chrono::steady_clock::now() >= *limits_.deadline;
  }
  bool OverMemory(std::uint64_t bytes) const {
    return limits_.memory_limit_bytes != 0 &&
           bytes > limits_.memory_limit_bytes;
  }
  std::string MemoryMessage(std::uint64_t bytes) const {
    return "memory limit of " + std::to_string(limits_.memory_limit_bytes) +
           " bytes exceeded (" +
           (limits_.meter != nullptr ? std::string("the process holds ")
                                     : std::string("about ")) +
           std::to_string(bytes) + " bytes" +
           (limits_.meter != nullptr ? "" : " in use") + ")";
  }
  // The bytes to compare with the limit: the meter's reading when there is
  // one, else `estimate()`.
  template <typename Estimate>
  std::uint64_t Measured(Estimate estimate) const {
    return limits_.meter != nullptr ? (*limits_.meter)() : estimate();
  }

  // Adds `n` steps of work done outside Step (inner loops of an inference).
  void Count(std::uint64_t n) { work_ += n; }
  // One step of an inference's progress. On the first call and then once
  // every kEvery steps of work, looks at the deadline and at
  // `bytes_in_use()` (the caller's memory estimate, computed only then) and
  // returns why to give up, saying how far it got ("deadline reached after
  // <verb> <done> of <total> <noun>", or the memory message); else "".
  template <typename BytesInUse>
  std::string Step(std::uint64_t done, std::uint64_t total, const char* verb,
                   const char* noun, BytesInUse bytes_in_use) {
    if (++work_ < next_check_) return {};
    next_check_ = work_ + kEvery;
    const std::string progress = std::string(verb) + " " +
                                 std::to_string(done) + " of " +
                                 std::to_string(total) + " " + noun;
    if (Expired()) return "deadline reached after " + progress;
    const std::uint64_t bytes = Measured(bytes_in_use);
    if (OverMemory(bytes)) return MemoryMessage(bytes) + " after " + progress;
    return {};
  }

 private:
  const Limits& limits_;
  std::uint32_t ticks_ = 0;
  std::uint64_t work_ = 0;
  std::uint64_t next_check_ = 0;
};

// The frame both inferences share: the extracted set (ExtractTxns or
// TxnExtractor), a graph with a node per txn, an explainer E viewing the
// set, `passes(inf, explainer)` for the workload's own work, then the graph
// finished and the explainer kept.
template <typename E, typename Passes>
Inference RunInference(ExtractResult ex, Workload workload, Passes passes) {
  Inference inf;
  inf.workload = workload;
  if (ex.error) {
    inf.error = std::move(ex.error);
    inf.graph.Finish();
    return inf;
  }
  inf.set = std::move(ex.set);
  inf.graph = Graph(static_cast<std::uint32_t>(inf.set.txns.size()));
  auto explainer = std::make_unique<E>();
  explainer->view = SetView::Of(inf.set);
  passes(inf, *explainer);
  inf.graph.Finish();
  inf.explainer = std::move(explainer);
  return inf;
}

// Orders a txn's mop positions `idx` by key, keeping mop order within a
// key. Insertion sort for the usual handful of mops (no allocation, unlike
// std::stable_sort); std::sort with the position as tie-break otherwise.
inline void SortByKey(const Mop* mops, std::vector<std::uint32_t>& idx) {
  auto less = [mops](std::uint32_t a, std::uint32_t b) {
    return mops[a].key != mops[b].key ? mops[a].key < mops[b].key : a < b;
  };
  if (idx.size() > 16) {
    std::sort(idx.begin(), idx.end(), less);
    return;
  }
  for (std::size_t i = 1; i < idx.size(); ++i) {
    std::uint32_t x = idx[i];
    std::size_t j = i;
    for (; j > 0 && less(x, idx[j - 1]); --j) idx[j] = idx[j - 1];
    idx[j] = x;
  }
}

// Calls group(begin, end) for each key a txn's mops touch, with [begin,
// end) the positions of that key's mops in mop order; `idx` is scratch.
// Stops, returning false, when group does.
template <typename Group>
bool ForEachKeyGroup(const Mop* mops, std::uint32_t count,
                     std::vector<std::uint32_t>& idx, Group group) {
  idx.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) idx[i] = i;
  SortByKey(mops, idx);
  for (std::size_t g = 0; g < idx.size();) {
    std::size_t end = g;
    while (end < idx.size() && mops[idx[end]].key == mops[idx[g]].key) ++end;
    if (!group(idx.data() + g, idx.data() + end)) return false;
    g = end;
  }
  return true;
}

template <typename T>
std::uint64_t Bytes(const std::vector<T>& v) {
  return static_cast<std::uint64_t>(v.capacity()) * sizeof(T);
}

inline std::uint64_t SetBytes(const TxnSet& s) {
  std::uint64_t b = Bytes(s.txns) + Bytes(s.mops) + Bytes(s.read_elems) +
                    Bytes(s.keys) + Bytes(s.values);
  return b;
}

}  // namespace faultline::checkers::txn

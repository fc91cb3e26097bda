// Internal to checkers/txn: what list_append.cpp and rw_register.cpp share —
// a view of a TxnSet's buffers for the edge explainers, the limit checks,
// and the short renderings of keys, values and lists used in sentences.
//
// Thread-safety: plain values.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
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
           " bytes exceeded (about " + std::to_string(bytes) + " bytes in use)";
  }

 private:
  const Limits& limits_;
  std::uint32_t ticks_ = 0;
};

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

// Internal to checkers/txn: an open-addressing hash map from 64-bit keys to
// 32-bit values, for the inference's hot paths (interning integers, finding
// the writer of a (key, value) pair). Linear probing over a power-of-two
// table kept at most half full; one flat array, no per-entry allocation.
// A measured reason for not using std::unordered_map: one pointer chase and
// one allocation per entry dominate ExtractTxns on million-txn histories.
//
// Thread-safety: plain value; const methods may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace faultline::checkers::txn {

class FlatMap64 {
 public:
  static constexpr std::uint32_t kAbsent = 0xffffffffu;

  explicit FlatMap64(std::size_t expected = 0) { Reserve(expected); }

  // Makes room for `n` entries without rehashing.
  void Reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (cap > slots_.size()) Rehash(cap);
  }

  // The value stored for `key`, or kAbsent.
  std::uint32_t Find(std::uint64_t key) const {
    if (size_ == 0) return kAbsent;
    for (std::size_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value == kAbsent) return kAbsent;
      if (s.key == key) return s.value;
    }
  }

  // Stores key → value when `key` is absent and returns kAbsent; otherwise
  // changes nothing and returns the value already stored. `value` must not
  // be kAbsent.
  std::uint32_t Insert(std::uint64_t key, std::uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(slots_.size() * 2);
    for (std::size_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value == kAbsent) {
        s.key = key;
        s.value = value;
        ++size_;
        return kAbsent;
      }
      if (s.key == key) return s.value;
    }
  }

  std::size_t size() const { return size_; }
  std::size_t MemoryBytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t value = kAbsent;
  };

  static std::size_t Mix(std::uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<std::size_t>(x);
  }

  void Rehash(std::size_t cap) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.value != kAbsent) Insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

// The 64-bit key of a (key, value) pair of interned ids.
inline std::uint64_t PairKey(std::uint32_t key, std::uint32_t value) {
  return (static_cast<std::uint64_t>(key) << 32) | value;
}

}  // namespace faultline::checkers::txn

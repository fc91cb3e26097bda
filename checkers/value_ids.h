// ValueIds: dense ids for the distinct Values of one check, in the order
// they are first added, in one open-addressing table (a value, its hash
// and a 4-byte slot each). The checkers' hot paths intern millions of
// values; std::unordered_set<Value> costs a node allocation per value and
// was 3-4 times slower on them.
//
// Thread-safety: none; one per thread.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "checkers/value.h"

namespace faultline::checkers {

class ValueIds {
 public:
  static constexpr std::uint32_t kNone =
      std::numeric_limits<std::uint32_t>::max();

  // The id of `v`, added when new.
  std::uint32_t Add(const Value& v) {
    if ((values_.size() + 1) * 2 > slots_.size()) Grow();
    std::size_t h = v.Hash();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Mix(h) & mask;; i = (i + 1) & mask) {
      std::uint32_t id = slots_[i];
      if (id == kNone) {
        id = static_cast<std::uint32_t>(values_.size());
        slots_[i] = id;
        values_.push_back(v);
        hashes_.push_back(h);
        return id;
      }
      if (hashes_[id] == h && values_[id] == v) return id;
    }
  }
  // The id of `v`, or kNone when it was never added.
  std::uint32_t Find(const Value& v) const {
    if (slots_.empty()) return kNone;
    std::size_t h = v.Hash();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Mix(h) & mask;; i = (i + 1) & mask) {
      std::uint32_t id = slots_[i];
      if (id == kNone) return kNone;
      if (hashes_[id] == h && values_[id] == v) return id;
    }
  }
  std::size_t size() const { return values_.size(); }

 private:
  static std::size_t Mix(std::size_t h) {
    h ^= h >> 31;
    h *= 0x7fb5d329728ea185ULL;
    return h ^ (h >> 27);
  }
  void Grow() {
    slots_.assign(slots_.empty() ? 64 : slots_.size() * 2, kNone);
    std::size_t mask = slots_.size() - 1;
    for (std::uint32_t id = 0; id < values_.size(); ++id) {
      std::size_t i = Mix(hashes_[id]) & mask;
      while (slots_[i] != kNone) i = (i + 1) & mask;
      slots_[i] = id;
    }
  }
  std::vector<std::uint32_t> slots_;
  std::vector<Value> values_;
  std::vector<std::size_t> hashes_;
};

}  // namespace faultline::checkers

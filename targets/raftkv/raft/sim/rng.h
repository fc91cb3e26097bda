// A small deterministic PRNG (splitmix64) for the simulator: the same seed
// gives the same sequence on every platform and standard library (unlike
// std::uniform_*_distribution).
//
// Thread-safety: none; one Rng per simulation.
#pragma once

#include <cstdint>

namespace faultline::raftkv::raft::sim {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  std::uint64_t Below(std::uint64_t n) { return Next() % n; }
  // Uniform in [lo, hi] (inclusive); lo <= hi.
  std::int64_t Range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(
                    Below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // Uniform in [0, 1).
  double Unit() {
    return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
  }
  bool Chance(double p) { return Unit() < p; }

 private:
  std::uint64_t state_;
};

}  // namespace faultline::raftkv::raft::sim

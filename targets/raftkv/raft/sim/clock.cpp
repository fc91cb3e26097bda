#include "targets/raftkv/raft/sim/clock.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace faultline::raftkv::raft::sim {

void SimClock::AdvanceTo(Nanos real) {
  if (real < real_) {
    std::fprintf(stderr, "%s:%d: SimClock: time went back\n", __FILE__,
                 __LINE__);
    std::abort();
  }
  real_ = real;
}

SimClock::Local_& SimClock::Get(NodeId n) const {
  auto it = locals_.find(n);
  if (it == locals_.end()) {
    Local_ l;
    l.base_real = 0;
    l.base_local = static_cast<Nanos>(n) * 1'000'000'000;
    it = locals_.emplace(n, l).first;
  }
  return it->second;
}

Nanos SimClock::Local(NodeId n) const {
  const Local_& l = Get(n);
  const long double d = static_cast<long double>(real_ - l.base_real) * l.rate;
  return l.base_local + static_cast<Nanos>(std::floor(d));
}

void SimClock::SetRate(NodeId n, double rate) {
  if (!(rate > 0)) {
    std::fprintf(stderr, "%s:%d: SimClock: rate must be > 0\n", __FILE__,
                 __LINE__);
    std::abort();
  }
  const Nanos now_local = Local(n);
  Local_& l = Get(n);
  l.base_real = real_;
  l.base_local = now_local;
  l.rate = rate;
}

double SimClock::Rate(NodeId n) const { return Get(n).rate; }

}  // namespace faultline::raftkv::raft::sim

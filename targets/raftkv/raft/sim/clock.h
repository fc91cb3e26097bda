// Simulated time: one real (global, unobservable by nodes) clock and one
// local monotonic clock per node whose rate relative to real time can be
// set (clock-rate skew). Local(n) is what node n passes to its raft::Node.
//
// Thread-safety: none.
#pragma once

#include <map>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft::sim {

class SimClock {
 public:
  // Real time starts at 0; every node's local clock starts at an arbitrary
  // per-node offset so no code can compare clocks across nodes by accident.
  SimClock() = default;

  Nanos Real() const { return real_; }
  // Precondition: real >= Real() (time never goes back).
  void AdvanceTo(Nanos real);
  void Advance(Nanos d) { AdvanceTo(real_ + d); }

  // Local time of node n now; monotonic in real time. Unknown nodes get
  // rate 1 and offset 1e9*n.
  Nanos Local(NodeId n) const;
  // Local rate (local ns per real ns), > 0. Takes effect from now on; the
  // local clock stays continuous.
  void SetRate(NodeId n, double rate);
  double Rate(NodeId n) const;

 private:
  struct Local_ {
    Nanos base_real = 0;
    Nanos base_local = 0;
    double rate = 1.0;
  };
  Local_& Get(NodeId n) const;

  Nanos real_ = 0;
  mutable std::map<NodeId, Local_> locals_;
};

}  // namespace faultline::raftkv::raft::sim

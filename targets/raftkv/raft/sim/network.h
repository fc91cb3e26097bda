// The simulator's in-memory network. Messages sent at time t are delivered
// at t + delay (delay drawn per message, so messages on one link can be
// reordered), may be dropped or duplicated (seeded), and never cross a cut
// link: a link is checked at send time and again at delivery (a message in
// flight when a partition starts is lost, as with iptables DROP).
//
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "targets/raftkv/raft/sim/rng.h"
#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft::sim {

struct NetOptions {
  double drop = 0;       // probability a message is lost
  double duplicate = 0;  // probability a message is delivered twice
  Nanos min_delay = 0;   // delivery delay, uniform in [min, max]
  Nanos max_delay = 0;
  double slow = 0;     // probability of a long delay instead
  Nanos slow_max = 0;  // long delay uniform in [max_delay, slow_max]
};

class Network {
 public:
  explicit Network(std::uint64_t seed, NetOptions opt = {});

  // Queues `m` (from m.from to m.to) sent at real time `now`.
  void Send(const Message& m, Nanos now);
  // Removes and returns the messages due by `now`, in (due time, send
  // order); messages on a link cut meanwhile are dropped.
  std::vector<Message> TakeDue(Nanos now);
  // Removes and returns every queued message matching `pred` (all if
  // empty), regardless of due time, in (due time, send order). Messages on
  // cut links are dropped.
  std::vector<Message> TakeAll(
      const std::function<bool(const Message&)>& pred = {});
  // Removes and returns the first queued message matching `pred` (any if
  // empty) in (due time, send order), regardless of due time; messages on
  // cut links met on the way are dropped.
  std::optional<Message> TakeFirst(
      const std::function<bool(const Message&)>& pred = {});
  // Drops every queued message matching `pred` (all if empty); returns how
  // many.
  std::size_t Discard(const std::function<bool(const Message&)>& pred = {});
  std::optional<Nanos> NextDue() const;
  std::size_t InFlight() const { return queue_.size(); }

  // Link control (directional).
  void Cut(NodeId from, NodeId to) { cut_.insert({from, to}); }
  void Restore(NodeId from, NodeId to) { cut_.erase({from, to}); }
  // Nodes in different groups cannot talk; nodes in no group talk to no
  // one. `all` lists every node.
  void Partition(const std::vector<std::vector<NodeId>>& groups,
                 const std::vector<NodeId>& all);
  void Isolate(NodeId n, const std::vector<NodeId>& all);
  void Heal() { cut_.clear(); }
  bool Connected(NodeId from, NodeId to) const {
    return cut_.count({from, to}) == 0;
  }
  bool Partitioned() const { return !cut_.empty(); }

  NetOptions& options() { return opt_; }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t duplicated() const { return duplicated_; }

 private:
  Nanos Delay();

  Rng rng_;
  NetOptions opt_;
  std::uint64_t seq_ = 0;
  std::map<std::pair<Nanos, std::uint64_t>, Message> queue_;
  std::set<std::pair<NodeId, NodeId>> cut_;
  std::uint64_t sent_ = 0, dropped_ = 0, duplicated_ = 0;
};

}  // namespace faultline::raftkv::raft::sim

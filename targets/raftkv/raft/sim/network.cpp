#include "targets/raftkv/raft/sim/network.h"

#include <algorithm>

namespace faultline::raftkv::raft::sim {

Network::Network(std::uint64_t seed, NetOptions opt)
    : rng_(seed ^ 0x6e6574776f726bULL), opt_(opt) {}

Nanos Network::Delay() {
  if (opt_.slow > 0 && rng_.Chance(opt_.slow)) {
    return rng_.Range(opt_.max_delay, std::max(opt_.max_delay, opt_.slow_max));
  }
  return rng_.Range(opt_.min_delay, std::max(opt_.min_delay, opt_.max_delay));
}

void Network::Send(const Message& m, Nanos now) {
  ++sent_;
  if (!Connected(m.from, m.to) || (opt_.drop > 0 && rng_.Chance(opt_.drop))) {
    ++dropped_;
    return;
  }
  queue_.emplace(std::make_pair(now + Delay(), seq_++), m);
  if (opt_.duplicate > 0 && rng_.Chance(opt_.duplicate)) {
    ++duplicated_;
    queue_.emplace(std::make_pair(now + Delay(), seq_++), m);
  }
}

std::vector<Message> Network::TakeDue(Nanos now) {
  std::vector<Message> out;
  while (!queue_.empty() && queue_.begin()->first.first <= now) {
    auto node = queue_.extract(queue_.begin());
    if (Connected(node.mapped().from, node.mapped().to)) {
      out.push_back(std::move(node.mapped()));
    } else {
      ++dropped_;
    }
  }
  return out;
}

std::vector<Message> Network::TakeAll(
    const std::function<bool(const Message&)>& pred) {
  std::vector<Message> out;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (pred && !pred(it->second)) {
      ++it;
      continue;
    }
    if (Connected(it->second.from, it->second.to)) {
      out.push_back(std::move(it->second));
    } else {
      ++dropped_;
    }
    it = queue_.erase(it);
  }
  return out;
}

std::optional<Message> Network::TakeFirst(
    const std::function<bool(const Message&)>& pred) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (pred && !pred(it->second)) {
      ++it;
      continue;
    }
    if (!Connected(it->second.from, it->second.to)) {
      ++dropped_;
      it = queue_.erase(it);
      continue;
    }
    Message m = std::move(it->second);
    queue_.erase(it);
    return m;
  }
  return std::nullopt;
}

std::size_t Network::Discard(const std::function<bool(const Message&)>& pred) {
  std::size_t n = 0;
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (!pred || pred(it->second)) {
      it = queue_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  dropped_ += n;
  return n;
}

std::optional<Nanos> Network::NextDue() const {
  if (queue_.empty()) return std::nullopt;
  return queue_.begin()->first.first;
}

void Network::Partition(const std::vector<std::vector<NodeId>>& groups,
                        const std::vector<NodeId>& all) {
  std::map<NodeId, std::size_t> group_of;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (NodeId n : groups[g]) group_of[n] = g + 1;
  }
  cut_.clear();
  for (NodeId a : all) {
    for (NodeId b : all) {
      if (a == b) continue;
      auto ga = group_of.find(a), gb = group_of.find(b);
      if (ga == group_of.end() || gb == group_of.end() ||
          ga->second != gb->second) {
        cut_.insert({a, b});
      }
    }
  }
}

void Network::Isolate(NodeId n, const std::vector<NodeId>& all) {
  for (NodeId b : all) {
    if (b == n) continue;
    cut_.insert({n, b});
    cut_.insert({b, n});
  }
}

}  // namespace faultline::raftkv::raft::sim

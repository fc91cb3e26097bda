#include "targets/raftkv/raft/lease.h"

#include <algorithm>
#include <cmath>

namespace faultline::raftkv::raft {
namespace {

// Outstanding lease requests a holder remembers; older ones are dropped
// (their grants, if any arrive, are ignored: safe, only less available).
constexpr std::size_t kMaxPending = 64;
// Heartbeat rounds whose send time the leader remembers.
constexpr std::size_t kMaxRounds = 256;

}  // namespace

Nanos StretchForDrift(Nanos d, double epsilon) {
  if (d <= 0) return 0;
  const long double v =
      static_cast<long double>(d) * (1.0L + static_cast<long double>(epsilon));
  return static_cast<Nanos>(std::ceil(v));
}

Nanos ShrinkForDrift(Nanos d, double epsilon) {
  if (d <= 0) return 0;
  const long double v =
      static_cast<long double>(d) / (1.0L + static_cast<long double>(epsilon));
  return static_cast<Nanos>(std::floor(v));
}

Nanos NewLeaderWait(const Config& cfg) {
  if (cfg.read_mode != ReadMode::kFollowerLease) return 0;
  return StretchForDrift(cfg.follower_lease, cfg.drift_epsilon) +
         cfg.lease_guard;
}

// ----- LeaderOwnLease -----

LeaderOwnLease::LeaderOwnLease(const Config& cfg)
    : self_(cfg.id), voters_(cfg.voters) {
  const long double one_minus = 1.0L - cfg.drift_epsilon;
  const long double len =
      static_cast<long double>(cfg.election_timeout) * one_minus * one_minus;
  length_ = static_cast<Nanos>(std::floor(len)) - cfg.lease_guard;
}

void LeaderOwnLease::Start(Nanos /*now*/) {
  Invalidate();
  started_ = true;
}

void LeaderOwnLease::Invalidate() {
  started_ = false;
  valid_ = false;
  until_ = 0;
  quorum_round_ = 0;
  acked_.clear();
  sent_.clear();
}

void LeaderOwnLease::OnRoundSent(std::uint64_t round, Nanos now) {
  if (!started_ || round <= quorum_round_) return;
  if (!sent_.empty() && round <= sent_.rbegin()->first) return;
  sent_[round] = now;
  while (sent_.size() > kMaxRounds) sent_.erase(sent_.begin());
  Recompute();  // a single-node cluster is its own majority
}

void LeaderOwnLease::OnAck(NodeId from, std::uint64_t round) {
  if (!started_ || from == self_) return;
  if (std::find(voters_.begin(), voters_.end(), from) == voters_.end()) return;
  std::uint64_t& a = acked_[from];
  if (round <= a) return;
  a = round;
  Recompute();
}

void LeaderOwnLease::Recompute() {
  if (sent_.empty()) return;
  // Each voter's highest acked round; self has acked every round sent.
  std::vector<std::uint64_t> rounds;
  rounds.reserve(voters_.size());
  for (NodeId v : voters_) {
    if (v == self_) {
      rounds.push_back(sent_.rbegin()->first);
    } else {
      auto it = acked_.find(v);
      rounds.push_back(it == acked_.end() ? 0 : it->second);
    }
  }
  std::sort(rounds.begin(), rounds.end(), std::greater<>());
  const std::size_t majority = voters_.size() / 2 + 1;
  if (rounds.size() < majority) return;
  const std::uint64_t q = rounds[majority - 1];
  if (q <= quorum_round_) return;
  // The newest round <= q whose send time we still know.
  auto it = sent_.upper_bound(q);
  if (it == sent_.begin()) return;
  --it;
  quorum_round_ = q;
  const Nanos until = it->second + length_;
  if (!valid_ || until > until_) until_ = until;
  valid_ = true;
  sent_.erase(sent_.begin(), it);  // keep `it` (still the newest <= q)
}

// ----- LeaderLeases -----

LeaderLeases::LeaderLeases(const Config& cfg)
    : max_duration_(cfg.follower_lease),
      epsilon_(cfg.drift_epsilon),
      guard_(cfg.lease_guard),
      unsafe_(cfg.unsafe == Unsafe::kFollowerLeaseNoMargin) {}

LeaseGrant LeaderLeases::OnRequest(NodeId holder, std::uint64_t seq, Nanos now,
                                   Index commit, Nanos own_until) {
  LeaseGrant g;
  if (revoking_ || seq == 0 || holder == kNone) return g;
  Nanos d = std::min(max_duration_, ShrinkForDrift(own_until - now, epsilon_));
  if (d <= 2 * guard_ || d <= 0) return g;
  const Nanos expiry =
      unsafe_ ? now + d : now + StretchForDrift(d, epsilon_) + guard_;
  Held& h = held_[holder];
  h.seq = std::max(h.seq, seq);
  h.expiry = std::max(h.expiry, expiry);
  g.granted = true;
  g.seq = seq;
  g.duration = d;
  g.floor = commit;
  return g;
}

void LeaderLeases::Expire(Nanos now) {
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.expiry <= now) {
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
}

Index LeaderLeases::CommitGate(
    Index quorum_commit, Nanos now,
    const std::function<Index(NodeId)>& match) const {
  Index gate = quorum_commit;
  for (const auto& [holder, h] : held_) {
    if (h.expiry <= now) continue;
    gate = std::min(gate, match(holder));
  }
  return gate;
}

Nanos LeaderLeases::LongestOutstanding(Nanos now) const {
  Nanos longest = 0;
  for (const auto& [holder, h] : held_) {
    longest = std::max(longest, h.expiry - now);
  }
  return longest;
}

int LeaderLeases::Holders(Nanos now) const {
  int n = 0;
  for (const auto& [holder, h] : held_) {
    if (h.expiry > now) ++n;
  }
  return n;
}

void LeaderLeases::Reset() {
  held_.clear();
  revoking_ = false;
}

// ----- HolderLease -----

HolderLease::HolderLease(const Config& cfg)
    : epsilon_(cfg.drift_epsilon),
      guard_(cfg.lease_guard),
      unsafe_(cfg.unsafe == Unsafe::kFollowerLeaseNoMargin) {}

void HolderLease::OnSend(std::uint64_t seq, Nanos now) {
  if (seq <= used_seq_) return;
  if (!pending_.empty() && seq <= pending_.rbegin()->first) return;
  pending_[seq] = now;
  while (pending_.size() > kMaxPending) pending_.erase(pending_.begin());
}

bool HolderLease::OnGrant(std::uint64_t seq, Nanos duration, Index floor,
                          Nanos now) {
  if (duration <= 0) return false;
  auto it = pending_.find(seq);
  if (it == pending_.end()) return false;
  const Nanos sent = it->second;
  pending_.erase(pending_.begin(), std::next(it));
  used_seq_ = seq;
  const Nanos until = unsafe_
                          ? now + duration
                          : sent + ShrinkForDrift(duration, epsilon_) - guard_;
  floor_ = held_ ? std::max(floor_, floor) : floor;
  if (!held_ || until > until_) until_ = until;
  held_ = true;
  return Valid(now);
}

void HolderLease::Revoke() {
  held_ = false;
  until_ = 0;
  floor_ = 0;
  pending_.clear();
}

}  // namespace faultline::raftkv::raft

// Lease arithmetic for raftkv's read modes: the leader's own lease
// (ReadMode::kLease), the follower read leases (ReadMode::kFollowerLease) and
// the wait a new leader owes to leases its predecessor may have granted.
// Pure time arithmetic: no I/O, no clock reads; every `now` is the calling
// node's own monotonic clock (Nanos, see types.h). The Raft core (raft.cpp)
// owns one LeaderOwnLease + LeaderLeases while leading and one HolderLease
// while following, and calls these at the points named below.
//
// Thread-safety: none (owned by one Node).
//
// ---------------------------------------------------------------------------
// Clock model. Real time t is not observable. Each node's clock advances at a
// rate r relative to real time with 1/(1+e) <= r <= 1+e, e =
// Config::drift_epsilon (0.001). So a local interval x corresponds to a real
// interval in [x/(1+e), x*(1+e)]. A side that must not overestimate elapsed
// real time assumes its clock runs fast; one that must not underestimate it
// assumes its clock runs slow. g = Config::lease_guard >= 0 absorbs rounding
// and scheduling jitter. Message delays are unbounded (asynchronous network).
//
// 1. Leader's own lease (LeaderOwnLease). The leader stamps each heartbeat
//    round with its send time s (local). A follower that acks the round heard
//    from the leader at real time >= S (real time of s). With CheckQuorum a
//    follower grants no vote (and a restarted node must grant none) until an
//    election timeout ET has passed on ITS clock since it last heard from a
//    leader, i.e. not before real S + ET/(1+e). Once a majority (counting
//    self) acked round s, no other leader can be elected before that real
//    time, because every election needs a vote from that majority. The lease
//    lasts until local
//        until = s + ET*(1-e)^2 - g
//    whose real end is <= S + (ET*(1-e)^2 - g)*(1+e) < S + ET/(1+e).
//    While valid the leader may serve reads at its commit index (provided it
//    has committed an entry of its term). Leadership transfer (TimeoutNow
//    skips the followers' check) must invalidate the lease first.
//
// 2. Follower read lease (HolderLease on the follower, LeaderLeases on the
//    leader). The holder sends a request with seq n at local time a (real
//    A). The leader receives it at local r (real R >= A) and grants duration
//    D with floor = its commit index at r; it records the holder's lease as
//    unexpired until local
//        leader_expiry = r + D*(1+e) + g        (real end >= R + D + g/(1+e))
//    The holder, on receiving the grant, may serve reads until local
//        holder_until = a + D/(1+e) - g         (real end <= A + D - g*(1+e))
//    So   holder real end <= A + D <= R + D <= leader's real expiry:
//    the holder's lease is over before the leader forgets it. While a
//    holder's entry is unexpired the leader reports an index committed only
//    once the holder has acknowledged (persisted) it (CommitGate), so at the
//    real time a write W is committed, every holder with a valid lease has W
//    in its log; a read served later takes the value first, checks the lease
//    second, waits if an entry beyond applied touches the key, and only
//    serves once applied >= floor (covering writes committed between A and
//    R, before the leader registered the lease).
//    The floor must bound every index committed so far, so a leader grants
//    only once it has committed an entry of its own term (before that its
//    commit index may lag entries a predecessor committed; same rule as for
//    ReadIndex). Found by the simulator: a new leader with commit 0 granted
//    floor 0 and the holder served a value older than a committed write.
//    Cap: the grant is limited so the holder's lease ends before the
//    leader's own lease:  D <= (own_until - r)/(1+e). Own lease real end >=
//    R + (own_until - r)/(1+e) >= R + D >= holder real end. Hence no follower
//    lease outlives the real time before which no other leader can exist.
//
// 3. New leader's wait (NewLeaderWait). A leader of a new term commits
//    nothing (acknowledges no write) until local
//        start + follower_lease*(1+e) + g
//    has passed: any lease requested before it took office (real T) ends by
//    real T + follower_lease <= real end of that wait. Leases requested
//    later, from an old leader, are bounded by the cap in 2.
//
// 4. Planned leadership transfer: RevokeAll (stop granting, send
//    lease_revoke), then wait until AllExpired before sending TimeoutNow.
//
// Unsafe::kFollowerLeaseNoMargin: the holder's lease runs from grant RECEIPT
// for D with no margin or guard, and the leader's expiry is r + D: the holder
// real end can exceed the leader's expiry by the grant's delivery delay plus
// clock-rate error -> stale follower reads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft {

// ceil(d * (1+e)) and floor(d / (1+e)) for d >= 0 (d < 0 yields 0).
Nanos StretchForDrift(Nanos d, double epsilon);
Nanos ShrinkForDrift(Nanos d, double epsilon);

// The time a leader of a new term waits after taking office before it
// commits or acknowledges anything: follower_lease*(1+e) + lease_guard.
// Only needed in ReadMode::kFollowerLease (0 otherwise).
Nanos NewLeaderWait(const Config& cfg);

// ----- 1. the leader's own lease -----
//
// Usage: Start(now) on becoming leader; OnRoundSent(round, now) whenever a
// heartbeat round with a new, increasing `round` id goes out; OnAck(from,
// round) when a follower answers that round (an ack of round n also
// confirms every earlier round). Invalidate() on step-down or transfer.
class LeaderOwnLease {
 public:
  explicit LeaderOwnLease(const Config& cfg);

  void Start(Nanos now);
  void OnRoundSent(std::uint64_t round, Nanos now);
  void OnAck(NodeId from, std::uint64_t round);
  void Invalidate();

  bool Valid(Nanos now) const { return valid_ && now < until_; }
  // Local time the lease ends (meaningful if any round reached a quorum).
  Nanos Until() const { return valid_ ? until_ : 0; }
  // Highest round acked by a majority (0 if none).
  std::uint64_t QuorumRound() const { return quorum_round_; }

 private:
  void Recompute();

  NodeId self_;
  std::vector<NodeId> voters_;
  Nanos length_;  // ET*(1-e)^2 - g
  bool started_ = false;
  bool valid_ = false;
  Nanos until_ = 0;
  std::uint64_t quorum_round_ = 0;
  std::map<NodeId, std::uint64_t> acked_;  // peer -> highest round acked
  std::map<std::uint64_t, Nanos> sent_;    // round -> local send time
};

// ----- 2a. the leader's table of follower read leases -----
struct LeaseGrant {
  bool granted = false;  // false: send no grant (lease_seq = 0)
  std::uint64_t seq = 0;
  Nanos duration = 0;  // to put in Message::lease_duration
  Index floor = 0;     // to put in Message::lease_floor
};

class LeaderLeases {
 public:
  explicit LeaderLeases(const Config& cfg);

  // A follower asked for a lease (lease_seq = seq) in a message received at
  // `now`. Precondition (the caller's): the leader has committed an entry of
  // its current term, so `commit` covers every committed index. `commit` = the
  // leader's commit index now; `own_until` = the leader's own lease end
  // (LeaderOwnLease::Until; 0 if not valid). Grants min(follower_lease,
  // (own_until-now)/(1+e)) if that is > 2*guard and granting is not stopped by
  // RevokeAll; records the expiry.
  LeaseGrant OnRequest(NodeId holder, std::uint64_t seq, Nanos now,
                       Index commit, Nanos own_until);

  // Drops entries whose expiry <= now.
  void Expire(Nanos now);

  // The highest index <= quorum_commit that every holder unexpired at `now`
  // has acknowledged: min(quorum_commit, match(h) for each such h).
  Index CommitGate(Index quorum_commit, Nanos now,
                   const std::function<Index(NodeId)>& match) const;

  // Longest remaining time (leader clock) of any unexpired entry; 0 if none.
  Nanos LongestOutstanding(Nanos now) const;

  // Stop granting (leadership transfer); entries stay until they expire.
  void RevokeAll() { revoking_ = true; }
  // Grant again (transfer aborted). Also cleared by Reset.
  void ResumeGranting() { revoking_ = false; }
  bool Revoking() const { return revoking_; }
  bool AllExpired(Nanos now) const { return Holders(now) == 0; }
  int Holders(Nanos now) const;
  // Forget everything (step-down; a later term pays NewLeaderWait).
  void Reset();

  bool unsafe_no_margin() const { return unsafe_; }

 private:
  struct Held {
    std::uint64_t seq = 0;
    Nanos expiry = 0;  // leader clock
  };
  Nanos max_duration_;
  double epsilon_;
  Nanos guard_;
  bool unsafe_;
  bool revoking_ = false;
  std::map<NodeId, Held> held_;
};

// ----- 2b. the holder (follower) side -----
//
// Usage: OnSend(seq, now) when a request with lease_seq = seq is sent
// (seqs increase); OnGrant when a grant from the current leader of the
// current term arrives; Revoke() on lease_revoke, on any term change and on
// leader change (or when this node campaigns).
class HolderLease {
 public:
  explicit HolderLease(const Config& cfg);

  void OnSend(std::uint64_t seq, Nanos now);
  // Returns true if the grant extended the lease. Grants for unknown or
  // older seqs than the newest used one, or with duration <= 0, are ignored.
  bool OnGrant(std::uint64_t seq, Nanos duration, Index floor, Nanos now);

  bool Valid(Nanos now) const { return held_ && now < until_; }
  Nanos Remaining(Nanos now) const { return Valid(now) ? until_ - now : 0; }
  // Reads may be served only once applied >= Floor().
  Index Floor() const { return floor_; }
  // Local end of the lease (0 if none was granted since the last Revoke).
  Nanos Until() const { return held_ ? until_ : 0; }
  // Forgets the lease and every outstanding request.
  void Revoke();

 private:
  double epsilon_;
  Nanos guard_;
  bool unsafe_;
  bool held_ = false;
  Nanos until_ = 0;
  Index floor_ = 0;
  std::uint64_t used_seq_ = 0;
  std::map<std::uint64_t, Nanos> pending_;  // seq -> local send time
};

}  // namespace faultline::raftkv::raft

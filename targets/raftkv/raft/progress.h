// Progress: the leader's view of one follower's log (etcd-style).
//
// States:
//   kProbe:     next is a guess; one append in flight at a time (paused until
//               a response or a heartbeat response arrives);
//   kReplicate: the follower is known to match up to `match`; appends are
//               sent optimistically (next advances at send time), up to
//               max_inflight unacknowledged;
//   kSnapshot:  the follower needs the snapshot at `pending_snapshot`; chunks
//               are sent one at a time from `snap_offset`.
// Thread-safety: none.
#pragma once

#include <cstddef>
#include <deque>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft {

enum class ProgressState : std::uint8_t { kProbe, kReplicate, kSnapshot };
const char* ToString(ProgressState s);

class Progress {
 public:
  Progress() = default;
  Progress(Index next, std::size_t max_inflight)
      : next_(next), max_inflight_(max_inflight) {}

  Index match() const { return match_; }
  Index next() const { return next_; }
  ProgressState state() const { return state_; }
  Index pending_snapshot() const { return pending_snapshot_; }
  std::uint64_t snap_offset() const { return snap_offset_; }

  void BecomeProbe();
  void BecomeReplicate();
  void BecomeSnapshot(Index snap_index);
  // An acknowledgement up to `n`: returns true if match advanced.
  bool MaybeUpdate(Index n);
  // A rejection of the append whose prev index was `rejected`; `hint` is the
  // index the follower suggests to back up to. Returns false if the
  // rejection is stale (ignore it).
  bool MaybeDecrTo(Index rejected, Index hint);
  // An append carrying entries up to `last` was sent.
  void SentEntries(Index last);
  // Probe: pause after a send; resume on a response or heartbeat response.
  void Pause() { paused_ = true; }
  void Resume() { paused_ = false; }
  // True if no further append should be sent now.
  bool IsPaused() const;
  std::size_t inflight() const { return inflight_.size(); }
  void SetSnapOffset(std::uint64_t off) { snap_offset_ = off; }

  // Leader bookkeeping (used by the node).
  Nanos last_heard = 0;           // last message received from the follower
  std::uint64_t acked_round = 0;  // newest heartbeat round it acknowledged
  // The last heartbeat round sent to it, and the log end it should have
  // reached by then if every append sent before arrived (loss detection in
  // the replicate state).
  std::uint64_t hb_round = 0;
  Index hb_expect = 0;

 private:
  Index match_ = 0;
  Index next_ = 1;
  ProgressState state_ = ProgressState::kProbe;
  bool paused_ = false;
  Index pending_snapshot_ = 0;
  std::uint64_t snap_offset_ = 0;
  std::size_t max_inflight_ = 64;
  std::deque<Index> inflight_;  // last index of each unacknowledged append
};

}  // namespace faultline::raftkv::raft

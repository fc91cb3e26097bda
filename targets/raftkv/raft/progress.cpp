// Per-follower replication progress (progress.h).
#include "targets/raftkv/raft/progress.h"

#include <algorithm>

namespace faultline::raftkv::raft {

const char* ToString(ProgressState s) {
  switch (s) {
    case ProgressState::kProbe:
      return "probe";
    case ProgressState::kReplicate:
      return "replicate";
    case ProgressState::kSnapshot:
      return "snapshot";
  }
  return "?";
}

void Progress::BecomeProbe() {
  if (state_ == ProgressState::kSnapshot) {
    next_ = std::max(match_ + 1, pending_snapshot_ + 1);
  } else {
    next_ = match_ + 1;
  }
  state_ = ProgressState::kProbe;
  paused_ = false;
  pending_snapshot_ = 0;
  snap_offset_ = 0;
  inflight_.clear();
}

void Progress::BecomeReplicate() {
  next_ = match_ + 1;
  state_ = ProgressState::kReplicate;
  paused_ = false;
  pending_snapshot_ = 0;
  snap_offset_ = 0;
  inflight_.clear();
}

void Progress::BecomeSnapshot(Index snap_index) {
  state_ = ProgressState::kSnapshot;
  pending_snapshot_ = snap_index;
  snap_offset_ = 0;
  paused_ = false;
  inflight_.clear();
}

bool Progress::MaybeUpdate(Index n) {
  bool updated = false;
  if (match_ < n) {
    match_ = n;
    updated = true;
    paused_ = false;
  }
  next_ = std::max(next_, n + 1);
  while (!inflight_.empty() && inflight_.front() <= n) inflight_.pop_front();
  return updated;
}

bool Progress::MaybeDecrTo(Index rejected, Index hint) {
  if (state_ == ProgressState::kReplicate) {
    if (rejected <= match_) return false;  // stale
    next_ = match_ + 1;
    return true;
  }
  if (next_ == 0 || next_ - 1 != rejected) return false;  // stale
  next_ = std::max<Index>(std::min(rejected, hint + 1), match_ + 1);
  next_ = std::max<Index>(next_, 1);
  paused_ = false;
  return true;
}

void Progress::SentEntries(Index last) {
  if (state_ == ProgressState::kReplicate) {
    if (last >= next_) {
      next_ = last + 1;
      inflight_.push_back(last);
    }
  } else if (state_ == ProgressState::kProbe) {
    paused_ = true;
  }
}

bool Progress::IsPaused() const {
  switch (state_) {
    case ProgressState::kProbe:
      return paused_;
    case ProgressState::kReplicate:
      return inflight_.size() >= max_inflight_;
    case ProgressState::kSnapshot:
      return true;
  }
  return true;
}

}  // namespace faultline::raftkv::raft

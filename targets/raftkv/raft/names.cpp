// String names of the core's enums (types.h, raft.h).
#include <string>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft {

const char* ToString(MsgType t) {
  switch (t) {
    case MsgType::kPreVote:
      return "PreVote";
    case MsgType::kPreVoteResp:
      return "PreVoteResp";
    case MsgType::kVote:
      return "Vote";
    case MsgType::kVoteResp:
      return "VoteResp";
    case MsgType::kAppend:
      return "Append";
    case MsgType::kAppendResp:
      return "AppendResp";
    case MsgType::kHeartbeat:
      return "Heartbeat";
    case MsgType::kHeartbeatResp:
      return "HeartbeatResp";
    case MsgType::kSnapshot:
      return "Snapshot";
    case MsgType::kSnapshotResp:
      return "SnapshotResp";
    case MsgType::kTimeoutNow:
      return "TimeoutNow";
    case MsgType::kReadIndex:
      return "ReadIndex";
    case MsgType::kReadIndexResp:
      return "ReadIndexResp";
  }
  return "?";
}

const char* ToString(Role r) {
  switch (r) {
    case Role::kFollower:
      return "follower";
    case Role::kPreCandidate:
      return "pre-candidate";
    case Role::kCandidate:
      return "candidate";
    case Role::kLeader:
      return "leader";
  }
  return "?";
}

const char* ToString(ReadMode m) {
  switch (m) {
    case ReadMode::kReadIndex:
      return "readindex";
    case ReadMode::kLease:
      return "lease";
    case ReadMode::kFollowerLease:
      return "follower-lease";
  }
  return "?";
}

std::optional<ReadMode> ParseReadMode(const std::string& s) {
  for (ReadMode m :
       {ReadMode::kReadIndex, ReadMode::kLease, ReadMode::kFollowerLease}) {
    if (s == ToString(m)) return m;
  }
  return std::nullopt;
}

const char* ToString(Unsafe u) {
  switch (u) {
    case Unsafe::kNone:
      return "none";
    case Unsafe::kVoteNotPersisted:
      return "vote-not-persisted";
    case Unsafe::kLeaderReadNoQuorum:
      return "leader-read-no-quorum";
    case Unsafe::kFollowerLeaseNoMargin:
      return "follower-lease-no-margin";
    case Unsafe::kCommitOldTerms:
      return "commit-old-terms";
    case Unsafe::kLockTokenPerTerm:
      return "lock-token-per-term";
    case Unsafe::kLogNotSynced:
      return "log-not-synced";
    case Unsafe::kTxnNotAtomic:
      return "txn-not-atomic";
  }
  return "?";
}

std::optional<Unsafe> ParseUnsafe(const std::string& s) {
  for (Unsafe u : {Unsafe::kNone, Unsafe::kVoteNotPersisted,
                   Unsafe::kLeaderReadNoQuorum, Unsafe::kFollowerLeaseNoMargin,
                   Unsafe::kCommitOldTerms, Unsafe::kLockTokenPerTerm,
                   Unsafe::kLogNotSynced, Unsafe::kTxnNotAtomic}) {
    if (s == ToString(u)) return u;
  }
  return std::nullopt;
}

}  // namespace faultline::raftkv::raft

// Node::Impl: the Raft core's state and internal operations. Private to the
// raft/ folder; split by concern over raft.cpp (roles, Ready/Advance),
// election.cpp, replication.cpp, snapshot.cpp and reads.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "targets/raftkv/raft/lease.h"
#include "targets/raftkv/raft/log.h"
#include "targets/raftkv/raft/progress.h"
#include "targets/raftkv/raft/raft.h"

namespace faultline::raftkv::raft {

// kVote context marking a campaign started by TimeoutNow: voters skip the
// "heard from a leader recently" check.
inline constexpr std::uint64_t kCampaignTransfer = 1;

struct Node::Impl {
  explicit Impl(Config c, Nanos now);

  // ---- raft.cpp: roles, messages, Ready ----
  void Send(Message m);
  void BecomeFollower(Term t, NodeId leader, Nanos now);
  void BecomePreCandidate(Nanos now);
  void BecomeCandidate(Nanos now);
  void BecomeLeader(Nanos now);
  void ResetTerm(Term t, Nanos now);  // new term (or same): clears per-term
  void ResetElectionTimer(Nanos now);
  void StepInner(const Message& m, Nanos now);
  void StepLeader(const Message& m, Nanos now);
  void StepFollower(const Message& m, Nanos now);
  void StepCandidate(const Message& m, Nanos now);
  void TickInner(Nanos now);
  bool IsVoter(NodeId n) const;
  std::size_t Quorum() const { return cfg.voters.size() / 2 + 1; }
  HardState CurrentHardState() const { return {term, vote, log.committed()}; }
  bool HasReadyInner() const;
  Ready MakeReady();
  void AdvanceInner(const Ready& rd);

  // ---- election.cpp ----
  void Campaign(bool pre, bool transfer, Nanos now);
  void HandleVoteRequest(const Message& m, Nanos now);
  // Records a vote response; returns granted count and rejected count.
  void Poll(NodeId from, bool granted, std::size_t* yes, std::size_t* no);
  bool HeardFromLeaderRecently(Nanos now) const;
  std::uint64_t NextRandom();

  // ---- replication.cpp ----
  // Sends entries (or an empty probe/commit notice if send_if_empty) to `to`
  // per its progress; switches to snapshot state when entries are gone.
  // Returns true if a message was sent.
  bool SendAppend(NodeId to, bool send_if_empty, Nanos now);
  void BcastAppend(Nanos now);
  // Sends what Propose and commit advances left pending (once per Ready).
  void FlushAppends(Nanos now);
  void BcastHeartbeat(Nanos now);
  void SendHeartbeat(NodeId to, std::uint64_t round, Nanos now);
  void HandleAppend(const Message& m, Nanos now);
  void HandleHeartbeat(const Message& m, Nanos now);
  void HandleAppendResp(const Message& m, Nanos now);
  void HandleHeartbeatResp(const Message& m, Nanos now);
  // Recomputes the leader's commit index; returns true if it advanced.
  bool MaybeCommit(Nanos now);
  bool CommittedInTerm() const;
  void AttachLease(Message* m, Nanos now);  // leader -> follower grants
  void OnLeaderMessage(const Message& m, Nanos now);  // holder side
  ProposeResult ProposeInner(std::string data, Nanos now);

  // ---- snapshot.cpp ----
  void SendSnapshotChunk(NodeId to, Nanos now);
  void HandleSnapshot(const Message& m, Nanos now);
  void HandleSnapshotResp(const Message& m, Nanos now);
  void CompactInner(Index index, std::string data);

  // ---- reads.cpp ----
  void RequestReadInner(std::uint64_t ctx, Nanos now);
  // A read from `from` (self or a follower) arriving at the leader.
  void LeaderRead(NodeId from, std::uint64_t ctx, Nanos now);
  void AnswerRead(NodeId from, std::uint64_t ctx, Index index);
  void RejectRead(NodeId from, std::uint64_t ctx);
  void FlushReadRound(Nanos now);
  void ProcessReadRounds();
  void ReleaseCommitWaiters(Nanos now);
  void FailAllReads();  // leadership/leader lost
  void HandleReadIndex(const Message& m, Nanos now);
  void HandleReadIndexResp(const Message& m);
  bool LeaderLeaseValid(Nanos now) const;
  bool TransferInner(NodeId to, Nanos now);
  void MaybeSendTimeoutNow(Nanos now);
  void AbortTransfer(Nanos now);
  bool PrecheckInner(Nanos now, Index* from, Index* to, LocalRead* early) const;

  Config cfg;
  std::uint64_t rng_state;
  Nanos now_ = 0;  // latest time passed in by the driver

  Role role = Role::kFollower;
  Term term = 0;
  NodeId vote = kNone;
  NodeId leader = kNone;
  RaftLog log;

  Nanos election_start = 0;    // last election-timer reset
  Nanos election_timeout = 0;  // randomized, in [T, 2T)
  Nanos leader_heard = 0;      // last message from a current leader
  std::map<NodeId, bool> votes;

  // Leader state.
  std::map<NodeId, Progress> prs;  // every voter, self included
  Nanos leader_start = 0;
  Nanos last_heartbeat = 0;
  std::uint64_t round = 0;  // heartbeat round ids (context)
  NodeId transfer_to = kNone;
  Nanos transfer_start = 0;
  bool timeout_now_sent = false;
  bool lease_void = false;  // own lease off for the rest of the term
  std::map<NodeId, LeaseGrant> grants;  // to attach to the next message
  bool append_pending = false;          // new entries not yet sent
  bool commit_pending = false;  // commit advanced, followers not yet told

  // Reads.
  struct PendingRead {
    NodeId from = kNone;
    std::uint64_t ctx = 0;
    Index index = 0;
    std::uint64_t round = 0;  // 0: round not sent yet
  };
  std::deque<PendingRead> read_queue;       // leader: awaiting a round
  std::vector<PendingRead> commit_waiters;  // leader: no commit in term yet
  bool read_round_needed = false;
  std::set<std::uint64_t> forwarded;  // follower: sent to the leader
  std::vector<ReadState> read_states;
  std::vector<std::uint64_t> failed_reads;

  // Leases.
  LeaderOwnLease own_lease;
  LeaderLeases leases;
  HolderLease holder;
  std::uint64_t lease_seq = 0;

  // Snapshots.
  std::optional<Snapshot> snapshot;          // latest, for laggards
  std::optional<Snapshot> pending_snapshot;  // to hand out in Ready
  struct Incoming {
    SnapshotMeta meta;
    Term term = 0;
    NodeId from = kNone;
    std::uint64_t total = 0;
    std::string data;
  };
  std::optional<Incoming> incoming;

  // Ready bookkeeping.
  std::vector<Message> msgs;
  SoftState prev_soft;
  HardState prev_hard;
};

}  // namespace faultline::raftkv::raft

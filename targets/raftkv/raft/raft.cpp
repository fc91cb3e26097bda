// Node: public API, roles, step dispatch, ticks and Ready/Advance (raft.h).
#include "targets/raftkv/raft/raft.h"

#include <algorithm>

#include "targets/raftkv/raft/node_impl.h"

namespace faultline::raftkv::raft {

Node::Impl::Impl(Config c, Nanos now)
    : cfg(std::move(c)),
      rng_state(cfg.seed * 0x9E3779B97F4A7C15ULL + cfg.id),
      now_(now),
      own_lease(cfg),
      leases(cfg),
      holder(cfg) {
  RAFT_CHECK(cfg.id != kNone);
  RAFT_CHECK(cfg.election_timeout > 0 && cfg.heartbeat_interval > 0);
  if (std::find(cfg.voters.begin(), cfg.voters.end(), cfg.id) ==
      cfg.voters.end())
    cfg.voters.push_back(cfg.id);
  std::sort(cfg.voters.begin(), cfg.voters.end());
  // A (re)started node acts as if it had just heard from a leader: it grants
  // no vote for an election timeout, which leader leases rely on.
  leader_heard = now;
  ResetElectionTimer(now);
  prev_soft = SoftState{role, term, leader};
}

bool Node::Impl::IsVoter(NodeId n) const {
  return std::find(cfg.voters.begin(), cfg.voters.end(), n) != cfg.voters.end();
}

void Node::Impl::Send(Message m) {
  m.from = cfg.id;
  if (m.term == 0) m.term = term;
  msgs.push_back(std::move(m));
}

void Node::Impl::ResetElectionTimer(Nanos now) {
  election_start = now;
  std::uint64_t span = static_cast<std::uint64_t>(cfg.election_timeout);
  election_timeout =
      cfg.election_timeout + static_cast<Nanos>(NextRandom() % span);
}

void Node::Impl::ResetTerm(Term t, Nanos now) {
  if (t != term) {
    term = t;
    vote = kNone;
  }
  if (role == Role::kLeader || leader != kNone) FailAllReads();
  leader = kNone;
  votes.clear();
  ResetElectionTimer(now);
  prs.clear();
  grants.clear();
  if (transfer_to != kNone) transfer_to = kNone;
  timeout_now_sent = false;
  lease_void = false;
  own_lease.Invalidate();
  leases.Reset();
  holder.Revoke();
  incoming.reset();
}

void Node::Impl::BecomeFollower(Term t, NodeId lead, Nanos now) {
  ResetTerm(t, now);
  role = Role::kFollower;
  leader = lead;
}

void Node::Impl::BecomePreCandidate(Nanos now) {
  // No term bump, no vote change: only the leader is forgotten.
  if (leader != kNone) FailAllReads();
  role = Role::kPreCandidate;
  leader = kNone;
  votes.clear();
  holder.Revoke();
  ResetElectionTimer(now);
}

void Node::Impl::BecomeCandidate(Nanos now) {
  RAFT_CHECK(role != Role::kLeader);
  ResetTerm(term + 1, now);
  role = Role::kCandidate;
  vote = cfg.id;
}

void Node::Impl::BecomeLeader(Nanos now) {
  RAFT_CHECK(role == Role::kCandidate);
  ResetTerm(term, now);
  role = Role::kLeader;
  leader = cfg.id;
  leader_start = now;
  last_heartbeat = now;
  for (NodeId v : cfg.voters) {
    Progress p(log.last_index() + 1, cfg.max_inflight);
    p.last_heard = now;
    if (v == cfg.id) {
      p.MaybeUpdate(log.stabled());
      p.BecomeReplicate();
    }
    prs.emplace(v, p);
  }
  own_lease.Start(now);
  // The no-op of the new term: committing it commits everything before it.
  log.Append(Entry{term, log.last_index() + 1, EntryType::kNoop, {}});
  BcastAppend(now);
  // A fresh heartbeat round starts the leader lease.
  BcastHeartbeat(now);
}

void Node::Impl::StepInner(const Message& m, Nanos now) {
  now_ = std::max(now_, now);
  if (m.to != cfg.id && m.to != kNone) return;
  // Only members talk to us (a decodable but foreign message is dropped).
  if (m.from == cfg.id || !IsVoter(m.from)) return;
  if (m.term > term) {
    if (m.type == MsgType::kPreVote || m.type == MsgType::kVote) {
      bool force = m.type == MsgType::kVote && m.context == kCampaignTransfer;
      bool guarded =
          m.type == MsgType::kPreVote ? cfg.pre_vote : cfg.check_quorum;
      if (!force && guarded && HeardFromLeaderRecently(now)) {
        // Within the lease of a live leader: neither grant nor bump term.
        if (m.type == MsgType::kPreVote) {
          Message r;
          r.type = MsgType::kPreVoteResp;
          r.to = m.from;
          r.reject = true;
          Send(r);
        }
        return;
      }
    }
    if (m.type == MsgType::kPreVote) {
      // Never bumps our term.
    } else if (m.type == MsgType::kPreVoteResp && !m.reject) {
      // A grant for the term we would campaign in.
    } else if (m.type == MsgType::kAppend || m.type == MsgType::kHeartbeat ||
               m.type == MsgType::kSnapshot) {
      BecomeFollower(m.term, m.from, now);
    } else {
      BecomeFollower(m.term, kNone, now);
    }
  } else if (m.term < term) {
    if ((cfg.check_quorum || cfg.pre_vote) &&
        (m.type == MsgType::kAppend || m.type == MsgType::kHeartbeat ||
         m.type == MsgType::kSnapshot)) {
      // A stale leader, maybe partitioned away: tell it our term.
      Message r;
      r.type = MsgType::kAppendResp;
      r.to = m.from;
      Send(r);
    } else if (m.type == MsgType::kPreVote) {
      Message r;
      r.type = MsgType::kPreVoteResp;
      r.to = m.from;
      r.reject = true;
      Send(r);
    } else if (m.type == MsgType::kReadIndex) {
      Message r;
      r.type = MsgType::kReadIndexResp;
      r.to = m.from;
      r.context = m.context;
      r.reject = true;
      Send(r);
    }
    return;
  }

  if (m.type == MsgType::kPreVote || m.type == MsgType::kVote) {
    HandleVoteRequest(m, now);
    return;
  }
  switch (role) {
    case Role::kLeader:
      StepLeader(m, now);
      break;
    case Role::kFollower:
      StepFollower(m, now);
      break;
    case Role::kPreCandidate:
    case Role::kCandidate:
      StepCandidate(m, now);
      break;
  }
}

void Node::Impl::StepLeader(const Message& m, Nanos now) {
  auto it = prs.find(m.from);
  if (it != prs.end()) it->second.last_heard = now;
  switch (m.type) {
    case MsgType::kAppendResp:
      HandleAppendResp(m, now);
      break;
    case MsgType::kHeartbeatResp:
      HandleHeartbeatResp(m, now);
      break;
    case MsgType::kSnapshotResp:
      HandleSnapshotResp(m, now);
      break;
    case MsgType::kReadIndex:
      HandleReadIndex(m, now);
      break;
    default:
      break;  // votes answered above; others are stale
  }
}

void Node::Impl::StepFollower(const Message& m, Nanos now) {
  switch (m.type) {
    case MsgType::kAppend:
      OnLeaderMessage(m, now);
      HandleAppend(m, now);
      break;
    case MsgType::kHeartbeat:
      OnLeaderMessage(m, now);
      HandleHeartbeat(m, now);
      break;
    case MsgType::kSnapshot:
      OnLeaderMessage(m, now);
      HandleSnapshot(m, now);
      break;
    case MsgType::kTimeoutNow:
      if (IsVoter(cfg.id)) Campaign(/*pre=*/false, /*transfer=*/true, now);
      break;
    case MsgType::kReadIndex:
      // A follower that thinks we lead; we do not.
      RejectRead(m.from, m.context);
      break;
    case MsgType::kReadIndexResp:
      HandleReadIndexResp(m);
      break;
    default:
      break;
  }
}

void Node::Impl::StepCandidate(const Message& m, Nanos now) {
  switch (m.type) {
    case MsgType::kAppend:
    case MsgType::kHeartbeat:
    case MsgType::kSnapshot:
      // A leader exists in this term.
      BecomeFollower(term, m.from, now);
      StepFollower(m, now);
      break;
    case MsgType::kPreVoteResp:
    case MsgType::kVoteResp: {
      bool pre = role == Role::kPreCandidate;
      if ((m.type == MsgType::kPreVoteResp) != pre) break;
      if (pre && !m.reject && m.term != term + 1) break;
      std::size_t yes = 0, no = 0;
      Poll(m.from, !m.reject, &yes, &no);
      if (yes >= Quorum()) {
        if (pre) {
          Campaign(/*pre=*/false, /*transfer=*/false, now);
        } else {
          BecomeLeader(now);
        }
      } else if (no >= Quorum()) {
        BecomeFollower(term, kNone, now);
      }
      break;
    }
    case MsgType::kReadIndex:
      RejectRead(m.from, m.context);
      break;
    case MsgType::kReadIndexResp:
      HandleReadIndexResp(m);
      break;
    default:
      break;
  }
}

void Node::Impl::TickInner(Nanos now) {
  now_ = std::max(now_, now);
  if (role != Role::kLeader) {
    if (IsVoter(cfg.id) && now - election_start >= election_timeout) {
      Campaign(/*pre=*/cfg.pre_vote, /*transfer=*/false, now);
    }
    return;
  }
  if (cfg.check_quorum && now - leader_start >= cfg.election_timeout) {
    std::size_t active = 0;
    for (const auto& [id, pr] : prs) {
      if (id == cfg.id || now - pr.last_heard < cfg.election_timeout) ++active;
    }
    if (active < Quorum()) {
      BecomeFollower(term, kNone, now);
      return;
    }
  }
  if (transfer_to != kNone && now - transfer_start >= cfg.election_timeout) {
    AbortTransfer(now);
  }
  if (now - last_heartbeat >= cfg.heartbeat_interval) {
    last_heartbeat = now;
    BcastHeartbeat(now);
  }
  if (cfg.read_mode == ReadMode::kFollowerLease) {
    leases.Expire(now);
    if (MaybeCommit(now)) commit_pending = true;
  }
  if (transfer_to != kNone) MaybeSendTimeoutNow(now);
}

bool Node::Impl::HasReadyInner() const {
  if (!msgs.empty() || !read_states.empty() || !failed_reads.empty())
    return true;
  if (read_round_needed) return true;
  if (role == Role::kLeader && (append_pending || commit_pending)) return true;
  if (pending_snapshot) return true;
  if (log.last_index() > log.stabled()) return true;
  if (log.committed() > log.applied()) return true;
  if (SoftState{role, term, leader} != prev_soft) return true;
  return CurrentHardState() != prev_hard;
}

Ready Node::Impl::MakeReady() {
  FlushAppends(now_);
  FlushReadRound(now_);
  Ready rd;
  SoftState ss{role, term, leader};
  if (ss != prev_soft) {
    rd.soft_state = ss;
    prev_soft = ss;
  }
  HardState hs = CurrentHardState();
  if (hs != prev_hard) {
    rd.must_sync = hs.term != prev_hard.term || hs.vote != prev_hard.vote;
    rd.hard_state = hs;
    if (cfg.unsafe == Unsafe::kVoteNotPersisted) rd.hard_state->vote = kNone;
    prev_hard = hs;
  }
  Index applied_from = log.applied();
  if (pending_snapshot) {
    rd.snapshot = pending_snapshot;
    rd.must_sync = true;
    applied_from = std::max(applied_from, pending_snapshot->meta.index);
  }
  for (Index i = log.stabled() + 1; i <= log.last_index(); ++i) {
    rd.entries.push_back(*log.At(i));
  }
  if (!rd.entries.empty()) rd.must_sync = true;
  for (Index i = applied_from + 1; i <= log.committed(); ++i) {
    const Entry* e = log.At(i);
    RAFT_CHECK(e != nullptr);
    rd.committed.push_back(*e);
  }
  rd.messages = std::move(msgs);
  msgs.clear();
  rd.read_states = std::move(read_states);
  read_states.clear();
  rd.failed_reads = std::move(failed_reads);
  failed_reads.clear();
  return rd;
}

void Node::Impl::AdvanceInner(const Ready& rd) {
  if (rd.snapshot) {
    const SnapshotMeta& meta = rd.snapshot->meta;
    if (log.snap_index() == meta.index && log.committed() >= meta.index) {
      log.AppliedTo(meta.index);
    }
    if (!snapshot || snapshot->meta.index < meta.index) snapshot = rd.snapshot;
    if (pending_snapshot && pending_snapshot->meta.index == meta.index)
      pending_snapshot.reset();
  }
  if (!rd.entries.empty()) {
    log.StableTo(rd.entries.back().index, rd.entries.back().term);
  }
  if (!rd.committed.empty()) {
    const Entry& last = rd.committed.back();
    if (log.MatchTerm(last.index, last.term) || last.index <= log.snap_index())
      log.AppliedTo(last.index);
  }
  if (role == Role::kLeader) {
    // The leader's own persisted entries count toward the majority now.
    auto it = prs.find(cfg.id);
    if (it != prs.end() && it->second.MaybeUpdate(log.stabled())) {
      if (MaybeCommit(now_)) commit_pending = true;
    }
  }
}

// ---------------------------------------------------------------------------

Node::Node(Config cfg, Nanos now) : impl_(new Impl(std::move(cfg), now)) {}
Node::~Node() { delete impl_; }

void Node::Restore(const HardState& hs, const std::optional<Snapshot>& snap,
                   std::vector<Entry> entries) {
  Impl& n = *impl_;
  Index si = snap ? snap->meta.index : 0;
  Term st = snap ? snap->meta.term : 0;
  n.log.Restore(si, st, std::move(entries), hs.commit);
  n.term = hs.term;
  n.vote = hs.vote;
  n.snapshot = snap;
  n.prev_hard = n.CurrentHardState();
  n.prev_soft = SoftState{n.role, n.term, n.leader};
}

void Node::Tick(Nanos now) { impl_->TickInner(now); }
void Node::Step(const Message& m, Nanos now) { impl_->StepInner(m, now); }

ProposeResult Node::Propose(std::string data, Nanos now) {
  return impl_->ProposeInner(std::move(data), now);
}

void Node::RequestRead(std::uint64_t context, Nanos now) {
  impl_->RequestReadInner(context, now);
}

bool Node::TransferLeadership(NodeId to, Nanos now) {
  return impl_->TransferInner(to, now);
}

void Node::Compact(Index index, std::string data) {
  impl_->CompactInner(index, std::move(data));
}

bool Node::HasReady() const { return impl_->HasReadyInner(); }
Ready Node::GetReady() { return impl_->MakeReady(); }
void Node::Advance(const Ready& rd) { impl_->AdvanceInner(rd); }

Status Node::GetStatus(Nanos now) const {
  const Impl& n = *impl_;
  Status s;
  s.id = n.cfg.id;
  s.role = n.role;
  s.term = n.term;
  s.leader = n.leader;
  s.vote = n.vote;
  s.commit = n.log.committed();
  s.applied = n.log.applied();
  s.last_index = n.log.last_index();
  s.snapshot_index = n.log.snap_index();
  s.read_mode = n.cfg.read_mode;
  if (n.role == Role::kLeader) {
    s.leader_lease_valid = n.LeaderLeaseValid(now);
    s.lease_holders = n.leases.Holders(now);
    s.transferring_to = n.transfer_to;
  } else {
    s.follower_lease_valid = n.holder.Valid(now);
    s.follower_lease_remaining = n.holder.Remaining(now);
  }
  return s;
}

const Entry* Node::EntryAt(Index i) const { return impl_->log.At(i); }

bool Node::LocalReadPrecheck(Nanos now, Index* from, Index* to,
                             LocalRead* early) const {
  return impl_->PrecheckInner(now, from, to, early);
}

}  // namespace faultline::raftkv::raft

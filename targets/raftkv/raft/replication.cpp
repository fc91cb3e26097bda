// Log replication, heartbeats, the commit rule and follower-lease plumbing
// (node_impl.h).
#include <algorithm>

#include "targets/raftkv/raft/node_impl.h"

namespace faultline::raftkv::raft {

ProposeResult Node::Impl::ProposeInner(std::string data, Nanos now) {
  now_ = std::max(now_, now);
  ProposeResult r;
  r.term = term;
  r.leader = leader;
  if (role != Role::kLeader) {
    r.error = "not leader";
    return r;
  }
  if (transfer_to != kNone) {
    r.error = "transfer in progress";
    return r;
  }
  Entry e{term, log.last_index() + 1, EntryType::kNormal, std::move(data)};
  r.ok = true;
  r.index = e.index;
  log.Append(std::move(e));
  // Sent at the next GetReady, so proposals made in between travel in
  // batches.
  append_pending = true;
  return r;
}

void Node::Impl::FlushAppends(Nanos now) {
  if (role == Role::kLeader && (append_pending || commit_pending)) {
    for (const auto& [id, pr] : prs) {
      if (id == cfg.id) continue;
      bool sent = false;
      while (SendAppend(id, /*send_if_empty=*/false, now)) sent = true;
      // A commit notice for followers that got nothing else.
      if (!sent && commit_pending) SendAppend(id, /*send_if_empty=*/true, now);
    }
  }
  append_pending = false;
  commit_pending = false;
}

bool Node::Impl::SendAppend(NodeId to, bool send_if_empty, Nanos now) {
  auto it = prs.find(to);
  if (it == prs.end() || to == cfg.id) return false;
  Progress& pr = it->second;
  if (pr.IsPaused()) return false;
  Index prev = pr.next() - 1;
  Term prev_term = 0;
  if (!log.TermAt(prev, &prev_term)) {
    // The entries this follower needs were compacted: send the snapshot.
    if (!snapshot) return false;
    pr.BecomeSnapshot(snapshot->meta.index);
    SendSnapshotChunk(to, now);
    return true;
  }
  Message m;
  m.type = MsgType::kAppend;
  m.to = to;
  m.index = prev;
  m.log_term = prev_term;
  if (pr.next() <= log.last_index()) {
    m.entries = log.Slice(pr.next(), log.last_index(), cfg.max_append_entries,
                          cfg.max_append_bytes);
  }
  if (m.entries.empty() && !send_if_empty) return false;
  m.commit = log.committed();
  AttachLease(&m, now);
  pr.SentEntries(m.entries.empty() ? prev : m.entries.back().index);
  Send(std::move(m));
  return true;
}

void Node::Impl::BcastAppend(Nanos now) {
  for (const auto& [id, pr] : prs) {
    if (id != cfg.id) SendAppend(id, /*send_if_empty=*/true, now);
  }
}

void Node::Impl::SendHeartbeat(NodeId to, std::uint64_t r, Nanos now) {
  auto it = prs.find(to);
  if (it == prs.end()) return;
  Message m;
  m.type = MsgType::kHeartbeat;
  m.to = to;
  // Never tell a follower to commit beyond what it is known to hold.
  m.commit = std::min(it->second.match(), log.committed());
  m.context = r;
  it->second.hb_round = r;
  it->second.hb_expect = it->second.next() - 1;
  AttachLease(&m, now);
  Send(std::move(m));
}

void Node::Impl::BcastHeartbeat(Nanos now) {
  std::uint64_t r = ++round;
  own_lease.OnRoundSent(r, now);
  for (auto& pending : read_queue) {
    if (pending.round == 0) pending.round = r;
  }
  read_round_needed = false;
  for (const auto& [id, pr] : prs) {
    if (id != cfg.id) SendHeartbeat(id, r, now);
  }
  ProcessReadRounds();
}

void Node::Impl::OnLeaderMessage(const Message& m, Nanos now) {
  if (leader != m.from) {
    if (leader != kNone) FailAllReads();
    leader = m.from;
    holder.Revoke();
  }
  leader_heard = now;
  ResetElectionTimer(now);
  if (m.lease_revoke) {
    holder.Revoke();
  } else if (m.lease_seq != 0 && cfg.read_mode == ReadMode::kFollowerLease) {
    holder.OnGrant(m.lease_seq, m.lease_duration, m.lease_floor, now);
  }
}

void Node::Impl::AttachLease(Message* m, Nanos /*now*/) {
  if (cfg.read_mode != ReadMode::kFollowerLease) return;
  if (leases.Revoking()) {
    m->lease_revoke = true;
    return;
  }
  auto it = grants.find(m->to);
  if (it == grants.end()) return;
  m->lease_seq = it->second.seq;
  m->lease_duration = it->second.duration;
  m->lease_floor = it->second.floor;
  grants.erase(it);
}

void Node::Impl::HandleAppend(const Message& m, Nanos /*now*/) {
  // Drop malformed appends: entries must follow m.index contiguously with
  // terms between m.log_term and the leader's term.
  Term last_term = m.log_term;
  for (std::size_t k = 0; k < m.entries.size(); ++k) {
    const Entry& e = m.entries[k];
    if (e.index != m.index + 1 + k || e.term < last_term || e.term > m.term)
      return;
    last_term = e.term;
  }
  Message r;
  r.type = MsgType::kAppendResp;
  r.to = m.from;
  Index prev = m.index;
  Term prev_term = m.log_term;
  auto first = m.entries.begin();
  if (prev < log.snap_index()) {
    // Entries covered by our snapshot are committed, hence equal to the
    // leader's: trim them instead of rejecting.
    while (first != m.entries.end() && first->index <= log.snap_index())
      ++first;
    prev = log.snap_index();
    prev_term = log.snap_term();
  }
  if (!log.MatchTerm(prev, prev_term)) {
    r.reject = true;
    r.index = m.index;
    Index hint =
        log.FindConflictByTerm(std::min(m.index, log.last_index()), m.log_term);
    r.reject_hint = hint;
    r.log_term = log.TermOr0(hint);
    Send(std::move(r));
    return;
  }
  std::vector<Entry> rest(first, m.entries.end());
  Index last_new =
      log.AppendAfter(prev, rest, cfg.unsafe == Unsafe::kCommitOldTerms);
  log.CommitTo(std::min(m.commit, last_new));
  r.index = last_new;
  Send(std::move(r));
}

void Node::Impl::HandleHeartbeat(const Message& m, Nanos now) {
  log.CommitTo(std::min(m.commit, log.last_index()));
  Message r;
  r.type = MsgType::kHeartbeatResp;
  r.to = m.from;
  r.context = m.context;
  r.index = log.last_index();
  if (cfg.read_mode == ReadMode::kFollowerLease && IsVoter(cfg.id)) {
    r.lease_seq = ++lease_seq;
    holder.OnSend(r.lease_seq, now);
  }
  Send(std::move(r));
}

void Node::Impl::HandleAppendResp(const Message& m, Nanos now) {
  auto it = prs.find(m.from);
  if (it == prs.end()) return;
  Progress& pr = it->second;
  if (m.reject) {
    Index hint = m.reject_hint;
    if (m.log_term > 0 && hint > log.snap_index()) {
      hint = log.FindConflictByTerm(hint, m.log_term);
    }
    if (pr.MaybeDecrTo(m.index, hint)) {
      if (pr.state() == ProgressState::kReplicate) pr.BecomeProbe();
      SendAppend(m.from, /*send_if_empty=*/true, now);
    }
    return;
  }
  if (m.index > log.last_index()) return;  // not an index we ever sent
  if (pr.MaybeUpdate(m.index)) {
    if (pr.state() == ProgressState::kProbe) {
      pr.BecomeReplicate();
    } else if (pr.state() == ProgressState::kSnapshot &&
               pr.match() >= pr.pending_snapshot()) {
      pr.BecomeReplicate();
    }
    if (MaybeCommit(now)) commit_pending = true;
    if (m.from == transfer_to) MaybeSendTimeoutNow(now);
  }
  while (SendAppend(m.from, /*send_if_empty=*/false, now)) {
  }
}

void Node::Impl::HandleHeartbeatResp(const Message& m, Nanos now) {
  auto it = prs.find(m.from);
  if (it == prs.end()) return;
  Progress& pr = it->second;
  pr.acked_round = std::max(pr.acked_round, m.context);
  own_lease.OnAck(m.from, m.context);
  ProcessReadRounds();
  // Grant only once our commit index covers everything committed so far
  // (an entry of our term is committed): the grant's floor relies on it.
  if (m.lease_seq != 0 && cfg.read_mode == ReadMode::kFollowerLease &&
      CommittedInTerm()) {
    Nanos own_until = LeaderLeaseValid(now) ? own_lease.Until() : 0;
    LeaseGrant g =
        leases.OnRequest(m.from, m.lease_seq, now, log.committed(), own_until);
    if (g.granted) grants[m.from] = g;
  }
  if (pr.state() == ProgressState::kSnapshot) {
    SendSnapshotChunk(m.from, now);
    return;
  }
  if (pr.state() == ProgressState::kReplicate && m.context == pr.hb_round &&
      m.index < pr.hb_expect) {
    // Appends sent before this heartbeat never arrived: probe again.
    pr.BecomeProbe();
  }
  pr.Resume();
  if (pr.match() < log.last_index()) SendAppend(m.from, false, now);
}

bool Node::Impl::CommittedInTerm() const {
  return log.TermOr0(log.committed()) == term;
}

bool Node::Impl::MaybeCommit(Nanos now) {
  if (role != Role::kLeader) return false;
  std::vector<Index> matches;
  matches.reserve(cfg.voters.size());
  for (NodeId v : cfg.voters) {
    auto it = prs.find(v);
    matches.push_back(it == prs.end() ? 0 : it->second.match());
  }
  std::sort(matches.begin(), matches.end(), std::greater<>());
  Index q = matches[Quorum() - 1];
  if (q <= log.committed()) return false;
  // Raft §5.4.2: only entries of the current term are committed by counting
  // replicas; earlier ones follow by the Log Matching property.
  if (cfg.unsafe != Unsafe::kCommitOldTerms && log.TermOr0(q) != term)
    return false;
  if (cfg.read_mode == ReadMode::kFollowerLease) {
    // Wait out any lease the previous leader may have granted, then report
    // an index only once every unexpired lease holder has it.
    if (now < leader_start + NewLeaderWait(cfg)) return false;
    q = leases.CommitGate(q, now, [this](NodeId h) {
      auto p = prs.find(h);
      return p == prs.end() ? Index{0} : p->second.match();
    });
    if (q <= log.committed()) return false;
  }
  log.CommitTo(q);
  ReleaseCommitWaiters(now);
  return true;
}

}  // namespace faultline::raftkv::raft

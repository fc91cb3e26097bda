// Linearizable reads (ReadIndex, leader lease, follower lease precheck) and
// leadership transfer (node_impl.h).
#include <algorithm>

#include "targets/raftkv/raft/node_impl.h"

namespace faultline::raftkv::raft {

bool Node::Impl::LeaderLeaseValid(Nanos now) const {
  return role == Role::kLeader && cfg.check_quorum && !lease_void &&
         transfer_to == kNone && own_lease.Valid(now);
}

void Node::Impl::RequestReadInner(std::uint64_t ctx, Nanos now) {
  now_ = std::max(now_, now);
  if (role == Role::kLeader) {
    LeaderRead(cfg.id, ctx, now);
  } else if (leader != kNone) {
    Message m;
    m.type = MsgType::kReadIndex;
    m.to = leader;
    m.context = ctx;
    Send(std::move(m));
    forwarded.insert(ctx);
  } else {
    failed_reads.push_back(ctx);
  }
}

void Node::Impl::LeaderRead(NodeId from, std::uint64_t ctx, Nanos now) {
  if (cfg.unsafe == Unsafe::kLeaderReadNoQuorum) {
    AnswerRead(from, ctx, log.committed());
    return;
  }
  if (!CommittedInTerm()) {
    // Our commit index may lag the previous leader's until our no-op commits.
    commit_waiters.push_back({from, ctx, 0, 0});
    return;
  }
  if (cfg.voters.size() == 1 ||
      (cfg.read_mode != ReadMode::kReadIndex && LeaderLeaseValid(now))) {
    AnswerRead(from, ctx, log.committed());
    return;
  }
  read_queue.push_back({from, ctx, log.committed(), 0});
  read_round_needed = true;
}

void Node::Impl::AnswerRead(NodeId from, std::uint64_t ctx, Index index) {
  if (from == cfg.id) {
    read_states.push_back({ctx, index});
    return;
  }
  Message m;
  m.type = MsgType::kReadIndexResp;
  m.to = from;
  m.context = ctx;
  m.index = index;
  Send(std::move(m));
}

void Node::Impl::RejectRead(NodeId from, std::uint64_t ctx) {
  if (from == cfg.id) {
    failed_reads.push_back(ctx);
    return;
  }
  Message m;
  m.type = MsgType::kReadIndexResp;
  m.to = from;
  m.context = ctx;
  m.reject = true;
  Send(std::move(m));
}

void Node::Impl::FlushReadRound(Nanos now) {
  if (read_round_needed && role == Role::kLeader) BcastHeartbeat(now);
  read_round_needed = false;
}

void Node::Impl::ProcessReadRounds() {
  while (!read_queue.empty() && read_queue.front().round != 0) {
    std::uint64_t r = read_queue.front().round;
    std::size_t acks = 0;
    for (const auto& [id, pr] : prs) {
      if (id == cfg.id || pr.acked_round >= r) ++acks;
    }
    if (acks < Quorum()) break;
    // A majority answered a round sent after these reads arrived: we still
    // led then, so our recorded commit index is current.
    while (!read_queue.empty() && read_queue.front().round != 0 &&
           read_queue.front().round <= r) {
      AnswerRead(read_queue.front().from, read_queue.front().ctx,
                 read_queue.front().index);
      read_queue.pop_front();
    }
  }
}

void Node::Impl::ReleaseCommitWaiters(Nanos now) {
  if (commit_waiters.empty() || !CommittedInTerm()) return;
  std::vector<PendingRead> w;
  w.swap(commit_waiters);
  for (const PendingRead& p : w) LeaderRead(p.from, p.ctx, now);
}

void Node::Impl::FailAllReads() {
  for (const PendingRead& p : read_queue) RejectRead(p.from, p.ctx);
  for (const PendingRead& p : commit_waiters) RejectRead(p.from, p.ctx);
  read_queue.clear();
  commit_waiters.clear();
  read_round_needed = false;
  for (std::uint64_t ctx : forwarded) failed_reads.push_back(ctx);
  forwarded.clear();
}

void Node::Impl::HandleReadIndex(const Message& m, Nanos now) {
  LeaderRead(m.from, m.context, now);
}

void Node::Impl::HandleReadIndexResp(const Message& m) {
  if (forwarded.erase(m.context) == 0) return;
  if (m.reject) {
    failed_reads.push_back(m.context);
  } else {
    read_states.push_back({m.context, m.index});
  }
}

bool Node::Impl::PrecheckInner(Nanos now, Index* from, Index* to,
                               LocalRead* early) const {
  *early = LocalRead::kNoLease;
  if (cfg.read_mode != ReadMode::kFollowerLease || role != Role::kFollower ||
      leader == kNone || !holder.Valid(now))
    return false;
  if (log.applied() < holder.Floor()) {
    *early = LocalRead::kWait;
    return false;
  }
  // Every entry we hold beyond what is applied may be committed already
  // (we acknowledged it): a read touching one must wait for its commit.
  *from = log.applied() + 1;
  *to = log.last_index();
  return true;
}

bool Node::Impl::TransferInner(NodeId to, Nanos now) {
  now_ = std::max(now_, now);
  if (role != Role::kLeader || to == cfg.id || !IsVoter(to)) return false;
  if (transfer_to == to) return true;
  if (transfer_to != kNone) AbortTransfer(now);
  transfer_to = to;
  transfer_start = now;
  timeout_now_sent = false;
  // The target's campaign skips the voters' lease check: our own lease ends
  // here, follower leases are revoked and waited out before TimeoutNow.
  lease_void = true;
  own_lease.Invalidate();
  if (cfg.read_mode == ReadMode::kFollowerLease) {
    leases.RevokeAll();
    grants.clear();
    BcastHeartbeat(now);
  }
  MaybeSendTimeoutNow(now);
  return true;
}

void Node::Impl::MaybeSendTimeoutNow(Nanos now) {
  if (transfer_to == kNone || timeout_now_sent) return;
  auto it = prs.find(transfer_to);
  if (it == prs.end()) return;
  if (it->second.match() < log.last_index()) {
    SendAppend(transfer_to, /*send_if_empty=*/false, now);
    return;
  }
  if (cfg.read_mode == ReadMode::kFollowerLease && !leases.AllExpired(now))
    return;
  Message m;
  m.type = MsgType::kTimeoutNow;
  m.to = transfer_to;
  Send(std::move(m));
  timeout_now_sent = true;
}

void Node::Impl::AbortTransfer(Nanos now) {
  transfer_to = kNone;
  if (!timeout_now_sent) {
    // The target never got TimeoutNow: leases may resume.
    lease_void = false;
    own_lease.Start(now);
    leases.ResumeGranting();
  }
  timeout_now_sent = false;
}

}  // namespace faultline::raftkv::raft

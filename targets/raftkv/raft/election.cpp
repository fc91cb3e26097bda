// Leader election: PreVote, votes, randomized timeouts (node_impl.h).
#include <algorithm>

#include "targets/raftkv/raft/node_impl.h"

namespace faultline::raftkv::raft {

std::uint64_t Node::Impl::NextRandom() {
  // splitmix64: small, seedable, no global state.
  std::uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

bool Node::Impl::HeardFromLeaderRecently(Nanos now) const {
  if (role == Role::kLeader) return true;
  return now - leader_heard < cfg.election_timeout;
}

void Node::Impl::Campaign(bool pre, bool transfer, Nanos now) {
  if (role == Role::kLeader) return;
  Term campaign_term = 0;
  if (pre) {
    BecomePreCandidate(now);
    campaign_term = term + 1;
  } else {
    BecomeCandidate(now);
    campaign_term = term;
  }
  std::size_t yes = 0, no = 0;
  Poll(cfg.id, true, &yes, &no);
  if (yes >= Quorum()) {
    // Single-node cluster.
    if (pre) {
      Campaign(false, transfer, now);
    } else {
      BecomeLeader(now);
    }
    return;
  }
  for (NodeId v : cfg.voters) {
    if (v == cfg.id) continue;
    Message m;
    m.type = pre ? MsgType::kPreVote : MsgType::kVote;
    m.to = v;
    m.term = campaign_term;
    m.index = log.last_index();
    m.log_term = log.last_term();
    if (transfer) m.context = kCampaignTransfer;
    Send(m);
  }
}

void Node::Impl::Poll(NodeId from, bool granted, std::size_t* yes,
                      std::size_t* no) {
  votes.emplace(from, granted);  // the first answer counts
  *yes = 0;
  *no = 0;
  for (const auto& [id, g] : votes) {
    if (!IsVoter(id)) continue;
    if (g) {
      ++*yes;
    } else {
      ++*no;
    }
  }
}

void Node::Impl::HandleVoteRequest(const Message& m, Nanos now) {
  bool pre = m.type == MsgType::kPreVote;
  // We may vote for `from` if we already did in this term, or have not
  // voted and know no leader, or (PreVote) it campaigns for a later term.
  bool can_vote = vote == m.from || (vote == kNone && leader == kNone) ||
                  (pre && m.term > term);
  bool up_to_date = log.IsUpToDate(m.index, m.log_term);
  Message r;
  r.type = pre ? MsgType::kPreVoteResp : MsgType::kVoteResp;
  r.to = m.from;
  if (can_vote && up_to_date && IsVoter(m.from)) {
    r.term = m.term;  // the term the grant is for
    if (!pre) {
      vote = m.from;
      ResetElectionTimer(now);
    }
  } else {
    r.term = term;
    r.reject = true;
  }
  Send(r);
}

}  // namespace faultline::raftkv::raft

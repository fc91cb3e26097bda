// Unit tests of the Raft core: election, PreVote, CheckQuorum, replication,
// the commit rule (figure 8) and the unsafe switches that break them.
#include "targets/raftkv/raft/raft.h"

#include <catch2/catch.hpp>

#include "targets/raftkv/raft/test_pump.h"

namespace faultline::raftkv::raft {
namespace {

using testing::Pump;

int CountLeaders(Pump& p, Term term) {
  int n = 0;
  for (NodeId id : p.ids()) {
    Status s = p.N(id).GetStatus(p.now);
    if (s.role == Role::kLeader && s.term == term) ++n;
  }
  return n;
}

TEST_CASE("election: a 3-node cluster elects one leader that all follow") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(50);
  Term t = p.N(l).GetStatus(p.now).term;
  CHECK(CountLeaders(p, t) == 1);
  for (NodeId id : p.ids()) {
    Status s = p.N(id).GetStatus(p.now);
    CHECK(s.term == t);
    CHECK(s.leader == l);
    // The leader's no-op is committed and applied everywhere.
    CHECK(s.commit >= 1);
    CHECK(s.applied == s.commit);
  }
}

TEST_CASE("election: the timeout is randomized from the seed") {
  // Same seed, same first campaign time; different seeds differ somewhere.
  auto first_campaign = [](std::uint64_t seed) {
    Config c;
    c.id = 1;
    c.voters = {1, 2, 3};
    c.seed = seed;
    c.election_timeout = 100;
    Node n(c, 0);
    for (Nanos t = 1; t < 1000; ++t) {
      n.Tick(t);
      if (n.GetStatus(t).role != Role::kFollower) return t;
    }
    return Nanos{-1};
  };
  Nanos a = first_campaign(7);
  CHECK(a == first_campaign(7));
  CHECK(a >= 100);
  CHECK(a < 200);
  std::set<Nanos> seen;
  for (std::uint64_t s = 1; s <= 20; ++s) seen.insert(first_campaign(s));
  CHECK(seen.size() > 5);
  CHECK(*seen.begin() >= 100);
  CHECK(*seen.rbegin() < 200);
}

TEST_CASE("election: a new leader is elected when the leader is cut off") {
  Pump p(5);
  NodeId l1 = p.WaitLeader();
  REQUIRE(l1 != kNone);
  Term t1 = p.N(l1).GetStatus(p.now).term;
  p.Isolate(l1);
  p.Run(1000);
  NodeId l2 = kNone;
  for (NodeId id : p.ids()) {
    if (id == l1) continue;
    if (p.N(id).GetStatus(p.now).role == Role::kLeader) l2 = id;
  }
  REQUIRE(l2 != kNone);
  Term t2 = p.N(l2).GetStatus(p.now).term;
  CHECK(t2 > t1);
  CHECK(CountLeaders(p, t2) == 1);
  // CheckQuorum: the isolated old leader stepped down by itself.
  CHECK(p.N(l1).GetStatus(p.now).role != Role::kLeader);
  p.Heal();
  p.Run(300);
  CHECK(p.N(l1).GetStatus(p.now).leader == l2);
  CHECK(p.N(l1).GetStatus(p.now).term == t2);
}

TEST_CASE("check quorum: a leader that hears from no majority steps down") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Isolate(l);
  p.Run(90, 5, {l});  // less than an election timeout: still leads
  CHECK(p.N(l).GetStatus(p.now).role == Role::kLeader);
  p.Run(200, 5, {l});
  CHECK(p.N(l).GetStatus(p.now).role != Role::kLeader);
}

TEST_CASE("check quorum off: an isolated leader keeps leading") {
  Pump p(3, [](Config& c) { c.check_quorum = false; });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Isolate(l);
  p.Run(1000, 5, {l});
  CHECK(p.N(l).GetStatus(p.now).role == Role::kLeader);
}

// A node partitioned away for a long time rejoins. With PreVote its term did
// not grow and the leader is undisturbed; without it, it forces an election.
TEST_CASE("prevote: a rejoining partitioned node does not disrupt") {
  for (bool pre_vote : {true, false}) {
    Pump p(3, [&](Config& c) {
      c.pre_vote = pre_vote;
      c.check_quorum = pre_vote;
    });
    NodeId l = p.WaitLeader();
    REQUIRE(l != kNone);
    Term t = p.N(l).GetStatus(p.now).term;
    NodeId lone = l == 3 ? 1 : 3;
    p.Isolate(lone);
    p.Run(2000);
    Term lone_term = p.N(lone).GetStatus(p.now).term;
    p.Heal();
    p.Run(500);
    Status s = p.N(l).GetStatus(p.now);
    if (pre_vote) {
      INFO("with PreVote");
      CHECK(lone_term == t);
      CHECK(s.role == Role::kLeader);
      CHECK(s.term == t);
      CHECK(p.N(lone).GetStatus(p.now).leader == l);
    } else {
      INFO("without PreVote");
      CHECK(lone_term > t + 3);
      // The old leader was deposed by the higher term.
      CHECK(s.term > t);
    }
  }
}

TEST_CASE("prevote: voters that heard from a leader recently refuse") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  NodeId f = l == 1 ? 2 : 1;
  Term t = p.N(l).GetStatus(p.now).term;
  // f campaigns right away (as if its timer fired), while the others heard
  // from the leader moments ago.
  p.Run(20);
  p.N(f).Tick(p.now + 10'000);  // f's own timer expired
  p.Stabilize();
  CHECK(p.N(f).GetStatus(p.now).term == t);
  CHECK(p.N(l).GetStatus(p.now).role == Role::kLeader);
  CHECK(p.N(l).GetStatus(p.now).term == t);
}

TEST_CASE("replication: proposals commit and apply on every node in order") {
  Pump p(3, [](Config& c) { c.max_append_entries = 4; });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  for (int i = 0; i < 50; ++i) {
    ProposeResult r = p.N(l).Propose("v" + std::to_string(i), p.now);
    REQUIRE(r.ok);
  }
  p.Stabilize();
  p.Run(30);
  auto want = p.T(l).applied;
  REQUIRE(want.size() == 50);
  CHECK(want.front().second == "v0");
  CHECK(want.back().second == "v49");
  for (NodeId id : p.ids()) {
    CHECK(p.T(id).applied == want);
  }
  for (const Message& m : p.sent) {
    if (m.type == MsgType::kAppend) CHECK(m.entries.size() <= 4);
  }
  CHECK(p.regressions == 0);
}

TEST_CASE("replication: a non-leader refuses proposals and names the leader") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  NodeId f = l == 1 ? 2 : 1;
  ProposeResult r = p.N(f).Propose("x", p.now);
  CHECK_FALSE(r.ok);
  CHECK(r.leader == l);
  CHECK(r.error == "not leader");
}

TEST_CASE("replication: pipelining sends several appends before any ack") {
  Pump p(3, [](Config& c) {
    c.max_append_entries = 1;
    c.max_inflight = 8;
  });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(30);
  p.sent.clear();
  for (int i = 0; i < 20; ++i) REQUIRE(p.N(l).Propose("x", p.now).ok);
  p.ProcessReady(l);  // no delivery yet: nothing acknowledged
  std::map<NodeId, int> appends;
  for (const Message& m : p.sent) {
    if (m.type == MsgType::kAppend && !m.entries.empty()) appends[m.to]++;
  }
  for (NodeId id : p.ids()) {
    if (id == l) continue;
    CHECK(appends[id] == 8);  // the inflight window, one entry each
  }
  p.Stabilize();
  p.Run(30);
  for (NodeId id : p.ids()) CHECK(p.T(id).applied.size() == 20);
}

TEST_CASE("replication: a diverged follower is repaired through probing") {
  Pump p(3, [](Config& c) { c.max_append_entries = 2; });
  NodeId l1 = p.WaitLeader();
  REQUIRE(l1 != kNone);
  p.Run(30);
  // The leader appends entries nobody else receives, then loses leadership.
  p.Isolate(l1);
  for (int i = 0; i < 10; ++i) REQUIRE(p.N(l1).Propose("lost", p.now).ok);
  p.Run(1000);
  NodeId l2 = p.Leader();
  REQUIRE(l2 != kNone);
  REQUIRE(l2 != l1);
  for (int i = 0; i < 5; ++i) REQUIRE(p.N(l2).Propose("kept", p.now).ok);
  p.Run(50);
  p.Heal();
  p.Run(500);
  for (NodeId id : p.ids()) {
    INFO("node " << id);
    CHECK(p.T(id).applied == p.T(l2).applied);
    CHECK(p.N(id).GetStatus(p.now).last_index ==
          p.N(l2).GetStatus(p.now).last_index);
  }
  for (const auto& [i, d] : p.T(l1).applied) CHECK(d == "kept");
}

TEST_CASE("ready: hard state appears when it changes; must_sync for votes") {
  Config c;
  c.id = 1;
  c.voters = {1, 2, 3};
  c.election_timeout = 100;
  c.pre_vote = false;
  Node n(c, 0);
  n.Tick(1000);  // campaign: term 1, vote for self
  REQUIRE(n.HasReady());
  Ready rd = n.GetReady();
  REQUIRE(rd.hard_state);
  CHECK(rd.hard_state->term == 1);
  CHECK(rd.hard_state->vote == 1);
  CHECK(rd.must_sync);
  CHECK(rd.messages.size() == 2);
  n.Advance(rd);
  CHECK_FALSE(n.HasReady());
}

TEST_CASE("ready: the leader counts its own entries only once persisted") {
  Config c;
  c.id = 1;
  c.voters = {1};
  c.election_timeout = 100;
  Node n(c, 0);
  n.Tick(1000);  // a single node elects itself
  REQUIRE(n.GetStatus(1000).role == Role::kLeader);
  Ready rd = n.GetReady();
  REQUIRE(rd.entries.size() == 1);  // the no-op
  CHECK(rd.must_sync);
  CHECK(rd.committed.empty());  // not yet persisted: not counted
  n.Advance(rd);
  rd = n.GetReady();
  REQUIRE(rd.committed.size() == 1);
  CHECK(rd.committed[0].type == EntryType::kNoop);
  REQUIRE(rd.hard_state);
  CHECK(rd.hard_state->commit == 1);
  CHECK_FALSE(rd.must_sync);  // a commit-only change needs no fsync
  n.Advance(rd);
  ProposeResult r = n.Propose("x", 1001);
  REQUIRE(r.ok);
  CHECK(r.index == 2);
  rd = n.GetReady();
  CHECK(rd.committed.empty());
  n.Advance(rd);
  rd = n.GetReady();
  REQUIRE(rd.committed.size() == 1);
  CHECK(rd.committed[0].data == "x");
  n.Advance(rd);
  CHECK_FALSE(n.HasReady());
  CHECK(n.GetStatus(1001).applied == 2);
}

TEST_CASE("unsafe vote-not-persisted: Ready carries no vote, memory keeps it") {
  Config c;
  c.id = 2;
  c.voters = {1, 2, 3};
  c.election_timeout = 100;
  c.unsafe = Unsafe::kVoteNotPersisted;
  Node n(c, 0);
  Message v;
  v.type = MsgType::kVote;
  v.from = 1;
  v.to = 2;
  v.term = 1;
  n.Step(v, 1000);
  Ready rd = n.GetReady();
  REQUIRE(rd.hard_state);
  CHECK(rd.hard_state->term == 1);
  CHECK(rd.hard_state->vote == kNone);
  CHECK(n.GetStatus(1000).vote == 1);
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].type == MsgType::kVoteResp);
  CHECK_FALSE(rd.messages[0].reject);
  n.Advance(rd);
  // In memory the vote still holds: a second candidate of term 1 is refused.
  Message v3 = v;
  v3.from = 3;
  n.Step(v3, 1001);
  rd = n.GetReady();
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].reject);
}

TEST_CASE("restart: a node restores its log, term and vote") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  for (int i = 0; i < 5; ++i) REQUIRE(p.N(l).Propose("a", p.now).ok);
  p.Run(50);
  NodeId f = l == 1 ? 2 : 1;
  Status before = p.N(f).GetStatus(p.now);
  p.Restart(f);
  Status after = p.N(f).GetStatus(p.now);
  CHECK(after.term == before.term);
  CHECK(after.vote == before.vote);
  CHECK(after.last_index == before.last_index);
  CHECK(after.commit == before.commit);
  p.Run(100);
  CHECK(p.T(f).applied == p.T(l).applied);
}

// Raft paper, figure 8, with 5 nodes. X is written at index 2 in term 1 by
// S1 and reaches only S2. S5 leads term 2 (its no-op at index 2 reaches
// nobody). S1 leads term 3 and copies X to S3: X is now on a majority but is
// of an older term. If S1 counted it as committed (unsafe), S5 can still win
// term 4 and overwrite it.
void Figure8(bool unsafe, std::string* s1_applied_at_2,
             std::string* final_at_2) {
  Pump p(5, [&](Config& c) {
    c.pre_vote = false;
    c.check_quorum = false;  // leaders step down only by crashing
    c.max_append_entries = 1;
    if (unsafe) c.unsafe = Unsafe::kCommitOldTerms;
  });
  auto only = [&](std::set<NodeId> up) {
    p.Heal();
    for (NodeId id : p.ids())
      if (!up.count(id)) p.Isolate(id);
  };
  only({1, 2, 3, 4, 5});
  REQUIRE(p.Elect(1));  // term 1, no-op at index 1 everywhere
  p.Stabilize();
  only({1, 2});
  REQUIRE(p.N(1).Propose("X", p.now).ok);  // index 2, term 1
  p.Stabilize();
  only({3, 4, 5});
  // S5 wins term 2; its no-op (index 2, term 2) reaches nobody.
  p.drop = [](const Message& m) {
    return m.from == 5 && m.type == MsgType::kAppend;
  };
  REQUIRE(p.Elect(5));
  p.drop = nullptr;
  only({5});
  p.Stabilize();
  only({1, 2, 3});
  p.Restart(1);  // S1 crashed and comes back
  // Strip S1's new no-op (index 3) from its appends: only X travels.
  p.mutate = [](Message& m) {
    if (m.type == MsgType::kAppend)
      std::erase_if(m.entries, [](const Entry& e) { return e.index >= 3; });
  };
  REQUIRE(p.Elect(1));
  p.Stabilize();
  p.Run(30, 5, {1});
  for (const auto& [i, d] : p.T(1).applied)
    if (i == 2) *s1_applied_at_2 = d;
  p.mutate = nullptr;
  // X is on S1, S2, S3: a majority.
  for (NodeId id : {1, 2, 3}) {
    Status st = p.N(id).GetStatus(p.now);
    INFO("node " << id << " term " << st.term << " role " << ToString(st.role)
                 << " last " << st.last_index << " commit " << st.commit);
    const Entry* x = p.N(id).EntryAt(2);
    REQUIRE(x != nullptr);
    CHECK(x->data == "X");
  }
  only({2, 3, 4, 5});
  p.Restart(5);
  REQUIRE(p.Elect(5));  // term 4; S5's log (last term 2) beats X (term 1)
  REQUIRE(p.N(5).Propose("Y", p.now).ok);
  p.Run(50, 5, {5});
  p.Stabilize();
  final_at_2->clear();
  // S5 leads term 4 and has committed its own entries past index 2.
  Status s5 = p.N(5).GetStatus(p.now);
  CHECK(s5.role == Role::kLeader);
  CHECK(s5.commit >= 3);
  if (!unsafe) {
    for (NodeId id : {2, 3, 4}) CHECK(p.T(id).applied == p.T(5).applied);
  }
  const Entry* e = p.N(5).EntryAt(2);
  REQUIRE(e != nullptr);
  *final_at_2 = e->type == EntryType::kNoop ? "noop" : e->data;
}

TEST_CASE("figure 8: entries of an older term are not committed by counting") {
  std::string s1_at_2, final_at_2;
  Figure8(/*unsafe=*/false, &s1_at_2, &final_at_2);
  CHECK(s1_at_2 == "");  // S1 never applied X
  CHECK(final_at_2 == "noop");
}

TEST_CASE("figure 8: unsafe commit-old-terms loses a committed write") {
  std::string s1_at_2, final_at_2;
  Figure8(/*unsafe=*/true, &s1_at_2, &final_at_2);
  CHECK(s1_at_2 == "X");        // S1 applied X as committed...
  CHECK(final_at_2 == "noop");  // ...and the cluster later overwrote it
}

// The `figure8` fault's sequence on 3 nodes (nemesis/scenarios/figure8.h), with one
// entry per append and one append in flight, and no rewritten messages:
// 1 (A) leads term 1 and, cut off, appends W and W2 (indexes 3, 4); 2 (X)
// wins term 2 with 3's (Y's) vote, but its no-op (index 3) reaches nobody;
// A and Y are joined, A wins a later term and sends Y its old entries one
// at a time. The fault acts the moment A reports a commit index >= 3.
// Returns whether Y held A's new-term no-op at that moment, and what is
// left at index 3 after A is cut off again and X and Y are joined.
struct Fig8Outcome {
  bool committed = false;    // A's commit index reached 3
  bool y_had_noop = false;   // ... with A's no-op already on Y
  bool a_applied_w = false;  // A applied W (and would acknowledge it)
  std::string final_at_3;    // "noop" (X's) or the data at index 3 on Y
};
Fig8Outcome Figure8ThreeNodes(bool unsafe) {
  Pump p(3, [&](Config& c) {
    c.pre_vote = false;
    c.check_quorum = false;
    c.max_append_entries = 1;
    c.max_inflight = 1;
    if (unsafe) c.unsafe = Unsafe::kCommitOldTerms;
  });
  REQUIRE(p.Elect(1));                     // term 1, no-op at index 1
  REQUIRE(p.N(1).Propose("P", p.now).ok);  // index 2, committed
  p.Stabilize();
  p.Isolate(1);
  REQUIRE(p.N(1).Propose("W", p.now).ok);   // index 3, term 1
  REQUIRE(p.N(1).Propose("W2", p.now).ok);  // index 4, term 1
  p.Stabilize();
  p.Heal();
  p.Isolate(1);
  p.drop = [](const Message& m) {
    return m.from == 2 && m.type == MsgType::kAppend;
  };
  REQUIRE(p.Elect(2));  // term 2, its no-op at index 3 on 2 alone
  p.drop = nullptr;
  p.Heal();
  p.Cut(1, 2);
  p.Cut(2, 3);
  // A steps down on 3's newer term (3 cannot win: A's log is longer)...
  p.now += 3 * p.MakeConfig(3).election_timeout;
  p.N(3).Tick(p.now);
  p.Stabilize();
  // ...then campaigns; the replication that follows is watched step by
  // step.
  p.now += 3 * p.MakeConfig(1).election_timeout;
  p.N(1).Tick(p.now);
  Fig8Outcome out;
  for (int i = 0; i < 10000 && !out.committed; ++i) {
    bool any = p.ProcessReady(1);
    any |= p.ProcessReady(3);
    any |= p.DeliverOne();
    if (!any) break;
    Status a = p.N(1).GetStatus(p.now);
    if (a.role == Role::kLeader && a.term > 2 && a.commit >= 3) {
      out.committed = true;
      const Entry* last = p.N(3).EntryAt(p.N(3).GetStatus(p.now).last_index);
      out.y_had_noop = last != nullptr && last->term == a.term;
    }
  }
  p.ProcessReady(1);  // A applies what it committed
  for (const auto& [i, d] : p.T(1).applied)
    if (i == 3 && d == "W") out.a_applied_w = true;
  p.Heal();
  p.Isolate(1);
  // Y campaigns first: X, still leading term 2, steps down (and grants Y
  // its vote only if Y holds A's new-term entries)...
  p.now += 3 * p.MakeConfig(3).election_timeout;
  p.N(3).Tick(p.now);
  p.Stabilize();
  // ...then X campaigns, and wins only if Y lacks them.
  p.Elect(2);
  p.Stabilize();
  const Entry* e = p.N(3).EntryAt(3);
  if (e != nullptr)
    out.final_at_3 = e->type == EntryType::kNoop ? "noop" : e->data;
  return out;
}

TEST_CASE(
    "figure 8 on 3 nodes, one entry per append: the safe rule waits "
    "for the new term's entry") {
  Fig8Outcome o = Figure8ThreeNodes(/*unsafe=*/false);
  CHECK(o.committed);
  CHECK(o.y_had_noop);  // A's commit moved only with its no-op on Y
  CHECK(o.final_at_3 == "W");
}

TEST_CASE(
    "figure 8 on 3 nodes, one entry per append: commit-old-terms "
    "commits W early, and W is lost") {
  Fig8Outcome o = Figure8ThreeNodes(/*unsafe=*/true);
  CHECK(o.committed);
  CHECK_FALSE(o.y_had_noop);  // committed by counting Y's copy of W
  CHECK(o.a_applied_w);
  CHECK(o.final_at_3 == "noop");  // X overwrote it
}

}  // namespace
}  // namespace faultline::raftkv::raft

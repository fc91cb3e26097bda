// Linearizable reads (ReadIndex, leader lease, follower lease), the unsafe
// read switch, and leadership transfer.
#include <catch2/catch.hpp>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/test_pump.h"

namespace faultline::raftkv::raft {
namespace {

using testing::Pump;

bool HasRead(Pump& p, NodeId id, std::uint64_t ctx, Index* index = nullptr) {
  for (const ReadState& r : p.T(id).reads) {
    if (r.context == ctx) {
      if (index) *index = r.index;
      return true;
    }
  }
  return false;
}

bool HasFailed(Pump& p, NodeId id, std::uint64_t ctx) {
  for (auto c : p.T(id).failed_reads)
    if (c == ctx) return true;
  return false;
}

TEST_CASE("readindex: the leader serves after a heartbeat round") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(30);
  REQUIRE(p.N(l).Propose("w", p.now).ok);
  p.Stabilize();
  Index commit = p.N(l).GetStatus(p.now).commit;
  p.sent.clear();
  p.N(l).RequestRead(7, p.now);
  p.N(l).RequestRead(8, p.now);
  p.ProcessReady(l);
  CHECK_FALSE(HasRead(p, l, 7));
  // One round (one heartbeat per follower) serves both reads.
  int hbs = 0;
  for (const Message& m : p.sent) hbs += m.type == MsgType::kHeartbeat;
  CHECK(hbs == 2);
  p.Stabilize();
  Index i7 = 0, i8 = 0;
  REQUIRE(HasRead(p, l, 7, &i7));
  REQUIRE(HasRead(p, l, 8, &i8));
  CHECK(i7 == commit);
  CHECK(i8 == commit);
}

TEST_CASE("readindex: a follower's read is answered by the leader") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(30);
  NodeId f = l == 1 ? 2 : 1;
  REQUIRE(p.N(l).Propose("w", p.now).ok);
  p.Stabilize();
  p.N(f).RequestRead(42, p.now);
  p.Stabilize();
  Index i = 0;
  REQUIRE(HasRead(p, f, 42, &i));
  CHECK(i == p.N(l).GetStatus(p.now).commit);
  // Without a known leader the read fails at once.
  Pump q(3);
  q.N(1).RequestRead(5, q.now);
  q.ProcessReady(1);
  CHECK(HasFailed(q, 1, 5));
}

TEST_CASE("readindex: an isolated leader serves nothing; unsafe it does") {
  for (bool unsafe : {false, true}) {
    INFO("unsafe " << unsafe);
    Pump p(3, [&](Config& c) {
      if (unsafe) c.unsafe = Unsafe::kLeaderReadNoQuorum;
    });
    NodeId l1 = p.WaitLeader();
    REQUIRE(l1 != kNone);
    p.Run(30);
    Index old_commit = p.N(l1).GetStatus(p.now).commit;
    p.Isolate(l1);
    // The others elect a new leader and commit a write; l1 is not ticked
    // (it is "paused"), so it still believes it leads.
    std::vector<NodeId> others;
    for (NodeId id : p.ids())
      if (id != l1) others.push_back(id);
    p.Run(1000, 5, others);
    NodeId l2 = kNone;
    for (NodeId id : others)
      if (p.N(id).GetStatus(p.now).role == Role::kLeader) l2 = id;
    REQUIRE(l2 != kNone);
    REQUIRE(p.N(l2).Propose("new", p.now).ok);
    p.Run(50, 5, others);
    REQUIRE(p.N(l1).GetStatus(p.now).role == Role::kLeader);
    p.N(l1).RequestRead(9, p.now);
    p.Stabilize();
    Index i = 0;
    if (unsafe) {
      REQUIRE(HasRead(p, l1, 9, &i));
      CHECK(i == old_commit);  // stale: misses the new leader's write
      CHECK(i < p.N(l2).GetStatus(p.now).commit);
    } else {
      CHECK_FALSE(HasRead(p, l1, 9));
      // Once it learns of the new term the read fails instead.
      p.Heal();
      p.Run(100);
      CHECK_FALSE(HasRead(p, l1, 9));
      CHECK(HasFailed(p, l1, 9));
    }
  }
}

TEST_CASE("readindex: a new leader waits for its first commit") {
  Pump p(3);
  // Hold back every append so the new leader's no-op cannot commit.
  p.drop = [](const Message& m) { return m.type == MsgType::kAppend; };
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.N(l).RequestRead(3, p.now);
  p.Run(30);
  CHECK_FALSE(HasRead(p, l, 3));
  p.drop = nullptr;
  p.Run(100);
  Index i = 0;
  REQUIRE(HasRead(p, l, 3, &i));
  CHECK(i >= 1);
}

TEST_CASE("lease: the leader serves from its lease, not after it expires") {
  Pump p(3, [](Config& c) { c.read_mode = ReadMode::kLease; });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(50);
  CHECK(p.N(l).GetStatus(p.now).leader_lease_valid);
  p.N(l).RequestRead(1, p.now);
  Ready rd = p.N(l).GetReady();
  REQUIRE(rd.read_states.size() == 1);  // no round trip needed
  CHECK(rd.read_states[0].context == 1);
  p.N(l).Advance(rd);
  // Cut off and not hearing back, the lease runs out well before an
  // election timeout (100) has passed.
  p.Isolate(l);
  p.Run(99, 1, {l});
  CHECK_FALSE(p.N(l).GetStatus(p.now).leader_lease_valid);
  CHECK(p.N(l).GetStatus(p.now).role == Role::kLeader);
  p.N(l).RequestRead(2, p.now);
  p.Stabilize();
  CHECK_FALSE(HasRead(p, l, 2));
}

TEST_CASE("follower lease: holders serve locally and gate the commit") {
  Pump p(3, [](Config& c) { c.read_mode = ReadMode::kFollowerLease; });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  // A new leader commits nothing until the longest lease its predecessor
  // could have granted (60 * 1.001 + 1) has passed.
  CHECK(p.N(l).GetStatus(p.now).commit == 0);
  p.Run(40);
  CHECK(p.N(l).GetStatus(p.now).commit == 0);
  p.Run(100);
  CHECK(p.N(l).GetStatus(p.now).commit >= 1);
  NodeId f = l == 1 ? 2 : 1;
  NodeId g = 6 - l - f;
  Status fs = p.N(f).GetStatus(p.now);
  CHECK(fs.follower_lease_valid);
  CHECK(fs.follower_lease_remaining > 0);
  CHECK(fs.follower_lease_remaining <= 60);
  CHECK(p.N(l).GetStatus(p.now).lease_holders == 2);
  CHECK(p.N(f).TryLocalRead(p.now, [](const Entry&) { return true; }) ==
        LocalRead::kServe);

  // An entry the holder has but does not yet know committed blocks reads of
  // the key it touches.
  p.drop = [](const Message& m) {
    return m.type == MsgType::kHeartbeat ||
           (m.type == MsgType::kAppend && m.entries.empty());
  };
  REQUIRE(p.N(l).Propose("k=1", p.now).ok);
  p.Stabilize();  // f acknowledged the entry; no commit notice reaches it
  auto touches_k = [](const Entry& e) { return e.data == "k=1"; };
  auto touches_other = [](const Entry&) { return false; };
  REQUIRE(p.N(f).GetStatus(p.now).applied < p.N(f).GetStatus(p.now).last_index);
  CHECK(p.N(f).TryLocalRead(p.now, touches_k) == LocalRead::kWait);
  CHECK(p.N(f).TryLocalRead(p.now, touches_other) == LocalRead::kServe);
  p.drop = nullptr;
  p.Run(20);
  CHECK(p.N(f).TryLocalRead(p.now, touches_k) == LocalRead::kServe);

  // An unreachable holder: the leader reports nothing committed until its
  // lease has certainly expired, although g and the leader are a majority.
  p.Isolate(f);
  Index before = p.N(l).GetStatus(p.now).commit;
  ProposeResult w = p.N(l).Propose("x", p.now);
  REQUIRE(w.ok);
  p.Run(20, 1, {l, g});
  CHECK(p.N(l).GetStatus(p.now).commit == before);
  CHECK(p.N(g).GetStatus(p.now).last_index >= w.index);
  p.Run(70, 1, {l, g});
  CHECK(p.N(l).GetStatus(p.now).commit >= w.index);
  // By then the cut-off holder's own lease is over.
  CHECK_FALSE(p.N(f).GetStatus(p.now).follower_lease_valid);
  CHECK(p.N(f).TryLocalRead(p.now, touches_other) == LocalRead::kNoLease);
}

TEST_CASE("follower lease: without the lease mode nothing is served locally") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(100);
  NodeId f = l == 1 ? 2 : 1;
  CHECK(p.N(f).TryLocalRead(p.now, [](const Entry&) { return false; }) ==
        LocalRead::kNoLease);
}

TEST_CASE("transfer: leadership moves to an up-to-date target") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(30);
  NodeId t = l == 3 ? 1 : 3;
  Term term = p.N(l).GetStatus(p.now).term;
  // The target lags: it must be brought up to date first.
  p.Isolate(t);
  for (int i = 0; i < 5; ++i) REQUIRE(p.N(l).Propose("a", p.now).ok);
  p.Run(20);
  p.Heal();
  REQUIRE(p.N(l).TransferLeadership(t, p.now));
  CHECK(p.N(l).GetStatus(p.now).transferring_to == t);
  ProposeResult r = p.N(l).Propose("refused", p.now);
  CHECK_FALSE(r.ok);
  CHECK(r.error == "transfer in progress");
  p.Run(50);
  Status ts = p.N(t).GetStatus(p.now);
  CHECK(ts.role == Role::kLeader);
  CHECK(ts.term == term + 1);
  CHECK(p.N(l).GetStatus(p.now).leader == t);
  CHECK(p.T(t).applied == p.T(l).applied);
  CHECK(p.T(t).applied.size() == 5);
}

TEST_CASE("transfer: aborted after an election timeout if the target is gone") {
  Pump p(3);
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(30);
  NodeId t = l == 3 ? 1 : 3;
  p.Isolate(t);
  REQUIRE(p.N(l).Propose("a", p.now).ok);
  REQUIRE(p.N(l).TransferLeadership(t, p.now));
  p.Run(50);
  CHECK(p.N(l).GetStatus(p.now).transferring_to == t);
  p.Run(100);
  CHECK(p.N(l).GetStatus(p.now).role == Role::kLeader);
  CHECK(p.N(l).GetStatus(p.now).transferring_to == kNone);
  CHECK(p.N(l).Propose("b", p.now).ok);
  CHECK_FALSE(p.N(t).GetStatus(p.now).role == Role::kLeader);
}

TEST_CASE("transfer: follower leases are revoked and waited out first") {
  Pump p(3, [](Config& c) { c.read_mode = ReadMode::kFollowerLease; });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  p.Run(200);
  NodeId t = l == 3 ? 1 : 3;
  REQUIRE(p.N(l).GetStatus(p.now).lease_holders == 2);
  p.sent.clear();
  REQUIRE(p.N(l).TransferLeadership(t, p.now));
  Nanos start = p.now;
  p.Stabilize();
  // Holders drop their lease as soon as the revocation arrives.
  for (NodeId id : p.ids())
    if (id != l) CHECK_FALSE(p.N(id).GetStatus(p.now).follower_lease_valid);
  Nanos timeout_now_at = -1;
  for (int i = 0; i < 100 && timeout_now_at < 0; ++i) {
    p.Run(1, 1);
    for (const Message& m : p.sent)
      if (m.type == MsgType::kTimeoutNow) timeout_now_at = p.now;
  }
  REQUIRE(timeout_now_at >= 0);
  // Not before the last lease granted (60*1.001 + 1 on the leader's clock)
  // had expired.
  CHECK(timeout_now_at - start > 60);
  p.Run(50);
  CHECK(p.N(t).GetStatus(p.now).role == Role::kLeader);
}

}  // namespace
}  // namespace faultline::raftkv::raft

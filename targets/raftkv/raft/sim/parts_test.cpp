// Unit tests of the simulator's parts on their own (no raft::Node): the
// PRNG, clock, network, in-memory disk and KV, and the invariant checker,
// which must flag each kind of violation it claims to check.
#include <catch2/catch.hpp>
#include <map>

#include "targets/raftkv/raft/sim/clock.h"
#include "targets/raftkv/raft/sim/invariants.h"
#include "targets/raftkv/raft/sim/memdisk.h"
#include "targets/raftkv/raft/sim/network.h"
#include "targets/raftkv/raft/sim/rng.h"

namespace faultline::raftkv::raft::sim {
namespace {

Entry E(Index i, Term t, const std::string& data = "") {
  Entry e;
  e.index = i;
  e.term = t;
  e.type = data.empty() ? EntryType::kNoop : EntryType::kNormal;
  e.data = data;
  return e;
}

Message M(NodeId from, NodeId to, std::uint64_t tag = 0) {
  Message m;
  m.from = from;
  m.to = to;
  m.context = tag;
  return m;
}

TEST_CASE("rng is deterministic and in range", "[sim][parts]") {
  Rng a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.Next();
    CHECK(x == b.Next());
    differs |= x != c.Next();
  }
  CHECK(differs);
  for (int i = 0; i < 100; ++i) {
    const auto r = a.Range(3, 5);
    CHECK(r >= 3);
    CHECK(r <= 5);
    const double u = a.Unit();
    CHECK(u >= 0.0);
    CHECK(u < 1.0);
  }
}

TEST_CASE("clock: local clocks run at their rate and stay continuous",
          "[sim][parts]") {
  SimClock c;
  const Nanos l1 = c.Local(1), l2 = c.Local(2);
  CHECK(l1 != l2);  // distinct offsets
  c.SetRate(2, 1.5);
  c.Advance(1000);
  CHECK(c.Local(1) - l1 == 1000);
  CHECK(c.Local(2) - l2 == 1500);
  const Nanos before = c.Local(2);
  c.SetRate(2, 0.5);
  CHECK(c.Local(2) == before);  // no jump at a rate change
  c.Advance(1000);
  CHECK(c.Local(2) - before == 500);
  CHECK(c.Rate(2) == 0.5);
}

TEST_CASE("network: delays, order, drop, duplicate", "[sim][parts]") {
  Network n(1, NetOptions{0, 0, 10, 20, 0, 0});
  for (std::uint64_t i = 0; i < 50; ++i) n.Send(M(1, 2, i), 100);
  CHECK(n.InFlight() == 50);
  CHECK(n.TakeDue(109).empty());
  REQUIRE(n.NextDue());
  CHECK(*n.NextDue() >= 110);
  std::vector<Message> got = n.TakeDue(120);
  CHECK(got.size() == 50);
  // Reordered (random delays), yet every message exactly once.
  std::map<std::uint64_t, int> seen;
  bool reordered = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ++seen[got[i].context];
    if (i > 0 && got[i].context < got[i - 1].context) reordered = true;
  }
  CHECK(seen.size() == 50);
  CHECK(reordered);

  Network lossy(1, NetOptions{1.0, 0, 0, 0, 0, 0});
  lossy.Send(M(1, 2), 0);
  CHECK(lossy.InFlight() == 0);
  CHECK(lossy.dropped() == 1);
  Network dup(1, NetOptions{0, 1.0, 0, 0, 0, 0});
  dup.Send(M(1, 2), 0);
  CHECK(dup.TakeDue(0).size() == 2);
}

TEST_CASE("network: partitions cut links, also for messages in flight",
          "[sim][parts]") {
  const std::vector<NodeId> all = {1, 2, 3};
  Network n(1, NetOptions{0, 0, 5, 5, 0, 0});
  n.Send(M(1, 2), 0);
  n.Send(M(3, 2), 0);
  n.Partition({{1}, {2, 3}}, all);
  CHECK_FALSE(n.Connected(1, 2));
  CHECK(n.Connected(3, 2));
  n.Send(M(1, 3), 0);  // refused at send
  std::vector<Message> got = n.TakeDue(10);
  REQUIRE(got.size() == 1);  // 1->2 was in flight: lost at delivery
  CHECK(got[0].from == 3);
  n.Heal();
  n.Isolate(2, all);
  CHECK_FALSE(n.Connected(2, 3));
  CHECK_FALSE(n.Connected(1, 2));
  CHECK(n.Connected(1, 3));
  n.Heal();
  n.Cut(1, 2);
  CHECK_FALSE(n.Connected(1, 2));
  CHECK(n.Connected(2, 1));
}

TEST_CASE("network: take first matching, discard", "[sim][parts]") {
  Network n(1);
  n.Send(M(1, 2, 1), 0);
  n.Send(M(1, 3, 2), 0);
  n.Send(M(1, 2, 3), 0);
  auto m = n.TakeFirst([](const Message& x) { return x.to == 2; });
  REQUIRE(m);
  CHECK(m->context == 1);
  CHECK(n.Discard([](const Message& x) { return x.to == 2; }) == 1);
  m = n.TakeFirst();
  REQUIRE(m);
  CHECK(m->context == 2);
  CHECK_FALSE(n.TakeFirst());
}

TEST_CASE("memdisk: append replaces the tail, rejects gaps", "[sim][parts]") {
  MemDisk d;
  CHECK_FALSE(d.Append({E(1, 1), E(2, 1, "a=1"), E(3, 1, "b=2")}));
  CHECK(d.LastIndex() == 3);
  CHECK_FALSE(d.Append({E(2, 2, "c=3")}));  // truncates 3
  CHECK(d.LastIndex() == 2);
  CHECK(d.At(2)->term == 2);
  CHECK(d.Append({E(5, 2)}));           // gap
  CHECK(d.Append({E(3, 2), E(5, 2)}));  // not contiguous
  CHECK(d.LastIndex() == 2);
  d.Compact(1, "", {1, 2, 3});
  CHECK(d.SnapIndex() == 1);
  CHECK(d.At(1) == nullptr);
  CHECK(d.TermAt(1) == Term{1});
  CHECK(d.Append({E(1, 1)}));  // inside the snapshot
  // A snapshot matching the log keeps the suffix; otherwise drops it.
  CHECK_FALSE(d.Append({E(3, 2), E(4, 2)}));
  Snapshot s;
  s.meta.index = 3;
  s.meta.term = 2;
  d.InstallSnapshot(s);
  CHECK(d.SnapIndex() == 3);
  CHECK(d.LastIndex() == 4);
  s.meta.index = 4;
  s.meta.term = 9;
  d.InstallSnapshot(s);
  CHECK(d.LastIndex() == 4);
  CHECK(d.log.empty());
}

TEST_CASE("simkv: puts, no-ops, snapshots", "[sim][parts]") {
  SimKv kv;
  kv.Apply(E(1, 1));
  kv.Apply(E(2, 1, SimKv::EncodePut("k", "v=1")));
  CHECK(kv.applied() == 2);
  CHECK(kv.Get("k") == std::optional<std::string>("v=1"));
  CHECK_FALSE(kv.Get("x"));
  SimKv other;
  REQUIRE(other.Restore(kv.Serialize(), 2));
  CHECK(other.data() == kv.data());
  CHECK(other.applied() == 2);
  CHECK_FALSE(other.Restore("garbage", 3));
}

// The checker over hand-made disks.
struct Fixture {
  std::map<NodeId, MemDisk> disks;
  InvariantChecker chk{
      42, [this](NodeId n) -> const MemDisk* { return &disks[n]; }};
  void Persist(NodeId n, std::vector<Entry> es) {
    chk.OnPersistEntries(n, es);
    REQUIRE_FALSE(disks[n].Append(es));
  }
  Violation Kind() const {
    return chk.finding() ? chk.finding()->kind : Violation::kNone;
  }
};

TEST_CASE("checker: a correct history passes", "[sim][parts]") {
  Fixture f;
  for (NodeId n : {1, 2, 3}) f.Persist(n, {E(1, 1), E(2, 1, "k=a")});
  f.chk.ObserveNode(1, Role::kLeader, 1, 2);
  f.chk.ObserveNode(2, Role::kFollower, 1, 1);
  ReadTicket t = f.chk.OnReadInvoked("k");
  CHECK(t.required_commit == 2);
  CHECK(t.required_write == 2);
  for (NodeId n : {1, 2}) {
    f.chk.OnApply(n, E(1, 1), 0);
    f.chk.OnApply(n, E(2, 1, "k=a"), 1);
  }
  f.chk.OnReadServed(2, t, 2, std::string("a"), "test");
  f.chk.ObserveNode(2, Role::kFollower, 1, 2);
  // A new leader holding everything committed; a follower's tail repaired.
  f.Persist(3, {E(3, 2)});
  f.chk.ObserveNode(3, Role::kLeader, 2, 2);
  f.Persist(2, {E(3, 2)});
  INFO((f.chk.finding() ? f.chk.finding()->what : std::string()));
  CHECK(f.chk.ok());
  CHECK(f.chk.ReadsChecked() == 1);
}

TEST_CASE("checker: two leaders in one term", "[sim][parts]") {
  Fixture f;
  f.chk.ObserveNode(1, Role::kLeader, 3, 0);
  f.chk.ObserveNode(2, Role::kLeader, 4, 0);
  CHECK(f.chk.ok());
  f.chk.ObserveNode(3, Role::kLeader, 3, 0);
  CHECK(f.Kind() == Violation::kElectionSafety);
  CHECK(f.chk.finding()->what.find("seed 42") == 0);
}

TEST_CASE("checker: log matching", "[sim][parts]") {
  Fixture f;
  f.Persist(1, {E(1, 1, "a=1")});
  f.Persist(2, {E(1, 1, "a=2")});
  CHECK(f.Kind() == Violation::kLogMatching);
  Fixture g;
  g.Persist(1, {E(1, 1), E(2, 2)});
  g.Persist(2, {E(1, 3), E(2, 2)});  // same (2, t2), different prefix
  CHECK(g.Kind() == Violation::kLogMatching);
}

TEST_CASE("checker: a committed entry is never dropped", "[sim][parts]") {
  Fixture f;
  f.Persist(1, {E(1, 1), E(2, 1, "k=a")});
  f.chk.ObserveNode(1, Role::kLeader, 1, 2);
  f.Persist(1, {E(2, 2, "k=b")});
  CHECK(f.Kind() == Violation::kCommittedLost);
}

TEST_CASE("checker: leader completeness", "[sim][parts]") {
  Fixture f;
  f.Persist(1, {E(1, 1), E(2, 1, "k=a")});
  f.Persist(2, {E(1, 1)});
  f.chk.ObserveNode(1, Role::kLeader, 1, 2);
  f.chk.ObserveNode(2, Role::kLeader, 2, 1);
  CHECK(f.Kind() == Violation::kLeaderCompleteness);
}

TEST_CASE("checker: state machine safety and apply order", "[sim][parts]") {
  Fixture f;
  f.chk.OnApply(1, E(1, 1, "k=a"), 0);
  f.chk.OnApply(2, E(1, 2, "k=b"), 0);
  CHECK(f.Kind() == Violation::kStateMachineSafety);
  Fixture g;
  g.chk.OnApply(1, E(2, 1), 0);
  CHECK(g.Kind() == Violation::kApplyOrder);
  Fixture h;
  Snapshot s;
  s.meta.index = 1;
  h.chk.OnApply(1, E(1, 1), 0);
  h.chk.OnApplySnapshot(1, s, 1);  // rolls back
  CHECK(h.Kind() == Violation::kApplyOrder);
  Fixture k;
  k.chk.OnApply(1, E(1, 1, "k=a"), 0);
  s.data = "k=b\n";  // not the replay of index 1
  k.chk.OnApplySnapshot(2, s, 0);
  CHECK(k.Kind() == Violation::kStateMachineSafety);
}

TEST_CASE("checker: commit never decreases", "[sim][parts]") {
  Fixture f;
  f.Persist(1, {E(1, 1), E(2, 1)});
  f.chk.ObserveNode(1, Role::kFollower, 1, 2);
  f.chk.ObserveNode(1, Role::kFollower, 1, 1);
  CHECK(f.Kind() == Violation::kCommitDecreased);
  Fixture g;
  g.chk.OnPersistHardState(1, HardState{1, 1, 5}, HardState{1, 1, 4});
  CHECK(g.Kind() == Violation::kCommitDecreased);
  Fixture h;  // after a restart the persisted commit is the floor
  h.Persist(1, {E(1, 1), E(2, 1)});
  h.chk.ObserveNode(1, Role::kFollower, 1, 2);
  h.chk.OnRestart(1, 1);
  h.chk.ObserveNode(1, Role::kFollower, 1, 1);
  CHECK(h.chk.ok());
  h.chk.OnPersistHardState(1, HardState{1, 2, 1}, HardState{1, 3, 1});
  CHECK(h.Kind() == Violation::kContract);  // vote changed within a term
}

TEST_CASE("checker: stale reads", "[sim][parts]") {
  Fixture f;
  f.Persist(1, {E(1, 1, "k=a"), E(2, 1, "k=b")});
  f.chk.OnApply(1, E(1, 1, "k=a"), 0);
  f.chk.ObserveNode(1, Role::kLeader, 1, 2);
  ReadTicket t = f.chk.OnReadInvoked("k");
  f.chk.OnReadServed(1, t, 3, std::string("b"), "test");
  CHECK(f.chk.ok());
  f.chk.OnReadServed(1, t, 0, std::string("a"), "local");  // value too old
  CHECK(f.Kind() == Violation::kReadSafety);
  Fixture g;
  g.Persist(1, {E(1, 1, "k=a"), E(2, 1, "x=b")});
  g.chk.ObserveNode(1, Role::kLeader, 1, 2);
  ReadTicket u = g.chk.OnReadInvoked("k");
  g.chk.OnReadServed(1, u, 1, std::string("a"), "read-index");  // index 1 < 2
  CHECK(g.Kind() == Violation::kReadSafety);
  Fixture h;
  ReadTicket v = h.chk.OnReadInvoked("k");
  h.chk.OnReadServed(1, v, 0, std::string("never"), "local");
  CHECK(h.Kind() == Violation::kReadSafety);
}

}  // namespace
}  // namespace faultline::raftkv::raft::sim

// Log compaction and chunked InstallSnapshot.
#include <catch2/catch.hpp>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/test_pump.h"

namespace faultline::raftkv::raft {
namespace {

using testing::Pump;

TEST_CASE("snapshot: a lagging follower catches up through chunks") {
  Pump p(3, [](Config& c) { c.snapshot_chunk_bytes = 16; });
  NodeId l = p.WaitLeader();
  REQUIRE(l != kNone);
  NodeId f = l == 3 ? 1 : 3;
  p.Isolate(f);
  for (int i = 0; i < 30; ++i)
    REQUIRE(p.N(l).Propose("val" + std::to_string(i), p.now).ok);
  p.Run(50);
  Status ls = p.N(l).GetStatus(p.now);
  REQUIRE(ls.applied == ls.commit);
  p.N(l).Compact(ls.applied, Pump::Encode(p.T(l).applied));
  CHECK(p.N(l).GetStatus(p.now).snapshot_index == ls.applied);
  CHECK(p.N(l).EntryAt(ls.applied) == nullptr);
  p.sent.clear();
  p.Heal();
  p.Run(500);
  int chunks = 0;
  for (const Message& m : p.sent) {
    if (m.type == MsgType::kSnapshot && m.to == f) {
      ++chunks;
      CHECK(m.snapshot.data.size() <= 16);
    }
  }
  CHECK(chunks > 10);
  CHECK(p.T(f).snapshots_applied == 1);
  CHECK(p.T(f).applied == p.T(l).applied);
  CHECK(p.N(f).GetStatus(p.now).snapshot_index == ls.applied);
  // Replication continues normally after the snapshot.
  REQUIRE(p.N(l).Propose("after", p.now).ok);
  p.Run(50);
  CHECK(p.T(f).applied == p.T(l).applied);
  CHECK(p.T(f).applied.back().second == "after");
  CHECK(p.regressions == 0);
}

// Drives a lone follower by hand with chunks of a snapshot from leader 1.
struct Follower {
  Follower() : node(MakeConfig(), 0) {}
  static Config MakeConfig() {
    Config c;
    c.id = 2;
    c.voters = {1, 2, 3};
    c.election_timeout = 1000;
    return c;
  }
  static Message Chunk(Index idx, const std::string& all, std::uint64_t off,
                       std::uint64_t n) {
    Message m;
    m.type = MsgType::kSnapshot;
    m.from = 1;
    m.to = 2;
    m.term = 1;
    m.snapshot.meta = SnapshotMeta{idx, 1, {1, 2, 3}};
    m.snapshot.data = all.substr(off, n);
    m.snap_offset = off;
    m.snap_total = all.size();
    m.snap_done = off + n >= all.size();
    return m;
  }
  // Steps `m` and returns the Ready it produced (advanced).
  Ready Step(const Message& m) {
    node.Step(m, ++now);
    Ready rd = node.GetReady();
    node.Advance(rd);
    return rd;
  }
  Node node;
  Nanos now = 0;
};

TEST_CASE("snapshot: duplicate, gapped and stale chunks are ignored") {
  Follower f;
  const std::string all = "abcdefghij";
  Ready rd = f.Step(Follower::Chunk(10, all, 0, 4));
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].type == MsgType::kSnapshotResp);
  CHECK(rd.messages[0].snap_offset == 4);
  rd = f.Step(Follower::Chunk(10, all, 0, 4));  // duplicate
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].snap_offset == 4);
  rd = f.Step(Follower::Chunk(10, all, 8, 2));  // past a gap
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].snap_offset == 4);
  CHECK_FALSE(rd.snapshot);
  rd = f.Step(Follower::Chunk(10, all, 4, 4));
  CHECK(rd.messages[0].snap_offset == 8);
  rd = f.Step(Follower::Chunk(10, all, 8, 2));
  REQUIRE(rd.snapshot);
  CHECK(rd.snapshot->data == all);
  CHECK(rd.snapshot->meta.index == 10);
  CHECK(rd.must_sync);
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].type == MsgType::kAppendResp);
  CHECK(rd.messages[0].index == 10);
  Status s = f.node.GetStatus(f.now);
  CHECK(s.commit == 10);
  CHECK(s.applied == 10);
  CHECK(s.snapshot_index == 10);

  // The same snapshot again, or an older one: ignored, answered with our
  // state, never handed to the driver.
  rd = f.Step(Follower::Chunk(10, all, 0, 4));
  CHECK_FALSE(rd.snapshot);
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].type == MsgType::kAppendResp);
  CHECK(rd.messages[0].index == 10);
  rd = f.Step(Follower::Chunk(8, "old", 0, 3));
  CHECK_FALSE(rd.snapshot);
  CHECK(rd.messages[0].index == 10);

  // An append whose prev index lies inside the snapshot is trimmed.
  Message a;
  a.type = MsgType::kAppend;
  a.from = 1;
  a.to = 2;
  a.term = 1;
  a.index = 5;
  a.log_term = 1;
  for (Index i = 6; i <= 12; ++i) a.entries.push_back(Entry{1, i, {}, "e"});
  a.commit = 12;
  rd = f.Step(a);
  REQUIRE(rd.messages.size() == 1);
  CHECK_FALSE(rd.messages[0].reject);
  CHECK(rd.messages[0].index == 12);
  REQUIRE(rd.entries.size() == 2);
  CHECK(rd.entries.front().index == 11);
  REQUIRE(rd.committed.size() == 2);
  CHECK(rd.committed.front().index == 11);
  CHECK(f.node.GetStatus(f.now).applied == 12);
}

TEST_CASE("snapshot: a newer snapshot restarts the assembly") {
  Follower f;
  const std::string a = "0123456789", b = "ABCDEFGHIJKL";
  f.Step(Follower::Chunk(10, a, 0, 4));
  Ready rd = f.Step(Follower::Chunk(20, b, 4, 4));  // new one, not at 0
  REQUIRE(rd.messages.size() == 1);
  CHECK(rd.messages[0].index == 20);
  CHECK(rd.messages[0].snap_offset == 0);
  f.Step(Follower::Chunk(20, b, 0, 6));
  rd = f.Step(Follower::Chunk(20, b, 6, 6));
  REQUIRE(rd.snapshot);
  CHECK(rd.snapshot->data == b);
  CHECK(f.node.GetStatus(f.now).applied == 20);
}

TEST_CASE("snapshot: a snapshot matching the log only advances commit") {
  Follower f;
  Message a;
  a.type = MsgType::kAppend;
  a.from = 1;
  a.to = 2;
  a.term = 1;
  for (Index i = 1; i <= 5; ++i) a.entries.push_back(Entry{1, i, {}, "e"});
  a.commit = 2;
  f.Step(a);
  Ready rd = f.Step(Follower::Chunk(4, "snap", 0, 4));
  CHECK_FALSE(rd.snapshot);
  CHECK(f.node.GetStatus(f.now).commit == 4);
  CHECK(f.node.GetStatus(f.now).last_index == 5);
  REQUIRE(rd.committed.size() == 2);
  CHECK(rd.committed.back().index == 4);
}

}  // namespace
}  // namespace faultline::raftkv::raft

// DiskStorage over FaultEnv: round trips, restarts, preconditions, segment
// rolling and deletion, corruption detection.
#include "targets/raftkv/storage/storage.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "targets/raftkv/storage/fault_env.h"
#include "targets/raftkv/storage/storage_test_util.h"

namespace faultline::raftkv::storage {
namespace {

using testing::E;
using testing::Model;
using testing::Range;
using testing::SaveOp;
using testing::SnapOp;

constexpr char kDir[] = "/d";

std::vector<std::string> Segments(FaultEnv* env) {
  std::vector<std::string> names, out;
  REQUIRE(env->ListDir(kDir, &names) == "");
  for (const auto& n : names) {
    if (n.rfind("wal-", 0) == 0) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::unique_ptr<DiskStorage> MustOpen(FaultEnv* env, Recovered* rec,
                                      std::uint64_t segment_bytes = 64 << 20) {
  DiskStorage::Options o;
  o.segment_bytes = segment_bytes;
  std::string err;
  auto s = DiskStorage::Open(kDir, env, o, rec, &err);
  INFO(err);
  REQUIRE(s);
  return s;
}

// Applies `op` to storage and model; the op must succeed.
void Do(DiskStorage* s, Model* m, const testing::Op& op) {
  INFO(op.Describe());
  REQUIRE(testing::Run(s, op) == "");
  m->Apply(op);
}

TEST_CASE("empty directory opens empty", "[storage]") {
  FaultEnv env;
  Recovered rec;
  auto s = MustOpen(&env, &rec);
  CHECK(rec.hard_state == raft::HardState{});
  CHECK_FALSE(rec.snapshot);
  CHECK(rec.entries.empty());
  CHECK(rec.torn_records == 0);
  CHECK(s->LastIndex() == 0);
  CHECK(Segments(&env).size() == 1);
}

TEST_CASE("synced saves survive a power loss exactly", "[storage]") {
  FaultEnv env;
  Model m;
  {
    Recovered rec;
    auto s = MustOpen(&env, &rec);
    Do(s.get(), &m, SaveOp(raft::HardState{1, 1, 0}, Range(1, 5, 1), true));
    Do(s.get(), &m, SaveOp(raft::HardState{2, 0, 3}, Range(4, 7, 2), true));
    Do(s.get(), &m, SaveOp(std::nullopt, Range(8, 8, 2, 1000), true));
    CHECK(s->LastIndex() == 8);
  }
  env.LosePower({});  // only synced data survives
  Recovered rec;
  auto s = MustOpen(&env, &rec);
  INFO(testing::Describe(rec) << " want " << m.Describe());
  CHECK(m.Matches(rec));
  CHECK(rec.entries.size() == 8);
  CHECK(rec.entries[3].term == 2);  // the overwrite
  CHECK(s->LastIndex() == 8);
}

TEST_CASE("unsynced saves may be lost, but only as a whole suffix",
          "[storage]") {
  FaultEnv env;
  Model synced;
  {
    Recovered rec;
    auto s = MustOpen(&env, &rec);
    Do(s.get(), &synced,
       SaveOp(raft::HardState{1, 1, 0}, Range(1, 2, 1), true));
    REQUIRE(s->Save(std::nullopt, Range(3, 4, 1), false) == "");
  }
  env.LosePower({});
  Recovered rec;
  auto s = MustOpen(&env, &rec);
  CHECK(synced.Matches(rec));
  // A later sync covers earlier unsynced saves.
  REQUIRE(s->Save(std::nullopt, Range(3, 3, 1), false) == "");
  REQUIRE(s->Save(raft::HardState{1, 1, 3}, {}, true) == "");
  s.reset();
  env.LosePower({});
  s = MustOpen(&env, &rec);
  REQUIRE(rec.entries.size() == 3);
  CHECK(rec.hard_state.commit == 3);
}

TEST_CASE("preconditions are errors that write nothing", "[storage]") {
  FaultEnv env;
  Recovered rec;
  auto s = MustOpen(&env, &rec);
  Model m;
  Do(s.get(), &m, SaveOp(std::nullopt, Range(1, 5, 1), true));
  Do(s.get(), &m, SnapOp(2, 1));
  CHECK(s->Save(std::nullopt, Range(7, 8, 1), true) != "");  // gap
  // Entries the snapshot covers are skipped; the rest is saved.
  Do(s.get(), &m, SaveOp(std::nullopt, Range(1, 2, 1), true));
  Do(s.get(), &m, SaveOp(std::nullopt, Range(2, 5, 1), true));
  CHECK(s->LastIndex() == 5);
  CHECK(s->Save(std::nullopt, {E(6, 1), E(8, 1)}, true) != "");
  CHECK(s->SaveSnapshot(testing::Snap(1, 1)) != "");  // older snapshot
  // Not broken by them.
  Do(s.get(), &m, SaveOp(raft::HardState{1, 0, 2}, Range(6, 6, 1), true));
  s.reset();
  s = MustOpen(&env, &rec);
  CHECK(m.Matches(rec));
  CHECK(s->SnapshotIndex() == 2);
  CHECK(s->LastIndex() == 6);
}

TEST_CASE("snapshots keep or discard the log by Raft's rule", "[storage]") {
  FaultEnv env;
  Recovered rec;
  auto s = MustOpen(&env, &rec);
  Model m;
  Do(s.get(), &m, SaveOp(raft::HardState{2, 1, 0}, Range(1, 6, 2), true));
  SECTION("matching entry: later entries kept") {
    Do(s.get(), &m, SnapOp(4, 2));
    CHECK(s->LastIndex() == 6);
  }
  SECTION("conflicting term: log discarded") {
    Do(s.get(), &m, SnapOp(4, 3));
    CHECK(s->LastIndex() == 4);
  }
  SECTION("past the end: log discarded") {
    Do(s.get(), &m, SnapOp(9, 3));
    CHECK(s->LastIndex() == 9);
    Do(s.get(), &m, SaveOp(std::nullopt, Range(10, 10, 3), true));
  }
  CHECK(s->SnapshotIndex() == m.SnapIndex());
  s.reset();
  env.LosePower({});
  s = MustOpen(&env, &rec);
  INFO(testing::Describe(rec) << " want " << m.Describe());
  CHECK(m.Matches(rec));
  REQUIRE(rec.snapshot);
  CHECK(rec.snapshot->meta.voters == std::vector<raft::NodeId>{1, 2, 3});
}

TEST_CASE("segments roll by size and covered ones are deleted", "[storage]") {
  FaultEnv env;
  Recovered rec;
  auto s = MustOpen(&env, &rec, 1000);
  Model m;
  for (raft::Index i = 1; i <= 100; i += 5) {
    Do(s.get(), &m,
       SaveOp(raft::HardState{1, 1, i}, Range(i, i + 4, 1, 100), true));
  }
  const std::size_t before = Segments(&env).size();
  CHECK(before >= 8);
  Do(s.get(), &m, SnapOp(80, 1));
  const std::size_t after = Segments(&env).size();
  CHECK(after < before / 2);
  CHECK(after >= 2);  // entries 81..100 still live somewhere
  s.reset();
  env.LosePower({});
  s = MustOpen(&env, &rec, 1000);
  INFO(testing::Describe(rec) << " want " << m.Describe());
  CHECK(m.Matches(rec));
  CHECK(rec.entries.front().index == 81);
  CHECK(rec.hard_state.commit == 96);
  // Snapshot covering everything: one segment left.
  Do(s.get(), &m, SnapOp(100, 1));
  CHECK(Segments(&env).size() == 1);
  s.reset();
  s = MustOpen(&env, &rec, 1000);
  CHECK(m.Matches(rec));
}

TEST_CASE("a flipped checksum in the middle of a segment fails Open",
          "[storage]") {
  FaultEnv env;
  {
    Recovered rec;
    auto s = MustOpen(&env, &rec);
    for (raft::Index i = 1; i <= 10; ++i) {
      REQUIRE(s->Save(raft::HardState{1, 1, i}, {E(i, 1, 20)}, true) == "");
    }
  }
  auto segs = Segments(&env);
  REQUIRE(segs.size() == 1);
  const std::string path = std::string(kDir) + "/" + segs[0];
  const std::size_t size = env.Contents(path).size();
  const std::size_t offset = size / 2;
  REQUIRE(env.Overwrite(path, offset,
                        static_cast<char>(env.Contents(path)[offset] ^ 0x40)));
  Recovered rec;
  std::string err;
  auto s = DiskStorage::Open(kDir, &env, &rec, &err);
  CHECK_FALSE(s);
  INFO(err);
  CHECK(err.find(segs[0]) != std::string::npos);
  CHECK((err.find("checksum") != std::string::npos ||
         err.find("length") != std::string::npos));
  CHECK(rec.entries.empty());
}

TEST_CASE("a missing segment is a gap and fails Open", "[storage]") {
  FaultEnv env;
  {
    Recovered rec;
    auto s = MustOpen(&env, &rec, 500);
    for (raft::Index i = 1; i <= 30; ++i) {
      REQUIRE(s->Save(std::nullopt, {E(i, 1, 50)}, true) == "");
    }
  }
  auto segs = Segments(&env);
  REQUIRE(segs.size() >= 3);
  REQUIRE(env.Remove(std::string(kDir) + "/" + segs[1]) == "");
  Recovered rec;
  std::string err;
  CHECK_FALSE(DiskStorage::Open(kDir, &env, &rec, &err));
  INFO(err);
  CHECK(err.find("starts at index") != std::string::npos);
}

TEST_CASE("a damaged snapshot file fails Open", "[storage]") {
  FaultEnv env;
  {
    Recovered rec;
    auto s = MustOpen(&env, &rec);
    REQUIRE(s->Save(std::nullopt, Range(1, 3, 1), true) == "");
    REQUIRE(s->SaveSnapshot(testing::Snap(3, 1)) == "");
  }
  REQUIRE(env.Overwrite("/d/snapshot", 30, 'X'));
  Recovered rec;
  std::string err;
  CHECK_FALSE(DiskStorage::Open(kDir, &env, &rec, &err));
  CHECK(err.find("snapshot") != std::string::npos);
}

TEST_CASE("after a write error every call fails", "[storage]") {
  FaultEnv env;
  Recovered rec;
  auto s = MustOpen(&env, &rec);
  REQUIRE(s->Save(std::nullopt, Range(1, 1, 1), true) == "");
  env.CrashAfter(env.boundaries() + 1);  // the append works, the fsync fails
  std::string err = s->Save(std::nullopt, Range(2, 2, 1), true);
  CHECK(err.find("crashed") != std::string::npos);
  CHECK(s->Save(std::nullopt, Range(3, 3, 1), true).find("failed earlier") !=
        std::string::npos);
  CHECK(s->SaveSnapshot(testing::Snap(1, 1)).find("failed earlier") !=
        std::string::npos);
}

}  // namespace
}  // namespace faultline::raftkv::storage

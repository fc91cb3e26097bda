// NoSyncEnv (raftkv --unsafe log-not-synced) against the safe storage: the
// safe one makes every synced Save durable (file and directory entry) before
// returning; over NoSyncEnv the same calls write the same bytes but never
// sync, so a power loss takes acknowledged saves with it.
#include "targets/raftkv/storage/no_sync_env.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "targets/raftkv/storage/fault_env.h"
#include "targets/raftkv/storage/storage.h"
#include "targets/raftkv/storage/storage_test_util.h"

namespace faultline::raftkv::storage {
namespace {

using testing::Range;

constexpr char kDir[] = "/d";

bool StartsWith(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

int CountSyncs(const std::vector<std::string>& trace, std::size_t from = 0) {
  int n = 0;
  for (std::size_t i = from; i < trace.size(); ++i) {
    if (StartsWith(trace[i], "sync ") || StartsWith(trace[i], "syncdir ")) {
      ++n;
    }
  }
  return n;
}

std::unique_ptr<DiskStorage> MustOpen(Env* env, Recovered* rec) {
  std::string err;
  auto s = DiskStorage::Open(kDir, env, rec, &err);
  INFO(err);
  REQUIRE(s);
  return s;
}

// Ten synced Saves (entry i in term 1, hard state term 1 voting for 2,
// commit i - 1); checks after each one that everything it appended was
// followed by a file sync before it returned, iff `want_syncs`.
void TenSaves(DiskStorage* s, FaultEnv* disk, bool want_syncs) {
  for (raft::Index i = 1; i <= 10; ++i) {
    const std::size_t before = disk->trace().size();
    REQUIRE(s->Save(raft::HardState{1, 2, i - 1}, Range(i, i, 1), true) == "");
    const auto& trace = disk->trace();
    std::size_t last_append = trace.size();
    for (std::size_t k = before; k < trace.size(); ++k) {
      if (StartsWith(trace[k], "append ")) last_append = k;
    }
    INFO("save " << i);
    REQUIRE(last_append < trace.size());  // it wrote something
    if (want_syncs) {
      CHECK(CountSyncs(trace, last_append + 1) >= 1);
    } else {
      CHECK(CountSyncs(trace, before) == 0);
    }
  }
}

TEST_CASE("safe storage syncs every acknowledged save; power loss keeps it",
          "[storage][unsafe]") {
  FaultEnv disk;
  {
    Recovered rec;
    auto s = MustOpen(&disk, &rec);
    // Opening a fresh directory makes the directory and the first segment's
    // name durable.
    CHECK(CountSyncs(disk.trace()) >= 1);
    TenSaves(s.get(), &disk, true);
  }
  disk.LosePower({});  // only synced bytes and names survive
  Recovered rec;
  auto s = MustOpen(&disk, &rec);
  CHECK(rec.entries.size() == 10);
  CHECK(rec.hard_state == raft::HardState{1, 2, 9});
}

TEST_CASE("NoSyncEnv: same writes, zero syncs, acknowledged saves lost",
          "[storage][unsafe]") {
  FaultEnv disk;
  NoSyncEnv nosync(&disk);
  {
    Recovered rec;
    auto s = MustOpen(&nosync, &rec);
    TenSaves(s.get(), &disk, false);
    REQUIRE(s->SaveSnapshot(testing::Snap(5, 1)) == "");
    REQUIRE(s->Save(std::nullopt, Range(11, 11, 1), true) == "");
  }
  CHECK(CountSyncs(disk.trace()) == 0);
  // The data is all there until the power goes: a process crash loses
  // nothing (the page cache survives it).
  {
    auto crashed = disk.Clone();
    crashed->LosePower({FaultEnv::PowerLoss::Data::kAll, 0, true});
    Recovered rec;
    auto s = MustOpen(crashed.get(), &rec);
    CHECK(rec.snapshot);
    CHECK(s->LastIndex() == 11);
  }
  // A power loss forgets everything, down to the segment's name.
  disk.LosePower({});
  Recovered rec;
  auto s = MustOpen(&disk, &rec);
  CHECK(rec.entries.empty());
  CHECK_FALSE(rec.snapshot);
  CHECK(rec.hard_state == raft::HardState{});
}

}  // namespace
}  // namespace faultline::raftkv::storage

// DiskStorage on the real file system (PosixEnv) in a mkdtemp directory,
// including a real torn tail made by cutting the last segment.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "targets/raftkv/storage/env.h"
#include "targets/raftkv/storage/storage.h"
#include "targets/raftkv/storage/storage_test_util.h"

namespace faultline::raftkv::storage {
namespace {

using testing::E;
using testing::Range;

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/raftkv-storage-test-XXXXXX";
    char* d = ::mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    path_ = d;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string LastSegment(const std::string& dir) {
  std::vector<std::string> names;
  REQUIRE(PosixEnv()->ListDir(dir, &names) == "");
  std::string last;
  for (const auto& n : names) {
    if (n.rfind("wal-", 0) == 0 && n > last) last = n;
  }
  REQUIRE(!last.empty());
  return dir + "/" + last;
}

TEST_CASE("posix: round trip, snapshot, and a real torn tail",
          "[storage][posix]") {
  TempDir tmp;
  const std::string dir = tmp.path() + "/data/n1";  // parents created
  Env* env = PosixEnv();
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(dir, env, &rec, &err);
    REQUIRE(s);
    REQUIRE(s->Save(raft::HardState{1, 1, 0}, Range(1, 10, 1, 30), true) == "");
    REQUIRE(s->SaveSnapshot(testing::Snap(4, 1)) == "");
    REQUIRE(s->Save(raft::HardState{2, 2, 5}, Range(11, 12, 2), true) == "");
    REQUIRE(s->Save(std::nullopt, Range(13, 15, 2, 10), true) == "");
  }
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(dir, env, &rec, &err);
    REQUIRE(s);
    REQUIRE(rec.snapshot);
    CHECK(*rec.snapshot == testing::Snap(4, 1));
    CHECK(rec.hard_state == raft::HardState{2, 2, 5});
    REQUIRE(rec.entries.size() == 11);
    CHECK(rec.entries.front() == E(5, 1, 30));
    CHECK(rec.entries.back() == E(15, 2, 10));
    CHECK(rec.torn_records == 0);
  }
  // Cut the last segment by a few bytes: the last batch (13..15) is torn.
  const std::string seg = LastSegment(dir);
  std::uint64_t size = 0;
  REQUIRE(env->FileSize(seg, &size) == "");
  REQUIRE(::truncate(seg.c_str(), static_cast<off_t>(size - 3)) == 0);
  std::uint64_t cut_size = 0;
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(dir, env, &rec, &err);
    INFO(err);
    REQUIRE(s);
    CHECK(rec.torn_records == 4);  // three entries and the commit
    REQUIRE(rec.entries.size() == 8);
    CHECK(rec.entries.back() == E(12, 2));
    CHECK(rec.hard_state == raft::HardState{2, 2, 5});
    REQUIRE(env->FileSize(seg, &cut_size) == "");
    CHECK(cut_size < size - 3);  // the file itself was cut
    // Writing on after the cut works.
    REQUIRE(s->Save(std::nullopt, Range(13, 13, 3), true) == "");
  }
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(dir, env, &rec, &err);
    REQUIRE(s);
    CHECK(rec.torn_records == 0);
    REQUIRE(rec.entries.size() == 9);
    CHECK(rec.entries.back() == E(13, 3));
  }
}

TEST_CASE("posix: a flipped byte mid-segment is an error naming the file",
          "[storage][posix]") {
  TempDir tmp;
  Env* env = PosixEnv();
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(tmp.path(), env, &rec, &err);
    REQUIRE(s);
    for (raft::Index i = 1; i <= 20; ++i) {
      REQUIRE(s->Save(std::nullopt, {E(i, 1, 40)}, true) == "");
    }
  }
  const std::string seg = LastSegment(tmp.path());
  std::FILE* f = std::fopen(seg.c_str(), "r+b");
  REQUIRE(f != nullptr);
  REQUIRE(std::fseek(f, 300, SEEK_SET) == 0);
  int c = std::fgetc(f);
  REQUIRE(std::fseek(f, 300, SEEK_SET) == 0);
  std::fputc(c ^ 0x04, f);
  std::fclose(f);
  Recovered rec;
  std::string err;
  CHECK_FALSE(DiskStorage::Open(tmp.path(), env, &rec, &err));
  CHECK(err.find(seg) != std::string::npos);
}

TEST_CASE("posix: errors carry the path and strerror", "[storage][posix]") {
  Recovered rec;
  std::string err;
  CHECK_FALSE(DiskStorage::Open("/dev/null/raftkv", PosixEnv(), &rec, &err));
  INFO(err);
  CHECK(err.find("/dev/null") != std::string::npos);
  CHECK(err.find("Not a directory") != std::string::npos);
}

// A large batch round-trips; the timings printed (not asserted: shared
// machines) show a batch costs one write and one fsync, not one per entry.
TEST_CASE("posix: a large batch round-trips", "[storage][posix]") {
  TempDir tmp;
  Recovered rec;
  std::string err;
  auto s = DiskStorage::Open(tmp.path(), PosixEnv(), &rec, &err);
  REQUIRE(s);
  auto start = std::chrono::steady_clock::now();
  REQUIRE(s->Save(raft::HardState{1, 1, 0}, Range(1, 5000, 1, 100), true) ==
          "");
  auto batch = std::chrono::steady_clock::now() - start;
  start = std::chrono::steady_clock::now();
  for (raft::Index i = 5001; i <= 5020; ++i) {
    REQUIRE(s->Save(std::nullopt, {E(i, 1, 100)}, true) == "");
  }
  auto singles = std::chrono::steady_clock::now() - start;
  using std::chrono::microseconds;
  WARN("5000 entries in one Save: "
       << std::chrono::duration_cast<microseconds>(batch).count()
       << " us; 20 single-entry Saves: "
       << std::chrono::duration_cast<microseconds>(singles).count() << " us");
  s.reset();
  s = DiskStorage::Open(tmp.path(), PosixEnv(), &rec, &err);
  REQUIRE(s);
  CHECK(rec.entries.size() == 5020);
}

}  // namespace
}  // namespace faultline::raftkv::storage

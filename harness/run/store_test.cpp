// The store's run directories: a fresh one does not move `latest` until
// PointLatestAt, a refused one is removed without a trace, and
// ResolveRunDir accepts a run stopped before its first operation.
#include "harness/run/store.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using namespace faultline::harness;

struct TempStore {
  TempStore()
      : path(fs::temp_directory_path() /
             ("store-test-" + std::to_string(getpid()))) {
    fs::remove_all(path);
  }
  ~TempStore() { fs::remove_all(path); }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;
  const fs::path path;
};

}  // namespace

TEST_CASE("store: latest moves only when told, a refused run leaves nothing") {
  TempStore store;
  auto first = CreateRunDir(store.path.string(), "t");
  REQUIRE(first.ok());
  CHECK(fs::is_directory(first->path));
  CHECK(first->test_dir == (store.path / "t").string());
  CHECK_FALSE(fs::exists(store.path / "t" / "latest"));
  REQUIRE(PointLatestAt(*first).ok());
  CHECK(fs::read_symlink(store.path / "t" / "latest") == first->timestamp);

  // A second run, refused: removed, and `latest` still names the first.
  auto second = CreateRunDir(store.path.string(), "t");
  REQUIRE(second.ok());
  CHECK(second->path != first->path);
  REQUIRE(RemoveRunDir(*second).ok());
  CHECK_FALSE(fs::exists(second->path));
  CHECK(fs::read_symlink(store.path / "t" / "latest") == first->timestamp);
  CHECK(fs::is_directory(first->path));

  // The first run of a test, refused: not even store/<test>/ stays.
  auto lone = CreateRunDir(store.path.string(), "other");
  REQUIRE(lone.ok());
  REQUIRE(RemoveRunDir(*lone).ok());
  CHECK_FALSE(fs::exists(store.path / "other"));
}

TEST_CASE("store: ResolveRunDir takes a run without a history") {
  TempStore store;
  auto run = CreateRunDir(store.path.string(), "t");
  REQUIRE(run.ok());
  // Nothing yet: not a run directory.
  auto none = ResolveRunDir(run->path);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().find("is this a run directory") != std::string::npos);
  // config.yaml only (killed before the first operation): a run directory.
  std::ofstream(fs::path(run->path) / kConfigFile) << "name: t\n";
  REQUIRE(PointLatestAt(*run).ok());
  auto resolved = ResolveRunDir((store.path / "t" / "latest").string());
  REQUIRE(resolved.ok());
  CHECK(*resolved == fs::canonical(run->path).string());
  CHECK_FALSE(ResolveRunDir((store.path / "nope").string()).ok());
}

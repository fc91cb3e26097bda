// The pure parts of the clock fault: the fake-clock model, the libfaketime
// file line, the process environment, the /dev/shm leftover names; and
// ClockControl's files (no libfaketime process needed: a stand-in library
// path).
#include "harness/clock/clock.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/cluster/local_remote.h"

namespace fs = std::filesystem;
using faultline::harness::ClockControl;
using faultline::harness::FakeClock;
using faultline::harness::FaketimeEnv;
using faultline::harness::FaketimeShmPids;
using faultline::harness::FaketimeSpec;
using faultline::harness::Node;
using faultline::harness::RemoveStaleFaketimeShm;
using faultline::harness::RemoveStaleFaketimeShmOn;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/faultline-clock-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("a skewed clock continues from where it was", "[clock]") {
  const FakeClock real{1000, 1000, 1};
  CHECK(real.At(1010) == 1010);
  // +5 s at t=1010, then twice as fast.
  FakeClock fast = real.Skewed(1010, 5, 2);
  CHECK(fast.At(1010) == 1015);
  CHECK(fast.At(1012) == 1019);
  CHECK(fast.OffsetAt(1012) == 7);
  // A second change starts from the first one's value: no jump.
  FakeClock slow = fast.Skewed(1012, 0, 0.5);
  CHECK(slow.At(1012) == fast.At(1012));
  CHECK(slow.At(1016) == 1021);
  // Reset: real again, or (monotonic mode) rate 1 keeping the offset.
  CHECK(slow.Reset(1016, false).OffsetAt(2000) == 0);
  FakeClock kept = slow.Reset(1016, true);
  CHECK(kept.rate == 1);
  CHECK(kept.At(1016) == slow.At(1016));
  CHECK(kept.OffsetAt(3000) == slow.OffsetAt(1016));
}

TEST_CASE("the faketime line is relative at rate 1, absolute otherwise",
          "[clock]") {
  CHECK(FaketimeSpec(FakeClock{50, 50, 1}, 60) == "+0 x1");
  CHECK(FaketimeSpec(FakeClock{50, 55.25, 1}, 60) == "+5.250000 x1");
  CHECK(FaketimeSpec(FakeClock{50, 40, 1}, 60) == "-10.000000 x1");
  CHECK(FaketimeSpec(FakeClock{1796035300, 1796035305, 2}, 1796035301) ==
        "@1796035307.000000 x2");
  CHECK(FaketimeSpec(FakeClock{100, 100, 1.5}, 100) == "@100.000000 x1.5");
  CHECK(FaketimeSpec(FakeClock{100, 100, 0.001}, 100) == "@100.000000 x0.001");
}

TEST_CASE("the environment names the file and never sets FAKETIME", "[clock]") {
  auto env = FaketimeEnv("/lib/ft.so", "/run/x/n1.faketime", false);
  CHECK(env ==
        std::vector<std::string>{"LD_PRELOAD=/lib/ft.so",
                                 "FAKETIME_TIMESTAMP_FILE=/run/x/n1.faketime",
                                 "FAKETIME_NO_CACHE=1", "FAKETIME_FMT=%s",
                                 "FAKETIME_DONT_FAKE_MONOTONIC=1"});
  auto mono = FaketimeEnv("/lib/ft.so", "/f", true);
  CHECK(mono.size() == 4);
  for (const auto& e : mono) {
    CHECK(e.rfind("FAKETIME=", 0) != 0);
    CHECK(e.find("DONT_FAKE_MONOTONIC") == std::string::npos);
  }
}

TEST_CASE("libfaketime leftovers are recognised by name", "[clock]") {
  CHECK(FaketimeShmPids({"faketime_shm_4254", "sem.faketime_sem_4254",
                         "sem.faketime_sem_17", "faketime_shm_",
                         "faketime_shm_1x", "faultline-abc",
                         "faketime_shm_99999999"}) ==
        std::vector<int>{17, 4254});
}

TEST_CASE("stale leftovers of dead pids are removed, live ones kept",
          "[clock]") {
  TempDir dir;
  const std::string self = std::to_string(getpid());
  // A pid far above pid_max cannot be alive, but PidAfter caps at the
  // kernel's limit; 4194303 is the largest pid and is almost surely free.
  const std::string dead = "4194303";
  for (const std::string& name : std::vector<std::string>{
           "faketime_shm_" + self, "sem.faketime_sem_" + self,
           "faketime_shm_" + dead, "sem.faketime_sem_" + dead, "other"})
    std::ofstream(dir.path / name) << "x";
  std::vector<std::string> log;
  REQUIRE(RemoveStaleFaketimeShm(&log, dir.path.string()).ok());
  CHECK(fs::exists(dir.path / ("faketime_shm_" + self)));
  CHECK(fs::exists(dir.path / ("sem.faketime_sem_" + self)));
  CHECK_FALSE(fs::exists(dir.path / ("faketime_shm_" + dead)));
  CHECK_FALSE(fs::exists(dir.path / ("sem.faketime_sem_" + dead)));
  CHECK(fs::exists(dir.path / "other"));
  CHECK(log.size() == 1);
}

TEST_CASE("stale leftovers are removed through a Remote's shell too",
          "[clock]") {
  TempDir dir;
  const std::string self = std::to_string(getpid());
  const std::string dead = "4194303";  // see the case above
  for (const std::string& name : std::vector<std::string>{
           "faketime_shm_" + self, "sem.faketime_sem_" + self,
           "faketime_shm_" + dead, "sem.faketime_sem_" + dead,
           "faketime_shm_x1", "other"})
    std::ofstream(dir.path / name) << "x";
  faultline::harness::LocalRemote local;
  REQUIRE(RemoveStaleFaketimeShmOn(local, dir.path.string()).ok());
  CHECK(fs::exists(dir.path / ("faketime_shm_" + self)));
  CHECK(fs::exists(dir.path / ("sem.faketime_sem_" + self)));
  CHECK_FALSE(fs::exists(dir.path / ("faketime_shm_" + dead)));
  CHECK_FALSE(fs::exists(dir.path / ("sem.faketime_sem_" + dead)));
  CHECK(fs::exists(dir.path / "faketime_shm_x1"));
  CHECK(fs::exists(dir.path / "other"));
  // A directory that does not exist holds no leftovers.
  CHECK(RemoveStaleFaketimeShmOn(local, (dir.path / "none").string()).ok());
}

TEST_CASE("ClockControl writes one file per node and removes them", "[clock]") {
  TempDir dir;
  const std::string lib = (dir.path / "libfake.so").string();
  std::ofstream(lib) << "";
  ClockControl::Options o;
  o.dir = (dir.path / "faultline-run" / "faketime").string();
  o.library = lib;
  auto made = ClockControl::Create(o, nullptr);
  REQUIRE(made.ok());
  ClockControl& clock = **made;
  Node n1;
  n1.name = "n1";
  auto env = clock.Env(n1);
  REQUIRE(env.ok());
  CHECK(env->front() == "LD_PRELOAD=" + lib);
  CHECK(Slurp(clock.FilePath(n1)) == "+0 x1\n");
  auto off = clock.Skew(n1, 5000, 1.0);
  REQUIRE(off.ok());
  CHECK(*off == Approx(5000).margin(1));
  CHECK(Slurp(clock.FilePath(n1)).rfind("+5.000", 0) == 0);
  REQUIRE(clock.Skew(n1, 0, 2.0).ok());
  CHECK(Slurp(clock.FilePath(n1)).rfind("@", 0) == 0);
  CHECK(Slurp(clock.FilePath(n1)).find(" x2\n") != std::string::npos);
  auto reset = clock.Reset(n1);
  REQUIRE(reset.ok());
  CHECK(*reset == 0);
  CHECK(Slurp(clock.FilePath(n1)) == "+0 x1\n");
  CHECK_FALSE(clock.Skew(n1, 0, 1000).ok());  // rate out of range
  REQUIRE(clock.Teardown().ok());
  CHECK_FALSE(fs::exists(o.dir));
  CHECK_FALSE(clock.Env(n1).ok());  // nothing starts after teardown
}

TEST_CASE("ClockControl in monotonic mode never steps back at reset",
          "[clock]") {
  TempDir dir;
  const std::string lib = (dir.path / "libfake.so").string();
  std::ofstream(lib) << "";
  ClockControl::Options o;
  o.dir = (dir.path / "ft").string();
  o.library = lib;
  o.fake_monotonic = true;
  auto made = ClockControl::Create(o, nullptr);
  REQUIRE(made.ok());
  Node n2;
  n2.name = "n2";
  REQUIRE((*made)->Skew(n2, 3000, 1.0).ok());
  auto after = (*made)->Reset(n2);
  REQUIRE(after.ok());
  CHECK(*after == Approx(3000).margin(1));
  CHECK(Slurp((*made)->FilePath(n2)).rfind("+3.000", 0) == 0);
  CHECK_FALSE(
      ClockControl::Create(
          ClockControl::Options{o.dir, false, "/no/such/lib.so"}, nullptr)
          .ok());
}

TEST_CASE("the Redis shim goes first in LD_PRELOAD", "[clock]") {
  using faultline::harness::PreloadFirst;
  const std::string shim = "/b/libfaultline-faketime-shim.so";
  auto env =
      PreloadFirst({"A=1", "LD_PRELOAD=/lib/libfaketimeMT.so.1", "B=2"}, shim);
  CHECK(env ==
        std::vector<std::string>{
            "A=1", "LD_PRELOAD=" + shim + ":/lib/libfaketimeMT.so.1", "B=2"});
  CHECK(PreloadFirst(env, shim) == env);  // not added twice
  CHECK(PreloadFirst({"A=1"}, shim) ==
        std::vector<std::string>{"A=1", "LD_PRELOAD=" + shim});
  CHECK(PreloadFirst({"LD_PRELOAD="}, shim) ==
        std::vector<std::string>{"LD_PRELOAD=" + shim});
}

TEST_CASE("the shim is found through FAULTLINE_FAKETIME_SHIM", "[clock]") {
  TempDir dir;
  const std::string shim = (dir.path / "shim.so").string();
  std::ofstream(shim) << "";
  setenv("FAULTLINE_FAKETIME_SHIM", shim.c_str(), 1);
  CHECK(faultline::harness::FindFaketimeShim() == shim);
  setenv("FAULTLINE_FAKETIME_SHIM", "/no/such/shim.so", 1);
  CHECK(faultline::harness::FindFaketimeShim().empty());
  unsetenv("FAULTLINE_FAKETIME_SHIM");
}

// The strobe's schedule (pure) and its flipping thread against a
// ClockControl writing real files (a stand-in library path: no process
// reads them here; tests/e2e_clock_targets.sh shows processes following).
#include "nemesis/clock/strobe.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nemesis/test_fakes.h"

namespace fs = std::filesystem;
using faultline::harness::ClockControl;
using faultline::harness::Node;
using faultline::nemesis::ClockStrobe;
using faultline::nemesis::StrobeFlipsDue;
using faultline::nemesis::StrobeStepMs;
using faultline::nemesis::StrobeUpAfter;
using faultline::nemesis::testing::TempDir;
using std::chrono::milliseconds;

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::unique_ptr<ClockControl> MakeClock(const TempDir& dir) {
  const std::string lib = (dir.path / "libfake.so").string();
  std::ofstream(lib) << "";
  ClockControl::Options o;
  o.dir = (dir.path / "ft").string();
  o.library = lib;
  auto made = ClockControl::Create(o, nullptr);
  REQUIRE(made.ok());
  return std::move(made.value());
}

}  // namespace

TEST_CASE("the strobe alternates up and back, on a fixed rate", "[strobe]") {
  CHECK(StrobeUpAfter(0));
  CHECK_FALSE(StrobeUpAfter(1));
  CHECK(StrobeUpAfter(2));
  CHECK(StrobeStepMs(0, 5000) == 5000);
  CHECK(StrobeStepMs(1, 5000) == -5000);
  CHECK(StrobeStepMs(4, 7) == 7);
  CHECK(StrobeFlipsDue(milliseconds(0), milliseconds(100)) == 1);
  CHECK(StrobeFlipsDue(milliseconds(99), milliseconds(100)) == 1);
  CHECK(StrobeFlipsDue(milliseconds(100), milliseconds(100)) == 2);
  CHECK(StrobeFlipsDue(milliseconds(1050), milliseconds(100)) == 11);
}

TEST_CASE("the strobe flips the node files until stopped", "[strobe]") {
  TempDir dir{"faultline-strobe"};
  auto clock = MakeClock(dir);
  Node n1, n2;
  n1.name = "n1";
  n2.name = "n2";
  REQUIRE(clock->Env(n1).ok());
  REQUIRE(clock->Env(n2).ok());
  ClockStrobe strobe(*clock, {n1, n2}, 4000, 20);
  REQUIRE(strobe.Start().ok());
  // Right after Start both clocks are up by the delta.
  CHECK(clock->OffsetMs(n1) == Approx(4000).margin(5));
  CHECK(Slurp(clock->FilePath(n2)).rfind("+4.000", 0) == 0);
  REQUIRE(strobe.AwaitFlips(5, milliseconds(5000)));
  auto flips = strobe.Stop();
  const std::size_t stopped_at = flips.size();
  REQUIRE(stopped_at >= 5);
  for (std::size_t k = 0; k < flips.size(); ++k) {
    INFO("flip " << k);
    CHECK(flips[k].up == (k % 2 == 0));
    CHECK(flips[k].error.empty());
    CHECK(flips[k].clock_ms == Approx(flips[k].up ? 4000 : 0).margin(5));
    if (k > 0) CHECK(flips[k].at_ms >= flips[k - 1].at_ms);
    // Fixed rate: flip k is not due before k periods.
    CHECK(flips[k].at_ms >= static_cast<long long>(k) * 20);
  }
  // No flip after Stop: the node's clock stays where the last flip left it.
  const double last = clock->OffsetMs(n1);
  CHECK(last == Approx(flips.back().up ? 4000 : 0).margin(5));
  CHECK_FALSE(strobe.AwaitFlips(stopped_at + 1, milliseconds(100)));
  CHECK(strobe.Flips().size() == stopped_at);
  CHECK(strobe.Stop().size() == stopped_at);  // idempotent
  REQUIRE(clock->Reset(n1).ok());
  CHECK(Slurp(clock->FilePath(n1)) == "+0 x1\n");
  auto value = faultline::nemesis::StrobeFlipsValue(flips).ToJson();
  CHECK(value.rfind("[{\"at_ms\":", 0) == 0);
  CHECK(value.find("\"up\":false") != std::string::npos);
}

TEST_CASE("the strobe refuses bounds it cannot keep", "[strobe]") {
  TempDir dir{"faultline-strobe"};
  auto clock = MakeClock(dir);
  Node n1;
  n1.name = "n1";
  CHECK_FALSE(ClockStrobe(*clock, {n1}, 0, 100).Start().ok());
  CHECK_FALSE(ClockStrobe(*clock, {n1}, 1000, 5).Start().ok());
  CHECK(clock->OffsetMs(n1) == 0);  // nothing flipped
}

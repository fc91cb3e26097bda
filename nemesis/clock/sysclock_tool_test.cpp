// The pure parts of faultline-clock: argument parsing, the state file, the
// reset arithmetic and the split of a step for ADJ_SETOFFSET. The tool's
// real clock steps are tested end to end (tests/e2e_ssh_system_clock.sh).
#include "nemesis/clock/sysclock_tool.h"

#include <catch2/catch.hpp>

using faultline::nemesis::FormatSysclockState;
using faultline::nemesis::ParseSysclockArgs;
using faultline::nemesis::ParseSysclockLine;
using faultline::nemesis::ParseSysclockState;
using faultline::nemesis::SplitStep;
using faultline::nemesis::StepToNs;
using faultline::nemesis::StrobeTargetNs;

TEST_CASE("faultline-clock parses its subcommands", "[sysclock]") {
  auto show = ParseSysclockArgs({"show", "--state", "/x/s"});
  REQUIRE(show.args);
  CHECK(show.args->command == "show");
  CHECK(show.args->state == "/x/s");
  auto bump = ParseSysclockArgs({"--state", "/x/s", "bump", "-2500"});
  REQUIRE(bump.args);
  CHECK(bump.args->delta_ms == -2500);
  auto strobe =
      ParseSysclockArgs({"strobe", "--state", "s", "300", "100", "2000"});
  REQUIRE(strobe.args);
  CHECK(strobe.args->delta_ms == 300);
  CHECK(strobe.args->period_ms == 100);
  CHECK(strobe.args->duration_ms == 2000);
  CHECK(ParseSysclockArgs({"reset", "--state", "s"}).args);
}

TEST_CASE("faultline-clock refuses bad usage with a reason", "[sysclock]") {
  auto check = [](std::vector<std::string> argv, const std::string& part) {
    auto p = ParseSysclockArgs(argv);
    CHECK_FALSE(p.args);
    CHECK(p.error.find(part) != std::string::npos);
  };
  check({}, "missing command");
  check({"jump", "--state", "s"}, "unknown command 'jump'");
  check({"reset"}, "needs --state");
  check({"bump", "--state"}, "--state needs a file");
  check({"bump", "--state", "s"}, "takes 1 number");
  check({"bump", "--state", "s", "5s"}, "'5s' is not an integer");
  check({"bump", "--state", "s", "0"}, "non-zero");
  check({"bump", "--state", "s", "86400001"}, "within 1 day");
  check({"strobe", "--state", "s", "100", "5", "1000"}, "outside 10 ms");
  check({"strobe", "--state", "s", "100", "50", "0"}, "duration");
  check({"show", "--state", "s", "3"}, "takes 0 number");
}

TEST_CASE("faultline-clock's state file round-trips and rejects junk",
          "[sysclock]") {
  auto st = ParseSysclockState(FormatSysclockState({-1234567890123, "ab-cd"}));
  REQUIRE(st);
  CHECK(st->baseline_ns == -1234567890123);
  CHECK(st->boot_id == "ab-cd");
  CHECK_FALSE(ParseSysclockState(""));
  CHECK_FALSE(ParseSysclockState("faultline-clock 2 baseline_ns=1 boot_id=x"));
  CHECK_FALSE(ParseSysclockState("faultline-clock 1 baseline_ns=1x boot_id=x"));
  CHECK_FALSE(ParseSysclockState("faultline-clock 1 baseline_ns=1"));
}

TEST_CASE("reset steps REALTIME back to MONOTONIC + baseline", "[sysclock]") {
  // Recorded at baseline B; bumped by +5 s then NTP slewed both clocks
  // alike (the offset stays B + 5 s): the step is exactly -5 s.
  const std::int64_t b = 1'796'014'703'304'881'532;
  CHECK(StepToNs(b + 5'000'000'000, b) == -5'000'000'000);
  CHECK(StepToNs(b - 42, b) == 42);
  CHECK(StepToNs(b, b) == 0);
  // The strobe's targets vs the baseline: up on even flips, back on odd.
  CHECK(StrobeTargetNs(0, 300) == 300'000'000);
  CHECK(StrobeTargetNs(1, 300) == 0);
  CHECK(StrobeTargetNs(2, -300) == -300'000'000);
}

TEST_CASE("a step splits into seconds and non-negative nanoseconds",
          "[sysclock]") {
  auto s = SplitStep(2'500'000'001);
  CHECK(s.sec == 2);
  CHECK(s.nsec == 500'000'001);
  s = SplitStep(-1);  // -1 ns = -1 s + 999999999 ns
  CHECK(s.sec == -1);
  CHECK(s.nsec == 999'999'999);
  s = SplitStep(-3'000'000'000);
  CHECK(s.sec == -3);
  CHECK(s.nsec == 0);
  s = SplitStep(0);
  CHECK(s.sec == 0);
  CHECK(s.nsec == 0);
}

TEST_CASE("the tool's output lines parse into fields", "[sysclock]") {
  auto kv = ParseSysclockLine("show offset_ns=-5 baseline=1 boot_id=a-b");
  CHECK(kv["what"] == "show");
  CHECK(kv["offset_ns"] == "-5");
  CHECK(kv["baseline"] == "1");
  CHECK(kv["boot_id"] == "a-b");
  CHECK(ParseSysclockLine("").empty());
}

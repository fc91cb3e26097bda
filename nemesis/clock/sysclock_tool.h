// The pure parts of faultline-clock (nemesis/programs/sysclock_main.cpp), the
// tool that moves a node's real CLOCK_REALTIME for the system-clock faults
// (docs/faults.md, "System clocks"). Shared by the tool and the controller
// (nemesis/clock/sysclock.h), which parses the tool's output. Only std headers:
// the tool is copied to nodes and links nothing of ours but this file.
//
// Usage (every subcommand needs --state FILE, the node's state file):
//   faultline-clock show   --state FILE
//   faultline-clock bump   --state FILE DELTA_MS
//   faultline-clock strobe --state FILE DELTA_MS PERIOD_MS DURATION_MS
//   faultline-clock reset  --state FILE
//
// The baseline: before its first change the tool records the kernel's
// REALTIME - MONOTONIC (ns) and boot id in the state file (created only if
// absent, so a second bump keeps the first baseline). NTP slewing moves
// both clocks alike, so `reset` can set REALTIME back to MONOTONIC +
// baseline at any later time without NTP, then removes the file. A state
// file from an earlier boot (another boot id) is stale: reset removes it
// without stepping (MONOTONIC restarted at boot).
//
// Output: one line of space-separated key=value per step on stdout, e.g.
// "show offset_ns=5000012 baseline=1 boot_id=0f3c..." (offset_ns is now -
// baseline, 0 when there is no state file), "flip k=1 at_ms=1000 up=0
// offset_ns=12", "reset offset_ns=3 stepped_ns=-5000009".
// Exit codes: 0 done, 1 a system call failed, 254 bad usage.
//
// Thread-safety: pure functions, no state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline::nemesis {

// Bounds: |delta| <= 1 day per step; strobe period 10 ms .. 1 h; strobe
// duration 1 ms .. 1 day.
inline constexpr std::int64_t kSysclockMaxDeltaMs = 86'400'000;

struct SysclockArgs {
  std::string command;  // show | bump | strobe | reset
  std::string state;    // the state file
  std::int64_t delta_ms = 0;
  std::int64_t period_ms = 0;
  std::int64_t duration_ms = 0;
};

// Parses argv (without argv[0]); an error message on bad usage.
struct SysclockParse {
  std::optional<SysclockArgs> args;
  std::string error;
};
SysclockParse ParseSysclockArgs(const std::vector<std::string>& argv);

// The state file: "faultline-clock 1 baseline_ns=<int> boot_id=<id>\n".
struct SysclockState {
  std::int64_t baseline_ns = 0;  // REALTIME - MONOTONIC when recorded
  std::string boot_id;
};
std::string FormatSysclockState(const SysclockState& s);
std::optional<SysclockState> ParseSysclockState(const std::string& text);

// The step that brings REALTIME from `offset_now_ns` (REALTIME -
// MONOTONIC now) to `target_ns` (REALTIME - MONOTONIC wanted).
inline std::int64_t StepToNs(std::int64_t offset_now_ns,
                             std::int64_t target_ns) {
  return target_ns - offset_now_ns;
}

// A relative step as struct timex's ADJ_SETOFFSET|ADJ_NANO wants it:
// seconds (may be negative) plus nanoseconds in [0, 1e9).
struct SplitNs {
  std::int64_t sec = 0;
  std::int64_t nsec = 0;
};
SplitNs SplitStep(std::int64_t step_ns);

// The strobe's offset (vs the baseline) after flip k: delta when k is even
// (up), 0 when odd (back).
inline std::int64_t StrobeTargetNs(std::int64_t k, std::int64_t delta_ms) {
  return k % 2 == 0 ? delta_ms * 1'000'000 : 0;
}

// "key=value key=value" -> map (the first word, without '=', is "what").
std::map<std::string, std::string> ParseSysclockLine(const std::string& line);

}  // namespace faultline::nemesis

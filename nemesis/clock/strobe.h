// The "strobe" clock fault's flipper: while active, the chosen nodes'
// clocks flip between +delta and their level at the start, every period
// (Jepsen's clock strobe, through libfaketime; see docs/faults.md
// ("strobe")). The nemesis thread only starts and stops faults, so the
// flips run on a small thread that ClockStrobe owns.
//
// Start makes the first flip (up by delta) on the calling thread, so a
// failure is reported there, then starts the thread; flip k (k >= 1) is
// due at start + k * period (fixed rate: a late flip does not shift the
// later ones). Stop wakes and joins the thread before it returns, so no
// flip happens after Stop; the caller then resets the clocks
// (ClockControl::Reset). The flips are recorded with their time since
// Start, for the history.
//
// Thread-safety: Start, Stop, Flips and AwaitFlips may be called from any
// thread; Start once. The ClockControl must outlive the strobe. The
// destructor stops the thread (it does not reset the clocks).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checkers/value.h"
#include "harness/clock/clock.h"
#include "harness/interfaces/result.h"

namespace faultline::nemesis {

// Bounds of the strobe (also the config's): delta 1 ms .. 1 day; period
// 10 ms .. 1 h.
inline constexpr long long kMinStrobeDeltaMs = 1;
inline constexpr long long kMaxStrobeDeltaMs = 86'400'000;
inline constexpr long long kMinStrobePeriodMs = 10;
inline constexpr long long kMaxStrobePeriodMs = 3'600'000;

// Pure: whether flip k leaves the clocks up (+delta): even k up, odd down.
inline bool StrobeUpAfter(long long k) { return k % 2 == 0; }
// Pure: the step flip k makes, in ms: +delta when it goes up, -delta when
// it goes down.
inline long long StrobeStepMs(long long k, long long delta_ms) {
  return StrobeUpAfter(k) ? delta_ms : -delta_ms;
}
// Pure: how many flips are due `elapsed` after Start (flip 0 at 0).
long long StrobeFlipsDue(std::chrono::milliseconds elapsed,
                         std::chrono::milliseconds period);

class ClockStrobe {
 public:
  struct Flip {
    long long at_ms = 0;  // time since Start (steady clock)
    bool up = false;      // +delta (true) or back (false)
    double clock_ms = 0;  // fake - real of the first node right after it
    std::string error;    // non-empty: the flip failed on some node
  };

  ClockStrobe(harness::ClockControl& clock, std::vector<harness::Node> nodes,
              long long delta_ms, long long period_ms);
  ~ClockStrobe();
  ClockStrobe(const ClockStrobe&) = delete;
  ClockStrobe& operator=(const ClockStrobe&) = delete;

  // Flip 0 (up) on every node, then the thread. An error leaves no thread
  // (the caller resets the clocks).
  harness::Status Start();
  // Ends the flipping; idempotent. Returns every flip made.
  std::vector<Flip> Stop();
  std::vector<Flip> Flips();
  // Waits until `n` flips were made or `timeout` passed; true if made.
  bool AwaitFlips(std::size_t n, std::chrono::milliseconds timeout);

 private:
  using SteadyClock = std::chrono::steady_clock;
  Flip FlipAll(long long k);  // needs no lock: ClockControl locks itself
  void Run();

  harness::ClockControl& clock_;
  const std::vector<harness::Node> nodes_;
  const long long delta_ms_;
  const std::chrono::milliseconds period_;
  SteadyClock::time_point started_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<Flip> flips_;
  std::thread thread_;
};

// The flips as the history records them (the "flips" of stop-strobe):
// [{"at_ms":0,"up":true,"clock_ms":5000},{"at_ms":1000,"up":false,
// "clock_ms":0},...], with "error" on a flip that failed on some node.
checkers::Value StrobeFlipsValue(const std::vector<ClockStrobe::Flip>& flips);

}  // namespace faultline::nemesis

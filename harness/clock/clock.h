// Faked clocks per node through libfaketime (Debian package libfaketime),
// for the "clock" fault. See docs/faults.md ("clock").
//
// How: a target that opts in (ClockSkewable below) starts its server
// process with the environment ClockControl::Env gives for that node:
// LD_PRELOAD of libfaketimeMT, FAKETIME_TIMESTAMP_FILE naming the node's
// own file, FAKETIME_NO_CACHE=1 (the file is read at every clock call, so a
// change takes effect at the process's next clock read), FAKETIME_FMT=%s
// and, unless monotonic faking is on, FAKETIME_DONT_FAKE_MONOTONIC=1.
// FAKETIME itself stays unset (it would win over the file). The nemesis
// then rewrites the file (write + rename, atomic) to step or drift the
// node's clock while the process runs.
//
// The model: each node's faked clock is fake(t) = base_fake + rate * (t -
// base_real) in seconds of the real CLOCK_REALTIME t. A step of +d at t0
// and a new rate r give base_real = t0, base_fake = fake(t0) + d. The file
// says "+<fake - real> x1" when the rate is 1 (exact whenever the process
// started) and "@<fake(now)> x<rate>" otherwise: libfaketime restarts its
// rate origin when it reads a new "@" line, so the clock continues from
// where the model says it is instead of jumping by (rate-1) * uptime.
//
// Monotonic: with fake_monotonic false only CLOCK_REALTIME (time, gettimeofday,
// clock_gettime(REALTIME)) moves; CLOCK_MONOTONIC stays real. With it true,
// libfaketime fakes CLOCK_MONOTONIC as well, on the REALTIME base (it then
// reads ~1.8e9 s), so leases and timers that use it drift too; a step back
// would step the monotonic clock back, which no real clock does, so
// Reset in that mode only ends the drift and keeps the clock where it got
// (no step); negative steps are refused by the config.
//
// Which systems it affects: programs that read time through libc (C, C++,
// the JVM: raftkv, ZooKeeper; Redis only with a jemalloc shim preloaded
// first, see the notes). It has NO effect on Go programs (etcd): they read
// the vDSO directly. Sleeps, poll and epoll timeouts are scaled by 1/rate.
//
// SSH nodes (Options::on_nodes): the node file is written on the node
// through its Remote (same path, `dir` created there); `dir` must then lie
// inside the run's node directory, which the ssh provider removes (and
// `faultline heal` too, from its `dir` entry). Teardown removes
// libfaketime's /dev/shm leftovers of dead pids on every such node through
// its Remote (RemoveStaleFaketimeShmOn); `faultline heal` after a SIGKILLed
// controller does it when it undoes the node's `dir` entry (the `faketime`
// entry names no node).
//
// Cleanup: the node files live in `dir` (inside the run's scratch
// directory). libfaketime also creates /dev/shm/faketime_shm_<pid> and
// sem.faketime_sem_<pid> per process and removes them only on a normal
// exit; Teardown and the ledger's `faketime` undo remove those of dead pids.
//
// Thread-safety: ClockControl methods may be called from any thread (one
// mutex). The free functions are pure.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

class Ledger;

// Bounds of the clock fault (also the config's): |offset| <= 1 day,
// 0.01 <= rate <= 100.
inline constexpr long long kMaxClockOffsetMs = 86'400'000;
inline constexpr double kMinClockRate = 0.01;
inline constexpr double kMaxClockRate = 100.0;

// The default location of Debian's library.
inline constexpr const char* kFaketimeLibrary =
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

// One node's faked CLOCK_REALTIME as a line of real time (seconds).
struct FakeClock {
  double base_real = 0;  // real time of the last change
  double base_fake = 0;  // faked time at base_real
  double rate = 1;

  double At(double real) const { return base_fake + rate * (real - base_real); }
  // fake - real at `real`, in seconds.
  double OffsetAt(double real) const { return At(real) - real; }
  // The same clock from `now` on, stepped by `step_s` and running at `rate`.
  FakeClock Skewed(double now, double step_s, double new_rate) const;
  // From `now` on: rate 1; `keep_offset` keeps fake - real as it is at `now`
  // (no step), otherwise the clock is real again.
  FakeClock Reset(double now, bool keep_offset) const;
  bool operator==(const FakeClock&) const = default;
};

// The libfaketime file content for `clock` at real time `now`, one line:
// "+0 x1", "+5.250000 x1", "@1796035308.051000 x2". Rates use up to 6
// significant decimals.
std::string FaketimeSpec(const FakeClock& clock, double now);

// The environment entries ("NAME=value") a process needs to read its time
// from `file` through `library`.
std::vector<std::string> FaketimeEnv(const std::string& library,
                                     const std::string& file,
                                     bool fake_monotonic);

// --- the Redis shim (targets/redis/faketime_shim.c) -------------------------
// The file name of the shim library CMake builds beside the faultline
// executable.
inline constexpr const char* kFaketimeShimName =
    "libfaultline-faketime-shim.so";
// Where the shim is: $FAULTLINE_FAKETIME_SHIM if set, else beside the
// running executable; "" when neither names a readable file.
std::string FindFaketimeShim();
// `env` with `library` first in its LD_PRELOAD entry (added when there is
// none; a second copy of `library` is not added). Pure.
std::vector<std::string> PreloadFirst(std::vector<std::string> env,
                                      const std::string& library);

// The pids of libfaketime leftovers in the listing of /dev/shm (names
// "faketime_shm_<pid>" and "sem.faketime_sem_<pid>"), sorted, unique.
std::vector<int> FaketimeShmPids(const std::vector<std::string>& names);

// Removes /dev/shm/faketime_shm_<pid> and sem.faketime_sem_<pid> of every
// pid that is not alive. Appends one line per removed pid to `log` (may be
// null). `shm_dir` is for tests.
Status RemoveStaleFaketimeShm(std::vector<std::string>* log,
                              const std::string& shm_dir = "/dev/shm");

// The same on the host behind `remote` (an SSH or docker node), with one
// `sh` command there: a pid counts as dead when /proc/<pid> is absent on
// that host. Fails when the command fails.
Status RemoveStaleFaketimeShmOn(Remote& remote,
                                const std::string& shm_dir = "/dev/shm");

class ClockControl {
 public:
  struct Options {
    std::string dir;              // where node files live; created
    bool fake_monotonic = false;  // see the header comment
    std::string library;          // "" = kFaketimeLibrary
    // The nodes are hosts of their own (SSH): `dir` is a path on the nodes,
    // inside the run's node directory (removed with it); nothing is
    // created or recorded on the controller.
    bool on_nodes = false;
  };
  // Checks that the library exists, creates `dir` and records a `faketime`
  // ledger entry for it (ledger may be null; neither with on_nodes).
  static Result<std::unique_ptr<ClockControl>> Create(Options options,
                                                      Ledger* ledger);
  ~ClockControl();

  // The environment for a process about to start on `node`. Writes the
  // node's file for a process that starts now (a restarted process then
  // continues the node's faked clock where it is).
  Result<std::vector<std::string>> Env(const Node& node);
  // Steps the node's clock by offset_ms and sets its rate, from now on.
  // Returns the new fake - real offset in ms.
  Result<double> Skew(const Node& node, long long offset_ms, double rate);
  // Ends the node's skew (see Options::fake_monotonic). Returns the fake -
  // real offset in ms after the reset.
  Result<double> Reset(const Node& node);
  // fake - real of the node now, ms (0 for a node never skewed).
  double OffsetMs(const Node& node);

  std::string FilePath(const Node& node) const;
  bool fake_monotonic() const { return options_.fake_monotonic; }

  // Removes the node files and `dir`, and libfaketime leftovers of dead
  // processes; marks the ledger entry healed. Call after the target's
  // processes are stopped. Idempotent.
  Status Teardown();

 private:
  ClockControl(Options options, Ledger* ledger, long seq);
  Status WriteLocked(const Node& node, const FakeClock& clock, double now);

  const Options options_;
  Ledger* const ledger_;
  long seq_ = 0;
  std::mutex mu_;
  std::map<std::string, FakeClock> clocks_;  // by node name
  std::map<std::string, Remote*> remotes_;   // on_nodes: by node name
  bool torn_down_ = false;
};

// The optional ability of a Target to run its processes under a
// ClockControl (design.md: optional abilities are separate interfaces). A
// target that inherits it passes ClockEnv(node) to every process it starts
// on `node`, and calls TeardownClock after its processes are stopped. The
// harness hands it the ClockControl (EnableClock, before Start) when the
// config has clock faults; the nemesis reaches it through clock().
class ClockSkewable {
 public:
  virtual ~ClockSkewable();
  void EnableClock(std::unique_ptr<ClockControl> clock);
  ClockControl* clock() const { return clock_.get(); }

 protected:
  // The environment for a process on `node`: {} when no clock is enabled.
  Result<std::vector<std::string>> ClockEnv(const Node& node);
  // ClockControl::Teardown when a clock is enabled; Ok otherwise.
  Status TeardownClock();

 private:
  std::unique_ptr<ClockControl> clock_;
};

}  // namespace faultline::harness

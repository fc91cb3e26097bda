// SignalWatcher: turns SIGINT/SIGTERM into an abort flag for the commands
// that run campaigns (run, suite). The constructor blocks both signals in
// the calling thread (so in every thread started after it) and a watcher
// thread takes them with sigtimedwait.
//
//   first signal   sets the flag, remembers which signal and when, and says
//                  on stderr that the run is healing and tearing down; the
//                  campaign logs it, exits 128 + its number (130, 143)
//   second         ignored, with a line on stderr saying how to force an
//                  exit (the heal and teardown are under way)
//   third, within kForceWindow of the second
//                  forces an exit at once (_exit, code 128 + its number)
//                  after printing the command that finishes the job
//                  (`faultline heal <run dir>`, see set_heal_hint)
//
// The destructor stops the watcher and unblocks the signals. Construct it
// before any other thread starts. Thread-safety: every method may be called
// from any thread.
#pragma once

#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace faultline::cli {

// The first signal a SignalWatcher took.
struct SignalNote {
  int number = 0;    // 0: none yet
  std::string name;  // "SIGINT", "SIGTERM"
  std::string at;    // ISO-8601 UTC, milliseconds
  std::chrono::steady_clock::time_point when{};
};

class SignalWatcher {
 public:
  static constexpr std::chrono::seconds kForceWindow{5};

  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  const std::atomic<bool>* abort() const { return &abort_; }
  SignalNote first() const;
  // What a forced exit tells the user to run ("" = `faultline heal --all`);
  // the campaign sets it to `faultline heal <run dir>` while a run has
  // something to heal, and to "-" (nothing to heal) once it has torn down.
  void set_heal_hint(const std::string& command);

 private:
  void Take(int sig);

  sigset_t set_;
  std::atomic<bool> abort_{false};
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  SignalNote first_;
  int count_ = 0;
  std::chrono::steady_clock::time_point second_{};
  std::string heal_hint_;
  std::thread thread_;
};

}  // namespace faultline::cli

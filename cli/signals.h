// SignalWatcher: turns SIGINT/SIGTERM into an abort flag for the commands
// that run campaigns (run, suite). The constructor blocks both signals in
// the calling thread (so in every thread started after it) and a watcher
// thread takes them with sigtimedwait; the first one sets the flag and says
// on stderr that the run is healing and tearing down. The destructor stops
// the watcher and unblocks the signals. Construct it before any other
// thread starts.
#pragma once

#include <signal.h>

#include <atomic>
#include <thread>

namespace faultline::cli {

class SignalWatcher {
 public:
  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;
  const std::atomic<bool>* abort() const { return &abort_; }

 private:
  sigset_t set_;
  std::atomic<bool> abort_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace faultline::cli

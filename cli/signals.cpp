#include "cli/signals.h"

#include <pthread.h>

#include <cstdio>

namespace faultline::cli {

SignalWatcher::SignalWatcher() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  thread_ = std::thread([this] {
    timespec tick{0, 200L * 1000 * 1000};
    while (!done_) {
      int sig = sigtimedwait(&set_, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) {
        if (abort_.exchange(true)) continue;
        std::fprintf(stderr,
                     "\nfaultline: interrupted, healing faults and tearing "
                     "down (the history so far is kept)\n");
      }
    }
  });
}

SignalWatcher::~SignalWatcher() {
  done_ = true;
  thread_.join();
  pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
}

}  // namespace faultline::cli

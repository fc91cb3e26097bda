#include "cli/signals.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>

#include "harness/run/store.h"

namespace faultline::cli {
namespace {

std::string SignalName(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
  }
}

}  // namespace

SignalWatcher::SignalWatcher() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  thread_ = std::thread([this] {
    timespec tick{0, 200L * 1000 * 1000};
    while (!done_) {
      int sig = sigtimedwait(&set_, nullptr, &tick);
      if (sig == SIGINT || sig == SIGTERM) Take(sig);
    }
  });
}

void SignalWatcher::Take(int sig) {
  std::unique_lock<std::mutex> lock(mu_);
  auto now = std::chrono::steady_clock::now();
  ++count_;
  if (count_ == 1) {
    first_.number = sig;
    first_.name = SignalName(sig);
    first_.at = harness::UtcNowMillis(harness::UtcForm::kExtended);
    first_.when = now;
    abort_ = true;
    std::fprintf(stderr,
                 "\nfaultline: %s: stopping the workload, healing faults, "
                 "final reads, tearing down (the history so far is kept)\n",
                 first_.name.c_str());
    return;
  }
  std::string hint = heal_hint_.empty() ? "faultline heal --all" : heal_hint_;
  // A later signal within the window of the previous "second" forces.
  if (count_ >= 3 && now - second_ <= kForceWindow) {
    if (hint == "-") {
      std::fprintf(stderr,
                   "\nfaultline: %s again: exiting now; the run had already "
                   "torn down, nothing is left to heal\n",
                   SignalName(sig).c_str());
    } else {
      std::fprintf(stderr,
                   "\nfaultline: %s again: exiting now without finishing the "
                   "heal and teardown; run `%s` to finish the job\n",
                   SignalName(sig).c_str(), hint.c_str());
    }
    std::fflush(stderr);
    _exit(128 + sig);
  }
  count_ = 2;  // a late third signal counts as a new second one
  second_ = now;
  std::fprintf(
      stderr,
      "\nfaultline: %s ignored: already healing and tearing down; "
      "send it once more within %lld s to exit at once%s\n",
      SignalName(sig).c_str(), static_cast<long long>(kForceWindow.count()),
      hint == "-" ? "" : (" (then `" + hint + "` finishes the job)").c_str());
}

SignalNote SignalWatcher::first() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_;
}

void SignalWatcher::set_heal_hint(const std::string& command) {
  std::lock_guard<std::mutex> lock(mu_);
  heal_hint_ = command;
}

SignalWatcher::~SignalWatcher() {
  done_ = true;
  thread_.join();
  pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
}

}  // namespace faultline::cli

// Journal: the run's history.jsonl, written as events happen. Assigns each
// event its index and its time (ns since the journal was opened, on the
// monotonic clock) under one lock, so file order is real-time order and
// times never decrease. Each line reaches the kernel (write(2)) before
// Append returns, so a SIGKILLed run leaves a readable prefix.
//
// Thread-safety: Append may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "checkers/history.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

class Journal {
 public:
  using Clock = std::chrono::steady_clock;

  // Creates (truncates) the file. `start` is time zero of the history.
  static Result<std::unique_ptr<Journal>> Open(const std::string& path,
                                               Clock::time_point start);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Fills in index and time, writes the line, keeps a copy; returns the
  // event as written.
  checkers::Event Append(checkers::Event event);

  // A copy of every event appended so far.
  checkers::History Snapshot() const;
  std::size_t size() const;
  Clock::time_point start() const { return start_; }
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd, Clock::time_point start);
  mutable std::mutex mu_;
  std::string path_;
  int fd_ = -1;
  Clock::time_point start_;
  checkers::History events_;
  bool write_failed_ = false;
};

}  // namespace faultline::harness

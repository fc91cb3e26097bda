// Journal: the run's history.jsonl, written as events happen.
//
// Append assigns each event its index (dense, from 0) and its time (ns since
// the journal was opened, on the monotonic clock, never decreasing) under
// one lock, formats its line and adds it to a buffer under the same lock, so
// file order is real-time order. A flusher thread hands the buffer to the
// kernel with one write(2) no later than kFlushBound after the oldest line
// in it was appended (sooner when kFlushBytes are buffered), and Flush() and
// Close() write it at once. Writing happens outside the append lock: an
// Append never waits for a write(2).
//
// What a SIGKILL loses: the process's buffer, that is the events appended in
// the last kFlushBound before the kill (plus the flusher's scheduling delay
// on a loaded machine). What was written stays in the kernel's page cache,
// so the file is a readable prefix of the history: whole lines with dense
// indices, and at most one cut last line (the readers ignore it with a
// warning). A power loss can lose more: the file is fsynced at Close only.
//
// Memory: the journal keeps no events, only the lines not yet written (at
// most kFlushBound's worth, about kFlushBytes at most under a steady load);
// read the file back for the history (checkers/history_io.h).
//
// Write failures: after the first failed write(2) nothing more is written
// (the file would have a hole); status() and Close() report the error, and
// Append keeps assigning indices and times.
//
// Thread-safety: Append, Flush, size and status may be called from any
// thread; Close and the destructor from one thread once no Append runs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "checkers/history.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

// The longest an appended event waits in the journal's buffer before it is
// handed to write(2) (the flusher's scheduling delay aside).
inline constexpr std::chrono::milliseconds kFlushBound{5};
// A buffer this large is written without waiting for kFlushBound.
inline constexpr std::size_t kFlushBytes = std::size_t{1} << 20;

class Journal {
 public:
  using Clock = std::chrono::steady_clock;
  // write(2)'s signature; tests inject their own to count or fail writes.
  using WriteFn = std::function<ssize_t(int fd, const void* data, size_t n)>;

  // What Append assigned.
  struct Stamp {
    std::int64_t index = 0;
    std::int64_t time = 0;  // ns since start
  };

  // Creates (truncates) the file and starts the flusher. `start` is time
  // zero of the history. `write` replaces write(2) (null: write(2)).
  static Result<std::unique_ptr<Journal>> Open(const std::string& path,
                                               Clock::time_point start,
                                               WriteFn write = nullptr);
  // Close(), its error ignored.
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Fills in index and time (any given are replaced), buffers the line;
  // returns what was assigned.
  Stamp Append(checkers::Event event);

  // Writes what is buffered now; ok, or the first write error.
  Status Flush();
  // Stops the flusher, writes what is buffered, fsyncs and closes the file;
  // ok, or the first write error. Idempotent; Append must not follow.
  Status Close();
  // Ok, or the first write error ("cannot write history PATH: why").
  Status status() const;

  // The number of events appended so far.
  std::size_t size() const;
  // The number of write(2) calls made so far (for tests and benchmarks).
  std::uint64_t writes() const { return writes_.load(); }
  Clock::time_point start() const { return start_; }
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd, Clock::time_point start, WriteFn write);
  void FlusherLoop();
  void WriteOut();  // the buffer, in order; holds write_mu_

  std::string path_;
  int fd_ = -1;
  Clock::time_point start_;
  WriteFn write_;

  mutable std::mutex mu_;  // guards everything below up to write_mu_
  std::condition_variable wake_;
  std::string buffer_;        // lines not yet handed to write(2)
  Clock::time_point oldest_;  // when buffer_'s first line was appended
  std::int64_t next_index_ = 0;
  std::int64_t last_time_ = 0;
  bool stop_ = false;
  std::string error_;  // the first write error

  std::mutex write_mu_;  // one writer at a time, in buffer order
  std::string spare_;    // the buffer being written (guarded by write_mu_)
  bool closed_ = false;  // guarded by write_mu_
  std::atomic<std::uint64_t> writes_{0};
  std::thread flusher_;
};

}  // namespace faultline::harness

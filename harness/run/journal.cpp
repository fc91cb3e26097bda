#include "harness/run/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace faultline::harness {

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& path,
                                               Clock::time_point start,
                                               WriteFn write) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Fail("cannot create history " + path + ": " + strerror(errno));
  }
  if (!write)
    write = [](int f, const void* d, size_t n) { return ::write(f, d, n); };
  return std::unique_ptr<Journal>(
      new Journal(path, fd, start, std::move(write)));
}

Journal::Journal(std::string path, int fd, Clock::time_point start,
                 WriteFn write)
    : path_(std::move(path)), fd_(fd), start_(start), write_(std::move(write)) {
  flusher_ = std::thread([this] { FlusherLoop(); });
}

Journal::~Journal() { (void)Close(); }

Journal::Stamp Journal::Append(checkers::Event event) {
  bool wake = false;
  Stamp stamp;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    stamp.index = next_index_++;
    stamp.time = std::max<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_)
            .count(),
        last_time_);
    last_time_ = stamp.time;
    event.index = stamp.index;
    event.time = stamp.time;
    if (buffer_.empty()) {
      oldest_ = now;
      wake = true;
    }
    buffer_ += checkers::ToJsonLine(event);
    buffer_.push_back('\n');
    if (buffer_.size() >= kFlushBytes) wake = true;
  }
  if (wake) wake_.notify_one();
  return stamp;
}

void Journal::FlusherLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || !buffer_.empty(); });
    if (stop_) return;  // Close writes what is left
    wake_.wait_until(lock, oldest_ + kFlushBound,
                     [&] { return stop_ || buffer_.size() >= kFlushBytes; });
    if (stop_) return;
    lock.unlock();
    {
      std::lock_guard<std::mutex> w(write_mu_);
      WriteOut();
    }
    lock.lock();
  }
}

void Journal::WriteOut() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    spare_.swap(buffer_);  // buffer_ takes spare_'s (empty) capacity
    if (!error_.empty()) spare_.clear();  // nothing more is written
  }
  std::size_t off = 0;
  while (off < spare_.size() && !closed_) {
    ssize_t n = write_(fd_, spare_.data() + off, spare_.size() - off);
    ++writes_;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = n < 0 ? strerror(errno) : "wrote nothing";
      std::lock_guard<std::mutex> lock(mu_);
      error_ = "cannot write history " + path_ + ": " + why;
      break;
    }
    off += static_cast<std::size_t>(n);
  }
  spare_.clear();
}

Status Journal::Flush() {
  {
    std::lock_guard<std::mutex> w(write_mu_);
    WriteOut();
  }
  return status();
}

Status Journal::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (flusher_.joinable()) flusher_.join();
  std::lock_guard<std::mutex> w(write_mu_);
  if (!closed_) {
    WriteOut();
    closed_ = true;
    if (fd_ >= 0) {
      fsync(fd_);
      close(fd_);
      fd_ = -1;
    }
  }
  return status();
}

Status Journal::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.empty()) return Ok();
  return Fail(error_);
}

std::size_t Journal::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<std::size_t>(next_index_);
}

}  // namespace faultline::harness

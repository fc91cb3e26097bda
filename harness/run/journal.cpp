#include "harness/run/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace faultline::harness {

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& path,
                                               Clock::time_point start) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Fail("cannot create history " + path + ": " + strerror(errno));
  }
  return std::unique_ptr<Journal>(new Journal(path, fd, start));
}

Journal::Journal(std::string path, int fd, Clock::time_point start)
    : path_(std::move(path)), fd_(fd), start_(start) {}

Journal::~Journal() {
  if (fd_ >= 0) {
    fsync(fd_);
    close(fd_);
  }
}

checkers::Event Journal::Append(checkers::Event event) {
  std::lock_guard<std::mutex> lock(mu_);
  event.index = static_cast<std::int64_t>(events_.size());
  auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                                  start_)
                 .count();
  std::int64_t last = events_.empty() ? 0 : events_.back().time.value_or(0);
  event.time = std::max<std::int64_t>(now, last);
  std::string line = checkers::ToJsonLine(event);
  line.push_back('\n');
  std::size_t off = 0;
  while (off < line.size() && !write_failed_) {
    ssize_t n = write(fd_, line.data() + off, line.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      write_failed_ = true;  // keep going in memory; the run reports it
      break;
    }
    off += static_cast<std::size_t>(n);
  }
  events_.push_back(event);
  return events_.back();
}

checkers::History Journal::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

std::size_t Journal::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_.size();
}

}  // namespace faultline::harness

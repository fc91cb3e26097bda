#include "nemesis/disk/backing.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace faultline::nemesis::disk {

namespace {

IoError Errno(const char* what, FileId file) {
  const int code = errno;
  return IoFail(code, std::string(what) + " of file " + std::to_string(file) +
                          ": " + std::strerror(code));
}

}  // namespace

// MemoryBacking

bool MemoryBacking::Due(int& countdown) {
  if (countdown <= 0) return false;
  return --countdown == 0;
}

IoResult<std::size_t> MemoryBacking::Pread(FileId file, std::uint64_t offset,
                                           char* out, std::size_t len) {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  if (it == files_.end() || offset >= it->second.data.size()) {
    return std::size_t{0};
  }
  const std::string& data = it->second.data;
  const std::size_t n = std::min<std::uint64_t>(len, data.size() - offset);
  std::memcpy(out, data.data() + offset, n);
  return n;
}

IoStatus MemoryBacking::Pwrite(FileId file, std::uint64_t offset,
                               std::string_view data) {
  std::lock_guard lock(mu_);
  if (Due(fail_pwrite_)) {
    return IoFail(fail_pwrite_code_,
                  "injected pwrite failure of file " + std::to_string(file));
  }
  File& f = files_[file];
  if (f.data.size() < offset + data.size()) {
    f.data.resize(offset + data.size(), '\0');
  }
  f.data.replace(offset, data.size(), data);
  ++f.counts.pwrites;
  f.counts.pwrite_bytes += data.size();
  return IoOk();
}

IoStatus MemoryBacking::Truncate(FileId file, std::uint64_t size) {
  std::lock_guard lock(mu_);
  File& f = files_[file];
  f.data.resize(size, '\0');
  ++f.counts.truncates;
  return IoOk();
}

IoResult<std::uint64_t> MemoryBacking::Size(FileId file) {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  return it == files_.end() ? std::uint64_t{0} : it->second.data.size();
}

IoStatus MemoryBacking::Fsync(FileId file) {
  std::lock_guard lock(mu_);
  if (Due(fail_fsync_)) {
    return IoFail(fail_fsync_code_,
                  "injected fsync failure of file " + std::to_string(file));
  }
  File& f = files_[file];
  f.durable = f.data;
  ++f.counts.fsyncs;
  return IoOk();
}

void MemoryBacking::Put(FileId file, std::string data) {
  std::lock_guard lock(mu_);
  File& f = files_[file];
  f.durable = data;
  f.data = std::move(data);
}

std::string MemoryBacking::Contents(FileId file) const {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  return it == files_.end() ? std::string() : it->second.data;
}

std::string MemoryBacking::Durable(FileId file) const {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  return it == files_.end() ? std::string() : it->second.durable;
}

MemoryBacking::Counts MemoryBacking::counts(FileId file) const {
  std::lock_guard lock(mu_);
  auto it = files_.find(file);
  return it == files_.end() ? Counts{} : it->second.counts;
}

void MemoryBacking::FailPwrite(int nth, int code) {
  std::lock_guard lock(mu_);
  fail_pwrite_ = nth;
  fail_pwrite_code_ = code;
}

void MemoryBacking::FailFsync(int nth, int code) {
  std::lock_guard lock(mu_);
  fail_fsync_ = nth;
  fail_fsync_code_ = code;
}

// PosixBacking

PosixBacking::~PosixBacking() {
  for (const auto& [file, fd] : fds_) ::close(fd);
}

void PosixBacking::Adopt(FileId file, int fd) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = fds_.emplace(file, fd);
  if (!inserted) {
    ::close(it->second);
    it->second = fd;
  }
}

bool PosixBacking::Close(FileId file) {
  std::lock_guard lock(mu_);
  auto it = fds_.find(file);
  if (it == fds_.end()) return false;
  ::close(it->second);
  fds_.erase(it);
  return true;
}

IoResult<int> PosixBacking::Fd(FileId file) const {
  std::lock_guard lock(mu_);
  auto it = fds_.find(file);
  if (it == fds_.end()) {
    return IoFail(EBADF, "no descriptor for file " + std::to_string(file));
  }
  return it->second;
}

IoResult<std::size_t> PosixBacking::Pread(FileId file, std::uint64_t offset,
                                          char* out, std::size_t len) {
  auto fd = Fd(file);
  if (!fd) return fd.failure();
  std::size_t done = 0;
  while (done < len) {
    const ssize_t n =
        ::pread(*fd, out + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("pread", file);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

IoStatus PosixBacking::Pwrite(FileId file, std::uint64_t offset,
                              std::string_view data) {
  auto fd = Fd(file);
  if (!fd) return fd.failure();
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(*fd, data.data() + done, data.size() - done,
                               static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("pwrite", file);
    done += static_cast<std::size_t>(n);
  }
  return IoOk();
}

IoStatus PosixBacking::Truncate(FileId file, std::uint64_t size) {
  auto fd = Fd(file);
  if (!fd) return fd.failure();
  if (::ftruncate(*fd, static_cast<off_t>(size)) != 0) {
    return Errno("ftruncate", file);
  }
  return IoOk();
}

IoResult<std::uint64_t> PosixBacking::Size(FileId file) {
  auto fd = Fd(file);
  if (!fd) return fd.failure();
  struct stat st {};
  if (::fstat(*fd, &st) != 0) return Errno("fstat", file);
  return static_cast<std::uint64_t>(st.st_size);
}

IoStatus PosixBacking::Fsync(FileId file) {
  auto fd = Fd(file);
  if (!fd) return fd.failure();
  if (::fsync(*fd) != 0) return Errno("fsync", file);
  return IoOk();
}

}  // namespace faultline::nemesis::disk

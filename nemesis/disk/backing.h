// The storage below the lazy file system's write cache: what
// "reached the disk". WriteCache (write_cache.h) reads file data through a
// Backing and writes held data back to it; nothing else of the cache touches
// storage, so the cache's rules can be tested against MemoryBacking without
// root, FUSE or a real disk.
//
// Files are named by a FileId the caller chooses (the daemon will use the
// backing file's inode number: it survives renames). Failures are values
// carrying the errno a FUSE reply would give (IoResult below), since
// harness::Result carries a message only.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "harness/interfaces/result.h"

namespace faultline::nemesis::disk {

using FileId = std::uint64_t;

// An expected I/O failure: `code` is a positive errno (EIO, ENOSPC, EBADF,
// ...), `message` says what failed for the log.
struct IoError {
  int code = EIO;
  std::string message;
};

// A value or an IoError; the same shape as harness::Result plus code().
template <typename T>
class [[nodiscard]] IoResult {
 public:
  IoResult(T value) : v_(std::move(value)) {}        // NOLINT: implicit
  IoResult(IoError error) : v_(std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() {
    if (!ok()) std::abort();
    return std::get<0>(v_);
  }
  const T& value() const {
    if (!ok()) std::abort();
    return std::get<0>(v_);
  }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  // Precondition for both: !ok().
  const std::string& error() const { return failure().message; }
  int code() const { return failure().code; }
  const IoError& failure() const {
    if (ok()) std::abort();
    return std::get<1>(v_);
  }

 private:
  std::variant<T, IoError> v_;
};

using IoStatus = IoResult<harness::Unit>;
inline IoStatus IoOk() { return harness::Unit{}; }
inline IoError IoFail(int code, std::string message) {
  return IoError{code, std::move(message)};
}

// Positioned file I/O by FileId. Implementations need not be thread-safe
// for WriteCache (it calls them with its own lock held); the two below are.
class Backing {
 public:
  virtual ~Backing() = default;
  // Reads up to `len` bytes at `offset` into `out` (room for `len`); returns
  // how many were read: fewer only at the end of the file, 0 at or past it.
  virtual IoResult<std::size_t> Pread(FileId file, std::uint64_t offset,
                                      char* out, std::size_t len) = 0;
  // Writes all of `data` at `offset`; a gap past the end reads as zeros.
  virtual IoStatus Pwrite(FileId file, std::uint64_t offset,
                          std::string_view data) = 0;
  // Sets the file's size: cuts, or extends with zeros.
  virtual IoStatus Truncate(FileId file, std::uint64_t size) = 0;
  virtual IoResult<std::uint64_t> Size(FileId file) = 0;
  // Makes what was written so far durable (fsync).
  virtual IoStatus Fsync(FileId file) = 0;
};

// An in-memory disk for tests: a file exists once written or truncated and
// reads as empty before. It keeps two images per file, the written one
// (Contents) and the one as of its last Fsync (Durable), counts the calls,
// and fails a chosen next call on request. Thread-safe (one mutex).
class MemoryBacking : public Backing {
 public:
  struct Counts {
    std::uint64_t pwrites = 0;
    std::uint64_t pwrite_bytes = 0;
    std::uint64_t truncates = 0;
    std::uint64_t fsyncs = 0;
  };

  IoResult<std::size_t> Pread(FileId file, std::uint64_t offset, char* out,
                              std::size_t len) override;
  IoStatus Pwrite(FileId file, std::uint64_t offset,
                  std::string_view data) override;
  IoStatus Truncate(FileId file, std::uint64_t size) override;
  IoResult<std::uint64_t> Size(FileId file) override;
  IoStatus Fsync(FileId file) override;

  // Test access: sets a file's written and durable images to `data`.
  void Put(FileId file, std::string data);
  std::string Contents(FileId file) const;
  std::string Durable(FileId file) const;
  Counts counts(FileId file) const;
  // The `nth` (1 = next) Pwrite, respectively Fsync, from now fails with
  // `code` and changes nothing; 0 cancels.
  void FailPwrite(int nth, int code = EIO);
  void FailFsync(int nth, int code = EIO);

 private:
  struct File {
    std::string data;
    std::string durable;
    Counts counts;
  };
  static bool Due(int& countdown);

  mutable std::mutex mu_;
  std::map<FileId, File> files_;
  int fail_pwrite_ = 0;
  int fail_pwrite_code_ = EIO;
  int fail_fsync_ = 0;
  int fail_fsync_code_ = EIO;
};

// Real files: each FileId maps to a file descriptor the caller opened
// (O_RDWR) and hands over; calls use pread/pwrite/ftruncate/fstat/fsync.
// An unknown FileId fails with EBADF. Thread-safe for the map; Close(file)
// must not race a call on the same file (its descriptor number could be
// reused). Descriptors still adopted are closed by the destructor.
class PosixBacking : public Backing {
 public:
  PosixBacking() = default;
  ~PosixBacking() override;
  PosixBacking(const PosixBacking&) = delete;
  PosixBacking& operator=(const PosixBacking&) = delete;

  // Takes ownership of `fd` for `file`, closing a descriptor adopted before.
  void Adopt(FileId file, int fd);
  // Closes and forgets the descriptor of `file`; false if there was none.
  bool Close(FileId file);

  IoResult<std::size_t> Pread(FileId file, std::uint64_t offset, char* out,
                              std::size_t len) override;
  IoStatus Pwrite(FileId file, std::uint64_t offset,
                  std::string_view data) override;
  IoStatus Truncate(FileId file, std::uint64_t size) override;
  IoResult<std::uint64_t> Size(FileId file) override;
  IoStatus Fsync(FileId file) override;

  // The descriptor adopted for `file` (EBADF if none), for calls the
  // interface lacks (fstat, fchmod, ...); valid until Close(file).
  IoResult<int> Fd(FileId file) const;

 private:
  mutable std::mutex mu_;
  std::map<FileId, int> fds_;
};

}  // namespace faultline::nemesis::disk

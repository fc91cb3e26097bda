// Env: the only way raftkv's storage touches the operating system, in the
// style of leveldb's Env. PosixEnv() is the real one; FaultEnv (fault_env.h)
// is an in-memory one that can simulate a crash at any write boundary.
//
// Every call returns "" on success, else a one-line error message naming
// the path (and, for PosixEnv, strerror). No exceptions.
//
// Durability model the callers must respect (PosixEnv provides it, FaultEnv
// enforces it): appended bytes are durable only after Sync() of that file;
// a created, renamed or removed name is durable only after SyncDir() of its
// directory; Truncate() is durable when it returns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::raftkv::storage {

// A file open for appending. Not thread-safe; one owner.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all of `data` (one write; partial writes are retried).
  virtual std::string Append(std::string_view data) = 0;
  // Makes every byte appended so far durable (fdatasync).
  virtual std::string Sync() = 0;
  // Closes the file; later calls fail. The destructor closes if needed.
  virtual std::string Close() = 0;
};

// Thread-safety: PosixEnv is safe to share between threads; FaultEnv is not.
class Env {
 public:
  virtual ~Env() = default;

  // Opens `path` for appending, creating it (empty) if absent.
  virtual std::string NewAppendableFile(const std::string& path,
                                        std::unique_ptr<WritableFile>* out) = 0;
  // Reads the whole file into *out.
  virtual std::string ReadFile(const std::string& path, std::string* out) = 0;
  // Cuts the file to `size` bytes (size <= current size) and makes that
  // durable before returning.
  virtual std::string Truncate(const std::string& path, std::uint64_t size) = 0;
  // Atomically replaces `to` (if present) with `from`.
  virtual std::string Rename(const std::string& from,
                             const std::string& to) = 0;
  virtual std::string Remove(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, without "." and "..", in no
  // particular order.
  virtual std::string ListDir(const std::string& dir,
                              std::vector<std::string>* names) = 0;
  // Creates `dir` and missing parents; succeeds if it already exists.
  virtual std::string CreateDir(const std::string& dir) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual std::string SyncDir(const std::string& dir) = 0;
  virtual std::string FileSize(const std::string& path,
                               std::uint64_t* size) = 0;
  virtual bool FileExists(const std::string& path) = 0;
};

// The real file system. Never null; lives for the whole process.
Env* PosixEnv();

}  // namespace faultline::raftkv::storage

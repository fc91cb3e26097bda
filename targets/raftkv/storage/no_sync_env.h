// NoSyncEnv: an Env that forwards every call to another Env except the two
// that make data durable. WritableFile::Sync() and SyncDir() return success
// without calling through, so appends, creations, renames and removals all
// happen but none of them is ever fsynced. It backs raftkv's
// `--unsafe log-not-synced` switch: the WAL (entries and hard state), the
// snapshot file and the data directory's entries stay in the page cache, and
// a power loss (not a process crash) may lose writes the node acknowledged.
//
// Truncate() is forwarded unchanged (PosixEnv's fsyncs): storage only calls
// it on Open, to cut a torn tail, never on the path of an acknowledgement.
//
// Preconditions: `base` outlives the NoSyncEnv and the files it opened.
// Thread-safety: as the base Env's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "targets/raftkv/storage/env.h"

namespace faultline::raftkv::storage {

class NoSyncEnv final : public Env {
 public:
  explicit NoSyncEnv(Env* base) : base_(base) {}

  std::string NewAppendableFile(const std::string& path,
                                std::unique_ptr<WritableFile>* out) override;
  std::string ReadFile(const std::string& path, std::string* out) override {
    return base_->ReadFile(path, out);
  }
  std::string Truncate(const std::string& path, std::uint64_t size) override {
    return base_->Truncate(path, size);
  }
  std::string Rename(const std::string& from, const std::string& to) override {
    return base_->Rename(from, to);
  }
  std::string Remove(const std::string& path) override {
    return base_->Remove(path);
  }
  std::string ListDir(const std::string& dir,
                      std::vector<std::string>* names) override {
    return base_->ListDir(dir, names);
  }
  std::string CreateDir(const std::string& dir) override {
    return base_->CreateDir(dir);
  }
  // Skipped: the directory's entries are never made durable.
  std::string SyncDir(const std::string&) override { return ""; }
  std::string FileSize(const std::string& path, std::uint64_t* size) override {
    return base_->FileSize(path, size);
  }
  bool FileExists(const std::string& path) override {
    return base_->FileExists(path);
  }

 private:
  Env* base_;
};

}  // namespace faultline::raftkv::storage

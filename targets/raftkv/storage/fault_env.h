// FaultEnv: an in-memory Env for tests that can crash the "disk" at any
// write boundary and then lose power.
//
// Model (worst case a POSIX file system allows for what Env promises):
// - each file has durable bytes (as of its last Sync/Truncate) and the
//   unsynced appends made since, remembered one by one;
// - names (creation, rename, remove) become durable only on SyncDir of
//   their directory; directories themselves are durable at creation.
// Every mutating call is one numbered write boundary: creating a file in
// NewAppendableFile, Append, Sync, Truncate, Rename, Remove, CreateDir (of a
// new directory), SyncDir. CrashAfter(k) lets boundaries 1..k take effect;
// every later mutating call fails with "fault env: crashed" and changes
// nothing (the process is considered dead). LosePower() then turns the disk
// into one state that could have survived, and the env is usable again.
//
// Thread-safety: none; one owner (a test).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "targets/raftkv/storage/env.h"

namespace faultline::raftkv::storage {

class FaultEnv final : public Env {
 public:
  struct PowerLoss {
    enum class Data {
      kSyncedOnly,  // every unsynced append is lost
      kAll,         // every unsynced append survives
      kTornLast,    // all unsynced appends survive except the last one of
                    // each file, of which only `torn_keep` bytes do
    };
    Data data = Data::kSyncedOnly;
    // kTornLast: surviving prefix of the last unsynced append, clamped to
    // its size - 1 so the append really is torn.
    std::size_t torn_keep = 0;
    // Unsynced name changes survive as well (else they are all lost).
    bool keep_unsynced_names = false;
  };

  FaultEnv();
  ~FaultEnv() override;

  // Write boundaries performed so far (including ones refused by a crash).
  int boundaries() const { return boundaries_; }
  // One line per boundary performed, e.g. "append d/wal-...: 120 bytes".
  const std::vector<std::string>& trace() const { return trace_; }
  // Boundaries after the k-th fail. k < 0 disarms.
  void CrashAfter(int k) { crash_after_ = k; }
  bool crashed() const {
    return crash_after_ >= 0 && boundaries_ > crash_after_;
  }
  // Simulates a power loss as described above; disarms the crash; files
  // opened before become dead (their calls fail).
  void LosePower(const PowerLoss& how);

  // A deep copy of the disk (current and durable state, boundary count,
  // armed crash), without the open files: for trying several futures of
  // one disk.
  std::unique_ptr<FaultEnv> Clone() const;

  // Test helpers, no boundary: the current bytes of `path` ("" if absent),
  // and an in-place overwrite that is immediately durable.
  std::string Contents(const std::string& path) const;
  bool Overwrite(const std::string& path, std::size_t offset, char byte);

  std::string NewAppendableFile(const std::string& path,
                                std::unique_ptr<WritableFile>* out) override;
  std::string ReadFile(const std::string& path, std::string* out) override;
  std::string Truncate(const std::string& path, std::uint64_t size) override;
  std::string Rename(const std::string& from, const std::string& to) override;
  std::string Remove(const std::string& path) override;
  std::string ListDir(const std::string& dir,
                      std::vector<std::string>* names) override;
  std::string CreateDir(const std::string& dir) override;
  std::string SyncDir(const std::string& dir) override;
  std::string FileSize(const std::string& path, std::uint64_t* size) override;
  bool FileExists(const std::string& path) override;

  struct Inode {
    std::string data;                  // current bytes
    std::size_t synced = 0;            // durable prefix of `data`
    std::vector<std::size_t> appends;  // start offsets of unsynced appends
  };

 private:
  friend class FaultFile;
  // Counts one boundary; returns "" if it may take effect.
  std::string Boundary(std::string what);

  using Names = std::map<std::string, std::shared_ptr<Inode>>;
  Names current_;
  Names durable_;
  std::vector<std::string> dirs_;
  int boundaries_ = 0;
  int crash_after_ = -1;
  int generation_ = 0;  // bumped by LosePower; old files die
  std::vector<std::string> trace_;
};

}  // namespace faultline::raftkv::storage

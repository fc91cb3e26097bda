// The state the lazy file system's FUSE operations (lazy_fs_ops.cpp) and
// its control server (lazy_fs.cpp) share. Internal to faultline-lazyfs.
//
// Inodes: a regular file the cache may be asked about is "pinned" while an
// operation or an open handle uses it; its O_RDWR backing descriptor is
// adopted by the PosixBacking (FileId = backing inode number) and kept
// while pinned or while the cache holds writes for it, then closed.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nemesis/disk/backing.h"
#include "nemesis/disk/lazy_fs.h"
#include "nemesis/disk/namespace_journal.h"
#include "nemesis/disk/write_cache.h"

struct fuse;
struct fuse_operations;

namespace faultline::nemesis::disk {

class LazyFsState {
 public:
  LazyFsState(const LazyFsOptions& options,
              std::unique_ptr<NamespaceJournal> journal, std::string hidden);
  ~LazyFsState();

  WriteCache& cache() { return cache_; }
  PosixBacking& backing() { return backing_; }
  NamespaceJournal& journal() { return *journal_; }
  int root_fd() const { return journal_->root_fd(); }
  const std::string& backing_dir() const { return options_.backing; }
  void set_fuse(struct fuse* f) { fuse_ = f; }

  // "/a/b" -> "a/b", "/" -> ""; nullopt for the trash directory (when it is
  // inside the backing) and anything under it.
  std::optional<std::string> Rel(const char* path) const;
  // Whether readdir of `rel_dir` must skip `name` (the trash directory).
  bool Hidden(const std::string& rel_dir, const char* name) const;

  // Pins the regular file `rel`: opens it (O_RDWR, or O_RDONLY when that
  // is refused and `read_only_ok`) unless it is pinned already. Returns
  // its FileId.
  IoResult<FileId> Pin(const std::string& rel, bool read_only_ok);
  // Pins with a descriptor just opened (ownership taken).
  IoResult<FileId> PinFd(int fd, const std::string& rel);
  // Pins `file` if it is known (pinned or holding writes); else false.
  bool TryPin(FileId file);
  void Unpin(FileId file);
  // Closes what is neither pinned nor holding writes; discards the held
  // writes of unpinned files whose last link is gone.
  void Sweep();
  // Asks the kernel to drop its cached pages of every known file (after a
  // drop, torn or flip changed what they read). Best-effort.
  void InvalidateKnown();

  // Open files unlinked through the mount. libfuse (without hard_remove)
  // renames such a file to ".fuse_hidden..." and unlinks that name at the
  // last release; we unlink the real name instead (through the journal) and
  // answer the hidden name from the pinned descriptor, so fstat, fchmod and
  // the like keep working on an unlinked open file. Keyed by base name.
  static bool IsHiddenName(const char* path);
  void Hide(const char* path, FileId file);  // takes over one pin of file
  std::optional<FileId> HiddenFile(const char* path);
  bool Unhide(const char* path);  // drops the pin; false if not hidden

  // The control protocol, with the journal: one answer line.
  std::string RunCommand(std::string_view line);

  // Sleeps the injected latency, if any.
  void Delay();
  // Appends a line to the log (when there is one).
  void Log(std::string_view line);

 private:
  struct Inode {
    std::uint64_t pins = 0;
    std::string path;  // as last opened, for invalidation
  };

  const LazyFsOptions options_;
  PosixBacking backing_;
  WriteCache cache_;
  std::unique_ptr<NamespaceJournal> journal_;
  const std::string hidden_;  // rel path of the trash dir, or empty
  struct fuse* fuse_ = nullptr;
  std::mutex inodes_mu_;
  std::map<FileId, Inode> inodes_;
  std::mutex hidden_mu_;
  std::map<std::string, FileId> hidden_files_;
  std::mutex log_mu_;
  std::FILE* log_ = nullptr;
  std::mutex command_mu_;  // one control command at a time
};

// The FUSE operations; private_data of the fuse context is a LazyFsState.
const fuse_operations* LazyFsOperations();

}  // namespace faultline::nemesis::disk

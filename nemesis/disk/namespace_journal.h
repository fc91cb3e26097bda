// NamespaceJournal: the namespace operations (create, mkdir, unlink, rmdir,
// rename, link, symlink) of the lazy file system that are not durable yet,
// each with its undo. Every operation is applied to the backing directory
// at once (so the program sees it) and recorded; `drop` and `torn` undo the
// records newest first (UndoAll), a directory fsync or the `sync` command
// makes them durable (Commit*: the record and what it kept are freed).
//
// When a record becomes durable (CommitMode):
//  - kDirFsync: when the directory holding the new name is fsynced
//    (create/mkdir/link/symlink/unlink/rmdir: the parent; rename: the
//    destination's directory only), or by CommitAll;
//  - kAnyFsync: every record at any fsync or fsyncdir (the daemon calls
//    CommitAll), like ext4's journal, where a commit takes every earlier
//    metadata change with it.
//
// Undo (best-effort; a step that fails is counted, the rest still runs):
//   create/mknod, link, symlink -> the name is removed; mkdir -> the
//   directory is removed with whatever is in it; unlink -> the file comes
//   back (a hard link to it was kept in the trash directory); rename -> moved
//   back, and a replaced file comes back from the trash (a replaced empty
//   directory is made again with its mode and owner); rmdir -> made again
//   with its mode and owner. A name is only removed or moved back when it
//   still names the inode the operation made or moved.
//
// Directories are held by O_PATH descriptors (one per directory with
// records), so records stay valid when a directory is renamed later.
// Paths given to the operations are relative to the backing root
// ("a/b/file"; "" is the root itself) and are not checked for "..".
//
// The trash directory must be on the backing's file system and must not be
// visible through the mount; at Open, entries named "fl-*" left in it by an
// earlier run are removed.
//
// Thread-safety: every method may be called from any thread (one mutex).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/interfaces/result.h"
#include "nemesis/disk/backing.h"

namespace faultline::nemesis::disk {

enum class CommitMode { kDirFsync, kAnyFsync };

// Who owns what an operation creates; uid -1 leaves the daemon's owner.
struct Owner {
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
};

struct UndoReport {
  std::uint64_t undone = 0;  // records undone without error
  std::uint64_t failed = 0;  // records whose undo failed (at least a step)
  std::string first_error;
};

struct JournalStatus {
  std::uint64_t pending = 0;    // records not durable yet
  std::uint64_t committed = 0;  // since Open
  std::uint64_t undone = 0;     // since Open
  std::uint64_t undo_failed = 0;
};

class NamespaceJournal {
 public:
  // Opens both directories (absolute or relative to the working directory).
  static harness::Result<std::unique_ptr<NamespaceJournal>> Open(
      const std::string& backing_root, const std::string& trash_dir,
      CommitMode mode);
  ~NamespaceJournal();
  NamespaceJournal(const NamespaceJournal&) = delete;
  NamespaceJournal& operator=(const NamespaceJournal&) = delete;

  CommitMode mode() const { return mode_; }
  // The backing root's descriptor (O_RDONLY | O_DIRECTORY), owned here.
  int root_fd() const { return root_fd_; }

  // open(O_CREAT) of `path`: `flags` are passed to openat (O_EXCL kept);
  // recorded only when the file did not exist. Returns the descriptor.
  IoResult<int> Create(std::string_view path, int flags, mode_t mode,
                       Owner owner = {});
  IoStatus Mknod(std::string_view path, mode_t mode, dev_t dev,
                 Owner owner = {});
  IoStatus Mkdir(std::string_view path, mode_t mode, Owner owner = {});
  IoStatus Symlink(std::string_view target, std::string_view path,
                   Owner owner = {});
  IoStatus Link(std::string_view from, std::string_view to);
  IoStatus Unlink(std::string_view path);
  IoStatus Rmdir(std::string_view path);
  // `flags`: 0 or RENAME_NOREPLACE; RENAME_EXCHANGE (or anything else)
  // fails with EINVAL.
  IoStatus Rename(std::string_view from, std::string_view to,
                  unsigned int flags = 0);

  // Durability. CommitDir: the records whose directory is the one with this
  // device and inode number (kDirFsync); returns how many were committed.
  std::uint64_t CommitDir(dev_t dev, ino_t ino);
  std::uint64_t CommitAll();
  // A crash: undoes every record, newest first, and forgets them.
  UndoReport UndoAll();

  JournalStatus Status() const;

 private:
  enum class Kind {
    kCreate,
    kMkdir,
    kSymlink,
    kLink,
    kUnlink,
    kRmdir,
    kRename
  };
  struct Dir {
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    ~Dir();
  };
  struct Record {
    Kind kind = Kind::kCreate;
    std::shared_ptr<Dir> dir;  // holds `name`; the commit key
    std::string name;
    std::shared_ptr<Dir> from_dir;  // rename: where it came from
    std::string from_name;
    ino_t ino = 0;              // what was made or moved (not rmdir)
    std::string trash;          // unlinked or replaced file kept in the trash
    bool replaced_dir = false;  // rename over an empty directory
    mode_t mode = 0;            // rmdir, replaced_dir
    uid_t uid = 0;
    gid_t gid = 0;
  };
  struct Parent {
    std::shared_ptr<Dir> dir;
    std::string name;
  };

  NamespaceJournal(int root_fd, int trash_fd, CommitMode mode);
  // With mu_ held: opens the parent directory of `path`.
  IoResult<Parent> ParentOf(std::string_view path);
  // With mu_ held: records a create, mkdir, symlink or link of `p` (the
  // inode now at p.name in p.dir, for the undo's check).
  void RecordMade(Kind kind, const Parent& p);
  std::shared_ptr<Dir> DirFor(int fd);
  std::string TrashName();
  void Free(Record& r);
  IoStatus Undo(const Record& r);
  void ChownNew(int dfd, const std::string& name, Owner owner);

  const int root_fd_;
  const int trash_fd_;
  const CommitMode mode_;
  mutable std::mutex mu_;
  std::vector<Record> records_;  // oldest first
  std::map<std::pair<dev_t, ino_t>, std::weak_ptr<Dir>> dirs_;
  std::uint64_t next_trash_ = 0;
  JournalStatus counters_;
};

}  // namespace faultline::nemesis::disk

#include "nemesis/disk/namespace_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace faultline::nemesis::disk {

namespace {

constexpr const char* kTrashPrefix = "fl-";

IoError Errno(std::string_view what, std::string_view path) {
  const int code = errno;
  return IoFail(code, std::string(what) + " " + std::string(path) + ": " +
                          std::strerror(code));
}

// Removes `name` in `dfd` and, for a directory, everything in it.
bool RemoveTree(int parent, const std::string& name) {
  struct stat st {};
  if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return false;
  }
  if (!S_ISDIR(st.st_mode)) return unlinkat(parent, name.c_str(), 0) == 0;
  const int fd =
      openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (fd < 0) return false;
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    close(fd);
    return false;
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  bool ok = true;
  for (const std::string& n : names) ok = RemoveTree(dirfd(d), n) && ok;
  closedir(d);
  return unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 && ok;
}

// The inode `name` in `dfd` names now, or 0.
ino_t InodeOf(int parent, const std::string& name) {
  struct stat st {};
  if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
  return st.st_ino;
}

}  // namespace

NamespaceJournal::Dir::~Dir() {
  if (fd >= 0) close(fd);
}

harness::Result<std::unique_ptr<NamespaceJournal>> NamespaceJournal::Open(
    const std::string& backing_root, const std::string& trash_dir,
    CommitMode mode) {
  const int root =
      open(backing_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    return harness::Fail("cannot open backing directory " + backing_root +
                         ": " + std::strerror(errno));
  }
  const int trash = open(trash_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (trash < 0) {
    const int code = errno;
    close(root);
    return harness::Fail("cannot open trash directory " + trash_dir + ": " +
                         std::strerror(code));
  }
  struct stat rs {
  }, ts{};
  fstat(root, &rs);
  fstat(trash, &ts);
  if (rs.st_dev != ts.st_dev) {
    close(root);
    close(trash);
    return harness::Fail("trash directory " + trash_dir +
                         " is not on the backing directory's file system");
  }
  // Leftovers of an earlier daemon (killed with records pending).
  const int scan = dup(trash);
  if (DIR* d = scan >= 0 ? fdopendir(scan) : nullptr) {
    std::vector<std::string> old;
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, kTrashPrefix, 3) == 0)
        old.push_back(e->d_name);
    }
    closedir(d);
    for (const std::string& n : old) RemoveTree(trash, n);
  }
  return std::unique_ptr<NamespaceJournal>(
      new NamespaceJournal(root, trash, mode));
}

NamespaceJournal::NamespaceJournal(int root_fd, int trash_fd, CommitMode mode)
    : root_fd_(root_fd), trash_fd_(trash_fd), mode_(mode) {}

NamespaceJournal::~NamespaceJournal() {
  for (Record& r : records_) Free(r);
  records_.clear();
  close(trash_fd_);
  close(root_fd_);
}

std::shared_ptr<NamespaceJournal::Dir> NamespaceJournal::DirFor(int fd) {
  struct stat st {};
  fstat(fd, &st);
  const auto key = std::make_pair(st.st_dev, st.st_ino);
  auto it = dirs_.find(key);
  if (it != dirs_.end()) {
    if (auto shared = it->second.lock()) {
      close(fd);
      return shared;
    }
  }
  auto dir = std::make_shared<Dir>();
  dir->fd = fd;
  dir->dev = st.st_dev;
  dir->ino = st.st_ino;
  dirs_[key] = dir;
  return dir;
}

IoResult<NamespaceJournal::Parent> NamespaceJournal::ParentOf(
    std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  const std::string parent = slash == std::string_view::npos
                                 ? "."
                                 : std::string(path.substr(0, slash));
  std::string name(slash == std::string_view::npos ? path
                                                   : path.substr(slash + 1));
  if (name.empty() || name == "." || name == "..") {
    return IoFail(EINVAL, "no name in path '" + std::string(path) + "'");
  }
  const int fd = openat(root_fd_, parent.empty() ? "." : parent.c_str(),
                        O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open parent of", path);
  // Drop dead weak entries now and then, so the map stays small.
  if (dirs_.size() > 64 + 2 * records_.size()) {
    for (auto it = dirs_.begin(); it != dirs_.end();) {
      it = it->second.expired() ? dirs_.erase(it) : std::next(it);
    }
  }
  return Parent{DirFor(fd), std::move(name)};
}

std::string NamespaceJournal::TrashName() {
  return std::string(kTrashPrefix) + std::to_string(getpid()) + "-" +
         std::to_string(next_trash_++);
}

void NamespaceJournal::ChownNew(int dfd, const std::string& name, Owner owner) {
  if (owner.uid == static_cast<uid_t>(-1) &&
      owner.gid == static_cast<gid_t>(-1)) {
    return;
  }
  // Best-effort, as a passthrough would do: the name exists already.
  (void)fchownat(dfd, name.c_str(), owner.uid, owner.gid, AT_SYMLINK_NOFOLLOW);
}

IoResult<int> NamespaceJournal::Create(std::string_view path, int flags,
                                       mode_t mode, Owner owner) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(path);
  if (!p) return p.failure();
  const int dfd = p->dir->fd;
  const char* name = p->name.c_str();
  const int base = (flags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC;
  bool created = false;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    fd = openat(dfd, name, base | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      created = true;
    } else if (errno == EEXIST && (flags & O_EXCL) == 0) {
      fd = openat(dfd, name, base);
      if (fd < 0 && errno != ENOENT) return Errno("open", path);
    } else {
      return Errno("create", path);
    }
  }
  if (fd < 0) return Errno("create", path);
  if (created) {
    ChownNew(dfd, p->name, owner);
    struct stat st {};
    fstat(fd, &st);
    Record r;
    r.kind = Kind::kCreate;
    r.dir = p->dir;
    r.name = p->name;
    r.ino = st.st_ino;
    records_.push_back(std::move(r));
  }
  return fd;
}

IoStatus NamespaceJournal::Mknod(std::string_view path, mode_t mode, dev_t dev,
                                 Owner owner) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(path);
  if (!p) return p.failure();
  if (mknodat(p->dir->fd, p->name.c_str(), mode, dev) != 0) {
    return Errno("mknod", path);
  }
  ChownNew(p->dir->fd, p->name, owner);
  RecordMade(Kind::kCreate, *p);
  return IoOk();
}

IoStatus NamespaceJournal::Mkdir(std::string_view path, mode_t mode,
                                 Owner owner) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(path);
  if (!p) return p.failure();
  if (mkdirat(p->dir->fd, p->name.c_str(), mode) != 0) {
    return Errno("mkdir", path);
  }
  ChownNew(p->dir->fd, p->name, owner);
  RecordMade(Kind::kMkdir, *p);
  return IoOk();
}

IoStatus NamespaceJournal::Symlink(std::string_view target,
                                   std::string_view path, Owner owner) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(path);
  if (!p) return p.failure();
  if (symlinkat(std::string(target).c_str(), p->dir->fd, p->name.c_str()) !=
      0) {
    return Errno("symlink", path);
  }
  ChownNew(p->dir->fd, p->name, owner);
  RecordMade(Kind::kSymlink, *p);
  return IoOk();
}

IoStatus NamespaceJournal::Link(std::string_view from, std::string_view to) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(to);
  if (!p) return p.failure();
  if (linkat(root_fd_, std::string(from).c_str(), p->dir->fd, p->name.c_str(),
             0) != 0) {
    return Errno("link to", to);
  }
  RecordMade(Kind::kLink, *p);
  return IoOk();
}

void NamespaceJournal::RecordMade(Kind kind, const Parent& p) {
  Record r;
  r.kind = kind;
  r.ino = InodeOf(p.dir->fd, p.name);
  r.dir = p.dir;
  r.name = p.name;
  records_.push_back(std::move(r));
}

IoStatus NamespaceJournal::Unlink(std::string_view path) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(path);
  if (!p) return p.failure();
  struct stat st {};
  if (fstatat(p->dir->fd, p->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("unlink", path);
  }
  if (S_ISDIR(st.st_mode)) return IoFail(EISDIR, "unlink of a directory");
  Record r;
  r.kind = Kind::kUnlink;
  r.trash = TrashName();
  if (linkat(p->dir->fd, p->name.c_str(), trash_fd_, r.trash.c_str(), 0) != 0) {
    return Errno("keep in trash", path);
  }
  if (unlinkat(p->dir->fd, p->name.c_str(), 0) != 0) {
    IoError e = Errno("unlink", path);
    unlinkat(trash_fd_, r.trash.c_str(), 0);
    return e;
  }
  r.ino = st.st_ino;
  r.dir = p->dir;
  r.name = p->name;
  records_.push_back(std::move(r));
  return IoOk();
}

IoStatus NamespaceJournal::Rmdir(std::string_view path) {
  std::lock_guard lock(mu_);
  auto p = ParentOf(path);
  if (!p) return p.failure();
  struct stat st {};
  if (fstatat(p->dir->fd, p->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("rmdir", path);
  }
  if (unlinkat(p->dir->fd, p->name.c_str(), AT_REMOVEDIR) != 0) {
    return Errno("rmdir", path);
  }
  Record r;
  r.kind = Kind::kRmdir;
  r.mode = st.st_mode & 07777;
  r.uid = st.st_uid;
  r.gid = st.st_gid;
  r.dir = p->dir;
  r.name = p->name;
  records_.push_back(std::move(r));
  return IoOk();
}

IoStatus NamespaceJournal::Rename(std::string_view from, std::string_view to,
                                  unsigned int flags) {
  if (flags != 0 && flags != RENAME_NOREPLACE) {
    return IoFail(EINVAL, "rename: only RENAME_NOREPLACE is supported");
  }
  std::lock_guard lock(mu_);
  auto src = ParentOf(from);
  if (!src) return src.failure();
  auto dst = ParentOf(to);
  if (!dst) return dst.failure();
  struct stat s {
  }, d{};
  if (fstatat(src->dir->fd, src->name.c_str(), &s, AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("rename", from);
  }
  const bool target =
      fstatat(dst->dir->fd, dst->name.c_str(), &d, AT_SYMLINK_NOFOLLOW) == 0;
  if (target && flags == RENAME_NOREPLACE) {
    return IoFail(EEXIST, "rename: " + std::string(to) + " exists");
  }
  if (target && d.st_ino == s.st_ino && d.st_dev == s.st_dev) {
    return IoOk();  // two names of one inode: rename does nothing
  }
  Record r;
  r.kind = Kind::kRename;
  if (target && !S_ISDIR(d.st_mode)) {
    r.trash = TrashName();
    if (linkat(dst->dir->fd, dst->name.c_str(), trash_fd_, r.trash.c_str(),
               0) != 0) {
      return Errno("keep in trash", to);
    }
  } else if (target) {
    r.replaced_dir = true;
    r.mode = d.st_mode & 07777;
    r.uid = d.st_uid;
    r.gid = d.st_gid;
  }
  if (renameat2(src->dir->fd, src->name.c_str(), dst->dir->fd,
                dst->name.c_str(), flags) != 0) {
    IoError e = Errno("rename to", to);
    if (!r.trash.empty()) unlinkat(trash_fd_, r.trash.c_str(), 0);
    return e;
  }
  r.ino = s.st_ino;
  r.dir = dst->dir;
  r.name = dst->name;
  r.from_dir = src->dir;
  r.from_name = src->name;
  records_.push_back(std::move(r));
  return IoOk();
}

void NamespaceJournal::Free(Record& r) {
  if (!r.trash.empty()) RemoveTree(trash_fd_, r.trash);
  r.trash.clear();
}

std::uint64_t NamespaceJournal::CommitDir(dev_t dev, ino_t ino) {
  std::lock_guard lock(mu_);
  std::uint64_t n = 0;
  std::vector<Record> kept;
  for (Record& r : records_) {
    if (r.dir->dev == dev && r.dir->ino == ino) {
      Free(r);
      ++n;
    } else {
      kept.push_back(std::move(r));
    }
  }
  records_ = std::move(kept);
  counters_.committed += n;
  return n;
}

std::uint64_t NamespaceJournal::CommitAll() {
  std::lock_guard lock(mu_);
  for (Record& r : records_) Free(r);
  const std::uint64_t n = records_.size();
  records_.clear();
  counters_.committed += n;
  return n;
}

IoStatus NamespaceJournal::Undo(const Record& r) {
  const int dfd = r.dir->fd;
  const char* name = r.name.c_str();
  auto fail = [&](std::string_view what) { return Errno(what, r.name); };
  switch (r.kind) {
    case Kind::kCreate:
    case Kind::kSymlink:
    case Kind::kLink:
    case Kind::kMkdir: {
      const ino_t now = InodeOf(dfd, r.name);
      if (now == 0) return fail("undo: gone:");
      if (now != r.ino) {
        return IoFail(ESTALE, "undo: " + r.name + " names another inode");
      }
      const bool removed = r.kind == Kind::kMkdir ? RemoveTree(dfd, r.name)
                                                  : unlinkat(dfd, name, 0) == 0;
      if (!removed) return fail("undo: remove");
      return IoOk();
    }
    case Kind::kUnlink:
      if (renameat2(trash_fd_, r.trash.c_str(), dfd, name, RENAME_NOREPLACE) !=
          0) {
        return fail("undo unlink: restore");
      }
      return IoOk();
    case Kind::kRmdir:
      if (mkdirat(dfd, name, r.mode) != 0) return fail("undo rmdir: mkdir");
      (void)fchownat(dfd, name, r.uid, r.gid, AT_SYMLINK_NOFOLLOW);
      (void)fchmodat(dfd, name, r.mode, 0);
      return IoOk();
    case Kind::kRename: {
      if (InodeOf(dfd, r.name) != r.ino) {
        return IoFail(ESTALE, "undo rename: " + r.name +
                                  " no longer names the renamed inode");
      }
      if (renameat2(dfd, name, r.from_dir->fd, r.from_name.c_str(),
                    RENAME_NOREPLACE) != 0) {
        return fail("undo rename: move back");
      }
      if (!r.trash.empty() && renameat2(trash_fd_, r.trash.c_str(), dfd, name,
                                        RENAME_NOREPLACE) != 0) {
        return fail("undo rename: restore the replaced");
      }
      if (r.replaced_dir) {
        if (mkdirat(dfd, name, r.mode) != 0) {
          return fail("undo rename: make the replaced directory");
        }
        (void)fchownat(dfd, name, r.uid, r.gid, AT_SYMLINK_NOFOLLOW);
        (void)fchmodat(dfd, name, r.mode, 0);
      }
      return IoOk();
    }
  }
  return IoFail(EINVAL, "undo: unknown record");
}

UndoReport NamespaceJournal::UndoAll() {
  std::lock_guard lock(mu_);
  UndoReport report;
  for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
    auto undone = Undo(*it);
    if (undone) {
      ++report.undone;
    } else if (report.failed++ == 0) {
      report.first_error = undone.error();
    }
    Free(*it);
  }
  records_.clear();
  counters_.undone += report.undone;
  counters_.undo_failed += report.failed;
  return report;
}

JournalStatus NamespaceJournal::Status() const {
  std::lock_guard lock(mu_);
  JournalStatus s = counters_;
  s.pending = records_.size();
  return s;
}

}  // namespace faultline::nemesis::disk

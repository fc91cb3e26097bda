// The FUSE operations of faultline-lazyfs (lazy_fs.h): each sleeps the
// injected latency first, then passes through to the backing directory,
// data through the WriteCache and namespace changes through the
// NamespaceJournal. Errors are returned as -errno, as libfuse expects.
#define FUSE_USE_VERSION 314
#include <dirent.h>
#include <fcntl.h>
#include <fuse.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "nemesis/disk/lazy_fs_state.h"

namespace faultline::nemesis::disk {

namespace {

// fi->fh of an open file or directory.
struct Handle {
  FileId id = 0;          // files
  DIR* dir = nullptr;     // directories
  bool durable = false;   // O_SYNC / O_DSYNC
  bool append = false;    // O_APPEND
  bool writable = false;  // opened for writing
  std::string rel;        // directories: the path at opendir (readdir may
                          // get none, with nullpath_ok)
};

LazyFsState& S() {
  return *static_cast<LazyFsState*>(fuse_get_context()->private_data);
}

Handle* H(fuse_file_info* fi) {
  return fi == nullptr
             ? nullptr
             : reinterpret_cast<Handle*>(static_cast<uintptr_t>(fi->fh));
}

int Neg(int code) { return -(code == 0 ? EIO : code); }
int NegErrno() { return Neg(errno); }

// What a root daemon creates belongs to the caller, as with a local fs.
Owner Caller() {
  if (geteuid() != 0) return {};
  const fuse_context* c = fuse_get_context();
  return Owner{c->uid, c->gid};
}

const char* At(const std::string& rel) {
  return rel.empty() ? "." : rel.c_str();
}

// The backing path of `rel` for the l*xattr calls.
std::string Full(const std::string& backing, const std::string& rel) {
  return rel.empty() ? backing : backing + "/" + rel;
}

// The FileId of an open handle, or of an unlinked open file by its hidden
// name; 0 when neither.
FileId OpenFile(LazyFsState& s, const char* path, fuse_file_info* fi) {
  if (Handle* h = H(fi); h != nullptr && h->dir == nullptr && h->id != 0) {
    return h->id;
  }
  if (auto hidden = s.HiddenFile(path)) return *hidden;
  return 0;
}

void* Init(fuse_conn_info* conn, fuse_config* cfg) {
  cfg->use_ino = 1;
  cfg->entry_timeout = 0;
  cfg->attr_timeout = 0;
  cfg->negative_timeout = 0;
  // hard_remove stays off: an open file unlinked is "renamed" to a hidden
  // name, which we turn into the real unlink (LazyFsState::Hide), so the
  // kernel can still ask for its attributes by path.
  cfg->hard_remove = 0;
  cfg->nullpath_ok = 1;
  cfg->kernel_cache = 0;
  cfg->auto_cache = 0;
  cfg->direct_io = 0;  // mmap keeps working
  conn->want &= ~static_cast<unsigned>(FUSE_CAP_WRITEBACK_CACHE);
  return fuse_get_context()->private_data;
}

int Getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  if (const FileId id = OpenFile(s, path, fi); id != 0) {
    auto fd = s.backing().Fd(id);
    if (!fd) return Neg(fd.code());
    if (fstat(*fd, st) != 0) return NegErrno();
    auto size = s.cache().Size(id);
    if (!size) return Neg(size.code());
    st->st_size = static_cast<off_t>(*size);
    return 0;
  }
  if (Handle* h = H(fi); h != nullptr && h->dir != nullptr) {
    return fstat(dirfd(h->dir), st) == 0 ? 0 : NegErrno();
  }
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  if (fstatat(s.root_fd(), At(*rel), st, AT_SYMLINK_NOFOLLOW) != 0) {
    return NegErrno();
  }
  if (S_ISREG(st->st_mode) && s.TryPin(st->st_ino)) {
    auto size = s.cache().Size(st->st_ino);
    s.Unpin(st->st_ino);
    if (!size) return Neg(size.code());
    st->st_size = static_cast<off_t>(*size);
  }
  return 0;
}

int Readlink(const char* path, char* buf, size_t size) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  if (size == 0) return -EINVAL;
  const ssize_t n = readlinkat(s.root_fd(), At(*rel), buf, size - 1);
  if (n < 0) return NegErrno();
  buf[n] = '\0';
  return 0;
}

int Mknod(const char* path, mode_t mode, dev_t rdev) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -EACCES;
  auto made = s.journal().Mknod(*rel, mode, rdev, Caller());
  return made ? 0 : Neg(made.code());
}

int Mkdir(const char* path, mode_t mode) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -EACCES;
  auto made = s.journal().Mkdir(*rel, mode, Caller());
  return made ? 0 : Neg(made.code());
}

int Unlink(const char* path) {
  LazyFsState& s = S();
  s.Delay();
  if (s.Unhide(path)) return 0;  // the real name went at the "rename"
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  auto done = s.journal().Unlink(*rel);
  return done ? 0 : Neg(done.code());
}

int Rmdir(const char* path) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  auto done = s.journal().Rmdir(*rel);
  return done ? 0 : Neg(done.code());
}

int Symlink(const char* target, const char* path) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -EACCES;
  auto done = s.journal().Symlink(target, *rel, Caller());
  return done ? 0 : Neg(done.code());
}

int Rename(const char* from, const char* to, unsigned int flags) {
  LazyFsState& s = S();
  s.Delay();
  auto a = s.Rel(from);
  auto b = s.Rel(to);
  if (!a || !b) return -ENOENT;
  if (flags == 0 && LazyFsState::IsHiddenName(to)) {
    // libfuse hiding an open file it was asked to unlink.
    struct stat st {};
    if (fstatat(s.root_fd(), At(*a), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && s.TryPin(st.st_ino)) {
      auto gone = s.journal().Unlink(*a);
      if (!gone) {
        s.Unpin(st.st_ino);
        return Neg(gone.code());
      }
      s.Hide(to, st.st_ino);
      return 0;
    }
  }
  auto done = s.journal().Rename(*a, *b, flags);
  return done ? 0 : Neg(done.code());
}

int Link(const char* from, const char* to) {
  LazyFsState& s = S();
  s.Delay();
  auto a = s.Rel(from);
  auto b = s.Rel(to);
  if (!a || !b) return -ENOENT;
  auto done = s.journal().Link(*a, *b);
  return done ? 0 : Neg(done.code());
}

int Chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  if (const FileId id = OpenFile(s, path, fi); id != 0) {
    auto fd = s.backing().Fd(id);
    if (!fd) return Neg(fd.code());
    return fchmod(*fd, mode) == 0 ? 0 : NegErrno();
  }
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  return fchmodat(s.root_fd(), At(*rel), mode, 0) == 0 ? 0 : NegErrno();
}

int Chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  if (const FileId id = OpenFile(s, path, fi); id != 0) {
    auto fd = s.backing().Fd(id);
    if (!fd) return Neg(fd.code());
    return fchown(*fd, uid, gid) == 0 ? 0 : NegErrno();
  }
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  return fchownat(s.root_fd(), At(*rel), uid, gid, AT_SYMLINK_NOFOLLOW) == 0
             ? 0
             : NegErrno();
}

int Truncate(const char* path, off_t size, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  if (size < 0) return -EINVAL;
  if (const FileId id = OpenFile(s, path, fi); id != 0) {
    auto done = s.cache().Truncate(id, static_cast<std::uint64_t>(size));
    return done ? 0 : Neg(done.code());
  }
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  auto id = s.Pin(*rel, false);
  if (!id) return Neg(id.code());
  auto done = s.cache().Truncate(*id, static_cast<std::uint64_t>(size));
  s.Unpin(*id);
  return done ? 0 : Neg(done.code());
}

// After the backing file is pinned: the handle, and O_TRUNC held.
int FinishOpen(LazyFsState& s, FileId id, fuse_file_info* fi) {
  auto* h = new Handle;
  h->id = id;
  h->durable = (fi->flags & O_DSYNC) != 0;  // O_SYNC includes O_DSYNC
  h->append = (fi->flags & O_APPEND) != 0;
  h->writable = (fi->flags & O_ACCMODE) != O_RDONLY;
  if ((fi->flags & O_TRUNC) != 0 && h->writable) {
    auto cut = s.cache().Truncate(id, 0);
    if (!cut) {
      s.Unpin(id);
      delete h;
      return Neg(cut.code());
    }
  }
  fi->fh = reinterpret_cast<uintptr_t>(h);
  fi->keep_cache = 0;  // the kernel drops its pages of the file at open
  fi->direct_io = 0;
  return 0;
}

int Open(const char* path, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  auto id = s.Pin(*rel, (fi->flags & O_ACCMODE) == O_RDONLY);
  if (!id) return Neg(id.code());
  return FinishOpen(s, *id, fi);
}

int Create(const char* path, mode_t mode, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -EACCES;
  auto fd = s.journal().Create(*rel, O_RDWR | O_NOFOLLOW | (fi->flags & O_EXCL),
                               mode, Caller());
  if (!fd) return Neg(fd.code());
  auto id = s.PinFd(*fd, *rel);
  if (!id) return Neg(id.code());
  return FinishOpen(s, *id, fi);
}

int Read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  Handle* h = H(fi);
  if (h == nullptr || h->id == 0 || off < 0) return -EBADF;
  auto data = s.cache().Read(h->id, static_cast<std::uint64_t>(off), size);
  if (!data) return Neg(data.code());
  std::memcpy(buf, data->data(), data->size());
  return static_cast<int>(data->size());
}

int Write(const char*, const char* buf, size_t size, off_t off,
          fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  Handle* h = H(fi);
  if (h == nullptr || h->id == 0 || off < 0) return -EBADF;
  if (!h->writable) return -EBADF;
  std::uint64_t at = static_cast<std::uint64_t>(off);
  if (h->append) {
    auto size_now = s.cache().Size(h->id);
    if (!size_now) return Neg(size_now.code());
    at = *size_now;
  }
  auto written =
      s.cache().Write(h->id, at, std::string_view(buf, size), h->durable);
  if (!written) return Neg(written.code());
  if (h->durable && s.journal().mode() == CommitMode::kAnyFsync) {
    s.journal().CommitAll();
  }
  return static_cast<int>(size);
}

int Statfs(const char*, struct statvfs* st) {
  LazyFsState& s = S();
  s.Delay();
  return fstatvfs(s.root_fd(), st) == 0 ? 0 : NegErrno();
}

int Flush(const char*, fuse_file_info*) { return 0; }  // close is no sync

int Release(const char*, fuse_file_info* fi) {
  LazyFsState& s = S();
  Handle* h = H(fi);
  if (h == nullptr) return 0;
  s.Unpin(h->id);
  delete h;
  return 0;
}

int Fsync(const char*, int, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  Handle* h = H(fi);
  if (h == nullptr || h->id == 0) return -EBADF;
  auto synced = s.cache().Sync(h->id);
  if (s.journal().mode() == CommitMode::kAnyFsync) {
    s.journal().CommitAll();
    s.Sweep();
  }
  return synced ? 0 : Neg(synced.code());
}

int Opendir(const char* path, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  const int fd =
      openat(s.root_fd(), At(*rel), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return NegErrno();
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    const int code = errno;
    close(fd);
    return Neg(code);
  }
  auto* h = new Handle;
  h->dir = d;
  h->rel = *rel;
  fi->fh = reinterpret_cast<uintptr_t>(h);
  return 0;
}

int Readdir(const char*, void* buf, fuse_fill_dir_t filler, off_t,
            fuse_file_info* fi, fuse_readdir_flags) {
  LazyFsState& s = S();
  s.Delay();
  Handle* h = H(fi);
  if (h == nullptr || h->dir == nullptr) return -EBADF;
  rewinddir(h->dir);
  errno = 0;
  while (dirent* e = readdir(h->dir)) {
    if (s.Hidden(h->rel, e->d_name)) continue;
    struct stat st {};
    st.st_ino = e->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(e->d_type));
    if (filler(buf, e->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0))) {
      break;
    }
  }
  return 0;
}

int Releasedir(const char*, fuse_file_info* fi) {
  Handle* h = H(fi);
  if (h == nullptr) return 0;
  if (h->dir != nullptr) closedir(h->dir);
  delete h;
  return 0;
}

int Fsyncdir(const char*, int, fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  Handle* h = H(fi);
  if (h == nullptr || h->dir == nullptr) return -EBADF;
  const int fd = dirfd(h->dir);
  if (fsync(fd) != 0) return NegErrno();
  if (s.journal().mode() == CommitMode::kAnyFsync) {
    s.journal().CommitAll();
  } else {
    struct stat st {};
    if (fstat(fd, &st) != 0) return NegErrno();
    s.journal().CommitDir(st.st_dev, st.st_ino);
  }
  s.Sweep();
  return 0;
}

int Utimens(const char* path, const struct timespec tv[2], fuse_file_info* fi) {
  LazyFsState& s = S();
  s.Delay();
  if (const FileId id = OpenFile(s, path, fi); id != 0) {
    auto fd = s.backing().Fd(id);
    if (!fd) return Neg(fd.code());
    return futimens(*fd, tv) == 0 ? 0 : NegErrno();
  }
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  return utimensat(s.root_fd(), At(*rel), tv, AT_SYMLINK_NOFOLLOW) == 0
             ? 0
             : NegErrno();
}

// fallocate would have to go through the cache (sizes are held data); it
// is refused, and glibc's posix_fallocate falls back to writing zeros.
int Fallocate(const char*, int, off_t, off_t, fuse_file_info*) {
  return -EOPNOTSUPP;
}

int Setxattr(const char* path, const char* name, const char* value, size_t size,
             int flags) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  const std::string full = Full(s.backing_dir(), *rel);
  return lsetxattr(full.c_str(), name, value, size, flags) == 0 ? 0
                                                                : NegErrno();
}

int Getxattr(const char* path, const char* name, char* value, size_t size) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  const std::string full = Full(s.backing_dir(), *rel);
  const ssize_t n = lgetxattr(full.c_str(), name, value, size);
  return n >= 0 ? static_cast<int>(n) : NegErrno();
}

int Listxattr(const char* path, char* list, size_t size) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  const std::string full = Full(s.backing_dir(), *rel);
  const ssize_t n = llistxattr(full.c_str(), list, size);
  return n >= 0 ? static_cast<int>(n) : NegErrno();
}

int Removexattr(const char* path, const char* name) {
  LazyFsState& s = S();
  s.Delay();
  auto rel = s.Rel(path);
  if (!rel) return -ENOENT;
  const std::string full = Full(s.backing_dir(), *rel);
  return lremovexattr(full.c_str(), name) == 0 ? 0 : NegErrno();
}

fuse_operations MakeOperations() {
  fuse_operations ops{};
  ops.init = Init;
  ops.getattr = Getattr;
  ops.readlink = Readlink;
  ops.mknod = Mknod;
  ops.mkdir = Mkdir;
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.symlink = Symlink;
  ops.rename = Rename;
  ops.link = Link;
  ops.chmod = Chmod;
  ops.chown = Chown;
  ops.truncate = Truncate;
  ops.open = Open;
  ops.read = Read;
  ops.write = Write;
  ops.statfs = Statfs;
  ops.flush = Flush;
  ops.release = Release;
  ops.fsync = Fsync;
  ops.setxattr = Setxattr;
  ops.getxattr = Getxattr;
  ops.listxattr = Listxattr;
  ops.removexattr = Removexattr;
  ops.opendir = Opendir;
  ops.readdir = Readdir;
  ops.releasedir = Releasedir;
  ops.fsyncdir = Fsyncdir;
  ops.create = Create;
  ops.utimens = Utimens;
  ops.fallocate = Fallocate;
  return ops;
}

}  // namespace

const fuse_operations* LazyFsOperations() {
  static const fuse_operations ops = MakeOperations();
  return &ops;
}

}  // namespace faultline::nemesis::disk

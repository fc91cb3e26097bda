// faultline-lazyfs: the lazy file system daemon of the durability faults
// (nemesis/disk/lazy_fs.h, nemesis/disk/README.md), and its control client.
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "nemesis/disk/lazy_fs.h"

namespace {

using faultline::nemesis::disk::CommitMode;
using faultline::nemesis::disk::LazyFsOptions;

constexpr const char* kHelp =
    R"(faultline-lazyfs: a FUSE file system that loses exactly what was never fsynced.

Usage:
  faultline-lazyfs mount --backing DIR --trash DIR --control SOCKET --mount DIR
                   [--log FILE] [--namespace dir-fsync|any-fsync]
                   [--max-held-mb N] [--writeback-ms N]
  faultline-lazyfs ctl SOCKET COMMAND [ARGS...]
  faultline-lazyfs --help

mount: mounts DIR (absolute, existing, empty) over the backing DIR and runs in
  the foreground until SIGTERM/SIGINT (then it unmounts and exits 0; held
  writes are DISCARDED, not synced, and namespace changes not durable yet are
  undone, as by `drop`) or until unmounted from outside (exit 0). Setup errors:
  message on stderr, exit 2, nothing left mounted. The control socket is
  created once the mount is up: a `status` answer means ready.
  File type in /proc/mounts: fuse.faultline-lazyfs (allow_other,
  default_permissions, no attribute or entry caching).
  Data: writes are held in memory until fsync/fdatasync of the file (or
  O_SYNC/O_DSYNC, or the memory bound --max-held-mb, default 64, past which
  the oldest are written back), or, with --writeback-ms N, once they were
  held N ms (as a kernel writes expired dirty pages back; written back is not
  fsynced, but a crash no longer loses it). close is no sync; fallocate:
  EOPNOTSUPP.
  Namespace (create, mkdir, unlink, rmdir, rename, link, symlink): applied at
  once and journaled; durable on fsync of the directory holding the new name
  (dir-fsync, the default; rename: the destination's directory) or on any
  fsync (any-fsync), or by `sync`. Unlinked and replaced files are kept in the
  trash DIR (same file system as the backing, never visible) until then.
  Owner, mode, times and xattrs are durable at once.
  --log FILE: appends one line per control command and answer, and errors.

ctl: sends the words as one line to the daemon's socket, prints the JSON
  answer; exit 0 when "ok":true, 1 when false, 2 when it cannot connect.
  Commands:
    status             settings and counters (namespace_pending, ...)
    drop               crash: forget held writes, undo pending namespace ops
                       ("undone_ops", "undo_errors")
    torn SEED          crash: keep a random prefix of each file's held writes
                       (maybe cutting one), undo pending namespace ops
    flip SEED N        flip N bits of held data and write it all back
    fsync-error N      the next N syncs fail with EIO (0 cancels)
    disk-full on|off   writes that grow a file fail with ENOSPC
    latency MS         sleep MS before every file system operation
    heal               fsync-error 0, disk-full off, latency 0
    sync               write everything back, make all namespace ops durable
)";

int Usage(const std::string& message) {
  std::cerr << "faultline-lazyfs: " << message
            << "\n(faultline-lazyfs --help for usage)\n";
  return 2;
}

int Mount(const std::vector<std::string>& args) {
  LazyFsOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) return Usage(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--backing") {
      o.backing = v;
    } else if (a == "--trash") {
      o.trash = v;
    } else if (a == "--control") {
      o.control = v;
    } else if (a == "--mount") {
      o.mount = v;
    } else if (a == "--log") {
      o.log = v;
    } else if (a == "--namespace") {
      if (v == "dir-fsync") {
        o.namespace_mode = CommitMode::kDirFsync;
      } else if (v == "any-fsync") {
        o.namespace_mode = CommitMode::kAnyFsync;
      } else {
        return Usage("--namespace takes dir-fsync or any-fsync, got " + v);
      }
    } else if (a == "--max-held-mb") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n == 0 || n > (1u << 20)) {
        return Usage("--max-held-mb takes a number of MiB >= 1, got " + v);
      }
      o.max_held_mb = n;
    } else if (a == "--writeback-ms") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n > 3600000) {
        return Usage("--writeback-ms takes 0..3600000 ms, got " + v);
      }
      o.writeback_ms = n;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (o.backing.empty() || o.trash.empty() || o.control.empty() ||
      o.mount.empty()) {
    return Usage("mount needs --backing, --trash, --control and --mount");
  }
  return faultline::nemesis::disk::RunLazyFs(o);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage("expected mount or ctl");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kHelp;
    return 0;
  }
  if (args[0] == "mount") {
    return Mount(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (args[0] == "ctl") {
    if (args.size() < 3) return Usage("ctl SOCKET COMMAND [ARGS...]");
    std::string line;
    for (std::size_t i = 2; i < args.size(); ++i) {
      if (i > 2) line += ' ';
      line += args[i];
    }
    return faultline::nemesis::disk::RunLazyFsCtl(args[1], line);
  }
  return Usage("unknown mode " + args[0]);
}

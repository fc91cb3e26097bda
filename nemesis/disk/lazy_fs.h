// LazyFs: the lazy file system daemon (faultline-lazyfs, issue 17). A FUSE
// file system (libfuse3, high-level API, multi-threaded loop) mounted over a
// node's data directory that passes every operation through to a backing
// directory, except that
//  - file data goes through a WriteCache (write_cache.h) over a PosixBacking:
//    writes are held until the file's fsync/fdatasync (or O_SYNC/O_DSYNC,
//    or the memory bound), so `drop` loses exactly what was never synced;
//  - create, mkdir, unlink, rmdir, rename, link and symlink go through a
//    NamespaceJournal (namespace_journal.h): applied at once, undone by
//    `drop` and `torn` unless a directory fsync (or any fsync, by mode) or
//    `sync` made them durable;
//  - owner, mode, times and xattrs pass through and are durable at once.
// A control socket (control.h protocol) triggers the faults; see README.md
// in this folder for the exact semantics.
//
// Only lazy_fs*.cpp and programs/lazyfs_main.cpp include libfuse headers;
// they are built into the faultline-lazyfs executable only.
#pragma once

#include <cstdint>
#include <string>

#include "nemesis/disk/namespace_journal.h"

namespace faultline::nemesis::disk {

struct LazyFsOptions {
  std::string backing;  // absolute, existing directory
  std::string trash;    // absolute, existing, on the backing's file system
  std::string control;  // the control socket's path (created after mount)
  std::string mount;    // absolute, existing, empty directory
  std::string log;      // appended to when not empty
  CommitMode namespace_mode = CommitMode::kDirFsync;
  std::uint64_t max_held_mb = 64;
  // > 0: held writes older than this are written back (not fsynced), as a
  // kernel writes dirty pages back once they expire; 0: only fsync, O_SYNC
  // and the memory bound write back.
  std::uint64_t writeback_ms = 0;
};

// Mounts, serves the control socket and the file system until SIGTERM or
// SIGINT (then unmounts; held writes are discarded, and pending namespace
// records undone, as by `drop`) or until unmounted from outside. Returns
// the process exit code: 0, or 2 after a setup error (printed on stderr;
// nothing is left mounted). Call once per process, before any other thread
// starts (it blocks SIGTERM/SIGINT/SIGHUP and reads them from a signalfd).
int RunLazyFs(const LazyFsOptions& options);

// Client mode: sends `line` to the daemon at `socket`, prints the answer
// line on stdout. Returns 0 when the answer has "ok":true, 1 when not, 2
// when it cannot connect or read an answer (message on stderr).
int RunLazyFsCtl(const std::string& socket, const std::string& line);

}  // namespace faultline::nemesis::disk

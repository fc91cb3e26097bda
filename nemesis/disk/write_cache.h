// WriteCache: the pure core of the lazy file system (durability faults). It
// keeps, per file, every write the program made that is not durable yet, in the
// order made, and decides what reaches the Backing (backing.h) and when.
// The FUSE daemon (lazy_fs.h) calls it for write, read, getattr,
// truncate, fsync and fdatasync, and the control file (control.h) for the
// faults.
//
// What is durable when (see README.md in this folder):
//  - Write(durable=false) and Truncate are held: they reach the backing only
//    by Sync of that file, by SyncAll, by the memory bound (oldest first, as
//    a kernel writes dirty pages back whenever it likes), or by Torn/FlipBits.
//  - Write(durable=true) (O_SYNC / O_DSYNC) first writes back the file's
//    held writes in order, then this one, then fsyncs the backing: a durable
//    write never reaches the disk ahead of an earlier write to its file.
//  - Sync(file) writes the file's held writes back in order, then fsyncs
//    the backing; the file is durable only when both succeeded.
//  - Nothing orders writes of different files.
//  - Read and Size show the backing overlaid by the held writes in order.
//
// Failures of a sync, injected (FailNextSyncs) or from the backing, follow
// Linux's "a failed fsync loses the dirty pages": the file's held writes not
// written back yet are dropped (reads show the backing from then on) and the
// error is reported once; the next Sync starts afresh. A write-back forced by
// the memory bound that fails also drops that write, and the next Sync of
// its file reports EIO (once), after writing the rest back.
//
// Thread-safety: every method may be called from any thread (one mutex
// inside; Backing calls are made with it held).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "nemesis/disk/backing.h"

namespace faultline::nemesis::disk {

struct CacheOptions {
  // The memory bound: when the held data exceeds either limit, the oldest
  // held writes (of any file) are written back until it does not.
  std::uint64_t max_held_bytes = 64ull << 20;
  std::uint64_t max_held_writes = 1u << 16;
  // When a write was held, for WriteBackOlderThan (injected for tests).
  std::function<std::chrono::steady_clock::time_point()> clock = [] {
    return std::chrono::steady_clock::now();
  };
};

// One flipped bit: byte `offset` of `file`, bit `bit` (0 = least
// significant).
struct FlipSite {
  FileId file = 0;
  std::uint64_t offset = 0;
  int bit = 0;
};

// What a crash-style operation did, for the ledger and the log. A held
// truncate counts as a write of 0 bytes. `errors` counts write-backs the
// backing refused (their data is lost); `first_error` describes the first.
struct CrashReport {
  std::string op;           // "drop", "torn" or "flip"
  std::uint64_t files = 0;  // files that held writes
  std::uint64_t dropped_writes = 0;
  std::uint64_t dropped_bytes = 0;
  std::uint64_t kept_writes = 0;  // written back whole
  std::uint64_t kept_bytes = 0;   // including the kept part of cut writes
  std::uint64_t cut_writes = 0;   // torn: written back as a prefix only
  std::uint64_t flipped_bits = 0;
  std::vector<FlipSite> flips;  // by file, then offset, then bit
  std::uint64_t errors = 0;
  std::string first_error;
};

// The settings and counters, for the control file's `status`.
struct CacheStatus {
  std::uint64_t files = 0;  // files holding writes
  std::uint64_t held_writes = 0;
  std::uint64_t held_bytes = 0;
  std::uint64_t sync_errors_pending = 0;  // FailNextSyncs left
  bool disk_full = false;
  std::uint64_t latency_ms = 0;
  // Since construction:
  std::uint64_t syncs = 0;         // Sync calls and durable writes
  std::uint64_t failed_syncs = 0;  // of which failed (injected or not)
  std::uint64_t written_back_writes = 0;
  std::uint64_t written_back_bytes = 0;
  std::uint64_t evicted_writes = 0;  // written back by the memory bound
  std::uint64_t lost_writes = 0;     // dropped by failed syncs/write-backs
  std::uint64_t lost_bytes = 0;
};

class WriteCache {
 public:
  // `backing` must outlive the cache; all I/O to the files the cache is
  // used for must go through it while it holds writes for them.
  explicit WriteCache(Backing& backing, CacheOptions options = {});
  WriteCache(const WriteCache&) = delete;
  WriteCache& operator=(const WriteCache&) = delete;

  // Writes `data` at `offset`. Held unless `durable` (see the top). With
  // disk-full on, a write that would make the file larger fails with ENOSPC
  // and changes nothing. A durable write is a sync: it consumes an injected
  // failure (EIO; then the file's held writes and this write are dropped).
  // An empty write does nothing.
  IoStatus Write(FileId file, std::uint64_t offset, std::string_view data,
                 bool durable = false);
  // Up to `len` bytes at `offset` as the program sees them; shorter only at
  // the end of the file.
  IoResult<std::string> Read(FileId file, std::uint64_t offset,
                             std::size_t len);
  IoResult<std::uint64_t> Size(FileId file);
  // Sets the size (cut, or extend with zeros); held like a write. Never
  // ENOSPC (extending makes a hole, which takes no space).
  IoStatus Truncate(FileId file, std::uint64_t size);

  // fsync / fdatasync (the same here: sizes are data). Consumes one
  // injected failure if any is pending: then returns EIO and drops the
  // file's held writes, none of which reaches the backing.
  IoStatus Sync(FileId file);
  // Writes back every held write and fsyncs each file that had any; for the
  // daemon (unmount, the `sync` control command), so injected failures do
  // not apply. Returns the first error; the other files are still synced.
  IoStatus SyncAll();

  // Writes back (oldest first, as the memory bound does) every held write
  // that was held at least `age` ago, as a kernel writes dirty pages back
  // once they are older than its expiry (Linux: dirty_expire_centisecs,
  // 30 s by default); the daemon calls it periodically when asked to. A
  // crash then loses only what is younger. Returns how many were written.
  std::uint64_t WriteBackOlderThan(std::chrono::milliseconds age);

  // Crash-style faults. After each, nothing is held.
  // Forgets every held write: what survives is what the backing has.
  CrashReport DropAll();
  // Per file (in FileId order), keeps a uniformly random prefix of its held
  // writes (0..all), writes it back in order and drops the rest; when some
  // are dropped, the first dropped write may be cut instead: a random number
  // of its first bytes (0..size-1) is written back. The same seed and the
  // same held writes give the same outcome.
  CrashReport Torn(std::uint64_t seed);
  // Flips `n` distinct random bits (fewer if less data is held) in the data
  // of held writes, then writes every held write back in order, so the
  // corrupted data reaches the backing; the running program reads it too.
  // A flip in bytes that a later held write overwrites does not show.
  // Seeded like Torn.
  CrashReport FlipBits(std::uint64_t seed, std::uint64_t n);

  // The next `n` syncs (Sync calls and durable writes) fail with EIO;
  // replaces a count still pending, 0 cancels.
  void FailNextSyncs(std::uint64_t n);
  void SetDiskFull(bool on);
  // Stored and reported only; the daemon sleeps this long per operation.
  void SetLatency(std::chrono::milliseconds latency);
  std::chrono::milliseconds Latency() const;

  // Drops the held writes of `file` without counting them as lost: for a
  // file whose last name is gone and that no one has open any more.
  void Discard(FileId file);

  // Held writes (truncates included) of `file`.
  std::size_t HeldWrites(FileId file) const;
  CacheStatus Status() const;

 private:
  struct Op {
    std::uint64_t seq = 0;
    bool truncate = false;
    std::uint64_t offset = 0;  // the new size for a truncate
    std::string data;
    std::chrono::steady_clock::time_point held_at;  // set by Hold
  };
  struct File {
    std::deque<Op> ops;
    std::uint64_t size = 0;  // as the program sees it
  };

  IoResult<File*> HeldFile(FileId file);
  void Hold(File& f, Op op);
  void PopFront(File& f);
  IoStatus WriteBack(FileId file, const Op& op);
  IoStatus WriteBackAll(FileId file, File& f);
  // Sync with mu_ held; `f` is the file's entry or null; `injectable`:
  // whether a pending injected failure applies.
  IoStatus SyncLocked(FileId file, File* f, bool injectable);
  void Lose(File& f);
  void Forget(FileId file);
  // With mu_ held: no file holds anything any more (after a crash fault).
  void ForgetAll();
  void Evict();
  // With mu_ held: writes back the oldest held write while `more(it)`
  // says so; returns how many.
  std::uint64_t WriteBackOldest(const std::function<bool(const Op&)>& more);

  Backing& backing_;
  const CacheOptions options_;
  mutable std::mutex mu_;
  std::map<FileId, File> files_;                    // only files holding writes
  std::map<FileId, std::string> writeback_errors_;  // reported by next Sync
  std::uint64_t next_seq_ = 0;
  std::uint64_t held_bytes_ = 0;
  std::uint64_t held_writes_ = 0;
  std::uint64_t fail_syncs_ = 0;
  bool disk_full_ = false;
  std::chrono::milliseconds latency_{0};
  CacheStatus counters_;
};

}  // namespace faultline::nemesis::disk

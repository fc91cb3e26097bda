// Durable state of one raftkv node: a write-ahead log (entries and
// HardState records) and the latest state-machine snapshot, in one data
// directory. All file access goes through Env (env.h) so tests can crash the
// "disk" at any write boundary (fault_env.h).
//
// On-disk contract (details in wal.h and snapshot_file.h):
// - WAL segments `wal-<16 hex seq>-<16 hex first index>.log`, replayed in
//   seq order: a sequence of records, each
//   [u32 length][u32 crc32c of type+payload][u8 type][payload]. Types:
//   entry, hard state, truncate-from (entries >= index are void), snapshot
//   mark, commit. Every call writes one batch of records closed by a commit
//   record, with one write(); a batch without its commit is void, so each
//   Save is atomic. A record whose length runs past the end of the last
//   segment, or a bad record with nothing but zeros or nothing at all after
//   it, ends the log: the torn tail is cut (file truncated) on Open and its
//   records counted in Recovered::torn_records. Any other bad record is
//   corruption and fails Open. (Bit rot in the very last record cannot be
//   told apart from a torn write and is cut like one.)
// - A new segment is started when the current one exceeds
//   Options::segment_bytes and by SaveSnapshot; each starts with the current
//   HardState. Segments whose entries are all covered by the snapshot are
//   deleted by SaveSnapshot.
// - `snapshot` written as `snapshot.tmp`, fsynced, renamed, directory
//   fsynced: a crash leaves the old or the new snapshot, never a mix.
// - Save() with sync=true returns only after fsync: the node may then reply,
//   vote or acknowledge. Restart recovers exactly the synced state, plus
//   possibly whole later calls, never part of one.
// - After any write error the storage is broken: every later call fails
//   (a half-written batch must not be followed by more data). The node
//   should exit; Open on restart cuts the damage.
//
// Thread-safety: none; one owner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/raft/types.h"
#include "targets/raftkv/storage/env.h"

namespace faultline::raftkv::storage {

struct Recovered {
  raft::HardState hard_state;
  std::optional<raft::Snapshot> snapshot;
  std::vector<raft::Entry> entries;  // contiguous, after the snapshot
  int torn_records = 0;              // records cut from a torn tail
};

class DiskStorage {
 public:
  struct Options {
    std::uint64_t segment_bytes = 64ull << 20;  // roll past this size
  };

  // Opens (creating if absent) the data directory and recovers its state.
  // Returns nullptr and sets *error on unrecoverable damage (e.g. a
  // checksum failure that is not at the tail, a gap in indexes).
  static std::unique_ptr<DiskStorage> Open(const std::string& dir, Env* env,
                                           Recovered* out, std::string* error);
  static std::unique_ptr<DiskStorage> Open(const std::string& dir, Env* env,
                                           const Options& options,
                                           Recovered* out, std::string* error);
  ~DiskStorage();

  // Appends `entries` (replacing any stored entries from
  // entries.front().index on) and then `hs` if set. With sync, fsyncs before
  // returning (also earlier unsynced calls). Returns "" on success, else an
  // error message. Entries <= the snapshot index are skipped (the snapshot
  // covers them). Preconditions (else an error, nothing written): entries
  // have consecutive indexes; the first one kept is <= LastIndex() + 1.
  std::string Save(const std::optional<raft::HardState>& hs,
                   const std::vector<raft::Entry>& entries, bool sync);
  // Makes earlier unsynced calls durable, atomically replaces the snapshot,
  // then applies Raft's rule to the log: if it holds (index, term) the
  // entries after index are kept, else the whole log is discarded. Entries
  // <= index are dropped (a new segment is started; whole segments that are
  // fully covered are deleted). A snapshot older than the current one is an
  // error. Returns "" on success. A driver persisting a Ready calls this
  // before Save() of the same Ready's entries.
  std::string SaveSnapshot(const raft::Snapshot& snap);

  // What is stored: snapshot index (0 if none) and last log index
  // (== snapshot index when the log is empty).
  raft::Index SnapshotIndex() const;
  raft::Index LastIndex() const;

  struct Impl;

 private:
  explicit DiskStorage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::raftkv::storage

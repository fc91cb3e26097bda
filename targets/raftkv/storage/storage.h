// Durable state of one raftkv node: a write-ahead log (entries and
// HardState records) and the latest state-machine snapshot, in one data
// directory. All file access goes through Env (env.h) so tests can crash the
// "disk" at any write boundary.
//
// On-disk contract:
// - WAL segments `wal-<16 hex first index>.log`: a sequence of records, each
//   [u32 length][u32 crc32c of type+payload][u8 type][payload]. Types:
//   entry, hard state, truncate-from (entries >= index are void). A record
//   whose length runs past the end of the file or whose checksum does not
//   match ends the log: the torn tail is cut (file truncated) on Open and
//   counted in Recovered::torn_records.
// - `snapshot` written as `snapshot.tmp`, fsynced, renamed, directory
//   fsynced: a crash leaves the old or the new snapshot, never a mix.
// - Save() with sync=true returns only after fsync: the node may then reply,
//   vote or acknowledge.
//
// Thread-safety: none; one owner.
#pragma once

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
  // Opens (creating if absent) the data directory and recovers its state.
  // Returns nullptr and sets *error on unrecoverable damage (e.g. a
  // checksum failure that is not at the tail, a gap in indexes).
  static std::unique_ptr<DiskStorage> Open(const std::string& dir, Env* env,
                                           Recovered* out, std::string* error);
  ~DiskStorage();

  // Appends `entries` (replacing any stored entries from
  // entries.front().index on) and then `hs` if set. With sync, fsyncs before
  // returning. Returns "" on success, else an error message.
  std::string Save(const std::optional<raft::HardState>& hs,
                   const std::vector<raft::Entry>& entries, bool sync);
  // Atomically replaces the snapshot, then drops WAL entries <= its index
  // (whole segments that are fully covered are deleted; a new segment is
  // started). Returns "" on success.
  std::string SaveSnapshot(const raft::Snapshot& snap);

  struct Impl;

 private:
  explicit DiskStorage(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::raftkv::storage

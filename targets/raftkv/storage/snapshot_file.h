// The `snapshot` file of a data directory:
//   "RKVSNAP1", u64 index, u64 term, u32 voter count, u64 voters...,
//   u64 data length, data, u32 crc32c of everything before it.
// Written as `snapshot.tmp`, fsynced, renamed over `snapshot`, directory
// fsynced: a crash leaves the old or the new snapshot, never a mix.
//
// Functions are thread-compatible (one writer per directory).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "targets/raftkv/raft/types.h"
#include "targets/raftkv/storage/env.h"

namespace faultline::raftkv::storage {

inline constexpr char kSnapshotFile[] = "snapshot";
inline constexpr char kSnapshotTmpFile[] = "snapshot.tmp";

// Serialization (whole file image) and its inverse; Decode returns "" or
// what is wrong (bad magic, truncated, checksum mismatch).
std::string EncodeSnapshotFile(const raft::Snapshot& snap);
std::string DecodeSnapshotFile(std::string_view bytes, raft::Snapshot* out);

// Atomically replaces dir/snapshot. On error `*renamed` tells whether the
// rename may have happened (the on-disk snapshot is then unknown).
std::string WriteSnapshotFile(Env* env, const std::string& dir,
                              const raft::Snapshot& snap, bool* renamed);

// Reads dir/snapshot; *out is empty if there is none.
std::string ReadSnapshotFile(Env* env, const std::string& dir,
                             std::optional<raft::Snapshot>* out);

}  // namespace faultline::raftkv::storage

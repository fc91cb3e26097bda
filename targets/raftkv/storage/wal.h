// WAL record format and segment scanning (the storage.h on-disk contract).
//
// Record: [u32 length][u32 crc32c][u8 type][payload], little-endian;
// length = 1 + payload size; the crc covers type and payload. Payloads:
//   kEntry      u64 term, u64 index, u8 entry type, data (rest)
//   kHardState  u64 term, u64 vote, u64 commit
//   kTruncate   u64 index: entries >= index are void
//   kSnapshot   u64 index, u64 term, u8 kept: a snapshot at (index, term)
//               was made durable before this record; the log then held
//               (index, term) and entries after index were kept (kept=1),
//               or it did not and the whole log was discarded (kept=0). The
//               decision is recorded because the entry it was based on may
//               live in a segment deleted later.
//   kCommit     u32 number of records in the batch it closes
// Records are written in batches (one per DiskStorage call) closed by a
// kCommit record; a batch without its commit never happened. That makes
// every Save atomic even when the write carrying it is torn.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::storage::wal {

enum class RecordType : std::uint8_t {
  kEntry = 1,
  kHardState = 2,
  kTruncate = 3,
  kSnapshot = 4,
  kCommit = 5,
};

constexpr std::size_t kHeaderSize = 8;                // length + crc
constexpr std::uint32_t kMaxRecordLength = 1u << 30;  // sanity bound

// Append one encoded record to *buf.
void AppendEntry(std::string* buf, const raft::Entry& e);
void AppendHardState(std::string* buf, const raft::HardState& hs);
void AppendTruncate(std::string* buf, raft::Index from);
void AppendSnapshotMark(std::string* buf, raft::Index index, raft::Term term,
                        bool kept);
void AppendCommit(std::string* buf, std::uint32_t records);

// One decoded record; only the fields of its type are set.
struct Record {
  RecordType type = RecordType::kCommit;
  raft::Entry entry;           // kEntry
  raft::HardState hard_state;  // kHardState
  raft::Index index = 0;       // kTruncate, kSnapshot
  raft::Term term = 0;         // kSnapshot
  bool kept = false;           // kSnapshot
};

struct SegmentScan {
  std::vector<Record> records;  // records of committed batches, in order,
                                // without the commit records
  std::size_t valid_bytes = 0;  // end of the last commit record
  int cut_records = 0;  // records after valid_bytes (uncommitted, or torn)
};

// Decodes a segment's bytes. Bytes after the last complete batch are a torn
// tail when `is_last` and they cannot hide valid data: the bad record's
// length runs past the end, or it is the final record, or everything from it
// on is zero. Those are reported in cut_records/valid_bytes (the caller cuts
// the file). Anything else (a bad record followed by more data, a torn tail
// in a segment that is not the last, a malformed payload, a commit whose
// count is wrong) returns an error naming the offset. Returns "" on success.
std::string ScanSegment(std::string_view data, bool is_last, SegmentScan* out);

// "wal-<16 hex seq>-<16 hex first index>.log". `seq` orders segments;
// `first` is the index the next entry had to have when it was created.
std::string SegmentName(std::uint64_t seq, raft::Index first);
bool ParseSegmentName(std::string_view name, std::uint64_t* seq,
                      raft::Index* first);

// Little-endian helpers shared with snapshot_file.cpp.
void PutU32(std::string* buf, std::uint32_t v);
void PutU64(std::string* buf, std::uint64_t v);
std::uint32_t GetU32(const char* p);
std::uint64_t GetU64(const char* p);

}  // namespace faultline::raftkv::storage::wal

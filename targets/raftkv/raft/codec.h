// Binary encoding of Raft messages (peer wire format) and of log entries,
// hard states and snapshot metadata (storage records).
//
// Format: fixed-width little-endian integers, strings as u32 length + bytes,
// vectors as u32 count + elements. A message starts with a format version
// byte (kCodecVersion). Decoding is total: any input (truncated, garbage,
// trailing bytes, out-of-range enum values, absurd counts) makes the Decode
// function return false without crashing or allocating more than the input
// could describe; *out is unspecified then.
//
// Thread-safety: pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft {

inline constexpr std::uint8_t kCodecVersion = 1;

std::string EncodeMessage(const Message& m);
bool DecodeMessage(std::string_view in, Message* out);

std::string EncodeEntry(const Entry& e);
bool DecodeEntry(std::string_view in, Entry* out);

std::string EncodeHardState(const HardState& hs);
bool DecodeHardState(std::string_view in, HardState* out);

std::string EncodeSnapshotMeta(const SnapshotMeta& meta);
bool DecodeSnapshotMeta(std::string_view in, SnapshotMeta* out);

}  // namespace faultline::raftkv::raft

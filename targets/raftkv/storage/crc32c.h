// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78), as used
// by iSCSI, ext4 and leveldb. Software implementation, slicing-by-8.
//
// Pure functions; thread-safe (the tables are built at compile time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace faultline::raftkv::storage::crc32c {

// Returns the CRC-32C of `data` appended to a stream whose CRC so far is
// `crc` (0 for the empty stream): Extend(Value(a), b) == Value(a + b).
std::uint32_t Extend(std::uint32_t crc, const void* data, std::size_t n);

inline std::uint32_t Value(const void* data, std::size_t n) {
  return Extend(0, data, n);
}
inline std::uint32_t Value(std::string_view s) {
  return Extend(0, s.data(), s.size());
}

}  // namespace faultline::raftkv::storage::crc32c

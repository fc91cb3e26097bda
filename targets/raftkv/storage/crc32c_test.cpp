#include "targets/raftkv/storage/crc32c.h"

#include <catch2/catch.hpp>
#include <string>

namespace faultline::raftkv::storage {
namespace {

// Check values from RFC 3720 (iSCSI), appendix B.4, and the common
// "123456789" check value of CRC-32C.
TEST_CASE("crc32c matches published check values", "[storage][crc32c]") {
  CHECK(crc32c::Value("123456789") == 0xE3069283u);
  CHECK(crc32c::Value(std::string(32, '\0')) == 0x8A9136AAu);
  CHECK(crc32c::Value(std::string(32, '\xff')) == 0x62A8AB43u);
  std::string inc, dec;
  for (int i = 0; i < 32; ++i) {
    inc.push_back(static_cast<char>(i));
    dec.push_back(static_cast<char>(31 - i));
  }
  CHECK(crc32c::Value(inc) == 0x46DD794Eu);
  CHECK(crc32c::Value(dec) == 0x113FDB5Cu);
  CHECK(crc32c::Value("") == 0u);
}

TEST_CASE("crc32c Extend composes at every split point", "[storage][crc32c]") {
  std::string data;
  for (int i = 0; i < 100; ++i) data.push_back(static_cast<char>(i * 37 + 11));
  const std::uint32_t whole = crc32c::Value(data);
  for (std::size_t cut = 0; cut <= data.size(); ++cut) {
    std::uint32_t a = crc32c::Value(data.data(), cut);
    CHECK(crc32c::Extend(a, data.data() + cut, data.size() - cut) == whole);
  }
  data[50] ^= 1;
  CHECK(crc32c::Value(data) != whole);
}

}  // namespace
}  // namespace faultline::raftkv::storage

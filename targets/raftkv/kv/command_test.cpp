#include <catch2/catch.hpp>
#include <limits>
#include <random>

#include "targets/raftkv/kv/state_machine.h"

namespace kv = faultline::raftkv::kv;

namespace {

std::vector<kv::Command> Samples() {
  constexpr auto kMaxU = std::numeric_limits<std::uint64_t>::max();
  constexpr auto kMinI = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMaxI = std::numeric_limits<std::int64_t>::max();
  return {
      kv::MakePut("k", "v"),
      kv::MakePut("", ""),
      kv::MakePut(std::string("\0\xff", 2), std::string(100000, 'z')),
      kv::MakeDelete("gone"),
      kv::MakeCas("k", "old", "new"),
      kv::MakeCas("k", "", ""),
      kv::MakeAcquire("lock", "owner-1", 1500),
      kv::MakeAcquire("lock", "owner-1", kMaxI, kMaxU),
      kv::MakeAcquire("lock", "o", kMinI, 0),
      kv::MakeRenew("lock", "owner-1", 42, 1),
      kv::MakeRelease("lock", "owner-1", kMaxU),
      kv::MakeExpire("lock", 7, 9),
      kv::MakeFencedPut("res", 0, "x"),
      kv::MakeFencedPut("res", kMaxU, "y"),
  };
}

}  // namespace

TEST_CASE("command: encode/decode round trip", "[kv][codec]") {
  for (const auto& c : Samples()) {
    auto d = kv::Decode(kv::Encode(c));
    REQUIRE(d);
    CHECK(*d == c);
  }
}

TEST_CASE("command: encoding is compact", "[kv][codec]") {
  CHECK(kv::Encode(kv::MakePut("k", "v")).size() == 6);
  CHECK(kv::Encode(kv::MakeExpire("L", 300, 5)).size() <= 8);
}

TEST_CASE("command: decode rejects malformed bytes", "[kv][codec]") {
  CHECK_FALSE(kv::Decode(""));
  CHECK_FALSE(kv::Decode(std::string("\x02\x01\x00\x00", 4)));  // version
  CHECK_FALSE(kv::Decode(std::string("\x01\x00\x00\x00", 4)));  // op 0
  CHECK_FALSE(kv::Decode(std::string("\x01\x09\x00\x00", 4)));  // op 9
  // A forged huge length must not allocate or crash.
  CHECK_FALSE(kv::Decode(std::string("\x01\x01\xff\xff\xff\xff\x0f", 7)));
  // An overlong varint (11 bytes).
  CHECK_FALSE(kv::Decode(std::string("\x01\x07\x01L") +
                         std::string(10, '\xff') + "\x01\x01"));
  for (const auto& c : Samples()) {
    std::string e = kv::Encode(c);
    for (std::size_t n = 0; n < e.size(); ++n) {
      CHECK_FALSE(kv::Decode(e.substr(0, n)));
    }
    CHECK_FALSE(kv::Decode(e + '\0'));
  }
}

TEST_CASE("command: random bytes never crash the decoder", "[kv][codec]") {
  std::mt19937_64 rng(7);
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string g(rng() % 24, '\0');
    for (char& c : g) c = static_cast<char>(rng());
    if (!g.empty()) g[0] = '\x01';
    if (g.size() > 1) g[1] = static_cast<char>(1 + rng() % 8);
    if (auto c = kv::Decode(g)) {
      ++decoded;
      CHECK(kv::Encode(*c) == g);  // canonical: what decodes re-encodes
    }
  }
  CHECK(decoded > 0);
}

TEST_CASE("command: non-minimal varints are rejected", "[kv][codec]") {
  // Expire "L" token=1 generation=1, with token written as 0x81 0x00.
  CHECK(kv::Decode(std::string("\x01\x07\x01L\x01\x01", 6)));
  CHECK_FALSE(kv::Decode(std::string("\x01\x07\x01L\x81\x00\x01", 7)));
}

#include "targets/etcd/base64.h"

#include <catch2/catch.hpp>
#include <string>

namespace faultline::targets::etcd {
namespace {

TEST_CASE("base64 encodes the RFC 4648 test vectors", "[etcd][base64]") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foob") == "Zm9vYg==");
  CHECK(Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
  // As captured from etcd: "/faultline/x" and "3".
  CHECK(Base64Encode("/faultline/x") == "L2ZhdWx0bGluZS94");
  CHECK(Base64Encode("3") == "Mw==");
}

TEST_CASE("base64 decodes padded and unpadded text", "[etcd][base64]") {
  CHECK(Base64Decode("") == std::string());
  CHECK(Base64Decode("Zg==") == std::string("f"));
  CHECK(Base64Decode("Zg") == std::string("f"));
  CHECK(Base64Decode("Zm8=") == std::string("fo"));
  CHECK(Base64Decode("Zm9vYmFy") == std::string("foobar"));
  CHECK(Base64Decode("L2ZhdWx0bGluZS94") == std::string("/faultline/x"));
}

TEST_CASE("base64 round-trips every byte value", "[etcd][base64]") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (std::size_t len = 0; len <= all.size(); len += 37) {
    std::string part = all.substr(0, len);
    auto back = Base64Decode(Base64Encode(part));
    REQUIRE(back.has_value());
    CHECK(*back == part);
  }
  // '+' and '/' are in the standard alphabet.
  CHECK(Base64Encode("\xfb\xff") == "+/8=");
  CHECK(Base64Decode("+/8=") == std::string("\xfb\xff"));
}

TEST_CASE("base64 rejects malformed text", "[etcd][base64]") {
  CHECK_FALSE(Base64Decode("Z").has_value());        // impossible length
  CHECK_FALSE(Base64Decode("Zm9v!").has_value());    // outside the alphabet
  CHECK_FALSE(Base64Decode("Zm=v").has_value());     // padding in the middle
  CHECK_FALSE(Base64Decode("Zm9v Zg").has_value());  // whitespace
  CHECK_FALSE(Base64Decode("Zh==").has_value());     // non-zero spare bits
  CHECK_FALSE(Base64Decode("-_8=").has_value());     // URL-safe alphabet
}

}  // namespace
}  // namespace faultline::targets::etcd

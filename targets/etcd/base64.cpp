#include "targets/etcd/base64.h"

#include <array>
#include <cstdint>

namespace faultline::targets::etcd {
namespace {

constexpr char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Sextet of a base64 character, or -1.
constexpr std::array<int, 256> MakeDecodeTable() {
  std::array<int, 256> table{};
  for (int& entry : table) entry = -1;
  for (int i = 0; i < 64; ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = i;
  }
  return table;
}

constexpr std::array<int, 256> kDecode = MakeDecodeTable();

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    std::uint32_t group =
        (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
        (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
        std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
    out.push_back(kAlphabet[group & 63]);
  }
  std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t group = std::uint32_t{static_cast<unsigned char>(bytes[i])}
                          << 16;
    if (rest == 2) {
      group |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    }
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(group >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  // Strip up to two trailing '=' (only when the padded length is whole).
  std::size_t len = text.size();
  if (len % 4 == 0 && len > 0) {
    if (text[len - 1] == '=') --len;
    if (text[len - 1] == '=') --len;
  }
  if (len % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(len / 4 * 3 + 2);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < len; ++i) {
    int v = kDecode[static_cast<unsigned char>(text[i])];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero in canonical encodings; etcd always emits
  // canonical text, so a non-zero remainder means corruption.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace faultline::targets::etcd

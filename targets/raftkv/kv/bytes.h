// Internal to kv/: little binary writer/reader used by the command codec and
// the snapshot format. Varints are LEB128 (7 bits per byte, at most 10
// bytes); strings are a varint length then the bytes. The reader never
// reads past its input and reports every malformation as `false`.
//
// Thread-safety: none (plain values).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace faultline::raftkv::kv::bytes {

inline void PutVarint(std::string* out, std::uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Zigzag, so small negative numbers stay short.
inline void PutSigned(std::string* out, std::int64_t v) {
  PutVarint(out, (static_cast<std::uint64_t>(v) << 1) ^
                     static_cast<std::uint64_t>(v >> 63));
}

inline void PutString(std::string* out, std::string_view s) {
  PutVarint(out, s.size());
  out->append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool Byte(std::uint8_t* b) {
    if (pos_ >= in_.size()) return false;
    *b = static_cast<std::uint8_t>(in_[pos_++]);
    return true;
  }

  // Rejects encodings past 64 bits and non-minimal ones, so every value
  // has exactly one encoding.
  bool Varint(std::uint64_t* v) {
    std::uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      std::uint8_t b = 0;
      if (!Byte(&b)) return false;
      std::uint64_t part = b & 0x7f;
      if (shift == 63 && part > 1) return false;
      result |= part << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return false;  // non-minimal encoding
        *v = result;
        return true;
      }
    }
    return false;
  }

  bool Signed(std::int64_t* v) {
    std::uint64_t u = 0;
    if (!Varint(&u)) return false;
    *v = static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1);
    return true;
  }

  // The length is checked against the remaining input before any copy, so
  // a forged length cannot make us allocate.
  bool String(std::string* s) {
    std::uint64_t n = 0;
    if (!Varint(&n) || n > remaining()) return false;
    s->assign(in_.substr(pos_, static_cast<std::size_t>(n)));
    pos_ += static_cast<std::size_t>(n);
    return true;
  }

  bool Raw(std::size_t n, std::string_view* out) {
    if (n > remaining()) return false;
    *out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  std::size_t remaining() const { return in_.size() - pos_; }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
};

// FNV-1a, 64 bits: detects corruption of a snapshot body (not an
// adversary).
inline std::uint64_t Fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace faultline::raftkv::kv::bytes

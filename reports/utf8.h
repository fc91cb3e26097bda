// Text helpers the report builders share. Pure.
#pragma once

#include <cstddef>
#include <string>

namespace faultline::reports {

// `s` cut to at most `max` bytes on a UTF-8 boundary, with "…" appended;
// `s` itself when it fits.
inline std::string CutUtf8(std::string s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  s += "\xE2\x80\xA6";
  return s;
}

}  // namespace faultline::reports

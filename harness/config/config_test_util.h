// Helpers shared by the config unit tests (test code only, never linked into
// the tool): load a config text as file "t.yaml", expect exactly one error,
// look for a substring.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"

namespace faultline::harness::config_testing {

// Loads `text` as if it were the file "t.yaml".
inline LoadResult Load(const std::string& text, const Overrides& o = {}) {
  return LoadConfigText(text, "t.yaml", o);
}

// The one error a config must produce; fails the test otherwise.
inline ConfigError OnlyError(const LoadResult& r) {
  INFO(r.FormatErrors());
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors.size() == 1);
  return r.errors[0];
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace faultline::harness::config_testing

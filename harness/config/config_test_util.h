// Helpers shared by the config unit tests (test code only, never linked into
// the tool): load a config text as file "t.yaml", expect it to load, expect
// exactly one error at a place with certain words, load a description back.
// Every helper says on failure which YAML it loaded and what the loader said.
#pragma once

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

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

// The source tree, for the shipped configs and the test fixtures.
inline std::string SourceDir() { return FAULTLINE_SOURCE_DIR; }

// Loads `text` and requires that it loads (the case stops otherwise).
inline LoadResult MustLoad(const std::string& text, const Overrides& o = {}) {
  INFO("config:\n" << text);
  LoadResult r = Load(text, o);
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  return r;
}

// Loads `text` and checks that it loads (the case goes on otherwise).
inline bool CheckLoads(const std::string& text, const Overrides& o = {}) {
  INFO("config:\n" << text);
  LoadResult r = Load(text, o);
  INFO(r.FormatErrors());
  CHECK(r.ok());
  return r.ok();
}

// What ExpectError checks of the one error: each field that is set, and each
// piece of the lists, is one assertion; unset fields are not looked at (the
// `= {}` let a designated initializer name only the fields it checks).
struct ExpectedError {
  std::optional<std::string> file = {};
  std::optional<int> line = {};  // 0: the error has no place (a flag's)
  std::optional<int> column = {};
  std::optional<std::string> message = {};    // the whole message
  std::vector<std::string> message_has = {};  // pieces the message contains
  std::optional<std::string> hint = {};       // the whole hint
  std::vector<std::string> hint_has = {};     // pieces the hint contains
};

// Loads `text` (with `o`), requires exactly one error and checks it against
// `want`; returns the error for any further checks.
inline ConfigError ExpectError(const std::string& text,
                               const ExpectedError& want,
                               const Overrides& o = {}) {
  INFO("config:\n" << text);
  const ConfigError e = OnlyError(Load(text, o));
  INFO("error: " << e.Format());
  if (want.file) CHECK(e.file == *want.file);
  if (want.line) CHECK(e.line == *want.line);
  if (want.column) CHECK(e.column == *want.column);
  if (want.message) CHECK(e.message == *want.message);
  for (const std::string& piece : want.message_has) {
    CHECK_THAT(e.message, Catch::Matchers::Contains(piece));
  }
  if (want.hint) CHECK(e.hint == *want.hint);
  for (const std::string& piece : want.hint_has) {
    CHECK_THAT(e.hint, Catch::Matchers::Contains(piece));
  }
  return e;
}

// Loads the description of `spec` back, as the file `file`, and requires
// that it loads.
inline LoadResult MustLoadDescribed(const TestSpec& spec,
                                    const std::string& file = "described") {
  const std::string yaml = DescribeSpec(spec);
  INFO("described:\n" << yaml);
  LoadResult back = LoadConfigText(yaml, file, {});
  INFO(back.FormatErrors());
  REQUIRE(back.ok());
  return back;
}

// Checks that the description of `spec` loads back to `spec` itself, but
// for the seed, now written down, and the file it was read from.
inline void CheckRoundTrip(const TestSpec& spec) {
  INFO("described:\n" << DescribeSpec(spec));
  const LoadResult back = MustLoadDescribed(spec);
  TestSpec expected = spec;
  expected.seed_given = true;
  expected.source_file = "described";
  CHECK(*back.spec == expected);
}

}  // namespace faultline::harness::config_testing

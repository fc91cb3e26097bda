// ParseJsonl on texts large enough for its two-thread path: the same
// events, errors, warnings and line numbers as one thread would give.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/history_io.h"
#include "checkers/value.h"

namespace fc = faultline::checkers;

namespace {

// `n` events (>= 8 MB of text with padding) of process i % 7, key "k<i%13>",
// value i; the lines in `blank_after` are followed by a blank line.
std::string BigText(int n, const std::vector<int>& blank_after = {}) {
  std::string text;
  std::string pad(100, 'x');
  for (int i = 0; i < n; ++i) {
    fc::Event e;
    e.index = i;
    e.time = i;
    e.process = i % 7;
    e.type = i % 2 == 0 ? fc::EventType::kInvoke : fc::EventType::kOk;
    e.f = "write";
    e.key = fc::Value::String("k" + std::to_string(i % 13));
    e.value = fc::Value::Int(i);
    e.extra.emplace_back("pad", fc::Value::String(pad));
    text += fc::ToJsonLine(e);
    text += '\n';
    for (int b : blank_after) {
      if (b == i) text += "  \r\n";
    }
  }
  return text;
}

constexpr int kEvents = 80000;  // about 12 MB

}  // namespace

TEST_CASE("ParseJsonl two halves: every event in order", "[jsonl]") {
  std::string text = BigText(kEvents, {10, 70000});
  REQUIRE(text.size() > (8u << 20));
  fc::ReadResult r = fc::ParseJsonl(text);
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == static_cast<std::size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) {
    const fc::Event& e = r.history[static_cast<std::size_t>(i)];
    REQUIRE(e.index == i);
    REQUIRE(e.value.as_int() == i);
    REQUIRE(e.key.as_string() == "k" + std::to_string(i % 13));
  }
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] == "ignored 2 blank line(s), the first at line 12");
}

TEST_CASE("ParseJsonl two halves: errors keep their line numbers", "[jsonl]") {
  std::string text = BigText(kEvents, {5});
  SECTION("an error in the second half") {
    // Line 70002 (one blank line before it) holds event 70000.
    std::string bad = "\"index\":70000,";
    std::size_t at = text.find(bad);
    REQUIRE(at != std::string::npos);
    text.replace(at, bad.size(), "\"index\":70007,");
    fc::ReadResult r = fc::ParseJsonl(text);
    REQUIRE_FALSE(r.ok);
    CHECK(r.error.line == 70002);
    CHECK(r.error.column == 10);  // the value of "index"
    CHECK(r.error.message.find("\"index\" is 70007 but this is event number "
                               "70000") != std::string::npos);
    CHECK(r.history.size() == 70000);
  }
  SECTION("errors in both halves: the first wins") {
    for (const char* idx : {"\"index\":3,", "\"index\":70000,"}) {
      std::size_t at = text.find(idx);
      REQUIRE(at != std::string::npos);
      text.replace(at, std::string(idx).size(), "\"index\":\"x\",");
    }
    fc::ReadResult r = fc::ParseJsonl(text);
    REQUIRE_FALSE(r.ok);
    CHECK(r.error.line == 4);
    CHECK(r.history.size() == 3);
  }
  SECTION("a truncated last line is ignored with a warning") {
    text += "{\"index\":80000,\"process\":1,\"ty";
    fc::ReadResult r = fc::ParseJsonl(text);
    REQUIRE(r.ok);
    CHECK(r.history.size() == static_cast<std::size_t>(kEvents));
    REQUIRE(r.warnings.size() == 2);
    CHECK(r.warnings[0].rfind("line 80002: ignored a truncated last line", 0) ==
          0);
    CHECK(r.warnings[1] == "ignored 1 blank line(s), the first at line 7");
  }
}

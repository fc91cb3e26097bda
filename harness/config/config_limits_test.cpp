// Unit tests of the config loader's limits: a long list of one YAML alias
// gives one error per repetition (not one per pair), printed errors stop at
// kMaxPrintedErrors with a count of the rest, a NUL byte and nesting deeper
// than kMaxConfigDepth are named with their line and column, and
// cluster.controller_ip must be an IPv4 address. The time a long list takes
// is measured by bench/config_aliases.sh, not here.
#include <catch2/catch.hpp>
#include <string>

#include "harness/config/config.h"
#include "harness/config/config_test_util.h"

using namespace faultline::harness;
using namespace faultline::harness::config_testing;

namespace {

// `n` copies of ", *a".
std::string Aliases(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += ", *a";
  return out;
}

const char* const kHead =
    "name: limits\ncluster:\n  nodes: 3\ntarget:\n  name: raftkv\n"
    "workload:\n  name: register\nnemesis:\n";

// How many errors' messages contain `piece`.
int Count(const LoadResult& r, const std::string& piece) {
  int n = 0;
  for (const ConfigError& e : r.errors) n += Contains(e.message, piece) ? 1 : 0;
  return n;
}

// How many lines of `text` contain `piece`.
int Lines(const std::string& text, const std::string& piece) {
  int n = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (text.substr(start, end - start).find(piece) != std::string::npos) ++n;
    start = end + 1;
  }
  return n;
}

}  // namespace

TEST_CASE("a plain fault repeated by an alias is one error per repetition",
          "[config][limits]") {
  // Each repetition used to be reported against every earlier one: 200
  // aliases gave 20,100 errors (and 100,000 took minutes).
  const LoadResult r =
      Load(std::string(kHead) + "  faults: [{fault: kill}, &a pause" +
           Aliases(200) + "]\n");
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors.size() == 200);
  CHECK(Count(r, "fault \"pause\" is listed twice") == 200);
  CHECK(r.errors[0].message.starts_with("nemesis.faults[2]: "));
  CHECK(r.errors.back().message.starts_with("nemesis.faults[201]: "));
}

TEST_CASE("a together group repeated by an alias is one error per member",
          "[config][limits]") {
  const LoadResult r =
      Load(std::string(kHead) + "  faults: [{together: [&a {fault: clock}" +
           Aliases(200) + "]}]\n");
  REQUIRE_FALSE(r.ok());
  CHECK(Count(r, "`together` has clock and clock") == 200);
  CHECK(r.errors.size() == 200);
  // pause then kill then pause: the third clashes with the first, once.
  const LoadResult p = Load(std::string(kHead) +
                            "  faults: [{together: [pause, kill, pause]}]\n");
  REQUIRE(p.errors.size() == 2);
  CHECK(Contains(p.errors[0].message,
                 "`together` has pause and kill, which "
                 "act on the same processes"));
  CHECK(Contains(p.errors[1].message,
                 "`together` has pause and pause; a group applies each kind "
                 "once"));
}

TEST_CASE("printed errors stop at 50 with a count of the rest",
          "[config][limits]") {
  // One error per entry: a bad duration, no hint (one line each).
  auto bad_durations = [](int n) {
    return Load(std::string(kHead) +
                "  faults: [&a {fault: pause, duration: -1}" + Aliases(n - 1) +
                "]\n");
  };
  const LoadResult many = bad_durations(121);
  REQUIRE(many.errors.size() == 121);  // every error is kept
  const std::string text = many.FormatErrors();
  CHECK(Lines(text, ": error: ") == 50);
  CHECK(Lines(text, "nemesis.faults[49].duration") == 1);
  CHECK(Lines(text, "nemesis.faults[50].duration") == 0);
  CHECK(text.ends_with("\n... and 71 more errors\n"));
  CHECK(Lines(text, "") == 51);

  const LoadResult fifty_one = bad_durations(51);
  CHECK(fifty_one.FormatErrors().ends_with("\n... and 1 more error\n"));
  const LoadResult fifty = bad_durations(50);
  CHECK(Lines(fifty.FormatErrors(), ": error: ") == 50);
  CHECK_FALSE(Contains(fifty.FormatErrors(), "more error"));

  // Errors with hints: 50 errors and their hints, then the count.
  const LoadResult hinted = Load(
      std::string(kHead) + "  faults: [&a partition" + Aliases(80) + "]\n");
  REQUIRE(hinted.errors.size() == 80);
  const std::string h = hinted.FormatErrors();
  CHECK(Lines(h, ": error: ") == 50);
  CHECK(Lines(h, "  hint: ") == 50);
  CHECK(h.ends_with("\n... and 30 more errors\n"));
  CHECK(kMaxPrintedErrors == 50);
}

TEST_CASE("a NUL byte is named with its line and column", "[config][limits]") {
  using namespace std::string_literals;
  ExpectError("name: a\0b\ncluster: {nodes: 3}\n"s,
              {.file = "t.yaml",
               .line = 1,
               .column = 8,
               .message = "the file contains a NUL byte; a config is plain "
                          "text",
               .hint_has = {"UTF-8"}});
  ExpectError("name: a\ncluster:\n  nodes: 3\n\0"s,
              {.line = 4, .column = 1, .message_has = {"NUL byte"}});
  // UTF-16 text: NULs everywhere; the first one is reported.
  ExpectError("n\0a\0m\0e\0"s,
              {.line = 1, .column = 2, .message_has = {"NUL byte"}});
  // The formatted error has file:line:column.
  const LoadResult r = Load("name: a\n  \0\n"s);
  CHECK(r.FormatErrors() ==
        "t.yaml:2:3: error: the file contains a NUL byte; a config is plain "
        "text\n  hint: is it a binary file or saved as UTF-16? save it as "
        "UTF-8 text\n");
}

TEST_CASE("nesting deeper than 64 levels is named where it happens",
          "[config][limits]") {
  const std::string deep_message =
      "lists and mappings are nested more than 64 levels deep here; a config "
      "needs only a few levels";
  // Flow: the root mapping is level 1, `x`'s list level 2, so the 64th `[`
  // (column 3 + 64) opens level 65.
  auto flow = [](int n) {
    return "name: a\nx: " + std::string(n, '[') + std::string(n, ']') + "\n";
  };
  ExpectError(flow(100), {.line = 2,
                          .column = 67,
                          .message = deep_message,
                          .hint_has = {"never closed"}});
  // Unclosed and deeper than yaml-cpp's own limit (which said "bad file"):
  // yaml-cpp reads each unclosed `[` as a list holding a one-pair mapping,
  // two levels per bracket, so the place is on that line, further left.
  const ConfigError unclosed =
      ExpectError("name: a\nx: " + std::string(100000, '['),
                  {.line = 2, .message = deep_message});
  CHECK(unclosed.column > 3);
  CHECK(unclosed.column <= 67);
  // Block: one more level per line.
  std::string block = "name: a\nx:\n";
  for (int i = 1; i < 3000; ++i) block += std::string(i, ' ') + "-\n";
  ExpectError(block, {.line = 66, .column = 65, .message = deep_message});
  // 64 levels is deep but allowed: the error is the schema's.
  ExpectError(flow(63),
              {.line = 2, .column = 1, .message_has = {"unknown key `x`"}});
}

TEST_CASE("cluster.controller_ip must be an IPv4 address", "[config][limits]") {
  auto ssh = [](const std::string& ip) {
    return "name: s\ntarget: {name: raftkv}\ncluster:\n  provider: ssh\n"
           "  nodes: [10.77.70.2, 10.77.70.3, 10.77.70.4]\n"
           "  controller_ip: " +
           ip + "\n";
  };
  CHECK(MustLoad(ssh("10.77.70.1")).spec->cluster.controller_ip ==
        "10.77.70.1");
  CHECK(MustLoad(ssh("\"192.168.0.254\"")).spec->cluster.controller_ip ==
        "192.168.0.254");
  for (const char* bad :
       {"controller", "10.0.0.256", "10.0.0", "10.0.0.1/24", "10.0.0.1.5",
        "::1", "10.0.0.01x", "+10.0.0.1", "10..0.1", "0x0a.0.0.1"}) {
    INFO(bad);
    ExpectError(ssh(bad), {.line = 6,
                           .column = 18,
                           .message_has = {"cluster.controller_ip: expected "
                                           "an IPv4 address like 10.0.0.1",
                                           bad},
                           .hint_has = {"as the nodes see it"}});
  }
  ExpectError(ssh("[10.0.0.1]"),
              {.line = 6,
               .message_has = {"cluster.controller_ip: expected "
                               "text"}});
}

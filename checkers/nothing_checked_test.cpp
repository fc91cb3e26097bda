// "Nothing was tested" never passes: text that holds no client operation
// reads into an empty history that the linearizability checker calls
// unknown, and text read as a Porcupine log without a single event is a read
// error with its line and column.
#include <catch2/catch.hpp>
#include <string>

#include "checkers/history_io.h"
#include "checkers/linearizable.h"

namespace faultline::checkers {
namespace {

// Reads `text` in `format` and, when it reads, checks it as cas-register.
Verdict ReadAndCheck(const std::string& text, HistoryFormat format) {
  ReadResult r = ParseHistory(text, format);
  REQUIRE(r.ok);
  LinearizableOptions o;
  o.model = "cas-register";
  return CheckLinearizable(r.history, o);
}

TEST_CASE("empty and blank histories are unknown in every format",
          "[linearizable][nothing-checked]") {
  for (HistoryFormat f : {HistoryFormat::kJsonl, HistoryFormat::kJepsenEdn,
                          HistoryFormat::kPorcupine}) {
    for (const char* text : {"", "\n", "\n  \n\t\n", "\r\n\r\n"}) {
      INFO("format " << static_cast<int>(f) << ", text of "
                     << std::string(text).size() << " bytes");
      Verdict v = ReadAndCheck(text, f);
      CHECK(v.validity == Validity::kUnknown);
      CHECK(v.summary.find("nothing was checked") != std::string::npos);
      CHECK(ExitCode(v.validity) == 2);
    }
  }
}

TEST_CASE("a Porcupine log without one event is a read error",
          "[porcupine][nothing-checked]") {
  // Prose, as in a README: every line is skipped as noise.
  ReadResult prose = ParsePorcupineLog(
      "\n# faultline\n\nA fault-injection harness.\n| a | b |\n");
  REQUIRE_FALSE(prose.ok);
  CHECK(prose.error.line == 2);  // the first non-blank line
  CHECK(prose.error.column == 1);
  CHECK(prose.error.message.find("no history event in 3 non-blank line(s)") !=
        std::string::npos);
  CHECK(prose.error.message.find("jepsen.util") != std::string::npos);
  CHECK(prose.error.message.find("--format jsonl") != std::string::npos);

  // A faultline JSONL history is not a Porcupine log either.
  ReadResult jsonl =
      ParsePorcupineLog("  \n[1]\n\"invoke\"\n");  // no line starts with '{'
  REQUIRE_FALSE(jsonl.ok);
  CHECK(jsonl.error.line == 2);

  // A JSON object line is taken for an EDN map and fails; the message
  // names the format that reads it.
  ReadResult json = ParsePorcupineLog(
      "{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\","
      "\"value\":null}\n");
  REQUIRE_FALSE(json.ok);
  CHECK(json.error.line == 1);
  CHECK(json.error.message.find("looks like JSON: a faultline history needs "
                                "--format jsonl") != std::string::npos);

  // Only other jepsen.util messages: still no event.
  ReadResult chatter = ParsePorcupineLog(
      "INFO  jepsen.util - starting\nINFO  jepsen.core - Running test\n");
  REQUIRE_FALSE(chatter.ok);
  CHECK(chatter.error.line == 1);

  // One event among the noise reads, with the skipped lines counted.
  ReadResult one = ParsePorcupineLog(
      "# notes\nINFO  jepsen.util - 0\t:invoke\t:read\tnil\n# more\n");
  REQUIRE(one.ok);
  CHECK(one.history.size() == 1);
  REQUIRE(one.warnings.size() == 1);
  CHECK(one.warnings[0].find("skipped 2") != std::string::npos);
}

TEST_CASE("a Porcupine log of nemesis events only is unknown",
          "[porcupine][nothing-checked]") {
  Verdict v = ReadAndCheck(
      "INFO  jepsen.util - :nemesis\t:info\t:start\tnil\n"
      "INFO  jepsen.util - :nemesis\t:info\t:stop\tnil\n",
      HistoryFormat::kPorcupine);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary ==
        "no client operation in the history (2 event(s)), so nothing was "
        "checked");
}

}  // namespace
}  // namespace faultline::checkers

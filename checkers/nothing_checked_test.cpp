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

TEST_CASE("a history in which no operation completed ok is unknown",
          "[linearizable][nothing-checked]") {
  // An info write, a failed read and a read that never completed: nothing
  // was observed.
  const std::string text =
      R"({"index":0,"time":1000,"process":0,"type":"invoke","f":"write","key":"k","value":1}
{"index":1,"time":2000,"process":0,"type":"info","f":"write","key":"k","value":1,"error":"timeout"}
{"index":2,"time":3000,"process":1,"type":"invoke","f":"read","key":"k","value":null}
{"index":3,"time":4000,"process":1,"type":"fail","f":"read","key":"k","value":null}
{"index":4,"time":5000,"process":2,"type":"invoke","f":"read","key":"k","value":null}
)";
  Verdict v = ReadAndCheck(text, HistoryFormat::kJsonl);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary.find("no client operation completed ok") !=
        std::string::npos);
  CHECK(ExitCode(v.validity) == 2);
  // One ok read makes it a check again.
  Verdict one_ok = ReadAndCheck(
      text +
          R"({"index":5,"time":6000,"process":2,"type":"ok","f":"read","key":"k","value":null}
)",
      HistoryFormat::kJsonl);
  CHECK(one_ok.validity == Validity::kValid);
}

}  // namespace
}  // namespace faultline::checkers

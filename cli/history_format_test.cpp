// Choosing the history reader for `faultline check`: by extension, by the
// first line, and the suggestion when the chosen reader fails; on the
// Porcupine fixtures of checkers/testdata and on small texts.
#include "cli/history_format.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace faultline::cli {
namespace {

using checkers::HistoryFormat;

std::string Fixture(const std::string& name) {
  auto path = std::filesystem::path(__FILE__).parent_path().parent_path() /
              "checkers" / "testdata" / "porcupine" / name;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char kJsonl[] =
    "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"read\","
    "\"value\":null}\n";
const char kEdn[] = "{:type :invoke, :f :read, :process 0, :value nil}\n";

TEST_CASE("the extension decides when it is known", "[history-format]") {
  CHECK(DetectHistoryFormat("a/history.jsonl", kEdn).format ==
        HistoryFormat::kJsonl);
  CHECK(DetectHistoryFormat("h.JSON", "").format == HistoryFormat::kJsonl);
  CHECK(DetectHistoryFormat("h.edn", kJsonl).format ==
        HistoryFormat::kJepsenEdn);
  CHECK(DetectHistoryFormat("etcd.log", "").format ==
        HistoryFormat::kPorcupine);
  CHECK(DetectHistoryFormat("h.edn", "").reason == "the extension .edn");
}

TEST_CASE("otherwise the first non-blank line decides", "[history-format]") {
  CHECK(DetectHistoryFormat("h", std::string("\n  \n") + kJsonl).format ==
        HistoryFormat::kJsonl);
  CHECK(DetectHistoryFormat("h", kEdn).format == HistoryFormat::kJepsenEdn);
  CHECK(DetectHistoryFormat("h.txt", kEdn).format == HistoryFormat::kPorcupine);
  CHECK(DetectHistoryFormat("h", "[{:type :ok}]").format ==
        HistoryFormat::kJepsenEdn);
  CHECK(DetectHistoryFormat("dir.d/h", "; comment\n").format ==
        HistoryFormat::kJepsenEdn);
  CHECK(DetectHistoryFormat("h", "INFO  jepsen.util - 0\t:invoke\t:read\tnil")
            .format == HistoryFormat::kPorcupine);
  CHECK(DetectHistoryFormat("h", "").format == HistoryFormat::kJsonl);
  CHECK(DetectHistoryFormat("h", "").reason == "the default");
}

TEST_CASE("Porcupine's fixtures are detected as porcupine",
          "[history-format]") {
  for (const char* name :
       {"etcd_000_head.log", "kv_c01_ok_head.txt", "kv_c01_bad.txt"}) {
    INFO(name);
    std::string text = Fixture(name);
    FormatChoice c = DetectHistoryFormat(name, text);
    CHECK(c.format == HistoryFormat::kPorcupine);
    checkers::ReadResult r = checkers::ParseHistory(text, c.format);
    CHECK(r.ok);
    CHECK_FALSE(r.history.empty());
  }
  // Renamed without an extension, the Jepsen log is still recognised.
  CHECK(DetectHistoryFormat("etcd", Fixture("etcd_000_head.log")).format ==
        HistoryFormat::kPorcupine);
}

TEST_CASE("a failed read suggests the reader that works", "[history-format]") {
  CHECK(SuggestFormat(kJsonl, HistoryFormat::kJepsenEdn) ==
        HistoryFormat::kJsonl);
  CHECK(SuggestFormat(kEdn, HistoryFormat::kJsonl) ==
        HistoryFormat::kJepsenEdn);
  CHECK(SuggestFormat(Fixture("etcd_000_head.log"), HistoryFormat::kJsonl) ==
        HistoryFormat::kPorcupine);
  CHECK_FALSE(SuggestFormat("no history here\n", HistoryFormat::kJsonl));
  CHECK(FormatFromName("edn") == HistoryFormat::kJepsenEdn);
  CHECK_FALSE(FormatFromName("csv"));
  for (auto f : {HistoryFormat::kJsonl, HistoryFormat::kJepsenEdn,
                 HistoryFormat::kPorcupine}) {
    CHECK(FormatFromName(FormatName(f)) == f);
  }
}

}  // namespace
}  // namespace faultline::cli

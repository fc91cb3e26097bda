// Histories written the way Jepsen writes them (checkers/testdata/jepsen/):
// file order over :time, read invokes with values, error positions in files
// with comments and pretty-printed maps, cut-off vectors, byte-order marks,
// integers beyond 64 bits, transactions under a non-transactional model and
// reading as a stream. JSONL is held to the same rules where they apply.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/history_io.h"
#include "checkers/linearizable.h"
#include "checkers/txn/txn.h"
#include "checkers/verdict.h"

namespace fc = faultline::checkers;
using fc::Event;
using fc::History;
using fc::ReadResult;
using fc::Value;

namespace {

std::string Jepsen(const std::string& name) {
  auto path = std::filesystem::path(__FILE__).parent_path() / "testdata" /
              "jepsen" / name;
  std::ifstream in(path, std::ios::binary);
  INFO("fixture " << path.string());
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Jsonl(const History& h) {
  std::string text;
  for (const Event& e : h) text += fc::ToJsonLine(e) + "\n";
  return text;
}

fc::Validity Linearizable(const History& h, const char* model) {
  fc::LinearizableOptions o;
  o.model = model;
  fc::Verdict v = fc::CheckLinearizable(h, o);
  INFO(v.summary);
  return v.validity;
}

// The 1-based line of the first line of `text` that contains `needle`.
std::int64_t LineWith(const std::string& text, const std::string& needle) {
  std::size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 +
         std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
}

}  // namespace

TEST_CASE("Jepsen EDN: the file's order, not :time, orders the history",
          "[edn][jepsen]") {
  const std::string text = Jepsen("register_lines.edn");
  ReadResult r = fc::ParseJepsenEdn(text, {});
  INFO(fc::ToString(r.error));
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == 14);
  CHECK(r.warnings.empty());
  // Lines are the file's: two comment lines first, one before index 5 and
  // one before index 6.
  CHECK(r.history[0].line == 3);
  CHECK(r.history[5].line == 9);
  CHECK(r.history[6].line == 11);
  // The completion at line 11 is 50 us earlier than the invoke before it:
  // not an error, a note.
  CHECK_FALSE(fc::CheckWellFormed(r.history, "register").has_value());
  fc::WellFormedChecker wf("register");
  for (const Event& e : r.history) REQUIRE_FALSE(wf.Add(e).has_value());
  REQUIRE(wf.time_note().has_value());
  CHECK(wf.time_note()->line == 11);
  CHECK(wf.time_note()->message.find("50000 ns earlier than time 2000000 at "
                                     "line 9") != std::string::npos);
  // In file order the read of 1 overlaps the write of 2: valid, as Knossos
  // says. Ordered by time, the write completes before the read is invoked
  // and the read of 1 is stale: the checker must not have used the times.
  CHECK(Linearizable(r.history, "register") == fc::Validity::kValid);
  History by_time = r.history;
  std::stable_sort(by_time.begin(), by_time.end(),
                   [](const Event& a, const Event& b) {
                     return a.time.value_or(0) < b.time.value_or(0);
                   });
  for (std::size_t i = 0; i < by_time.size(); ++i) {
    by_time[i].index = static_cast<std::int64_t>(i);
  }
  CHECK(Linearizable(by_time, "register") == fc::Validity::kInvalid);
  // The same history as JSONL reads and checks the same way.
  ReadResult j = fc::ParseJsonl(Jsonl(r.history));
  REQUIRE(j.ok);
  CHECK_FALSE(fc::CheckWellFormed(j.history, "register").has_value());
  CHECK(Linearizable(j.history, "register") == fc::Validity::kValid);
  // The read invoked with a value (line 13) was accepted and ignored.
  CHECK(r.history[8].value == Value::Int(2));
}

TEST_CASE("Jepsen EDN: one top-level vector of pretty-printed maps",
          "[edn][jepsen]") {
  const std::string text = Jepsen("register_vector.edn");
  ReadResult r = fc::ParseJepsenEdn(text, {});
  INFO(fc::ToString(r.error));
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == 6);
  CHECK(r.warnings.empty());
  for (std::size_t i = 0; i < 6; ++i) {
    CHECK(r.history[i].line == static_cast<std::int64_t>(1 + 6 * i));
  }
  CHECK(Linearizable(r.history, "cas-register") == fc::Validity::kValid);

  SECTION("an error inside a map is at the field's line and column") {
    std::string bad = text;
    const std::string was = "  :process 1,\n  :time 1300000";
    bad.replace(bad.find(was), was.size(), "  :process -3,\n  :time 1300000");
    ReadResult e = fc::ParseJepsenEdn(bad, {});
    REQUIRE_FALSE(e.ok);
    CHECK(e.error.line == LineWith(bad, ":process -3"));
    CHECK(e.error.column == 12);
    CHECK(e.error.message.find(":process must be") != std::string::npos);
  }
  SECTION("a well-formedness error cites the map's first line") {
    std::string bad = text;
    const std::string was = " {:type :ok,\n  :f :cas,";
    bad.replace(bad.find(was), was.size(), " {:type :ok,\n  :f :read,");
    ReadResult e = fc::ParseJepsenEdn(bad, {});
    REQUIRE(e.ok);
    auto err = fc::CheckWellFormed(e.history, "cas-register");
    REQUIRE(err);
    CHECK(err->line == 31);
    CHECK(err->message.find("invoke at line 25 is cas") != std::string::npos);
  }
  SECTION("cut part-way: the complete ops, with a warning") {
    // Inside the fifth map, then between maps, then before the ']'.
    struct Cut {
      std::string until;
      std::size_t events;
      const char* says;
    };
    for (const Cut& cut :
         {Cut{"  :value [1 2],\n  :process 0,\n  :time 1400000", 4,
              "line 25: ignored a truncated last op map"},
          Cut{" {:type :invoke,\n  :f :cas", 4, "line 25: ignored"},
          Cut{"  :index 3}\n", 4, "line 1: the vector of op maps"},
          Cut{"  :index 5}", 6, "line 1: the vector of op maps"}}) {
      std::string cut_text =
          text.substr(0, text.find(cut.until) + cut.until.size());
      INFO(cut_text);
      ReadResult c = fc::ParseJepsenEdn(cut_text, {});
      INFO(fc::ToString(c.error));
      REQUIRE(c.ok);
      CHECK(c.history.size() == cut.events);
      REQUIRE(c.warnings.size() == 1);
      CHECK(c.warnings[0].find(cut.says) != std::string::npos);
      CHECK(c.warnings[0].find("killed writer") != std::string::npos);
    }
  }
  SECTION("a map not closed before other maps is an error, not a cut") {
    std::string bad = text;
    const std::string was = "  :index 2}";
    bad.replace(bad.find(was), was.size(), "  :index 2");
    ReadResult e = fc::ParseJepsenEdn(bad, {});
    REQUIRE_FALSE(e.ok);
    INFO(fc::ToString(e.error));
    CHECK(e.error.line == 36);  // the ']' that cannot close it
    CHECK(e.error.message.find("the map that starts at line 13, column 2 is "
                               "not closed") != std::string::npos);
    // Cut short instead, the same file is not taken for a killed writer's:
    // op maps start after the one left open.
    std::string cut = bad.substr(0, bad.find("  :index 4}"));
    ReadResult c = fc::ParseJepsenEdn(cut, {});
    REQUIRE_FALSE(c.ok);
    CHECK(c.error.line == 13);
    CHECK(c.error.message.find("another op map starts at line 19") !=
          std::string::npos);
  }
}

TEST_CASE("Jepsen EDN and JSONL: byte-order mark, long lines, big integers",
          "[edn][jsonl][jepsen]") {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string edn = Jepsen("register_lines.edn");
  ReadResult e = fc::ParseJepsenEdn(bom + edn, {});
  REQUIRE(e.ok);
  CHECK(e.history.size() == 14);
  CHECK(e.history[0].line == 3);
  const std::string jsonl = Jsonl(e.history);
  ReadResult j = fc::ParseJsonl(bom + jsonl);
  REQUIRE(j.ok);
  CHECK(j.history.size() == 14);
  std::size_t streamed = 0;
  ReadResult s = fc::StreamJsonl(bom + jsonl, [&](const Event&, std::size_t) {
    ++streamed;
    return true;
  });
  CHECK(s.ok);
  CHECK(streamed == 14);
  // A byte-order mark anywhere else is not skipped.
  CHECK_FALSE(fc::ParseJsonl(jsonl + bom + "\n").ok);
  // Columns on line 1 count from after the mark.
  ReadResult col = fc::ParseJsonl(bom + "{\"index\":x}\n");
  REQUIRE_FALSE(col.ok);
  CHECK(col.error.column == 10);

  // Integers beyond 64 bits say so, in both formats, at the number.
  ReadResult big_edn = fc::ParseJepsenEdn(
      "{:type :invoke, :f :write, :value 18446744073709551616, :process 0}\n",
      {});
  REQUIRE_FALSE(big_edn.ok);
  CHECK(big_edn.error.column == 35);
  CHECK(big_edn.error.message.find("does not fit in 64 bits") !=
        std::string::npos);
  ReadResult big_jsonl = fc::ParseJsonl(
      "{\"index\":0,\"time\":99999999999999999999,\"process\":0,\"type\":"
      "\"invoke\",\"f\":\"read\",\"value\":null}\n");
  REQUIRE_FALSE(big_jsonl.ok);
  CHECK(big_jsonl.error.column == 19);
  CHECK(big_jsonl.error.message.find("does not fit in 64 bits") !=
        std::string::npos);

  // A line of garbage longer than the probe (1 MiB) is refused at its
  // column without the rest of it being looked at; a long valid line reads.
  const std::string head = "{\"index\":0,\"process\":0,\"type\":\"x\"";
  ReadResult g = fc::ParseJsonl(head + std::string(3u << 20, 'y') + "\nmore\n");
  REQUIRE_FALSE(g.ok);
  CHECK(g.error.line == 1);
  CHECK(g.error.column == 31);  // the "type" that is not one
  // Cut short on its last line instead (no newline), it is a killed
  // writer's last line: ignored with the usual warning.
  ReadResult cut = fc::ParseJsonl(head.substr(0, head.size() - 1) +
                                  std::string(3u << 20, 'y'));
  REQUIRE(cut.ok);
  REQUIRE(cut.warnings.size() == 1);
  CHECK(cut.warnings[0].find("truncated last line") != std::string::npos);
  std::string long_value(2u << 20, 'v');
  ReadResult lv = fc::ParseJsonl(
      "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"write\","
      "\"value\":\"" +
      long_value + "\"}\n");
  INFO(fc::ToString(lv.error));
  REQUIRE(lv.ok);
  CHECK(lv.history[0].value.as_string().size() == long_value.size());
}

TEST_CASE("Jepsen EDN: transactions under a non-transactional model",
          "[edn][jepsen]") {
  ReadResult r = fc::ParseJepsenEdn(Jepsen("list_append.edn"), {});
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == 4);
  auto err = fc::CheckWellFormed(r.history, "cas-register");
  REQUIRE(err);
  CHECK(err->line == 2);
  CHECK(err->message.find("--model list-append") != std::string::npos);
  CHECK(err->message.find("rw-register") != std::string::npos);
  CHECK_FALSE(fc::CheckWellFormed(r.history, "list-append").has_value());
  fc::Verdict v = fc::txn::CheckListAppend(r.history, {});
  INFO(v.summary);
  CHECK(v.validity == fc::Validity::kValid);
}

TEST_CASE("Streaming readers stop where they are told and read no further",
          "[edn][jsonl][porcupine]") {
  const std::string edn = Jepsen("register_vector.edn");
  for (fc::HistoryFormat format :
       {fc::HistoryFormat::kJepsenEdn, fc::HistoryFormat::kJsonl}) {
    const std::string text = format == fc::HistoryFormat::kJsonl
                                 ? Jsonl(fc::ParseJepsenEdn(edn, {}).history)
                                 : edn;
    std::vector<std::size_t> offsets;
    ReadResult r = fc::StreamHistory(
        text, format, [&](const Event& e, std::size_t read_to) {
          CHECK(e.index == static_cast<std::int64_t>(offsets.size()));
          offsets.push_back(read_to);
          return offsets.size() < 3;
        });
    CHECK(r.ok);
    CHECK(r.stopped);
    CHECK(r.warnings.empty());
    REQUIRE(offsets.size() == 3);
    CHECK(offsets[0] < offsets[1]);
    CHECK(offsets[2] < text.size());
  }
  // A malformed op ends the reading there: garbage after it is not read.
  std::string tail(1u << 20, '\x01');
  std::size_t seen = 0;
  ReadResult bad = fc::StreamJepsenEdn(
      "[{:type :invoke, :f :read, :process 0}\n {:type :bogus}\n" + tail,
      [&](const Event&, std::size_t) { return ++seen > 0; });
  REQUIRE_FALSE(bad.ok);
  CHECK(seen == 1);
  CHECK(bad.error.line == 2);
  // Porcupine: a text that is no log is refused without being read to its
  // end (100,000 lines of noise), and so is a line of more than 1 MiB.
  std::string noise;
  for (int i = 0; i < 150000; ++i) noise += "not a log line\n";
  ReadResult p = fc::ParsePorcupineLog(noise);
  REQUIRE_FALSE(p.ok);
  CHECK(p.error.message.find("the first 100000 non-blank lines") !=
        std::string::npos);
  ReadResult longline = fc::ParsePorcupineLog(std::string(2u << 20, 'z'));
  REQUIRE_FALSE(longline.ok);
  CHECK(longline.error.message.find("longer than 1 MiB") != std::string::npos);
}

// Tests for the history types, the JSONL/EDN/Porcupine readers and
// CheckWellFormed.
#include "checkers/history_io.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "checkers/history.h"
#include "checkers/json_parser.h"
#include "checkers/value.h"
#include "checkers/verdict.h"

namespace fc = faultline::checkers;
using fc::Event;
using fc::EventType;
using fc::History;
using fc::ReadResult;
using fc::Value;

namespace {

std::string Fixture(const std::string& name) {
  auto path = std::filesystem::path(__FILE__).parent_path() / "testdata" /
              "porcupine" / name;
  std::ifstream in(path, std::ios::binary);
  INFO("fixture " << path.string());
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A one-line history with `line` (no newline added) as its only line.
ReadResult One(const std::string& line) { return fc::ParseJsonl(line + "\n"); }

void ExpectError(const std::string& text, std::int64_t line,
                 std::int64_t column, const std::string& fragment) {
  ReadResult r = fc::ParseJsonl(text);
  INFO("input: " << text);
  REQUIRE_FALSE(r.ok);
  CHECK(r.error.line == line);
  CHECK(r.error.column == column);
  INFO("message: " << r.error.message);
  CHECK(r.error.message.find(fragment) != std::string::npos);
}

Event Ev(std::int64_t index, std::int64_t process, EventType type,
         std::string f, Value value, std::optional<std::int64_t> time = {}) {
  Event e;
  e.index = index;
  e.process = process;
  e.type = type;
  e.f = std::move(f);
  e.value = std::move(value);
  e.time = time;
  return e;
}

Value Pair(Value a, Value b) {
  return Value::MakeList({std::move(a), std::move(b)});
}

}  // namespace

TEST_CASE("Value equality, order, hash and JSON", "[value]") {
  Value a = Value::MakeObject({{"x", Value::Int(1)}, {"y", Value::Null()}});
  Value b = Value::MakeObject({{"x", Value::Int(1)}, {"y", Value::Null()}});
  CHECK(a == b);
  CHECK(a.Hash() == b.Hash());
  CHECK(a.Find("x")->as_int() == 1);
  CHECK(a.Find("z") == nullptr);
  CHECK(Value::Int(1) != Value::Double(1.0));
  CHECK(Value::Int(1) < Value::Int(2));
  CHECK_FALSE(Value::Int(2) < Value::Int(1));
  CHECK(Value::Null() < Value::Bool(false));  // by kind first
  CHECK(Value::String("a\"b\\c\n\x01").ToJson() == "\"a\\\"b\\\\c\\n\\u0001\"");
  CHECK(Value::Double(1.0).ToJson() == "1.0");
  CHECK(Value::Double(0.5).ToJson() == "0.5");
  CHECK(Pair(Value::Int(-3), Value::String("é")).ToJson() == "[-3,\"é\"]");
  CHECK(a.ToJson() == "{\"x\":1,\"y\":null}");
}

TEST_CASE("Verdict helpers", "[verdict]") {
  using fc::Validity;
  CHECK(fc::ToString(Validity::kInvalid) == "invalid");
  CHECK(fc::ExitCode(Validity::kValid) == 0);
  CHECK(fc::ExitCode(Validity::kInvalid) == 1);
  CHECK(fc::ExitCode(Validity::kUnknown) == 2);
  std::vector<fc::Verdict> vs(3);
  vs[0].validity = Validity::kValid;
  vs[1].validity = Validity::kUnknown;
  vs[2].validity = Validity::kValid;
  CHECK(fc::Compose(vs) == Validity::kUnknown);
  vs[2].validity = Validity::kInvalid;
  CHECK(fc::Compose(vs) == Validity::kInvalid);
  CHECK(fc::Compose({}) == Validity::kValid);
}

TEST_CASE("ToJsonLine writes the spec's field order", "[history]") {
  Event e = Ev(0, 0, EventType::kInvoke, "write", Value::Int(3), 0);
  e.key = Value::String("k1");
  CHECK(
      fc::ToJsonLine(e) ==
      R"({"index":0,"time":0,"process":0,"type":"invoke","f":"write","key":"k1","value":3})");
  Event n =
      Ev(1, fc::kNemesisProcess, EventType::kInfo, "partition", Value::Null());
  n.error = "x";
  n.extra.emplace_back("term", Value::Int(4));
  CHECK(
      fc::ToJsonLine(n) ==
      R"({"index":1,"process":"nemesis","type":"info","f":"partition","value":null,"error":"x","term":4})");
  REQUIRE(n.FindExtra("term") != nullptr);
  CHECK(n.FindExtra("term")->as_int() == 4);
  CHECK(n.FindExtra("fence") == nullptr);
}

TEST_CASE("ToJsonLine -> ParseJsonl round trip", "[jsonl]") {
  History h;
  h.push_back(Ev(0, 0, EventType::kInvoke, "cas",
                 Pair(Value::Int(INT64_MIN), Value::Int(INT64_MAX)), 5));
  h.back().key = Value::Int(7);
  h.push_back(Ev(1, 1, EventType::kInvoke, "write",
                 Value::String("tab\t quote\" nl\n é 😀 \x7f"), 6));
  h.back().node = "n1";
  h.push_back(
      Ev(2, fc::kNemesisProcess, EventType::kInvoke, "partition",
         Value::MakeObject({{"cut", Value::MakeList({Value::String("n1")})},
                            {"ratio", Value::Double(0.25)},
                            {"whole", Value::Double(2.0)},
                            {"on", Value::Bool(true)}}),
         6));
  h.push_back(Ev(3, 0, EventType::kInfo, "cas", h[0].value, 9));
  h.back().error = "timeout";
  h.back().extra.emplace_back("latency_ns", Value::Int(4));
  h.back().extra.emplace_back(
      "nested", Value::MakeList({Value::MakeList({Value::Null()})}));
  std::string text;
  for (const Event& e : h) text += fc::ToJsonLine(e) + "\n";
  ReadResult r = fc::ParseJsonl(text);
  REQUIRE(r.ok);
  CHECK(r.warnings.empty());
  REQUIRE(r.history.size() == h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    const Event& a = h[i];
    const Event& b = r.history[i];
    CHECK(a.index == b.index);
    CHECK(a.time == b.time);
    CHECK(a.process == b.process);
    CHECK(a.type == b.type);
    CHECK(a.f == b.f);
    CHECK(a.key == b.key);
    CHECK(a.value == b.value);
    CHECK(a.error == b.error);
    CHECK(a.node == b.node);
    CHECK(a.extra == b.extra);
    CHECK(fc::ToJsonLine(b) == fc::ToJsonLine(a));
  }
  CHECK(r.history[2].value.Find("whole")->kind() == Value::Kind::kDouble);
}

TEST_CASE("ParseJsonl reads the spec example", "[jsonl]") {
  const char* text =
      R"({"index":0,"time":0,"process":0,"type":"invoke","f":"write","key":"k1","value":3}
{"index":1,"time":1200,"process":1,"type":"invoke","f":"read","key":"k1","value":null}
{"index":2,"time":35000,"process":0,"type":"ok","f":"write","key":"k1","value":3}
{"index":3,"time":36000,"process":1,"type":"ok","f":"read","key":"k1","value":3}
{"index":4,"time":40000,"process":2,"type":"invoke","f":"cas","key":"k1","value":[3,4]}
{"index":5,"time":2040000,"process":2,"type":"info","f":"cas","key":"k1","value":[3,4],"error":"timeout"}
)";
  ReadResult r = fc::ParseJsonl(text);
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == 6);
  CHECK(r.history[5].type == EventType::kInfo);
  CHECK(r.history[5].error == "timeout");
  CHECK(r.history[4].value == Pair(Value::Int(3), Value::Int(4)));
  CHECK(r.history[1].value.is_null());
  CHECK(*r.history[5].time == 2040000);
  CHECK_FALSE(fc::CheckWellFormed(r.history, "cas-register").has_value());
}

TEST_CASE("ParseJsonl: numbers, unicode and escapes", "[jsonl]") {
  auto value_of = [](const std::string& v) {
    ReadResult r = One(
        R"({"index":0,"process":0,"type":"invoke","f":"w","value":)" + v + "}");
    INFO(v << " -> " << (r.ok ? "" : r.error.message));
    REQUIRE(r.ok);
    return r.history[0].value;
  };
  CHECK(value_of("9223372036854775807") == Value::Int(INT64_MAX));
  CHECK(value_of("-9223372036854775808") == Value::Int(INT64_MIN));
  // An integer beyond 64 bits is refused, saying so, not rounded.
  ReadResult big =
      One(R"({"index":0,"process":0,"type":"invoke","f":"w","value":[1,)"
          "9223372036854775808]}");
  REQUIRE_FALSE(big.ok);
  CHECK(big.error.column == 59);
  CHECK(big.error.message.find("integer 9223372036854775808 does not fit in "
                               "64 bits") != std::string::npos);
  CHECK(value_of("9.3e18") == Value::Double(9.3e18));  // not an integer
  CHECK(value_of("1.0") == Value::Double(1.0));
  CHECK(value_of("-0.5e-3") == Value::Double(-0.5e-3));
  CHECK(value_of("1E2") == Value::Double(100.0));
  CHECK(value_of("1e-400") == Value::Double(0.0));
  CHECK(value_of(R"("\u00e9")") == Value::String("\xc3\xa9"));
  CHECK(value_of(R"("\ud83d\ude00")") == Value::String("\xf0\x9f\x98\x80"));
  CHECK(value_of(R"("\"\\\/\b\f\n\r\t")") == Value::String("\"\\/\b\f\n\r\t"));
  CHECK(value_of("\"h\xc3\xa9llo \xe2\x82\xac\"") ==
        Value::String("h\xc3\xa9llo \xe2\x82\xac"));
  CHECK(value_of(" [ 1 , { \"a\" : [ ] } , true , false , null ] ") ==
        Value::MakeList(
            {Value::Int(1), Value::MakeObject({{"a", Value::MakeList({})}}),
             Value::Bool(true), Value::Bool(false), Value::Null()}));
}

TEST_CASE("ParseJsonl: every error carries line, column and a fix", "[jsonl]") {
  const std::string ok0 =
      R"({"index":0,"process":0,"type":"invoke","f":"read","value":null})"
      "\n";
  // Syntax errors.
  ExpectError(ok0 + R"({"index":1,,})"
                    "\n",
              2, 12, "field name");
  ExpectError(R"([1,2])"
              "\n",
              1, 1, "one JSON object");
  ExpectError(R"({"index":0,"process":0,"type":"invoke","f":"r","value":07})"
              "\n",
              1, 57, "leading zeros");
  ExpectError(R"({"index":0,"process":0,"type":"invoke","f":"r","value":[1,]})"
              "\n",
              1, 59, "trailing comma");
  ExpectError(R"({"index":0,"process":0,"type":"invoke","f":"r","value":"\x"})"
              "\n",
              1, 57, "invalid escape");
  ExpectError(
      R"({"index":0,"process":0,"type":"invoke","f":"r","value":"\udc00"})"
      "\n",
      1, 57, "surrogate");
  ExpectError(
      R"({"index":0,"process":0,"type":"invoke","f":"r","value":"\ud800x"})"
      "\n",
      1, 57, "low surrogate");
  ExpectError(
      "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"r\",\"value\":"
      "\"\xff\"}\n",
      1, 57, "UTF-8");
  ExpectError(
      "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"r\",\"value\":"
      "\"a\tb\"}\n",
      1, 58, "control character");
  ExpectError(R"({"index":0,"process":0,"type":"invoke","f":"r","value":NaN})"
              "\n",
              1, 56, "NaN");
  ExpectError(R"({"index":0,"process":0,"type":"invoke","f":"r","value":1} x)"
              "\n",
              1, 59, "one JSON object per line");
  ExpectError(R"({"index":0,"process":0,"type":"invoke","f":"r","value":1e999})"
              "\n",
              1, 56, "too large");
  // A cut-short line that is not the last one is an error, not a warning.
  ExpectError(R"({"index":0,"process":0,"type":"invo)"
              "\n" +
                  ok0,
              1, 36, "ends");
  // Field errors.
  ExpectError(R"({"index":0,"process":0,"type":"invoke","value":1})"
              "\n",
              1, 49, "missing required field \"f\"");
  ExpectError(R"({"index":0,"process":0,"f":"r","value":1})"
              "\n",
              1, 41, "\"type\"");
  ExpectError(R"({"index":0,"type":"ok","f":"r","value":1})"
              "\n",
              1, 41, "\"process\"");
  ExpectError(R"({"index":0,"process":0,"type":"ok","f":"r"})"
              "\n",
              1, 43, "\"value\"");
  ExpectError(R"({"process":0,"type":"ok","f":"r","value":1})"
              "\n",
              1, 43, "\"index\"");
  ExpectError(R"({"index":0,"process":-1,"type":"ok","f":"r","value":1})"
              "\n",
              1, 22, "\"nemesis\"");
  ExpectError(R"({"index":0,"process":"n1","type":"ok","f":"r","value":1})"
              "\n",
              1, 22, "\"nemesis\"");
  ExpectError(R"({"index":0,"process":0,"type":"okay","f":"r","value":1})"
              "\n",
              1, 31, "\"okay\"");
  ExpectError(R"({"index":0,"process":0,"type":"ok","f":3,"value":1})"
              "\n",
              1, 40, "\"f\" must be a string");
  ExpectError(R"({"index":0,"process":0,"type":"ok","f":"","value":1})"
              "\n",
              1, 40, "non-empty");
  ExpectError(R"({"index":"0","process":0,"type":"ok","f":"r","value":1})"
              "\n",
              1, 10, "must be an integer");
  ExpectError(
      R"({"index":0,"time":-5,"process":0,"type":"ok","f":"r","value":1})"
      "\n",
      1, 19, "\"time\"");
  ExpectError(
      R"({"index":0,"time":1.5,"process":0,"type":"ok","f":"r","value":1})"
      "\n",
      1, 19, "\"time\"");
  ExpectError(
      R"({"index":0,"process":0,"type":"ok","f":"r","key":[1],"value":1})"
      "\n",
      1, 50, "\"key\"");
  ExpectError(
      R"({"index":0,"process":0,"type":"ok","f":"r","error":5,"value":1})"
      "\n",
      1, 52, "\"error\"");
  ExpectError(ok0 +
                  R"({"index":2,"process":0,"type":"ok","f":"read","value":1})"
                  "\n",
              2, 10, "renumber");
  ExpectError(
      R"({"index":0,"index":0,"process":0,"type":"ok","f":"r","value":1})"
      "\n",
      1, 12, "duplicate field \"index\"");
  ExpectError(
      R"({"index":0,"x":1,"x":2,"process":0,"type":"ok","f":"r","value":1})"
      "\n",
      1, 18, "duplicate field \"x\"");
  ExpectError(
      R"({"index":0,"process":0,"type":"ok","f":"r","value":{"a":1,"a":2}})"
      "\n",
      1, 59, "duplicate field \"a\"");
}

TEST_CASE("ParseJsonl: truncated last line, blank lines, CRLF", "[jsonl]") {
  const std::string l0 =
      R"({"index":0,"process":0,"type":"invoke","f":"read","value":null})";
  const std::string l1 =
      R"({"index":1,"process":0,"type":"ok","f":"read","value":5})";
  SECTION("a cut-short unterminated last line is ignored with a warning") {
    ReadResult r = fc::ParseJsonl(l0 + "\n" + l1.substr(0, 30));
    REQUIRE(r.ok);
    CHECK(r.history.size() == 1);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("line 2") != std::string::npos);
    CHECK(r.warnings[0].find("truncated") != std::string::npos);
  }
  SECTION("a cut inside a multi-byte character is truncation too") {
    std::string cut =
        R"({"index":1,"process":0,"type":"ok","f":"read","value":"é)";
    cut.pop_back();
    ReadResult r = fc::ParseJsonl(l0 + "\n" + cut);
    REQUIRE(r.ok);
    CHECK(r.history.size() == 1);
    CHECK(r.warnings.size() == 1);
  }
  SECTION("a complete unterminated last line is read") {
    ReadResult r = fc::ParseJsonl(l0 + "\n" + l1);
    REQUIRE(r.ok);
    CHECK(r.history.size() == 2);
    CHECK(r.warnings.empty());
  }
  SECTION("an unterminated last line that is wrong, not cut, is an error") {
    ReadResult r = fc::ParseJsonl(l0 + "\n" + l1 + "x");
    CHECK_FALSE(r.ok);
    CHECK(r.error.line == 2);
  }
  SECTION("blank lines are skipped and do not count as events") {
    ReadResult r = fc::ParseJsonl("\n" + l0 + "\r\n  \n" + l1 + "\r\n\n");
    REQUIRE(r.ok);
    CHECK(r.history.size() == 2);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("3 blank") != std::string::npos);
  }
  SECTION("empty input is an empty history") {
    ReadResult r = fc::ParseJsonl("");
    CHECK(r.ok);
    CHECK(r.history.empty());
  }
}

TEST_CASE("Duplicate names in large objects are found", "[json]") {
  std::string fields;
  for (int i = 0; i < 40; ++i) {
    fields += ",\"f" + std::to_string(i) + "\":" + std::to_string(i);
  }
  const std::string head =
      R"({"index":0,"process":0,"type":"invoke","f":"r","value":{"a":0)";
  ReadResult ok = One(head + fields + "}}");
  REQUIRE(ok.ok);
  CHECK(ok.history[0].value.as_object().size() == 41);
  ReadResult nested = One(head + fields + ",\"f3\":1}}");
  REQUIRE_FALSE(nested.ok);
  CHECK(nested.error.message.find("duplicate field \"f3\"") !=
        std::string::npos);
  CHECK(nested.error.column ==
        static_cast<std::int64_t>(head.size() + fields.size() + 2));
  // The same for unknown top-level fields (Event::extra).
  const std::string top =
      R"({"index":0,"process":0,"type":"invoke","f":"r","value":0)";
  REQUIRE(One(top + fields + "}").ok);
  ReadResult extra = One(top + fields + ",\"f39\":1}");
  REQUIRE_FALSE(extra.ok);
  CHECK(extra.error.message.find("\"f39\"") != std::string::npos);
  CHECK(extra.error.column ==
        static_cast<std::int64_t>(top.size() + fields.size() + 2));
  // And for EDN maps.
  std::string edn = "{:type :invoke, :f :r, :process 0";
  for (int i = 0; i < 40; ++i) edn += " :k" + std::to_string(i) + " 1";
  REQUIRE(fc::ParseJepsenEdn(edn + "}\n", {}).ok);
  ReadResult dup_edn = fc::ParseJepsenEdn(edn + " :k7 2}\n", {});
  REQUIRE_FALSE(dup_edn.ok);
  CHECK(dup_edn.error.message.find("k7") != std::string::npos);
  // Many discards in a row are bounded, not a stack overflow.
  std::string discards;
  for (int i = 0; i < 100000; ++i) discards += "#_1 ";
  CHECK_FALSE(fc::ParseJepsenEdn(discards + "{}", {}).ok);
}

TEST_CASE("ParseJson and nesting limits", "[json]") {
  Value v;
  std::string err;
  CHECK(fc::ParseJson(" {\"a\":[1,2.5,\"x\"]} ", v, &err));
  CHECK(v.Find("a")->as_list().size() == 3);
  CHECK_FALSE(fc::ParseJson("{} {}", v, &err));
  CHECK(err.find("after the JSON value") != std::string::npos);
  std::string deep(300, '[');
  CHECK_FALSE(fc::ParseJson(deep, v, &err));
  CHECK(err.find("nesting") != std::string::npos);
}

TEST_CASE("CheckWellFormed: each rule", "[wellformed]") {
  auto check = [](const History& h, std::string_view model = "") {
    return fc::CheckWellFormed(h, model);
  };
  auto with_idx = [](History h) {
    for (std::size_t i = 0; i < h.size(); ++i) {
      h[i].index = static_cast<std::int64_t>(i);
    }
    return h;
  };
  using T = EventType;
  const Value null;
  SECTION("a good history with nemesis events in between") {
    History h = with_idx(
        {Ev(0, 0, T::kInvoke, "read", null, 1),
         Ev(0, fc::kNemesisProcess, T::kInfo, "start", null, 2),
         Ev(0, 1, T::kInvoke, "write", Value::Int(1), 2),
         Ev(0, 0, T::kOk, "read", Value::Int(0), 3),
         Ev(0, fc::kNemesisProcess, T::kInfo, "stop", null),
         Ev(0, 1, T::kInfo, "write", Value::Int(1), 4),
         Ev(0, 2, T::kInvoke, "cas", Pair(Value::Int(1), Value::Int(2)), 5)});
    CHECK_FALSE(check(h, "cas-register").has_value());
    CHECK_FALSE(check(h).has_value());
  }
  SECTION("completion without an outstanding invoke") {
    auto err = check(with_idx({Ev(0, 0, T::kOk, "read", null)}));
    REQUIRE(err);
    CHECK(err->line == 1);
    CHECK(err->message.find("no outstanding invoke") != std::string::npos);
  }
  SECTION("completion with a different f") {
    auto err = check(with_idx(
        {Ev(0, 0, T::kInvoke, "read", null), Ev(0, 0, T::kOk, "write", null)}));
    REQUIRE(err);
    CHECK(err->line == 2);
    CHECK(err->message.find("is read") != std::string::npos);
  }
  SECTION("completion on a different key") {
    History h = with_idx(
        {Ev(0, 0, T::kInvoke, "read", null), Ev(0, 0, T::kOk, "read", null)});
    h[0].key = Value::String("a");
    h[1].key = Value::String("b");
    auto err = check(h);
    REQUIRE(err);
    CHECK(err->message.find("key") != std::string::npos);
  }
  SECTION("two outstanding operations on one process") {
    auto err = check(with_idx({Ev(0, 3, T::kInvoke, "read", null),
                               Ev(0, 3, T::kInvoke, "read", null)}));
    REQUIRE(err);
    CHECK(err->line == 2);
    CHECK(err->message.find("still outstanding") != std::string::npos);
  }
  SECTION("invoke after info") {
    auto err = check(with_idx({Ev(0, 3, T::kInvoke, "read", null),
                               Ev(0, 3, T::kInfo, "read", null),
                               Ev(0, 3, T::kInvoke, "read", null)}));
    REQUIRE(err);
    CHECK(err->line == 3);
    CHECK(err->message.find("fresh process id") != std::string::npos);
  }
  SECTION("time going backwards is a note, not an error") {
    History h = with_idx({Ev(0, 0, T::kInvoke, "read", null, 10),
                          Ev(0, 1, T::kInvoke, "read", null),
                          Ev(0, 2, T::kInvoke, "read", null, 9),
                          Ev(0, 3, T::kInvoke, "read", null, 4)});
    h[0].line = 7;  // as read from a file with other lines in between
    h[2].line = 12;
    CHECK_FALSE(check(h).has_value());
    fc::WellFormedChecker wf("register");
    for (const Event& e : h) CHECK_FALSE(wf.Add(e).has_value());
    REQUIRE(wf.time_note().has_value());
    CHECK(wf.time_note()->line == 12);  // the first step back only
    CHECK(wf.time_note()->message.find("1 ns earlier than time 10 at line 7") !=
          std::string::npos);
    CHECK(wf.time_note()->message.find("position in the file") !=
          std::string::npos);
    fc::WellFormedChecker monotonic("register");
    monotonic.Add(h[0]);
    monotonic.Add(h[1]);
    CHECK_FALSE(monotonic.time_note().has_value());
  }
  SECTION("errors cite the events' lines in the file") {
    History h = with_idx({Ev(0, 3, T::kInvoke, "read", null),
                          Ev(0, 3, T::kInvoke, "read", null)});
    h[0].line = 4;
    h[1].line = 9;
    auto err = check(h);
    REQUIRE(err);
    CHECK(err->line == 9);
    CHECK(err->message.find("from line 4") != std::string::npos);
  }
  SECTION("index not equal to position") {
    History h = with_idx({Ev(0, 0, T::kInvoke, "read", null)});
    h[0].index = 4;
    REQUIRE(check(h));
  }
  SECTION("model shapes") {
    auto bad = [&](Event e, std::string_view model, const char* fragment) {
      History h;
      if (e.type != T::kInvoke) {
        h.push_back(Ev(0, 0, T::kInvoke, e.f, null));
        if (e.f != "read" && e.f != "get") h.back().value = e.value;
      }
      h.push_back(std::move(e));
      h = with_idx(std::move(h));
      auto err = check(h, model);
      INFO(model << " " << fc::ToJsonLine(h.back()));
      REQUIRE(err);
      INFO(err->message);
      CHECK(err->message.find(fragment) != std::string::npos);
    };
    // A read's invoke value (and a fail/info's) is accepted and ignored.
    CHECK_FALSE(check(with_idx({Ev(0, 0, T::kInvoke, "read", Value::Int(4)),
                                Ev(0, 0, T::kOk, "read", Value::Int(4))}),
                      "cas-register")
                    .has_value());
    CHECK_FALSE(check(with_idx({Ev(0, 0, T::kInvoke, "read", Value::Int(4)),
                                Ev(0, 0, T::kFail, "read", Value::Int(4))}),
                      "register")
                    .has_value());
    CHECK_FALSE(check(with_idx({Ev(0, 0, T::kInvoke, "get", Value::Int(4)),
                                Ev(0, 0, T::kOk, "get", Value::String(""))}),
                      "kv")
                    .has_value());
    bad(Ev(0, 0, T::kInvoke, "write", null), "register", "integer or string");
    bad(Ev(0, 0, T::kInvoke, "cas", Pair(Value::Int(1), Value::Int(2))),
        "register", "unknown operation");
    bad(Ev(0, 0, T::kInvoke, "cas", Value::MakeList({Value::Int(1)})),
        "cas-register", "[expected, new]");
    bad(Ev(0, 0, T::kOk, "read", Value::MakeList({})), "cas-register",
        "value read");
    bad(Ev(0, 0, T::kInvoke, "put", Value::Int(1)), "kv", "must be a string");
    bad(Ev(0, 0, T::kOk, "get", null), "kv", "string read");
    bad(Ev(0, 0, T::kInvoke, "del", null), "kv", "unknown operation");
    bad(Ev(0, 0, T::kInvoke, "grab", null), "mutex", "unknown operation");
    // A transaction under a model that does not check transactions points
    // to the transactional models, whatever the model.
    const Value txn = Value::MakeList({Value::MakeList(
        {Value::String("append"), Value::Int(1), Value::Int(2)})});
    for (const char* model : {"cas-register", "register", "kv", "mutex", "set",
                              "bank", "mutex-fencing"}) {
      bad(Ev(0, 0, T::kInvoke, "txn", txn), model, "--model list-append");
    }
    CHECK_FALSE(check(with_idx({Ev(0, 0, T::kInvoke, "txn", txn)}), "")
                    .has_value());  // no model: structure only
    // Shape rules skip nemesis events and unknown models.
    History h = with_idx({Ev(0, fc::kNemesisProcess, T::kInvoke, "kill", null),
                          Ev(0, 0, T::kInvoke, "frobnicate", null)});
    CHECK(check(h, "kv"));  // frobnicate is not kv
    CHECK_FALSE(check(h, "set"));
    CHECK(fc::IsKnownModel("cas-register"));
    CHECK_FALSE(fc::IsKnownModel("set"));
  }
}

TEST_CASE("ParseJepsenEdn", "[edn]") {
  SECTION("one op map per line, keywords, nemesis, extras") {
    const char* text =
        "{:type :invoke, :f :read, :value nil, :process 0, :time 123, :index "
        "0}\n"
        "{:type :info, :f :start, :value \"cut n1\", :process :nemesis, :time "
        "130, :index 1}\n"
        "{:type :ok, :f :read, :value 3, :process 0, :time 150, :index 2, "
        ":node \"n1\"}\n"
        "; a comment line\n"
        "{:type :invoke, :f :cas, :value [3 4], :process 1, :time 160, :foo "
        "#{1}}\n"
        "{:type :fail, :f :cas, :value [3 4], :process 1, :time 170, :error "
        "[:mismatch \"x\"]}\n";
    ReadResult r = fc::ParseHistory(text, fc::HistoryFormat::kJepsenEdn);
    INFO(fc::ToString(r.error));
    REQUIRE(r.ok);
    REQUIRE(r.history.size() == 5);
    CHECK(r.history[0].f == "read");
    CHECK(r.history[0].value.is_null());
    CHECK(*r.history[0].time == 123);
    CHECK(r.history[1].is_nemesis());
    CHECK(r.history[1].value == Value::String("cut n1"));
    CHECK(r.history[2].node == "n1");
    CHECK(r.history[3].index == 3);
    CHECK(r.history[3].value == Pair(Value::Int(3), Value::Int(4)));
    REQUIRE(r.history[3].FindExtra("foo") != nullptr);
    CHECK(r.history[4].type == EventType::kFail);
    CHECK(r.history[4].error == R"(["mismatch","x"])");
    CHECK(r.warnings.empty());  // values are not [key value] tuples
    CHECK_FALSE(fc::CheckWellFormed(r.history, "cas-register").has_value());
  }
  SECTION("jepsen.independent tuples are split into key and value") {
    const char* text =
        "[{:type :invoke, :f :write, :value [5 1], :process 0}\n"
        " {:type :ok, :f :write, :value [5 1], :process 0}\n"
        " {:type :invoke, :f :cas, :value [:k2 [1 2]], :process 1}\n"
        " {:type :invoke, :f :start, :value nil, :process :nemesis}]\n";
    ReadResult r = fc::ParseJepsenEdn(text, {});
    REQUIRE(r.ok);
    REQUIRE(r.history.size() == 4);
    CHECK(r.history[0].key == Value::Int(5));
    CHECK(r.history[0].value == Value::Int(1));
    CHECK(r.history[2].key == Value::String("k2"));
    CHECK(r.history[2].value == Pair(Value::Int(1), Value::Int(2)));
    CHECK(r.history[3].value.is_null());
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("independent") != std::string::npos);
    fc::EdnOptions keep;
    keep.tuples = fc::TupleKeys::kKeep;
    ReadResult k = fc::ParseJepsenEdn(text, keep);
    REQUIRE(k.ok);
    CHECK(k.history[0].key.is_null());
  }
  SECTION("an all-cas plain register history is not split") {
    const char* text =
        "{:type :invoke, :f :cas, :value [1 2], :process 0}\n"
        "{:type :ok, :f :cas, :value [1 2], :process 0}\n";
    ReadResult r = fc::ParseJepsenEdn(text, {});
    REQUIRE(r.ok);
    CHECK(r.history[0].key.is_null());
    CHECK(r.history[0].value == Pair(Value::Int(1), Value::Int(2)));
    fc::EdnOptions split;
    split.tuples = fc::TupleKeys::kSplit;
    ReadResult s = fc::ParseJepsenEdn(text, split);
    REQUIRE(s.ok);
    CHECK(s.history[0].key == Value::Int(1));
  }
  SECTION("tagged records, strings with escapes, chars, big numbers") {
    const char* text =
        "#jepsen.history.Op{:index 0, :time 1, :type :invoke, :process 0, "
        ":f :write, :value \"a\\\"b\\u00e9\"}\n"
        "{:type :ok, :process 0, :f :write, :value \\x, :big "
        "1234567890123456789N, "
        ":when #inst \"2020-01-01\", :r 1/2, :d 1.5M}\n";
    ReadResult r = fc::ParseJepsenEdn(text, {});
    INFO(fc::ToString(r.error));
    REQUIRE(r.ok);
    REQUIRE(r.history.size() == 2);
    CHECK(r.history[0].value == Value::String("a\"b\xc3\xa9"));
    CHECK(r.history[1].value == Value::String("x"));
    CHECK(*r.history[1].FindExtra("big") == Value::Int(1234567890123456789));
    // Beyond 64 bits: refused, saying so, where the number is.
    ReadResult big = fc::ParseJepsenEdn(
        "{:type :ok, :process 0, :f :write,\n :value 123456789012345678901N}",
        {});
    REQUIRE_FALSE(big.ok);
    CHECK(big.error.line == 2);
    CHECK(big.error.column == 9);
    CHECK(big.error.message.find("does not fit in 64 bits") !=
          std::string::npos);
    CHECK(*r.history[1].FindExtra("when") == Value::String("2020-01-01"));
    CHECK(*r.history[1].FindExtra("r") == Value::Double(0.5));
    CHECK(*r.history[1].FindExtra("d") == Value::Double(1.5));
  }
  SECTION("truncated last line is ignored; other errors have positions") {
    ReadResult r = fc::ParseJepsenEdn(
        "{:type :invoke, :f :read, :process 0}\n{:type :ok, :f :re", {});
    REQUIRE(r.ok);
    CHECK(r.history.size() == 1);
    CHECK(r.warnings.size() == 1);
    ReadResult bad = fc::ParseJepsenEdn(
        "{:type :invoke, :f :read, :process 0}\n{:type :okay, :f :read, "
        ":process 0}\n",
        {});
    REQUIRE_FALSE(bad.ok);
    CHECK(bad.error.line == 2);
    CHECK(bad.error.column == 8);  // the value of :type
    CHECK(bad.error.message.find(":type") != std::string::npos);
    ReadResult syn = fc::ParseJepsenEdn("{:type :invoke\n :f ]}\n", {});
    REQUIRE_FALSE(syn.ok);
    CHECK(syn.error.line == 2);
    CHECK(syn.error.column == 5);
    ReadResult odd = fc::ParseJepsenEdn("{:type}\n", {});
    CHECK_FALSE(odd.ok);
    ReadResult notmap = fc::ParseJepsenEdn("42\n", {});
    CHECK_FALSE(notmap.ok);
  }
}

TEST_CASE("ParsePorcupineLog: Jepsen etcd log excerpt", "[porcupine]") {
  ReadResult r = fc::ParseHistory(Fixture("etcd_000_head.log"),
                                  fc::HistoryFormat::kPorcupine);
  INFO(fc::ToString(r.error));
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == 64);
  CHECK(r.warnings.empty());
  const Event& first = r.history[0];
  CHECK(first.process == 0);
  CHECK(first.type == EventType::kInvoke);
  CHECK(first.f == "read");
  CHECK(first.value.is_null());
  CHECK(r.history[18].value == Pair(Value::Int(3), Value::Int(0)));  // cas
  CHECK(r.history[28].type == EventType::kFail);
  // "4 :info :write :timed-out": error named, value from the invocation.
  const Event& info = r.history[60];
  CHECK(info.process == 4);
  CHECK(info.type == EventType::kInfo);
  CHECK(info.error == "timed-out");
  CHECK(info.value == Value::Int(1));
  CHECK(r.history[63].error == "timed-out");
  CHECK(r.history[63].value == Pair(Value::Int(2), Value::Int(1)));
  auto wf = fc::CheckWellFormed(r.history, "cas-register");
  INFO((wf ? fc::ToString(*wf) : ""));
  CHECK_FALSE(wf.has_value());
}

TEST_CASE("ParsePorcupineLog: kv logs and noise", "[porcupine]") {
  ReadResult ok = fc::ParsePorcupineLog(Fixture("kv_c01_ok_head.txt"));
  REQUIRE(ok.ok);
  CHECK(ok.history.size() == 36);
  CHECK(ok.history[0].key == Value::String("0"));
  CHECK(ok.history[0].value == Value::String("x 0 0 y"));
  CHECK(ok.history[9].value == Value::String(""));
  CHECK_FALSE(fc::CheckWellFormed(ok.history, "kv").has_value());
  ReadResult bad = fc::ParsePorcupineLog(Fixture("kv_c01_bad.txt"));
  REQUIRE(bad.ok);
  CHECK(bad.history.size() == 76);
  CHECK(bad.history[59].value == Value::String("x 0 0 y"));
  CHECK_FALSE(fc::CheckWellFormed(bad.history, "kv").has_value());

  ReadResult noisy = fc::ParsePorcupineLog(
      "2017-01-01 INFO jepsen.core - Running test\n"
      "INFO  jepsen.util - :nemesis\t:info\t:start\tCut off {n1 #{n2}}\n"
      "INFO  jepsen.util - 7\t:invoke\t:read\tnil\n"
      "\n"
      "INFO  jepsen.util - 7\t:ok\t:read\t2\n");
  REQUIRE(noisy.ok);
  REQUIRE(noisy.history.size() == 3);
  CHECK(noisy.history[0].is_nemesis());
  CHECK(noisy.history[2].value == Value::Int(2));
  REQUIRE(noisy.warnings.size() == 1);
  CHECK(noisy.warnings[0].find("skipped 1") != std::string::npos);

  ReadResult err =
      fc::ParsePorcupineLog("INFO  jepsen.util - x7\t:invoke\t:read\tnil\n");
  REQUIRE_FALSE(err.ok);
  CHECK(err.error.line == 1);
  CHECK(err.error.column == 21);
  ReadResult trunc = fc::ParsePorcupineLog(
      "INFO  jepsen.util - 7\t:invoke\t:cas\t[1 2]\n"
      "INFO  jepsen.util - 7\t:ok\t:cas\t[1 ");
  REQUIRE(trunc.ok);
  CHECK(trunc.history.size() == 1);
  CHECK(trunc.warnings.size() == 1);
}

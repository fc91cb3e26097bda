// Tests for checkers/stats.h.
#include "checkers/stats.h"

#include <catch2/catch.hpp>
#include <string>

#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace fc = faultline::checkers;
using fc::EventType;
using fc::History;
using fc::Validity;
using fc::Value;

namespace {

History Parse(const std::string& text) {
  fc::ReadResult r = fc::ParseJsonl(text);
  INFO(fc::ToString(r.error));
  REQUIRE(r.ok);
  return r.history;
}

}  // namespace

TEST_CASE("stats: counts, latencies, faults", "[stats]") {
  History h = Parse(
      R"({"index":0,"time":0,"process":0,"type":"invoke","f":"read","value":null}
{"index":1,"time":10,"process":1,"type":"invoke","f":"write","value":1}
{"index":2,"time":15,"process":"nemesis","type":"invoke","f":"partition","value":["n1"]}
{"index":3,"time":100,"process":0,"type":"ok","f":"read","value":null}
{"index":4,"time":110,"process":1,"type":"fail","f":"write","value":1}
{"index":5,"time":120,"process":0,"type":"invoke","f":"read","value":null}
{"index":6,"time":125,"process":"nemesis","type":"info","f":"partition","value":["n1"]}
{"index":7,"time":320,"process":0,"type":"info","f":"read","value":null}
{"index":8,"time":330,"process":2,"type":"invoke","f":"write","value":2}
{"index":9,"time":340,"process":"nemesis","type":"invoke","f":"kill","value":"n2"}
{"index":10,"time":350,"process":"nemesis","type":"info","f":"heal","value":null}
)");
  fc::HistoryStats s = fc::ComputeStats(h);
  CHECK(s.total.ok == 1);
  CHECK(s.total.fail == 1);
  CHECK(s.total.info == 2);  // one info + one invoke never completed
  CHECK(s.counts["read"].ok == 1);
  CHECK(s.counts["read"].info == 1);
  CHECK(s.counts["write"].fail == 1);
  CHECK(s.counts["write"].info == 1);
  CHECK(s.client_events == 7);
  CHECK(s.nemesis_events == 4);
  REQUIRE(s.latency.count("read") == 1);
  CHECK(s.latency["read"].count == 2);  // 100 and 200
  CHECK(s.latency["read"].p50 == 100);
  CHECK(s.latency["read"].p90 == 200);
  CHECK(s.latency["read"].max == 200);
  CHECK(s.latency["write"].count == 1);
  CHECK(s.latency["write"].p99 == 100);
  REQUIRE(s.faults.size() == 3);
  CHECK(s.faults[0].f == "partition");
  CHECK(*s.faults[0].start == 15);
  CHECK(*s.faults[0].end == 125);
  CHECK(s.faults[0].end_index == 6);
  CHECK(s.faults[0].value == Value::MakeList({Value::String("n1")}));
  CHECK(s.faults[1].f == "kill");
  CHECK_FALSE(s.faults[1].end.has_value());  // open until the end
  CHECK(s.faults[1].end_index == -1);
  CHECK(s.faults[2].f == "heal");  // an info alone is an instant
  CHECK(*s.faults[2].start == 350);
  CHECK(*s.faults[2].end == 350);

  std::string json = fc::StatsToJson(s);
  Value parsed;
  std::string err;
  REQUIRE(fc::ParseJson(json, parsed, &err));
  CHECK(parsed.Find("ops")->Find("ok")->as_int() == 1);
  CHECK(parsed.Find("by_f")
            ->Find("read")
            ->Find("latency_ns")
            ->Find("p90")
            ->as_int() == 200);
  CHECK(parsed.Find("faults")->as_list().size() == 3);
  CHECK(parsed.Find("faults")->as_list()[1].Find("end")->is_null());
  CHECK(parsed.Find("events")->Find("nemesis")->as_int() == 4);

  fc::Verdict v = fc::StatsVerdict(h);
  CHECK(v.checker == "stats");
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary == "1 ok, 1 fail, 2 info");
  CHECK(v.explanation.find("read: 1 ok, 0 fail, 1 info") != std::string::npos);
  CHECK(v.details_json == json);
}

TEST_CASE("stats: nearest-rank quantiles", "[stats]") {
  std::string text;
  std::int64_t idx = 0;
  for (int i = 1; i <= 100; ++i) {
    // Operation i takes i * 1000 ns, on its own process.
    text += "{\"index\":" + std::to_string(idx++) +
            ",\"time\":0,\"process\":" + std::to_string(i) +
            ",\"type\":\"invoke\",\"f\":\"read\",\"value\":null}\n";
  }
  for (int i = 1; i <= 100; ++i) {
    text += "{\"index\":" + std::to_string(idx++) +
            ",\"time\":" + std::to_string(i * 1000) +
            ",\"process\":" + std::to_string(i) +
            ",\"type\":\"ok\",\"f\":\"read\",\"value\":null}\n";
  }
  fc::HistoryStats s = fc::ComputeStats(Parse(text));
  const fc::LatencyStats& l = s.latency["read"];
  CHECK(l.count == 100);
  CHECK(l.p50 == 50000);
  CHECK(l.p90 == 90000);
  CHECK(l.p99 == 99000);
  CHECK(l.max == 100000);
}

TEST_CASE("stats: no latency without times, unknown without ok", "[stats]") {
  History h = Parse(
      R"({"index":0,"process":0,"type":"invoke","f":"read","value":null}
{"index":1,"process":0,"type":"fail","f":"read","value":null}
{"index":2,"process":1,"type":"invoke","f":"read","value":null}
)");
  fc::HistoryStats s = fc::ComputeStats(h);
  CHECK(s.latency.empty());
  CHECK(s.total.fail == 1);
  CHECK(s.total.info == 1);
  fc::Verdict v = fc::StatsVerdict(h);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary.find("nothing was tested") != std::string::npos);
  fc::Verdict empty = fc::StatsVerdict({});
  CHECK(empty.validity == Validity::kUnknown);
  CHECK(empty.details_json.find("\"ops\":{\"ok\":0") != std::string::npos);
}

TEST_CASE("stats: start-/stop- nemesis events bound fault windows", "[stats]") {
  auto parsed = fc::ParseJsonl(
      R"({"index":0,"time":10,"process":"nemesis","type":"invoke","f":"start-partition","value":{"selector":"halves"}}
{"index":1,"time":20,"process":"nemesis","type":"info","f":"start-partition","value":{"shape":"halves"}}
{"index":2,"time":30,"process":0,"type":"invoke","f":"read","value":null}
{"index":3,"time":40,"process":0,"type":"ok","f":"read","value":1}
{"index":4,"time":50,"process":"nemesis","type":"invoke","f":"stop-partition","value":null}
{"index":5,"time":60,"process":"nemesis","type":"info","f":"stop-partition","value":{"healed":["n1"]}}
{"index":6,"time":70,"process":"nemesis","type":"invoke","f":"start-pause","value":{"selector":"one"}}
{"index":7,"time":80,"process":"nemesis","type":"info","f":"start-pause","value":{"selector":"one"},"error":"no leader"}
{"index":8,"time":90,"process":"nemesis","type":"invoke","f":"start-kill","value":{"selector":"one"}}
{"index":9,"time":95,"process":"nemesis","type":"info","f":"start-kill","value":{"nodes":["n2"]}}
)");
  REQUIRE(parsed.ok);
  auto s = fc::ComputeStats(parsed.history);
  REQUIRE(s.faults.size() == 2);  // the failed pause opens no window
  CHECK(s.faults[0].f == "partition");
  CHECK(*s.faults[0].start == 20);
  CHECK(*s.faults[0].end == 60);
  CHECK(s.faults[0].value.Find("shape")->as_string() == "halves");
  CHECK(s.faults[1].f == "kill");
  CHECK(*s.faults[1].start == 95);
  CHECK_FALSE(s.faults[1].end.has_value());
}

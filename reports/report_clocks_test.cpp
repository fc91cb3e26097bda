// The clock chart's data: each node's offset rebuilt from nemesis events.
#include "reports/report_clocks.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "checkers/history_io.h"

using faultline::checkers::History;
using faultline::reports::ClockSeries;
using nlohmann::json;

namespace {

History Parse(const std::string& text) {
  auto read = faultline::checkers::ParseJsonl(text);
  REQUIRE(read.ok);
  return read.history;
}

// Points of `node` as [x, ms] pairs.
json PointsOf(const json& c, const std::string& node) {
  for (std::size_t i = 0; i < c["nodes"].size(); ++i)
    if (c["nodes"][i] == node) return c["series"][i];
  FAIL("no series for " << node);
  return json();
}

}  // namespace

TEST_CASE("no clock events, no chart", "[report][clock]") {
  History h = Parse(
      R"({"index":0,"time":0,"process":0,"type":"invoke","f":"read","value":null}
{"index":1,"time":5000,"process":"nemesis","type":"invoke","f":"start-pause","value":null}
{"index":2,"time":6000,"process":"nemesis","type":"info","f":"start-pause","value":{"kind":"pause","nodes":["n1"]}}
)");
  CHECK(ClockSeries(h, true, 6).is_null());
}

TEST_CASE("a step, a drift and their heals become lines per node",
          "[report][clock]") {
  // Times in ns; the chart's x is in µs.
  History h = Parse(
      R"({"index":0,"time":1000000,"process":"nemesis","type":"invoke","f":"start-clock","value":null}
{"index":1,"time":1000000,"process":"nemesis","type":"info","f":"start-clock","value":{"kind":"clock","nodes":["n2"],"offset_ms":5000,"rate":1,"clock_ms":{"n2":5000}}}
{"index":2,"time":3000000,"process":"nemesis","type":"info","f":"stop-clock","value":{"kind":"clock","healed":["n2"],"offset_ms":{"n2":0}}}
{"index":3,"time":4000000,"process":"nemesis","type":"info","f":"start-clock","value":{"kind":"clock","nodes":["n1"],"offset_ms":0,"rate":2,"clock_ms":{"n1":0.0}}}
{"index":4,"time":6000000,"process":"nemesis","type":"info","f":"stop-clock","value":{"kind":"clock","healed":["n1"],"offset_ms":{"n1":2.0}}}
)");
  json c = ClockSeries(h, true, 8000);
  REQUIRE(c.is_object());
  CHECK(c["nodes"] == json({"n2", "n1"}));
  // n2: 0 until 1 ms, +5000 until 3 ms, then 0 to the end.
  CHECK(PointsOf(c, "n2") ==
        json::parse(
            "[[0,0],[1000,0],[1000,5000],[3000,5000],[3000,0],[8000,0]]"));
  // n1: from 4 ms at rate 2: +2 ms after 2 ms; the heal keeps +2 (as the
  // stop says), flat from there.
  CHECK(PointsOf(c, "n1") ==
        json::parse("[[0,0],[4000,0],[6000,2.0],[8000,2.0]]"));
  CHECK(c["max_abs"] == 5000);
  // Without times: steps at event indices, no drift.
  json untimed = ClockSeries(h, false, 4);
  CHECK(PointsOf(untimed, "n2") ==
        json::parse("[[0,0],[1,0],[1,5000],[2,5000],[2,0],[4,0]]"));
}

TEST_CASE("a strobe's flips are placed after its invocation",
          "[report][clock]") {
  History h = Parse(
      R"({"index":0,"time":10000000,"process":"nemesis","type":"invoke","f":"start-strobe","value":{"selector":"one"}}
{"index":1,"time":10500000,"process":"nemesis","type":"info","f":"start-strobe","value":{"kind":"strobe","nodes":["n3"],"delta_ms":700,"period_ms":100,"clock_ms":{"n3":700}}}
{"index":2,"time":12000000,"process":"nemesis","type":"invoke","f":"stop-strobe","value":null}
{"index":3,"time":12000000,"process":"nemesis","type":"info","f":"stop-strobe","value":{"kind":"strobe","healed":["n3"],"offset_ms":{"n3":0},"flips":[{"at_ms":0,"up":true,"clock_ms":700},{"at_ms":1,"up":false,"clock_ms":0},{"at_ms":2,"up":true,"clock_ms":700}]}}
{"index":4,"time":12000000,"process":"nemesis","type":"info","f":"stop-strobe","value":null,"error":"ignored"}
)");
  json c = ClockSeries(h, true, 13000);
  // Up at the start event (10.5 ms; flip 0 is not drawn before it), back
  // at 11 ms, up at 12 ms, healed to 0 at 12 ms.
  CHECK(PointsOf(c, "n3") ==
        json::parse("[[0,0],[10500,0],[10500,700],[11000,700],[11000,0],"
                    "[12000,0],[12000,700],[12000,0],[13000,0]]"));
}

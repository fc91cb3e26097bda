// report.html's transaction cycles panel (reports/report_txn.h).
#include "reports/report_txn.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "checkers/history.h"
#include "reports/report_html.h"

using faultline::checkers::History;
using faultline::checkers::Validity;
using faultline::checkers::Verdict;
using faultline::reports::ReportDataJson;
using faultline::reports::ReportHtml;
using faultline::reports::ReportLinks;
using faultline::reports::RunSummary;
using faultline::reports::TxnCyclesData;
using nlohmann::json;

namespace {

const std::string kPayload = "<script>alert(1)</script>";

std::size_t Count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos;
       p = hay.find(needle, p + 1)) {
    ++n;
  }
  return n;
}

json Step(int txn, int process, const std::string& ops, const std::string& edge,
          int to, const std::string& why) {
  return {{"txn", txn},
          {"process", process},
          {"invoke_index", txn * 2},
          {"complete_index", txn * 2 + 1},
          {"ops", ops},
          {"edge", edge},
          {"to", to},
          {"why", why}};
}

// A list-append verdict with a 2-transaction G-single cycle (T12, T15) and
// a 3-transaction G2-item cycle (T20, T21, T22) whose last why is `why3`.
Verdict ListAppend(const std::string& why3) {
  json details = {
      {"workload", "list-append"},
      {"anomaly_types", {"G-single", "G2-item"}},
      {"anomalies", {{"G-single", 1}, {"G2-item", 1}}},
      {"cycles",
       {{{"type", "G-single"},
         {"steps",
          {Step(12, 3, "[append 3 7] [r 4 [1 2]]", "rw", 15,
                "T12 read key 4 as [1 2] and T15 appended 3 to it"),
           Step(15, 1, "[append 4 3] [r 3 [7]]", "wr", 12,
                "T15 read key 3 as [7], which T12 wrote")}}},
        {{"type", "G2-item"},
         {"steps",
          {Step(20, 1, "[r 5 []]", "rw", 21, "T20 missed T21's append to 5"),
           Step(21, 2, "[append 5 1] [r 6 []]", "rw", 22,
                "T21 missed T22's append to 6"),
           Step(22, 3, "[append 6 1] [r 5 [1]]", "realtime", 20, why3)}}}}},
      {"other", json::array()},
      {"satisfied", {"read-committed"}},
      {"violated", {"repeatable-read", "snapshot-isolation"}}};
  Verdict v;
  v.checker = "list-append";
  v.validity = Validity::kInvalid;
  v.summary = "G-single (1 cycle, 2 transactions), G2-item";
  v.explanation = "cycles...";
  v.details_json = details.dump();
  return v;
}

RunSummary Summary(const Verdict& v) {
  RunSummary s;
  s.name = "raftkv-list-append";
  s.verdicts = {v};
  return s;
}

}  // namespace

TEST_CASE("report txn: cycles of list-append go into the data block",
          "[report][txn]") {
  RunSummary s = Summary(ListAppend("T22 completed before T20 began"));
  json d = json::parse(ReportDataJson(s, History{}));
  REQUIRE(d["txn"].is_array());
  REQUIRE(d["txn"].size() == 1);
  const json& c = d["txn"][0];
  CHECK(c["checker"] == "list-append");
  CHECK(c["satisfied"] == json::array({"read-committed"}));
  CHECK(c["violated"] ==
        json::array({"repeatable-read", "snapshot-isolation"}));
  REQUIRE(c["cycles"].size() == 2);
  CHECK(c["cycles"][0]["type"] == "G-single");
  REQUIRE(c["cycles"][0]["steps"].size() == 2);
  CHECK(c["cycles"][0]["steps"][0]["txn"] == 12);
  CHECK(c["cycles"][0]["steps"][0]["edge"] == "rw");
  CHECK(c["cycles"][0]["steps"][0]["to"] == 15);
  CHECK(c["cycles"][0]["steps"][1]["ops"] == "[append 4 3] [r 3 [7]]");
  REQUIRE(c["cycles"][1]["steps"].size() == 3);
  CHECK(c["cycles"][1]["steps"][2]["edge"] == "realtime");
  CHECK(c["cycles"][1]["steps"][2]["why"] == "T22 completed before T20 began");
  CHECK(c["cycles_more"] == 0);
}

TEST_CASE("report txn: the page has the panel, the names and the whys",
          "[report][txn]") {
  RunSummary s = Summary(ListAppend("T22 completed before T20 began"));
  std::string html = ReportHtml(s, History{}, ReportLinks{});
  CHECK(html.find("<section id=\"txn-section\" hidden>") != std::string::npos);
  CHECK(html.find("<div id=\"txn\">") != std::string::npos);
  CHECK(html.find("function drawTxn()") != std::string::npos);
  CHECK(html.find("drawTxn();") != std::string::npos);
  for (const char* want :
       {"\"txn\":12", "\"txn\":15", "\"txn\":20", "\"txn\":21", "\"txn\":22",
        "T12 read key 4 as [1 2]", "T21 missed T22's append to 6",
        "T22 completed before T20 began", "\"G2-item\"",
        "\"snapshot-isolation\""}) {
    INFO(want);
    CHECK(html.find(want) != std::string::npos);
  }
}

TEST_CASE("report txn: a why with markup is only data, escaped",
          "[report][txn]") {
  RunSummary s = Summary(ListAppend("T22 " + kPayload));
  s.verdicts[0].summary = kPayload;
  std::string html = ReportHtml(s, History{}, ReportLinks{});
  // Exactly the page's own two script elements.
  CHECK(Count(html, "<script") == 2);
  CHECK(Count(html, "</script>") == 2);
  CHECK(html.find("alert(1)</script>") == std::string::npos);
  CHECK(html.find("\\u003cscript\\u003ealert(1)") != std::string::npos);
  // The data block still holds the sentence exactly.
  json d = json::parse(ReportDataJson(s, History{}));
  CHECK(d["txn"][0]["cycles"][1]["steps"][2]["why"] == "T22 " + kPayload);
  // The panel puts data into the DOM only as text.
  const std::string script = html.substr(html.find("function drawTxn()"));
  CHECK(script.find("innerHTML") == std::string::npos);
}

TEST_CASE("report txn: no cycles, other checkers and junk give null",
          "[report][txn]") {
  RunSummary s;
  CHECK(TxnCyclesData(s, 80).is_null());
  Verdict lin;
  lin.checker = "linearizable";
  lin.details_json = R"({"cycles":[{"type":"G0","steps":[{"txn":1}]}]})";
  Verdict valid;
  valid.checker = "rw-register";
  valid.details_json = R"({"cycles":[],"satisfied":["serializable"]})";
  Verdict junk;
  junk.checker = "list-append";
  junk.details_json =
      R"({"cycles":[{"type":7,"steps":[{"txn":"x","why":3}]}, 5, "a"],)"
      R"("satisfied":"no"})";
  Verdict broken;
  broken.checker = "rw-register";
  broken.details_json = "{not json";
  s.verdicts = {lin, valid, broken};
  CHECK(TxnCyclesData(s, 80).is_null());
  s.verdicts.push_back(junk);
  json d = TxnCyclesData(s, 80);
  REQUIRE(d.is_array());
  REQUIRE(d[0]["cycles"].size() == 1);
  CHECK(d[0]["cycles"][0]["type"] == "");
  CHECK(d[0]["cycles"][0]["steps"][0]["txn"] == -1);
  CHECK(d[0]["cycles"][0]["steps"][0]["why"] == "");
  CHECK(d[0]["satisfied"] == json::array());
}

TEST_CASE("report txn: many cycles are capped and counted", "[report][txn]") {
  json cycles = json::array();
  for (int i = 0; i < 25; ++i) {
    json steps = json::array();
    for (int k = 0; k < 50; ++k) {
      steps.push_back(Step(i * 100 + k, 1, std::string(1000, 'x'), "ww",
                           i * 100 + (k + 1) % 50, "w"));
    }
    cycles.push_back({{"type", "G0"}, {"steps", steps}});
  }
  Verdict v;
  v.checker = "rw-register";
  v.details_json = json{{"cycles", cycles}}.dump();
  RunSummary s = Summary(v);
  json d = TxnCyclesData(s, 80);
  REQUIRE(d[0]["cycles"].size() == faultline::reports::kMaxTxnCycles);
  CHECK(d[0]["cycles_more"] == 25 - faultline::reports::kMaxTxnCycles);
  CHECK(d[0]["cycles"][0]["steps"].size() == faultline::reports::kMaxTxnSteps);
  CHECK(d[0]["cycles"][0]["cut"] == true);
  CHECK(d[0]["cycles"][0]["steps"][0]["ops"].get<std::string>().size() <=
        4 * 80 + 3);
}

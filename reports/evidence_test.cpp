// ComputeEvidence over hand-made histories: which faults bit and why, the
// counts per phase, the CAS share, and when a run is weak.
#include "reports/evidence.h"

#include <catch2/catch.hpp>
#include <string>

#include "checkers/history_io.h"
#include "reports/junit.h"
#include "reports/report_evidence.h"
#include "reports/report_html.h"

using faultline::checkers::History;
using faultline::reports::ComputeEvidence;
using faultline::reports::Evidence;
using faultline::reports::EvidenceFromJson;
using faultline::reports::EvidenceLines;
using faultline::reports::EvidenceToJson;
using faultline::reports::kWeakMinOkOps;

namespace {

// Builds JSONL lines; `time` in ms.
class H {
 public:
  H& Op(int process, const std::string& f, int t0, int t1,
        const std::string& type, const std::string& error = "",
        const std::string& extra = "") {
    std::string common = "\"process\":" + std::to_string(process) +
                         ",\"f\":\"" + f + "\",\"key\":\"k0\"" + extra;
    Line("{\"type\":\"invoke\"," + common + ",\"value\":null", t0);
    std::string e = error.empty() ? "" : ",\"error\":\"" + error + "\"";
    if (!type.empty())
      Line("{\"type\":\"" + type + "\"," + common + ",\"value\":1" + e, t1);
    return *this;
  }
  H& Nemesis(const std::string& f, int t, const std::string& value,
             const std::string& error = "") {
    std::string e = error.empty() ? "" : ",\"error\":\"" + error + "\"";
    Line("{\"type\":\"info\",\"process\":\"nemesis\",\"f\":\"" + f +
             "\",\"value\":" + value + e,
         t);
    return *this;
  }
  H& Observe(int node, int t, int term, const std::string& leader) {
    std::string common = "\"process\":" + std::to_string(1000000000 + node) +
                         ",\"f\":\"observe\"";
    Line("{\"type\":\"invoke\"," + common + ",\"value\":null", t);
    Line("{\"type\":\"ok\"," + common +
             ",\"value\":{\"role\":\"follower\",\"term\":" +
             std::to_string(term) + ",\"leader\":\"" + leader + "\"}",
         t);
    return *this;
  }
  // n quick ok reads by process `p`, from `t` on, 1 ms each.
  H& Reads(int p, int t, int n) {
    for (int i = 0; i < n; ++i) Op(p, "read", t + i, t + i, "ok");
    return *this;
  }
  History Build() const {
    auto r = faultline::checkers::ParseJsonl(text_);
    REQUIRE(r.ok);
    return r.history;
  }

 private:
  void Line(std::string body, int t_ms) {
    text_ += body + ",\"index\":" + std::to_string(index_++) +
             ",\"time\":" + std::to_string(std::int64_t{t_ms} * 1000000) +
             "}\n";
  }
  std::string text_;
  int index_ = 0;
};

const char* kPartition =
    "{\"kind\":\"partition\",\"components\":[[\"n1\"],[\"n2\",\"n3\"]]}";

}  // namespace

TEST_CASE("evidence: a partition that dropped packets bit") {
  H h;
  h.Reads(0, 0, 200)
      .Nemesis("start-partition", 300, kPartition)
      .Op(1, "write", 310, 1310, "info", "timeout")
      .Nemesis("stop-partition", 2000,
               "{\"kind\":\"partition\",\"healed\":[\"n1\",\"n2\",\"n3\"],"
               "\"dropped\":{\"n1\":40,\"n2\":2,\"n3\":0}}")
      .Reads(0, 2100, 10);
  Evidence e = ComputeEvidence(h.Build());
  REQUIRE(e.faults.size() == 1);
  const auto& f = e.faults[0];
  CHECK(f.kind == "partition");
  CHECK(f.targets == std::vector<std::string>{"n1", "n2,n3"});
  CHECK(*f.start == 300'000'000);
  CHECK(*f.end == 2000'000'000);
  CHECK(f.packets_dropped == 42);
  CHECK(f.invoked == 1);
  CHECK(f.in_window.info == 1);
  CHECK(f.errors == 1);
  CHECK(f.timeouts == 1);
  CHECK(f.bit);
  CHECK(f.signs.front() == "42 packets dropped");
  CHECK(e.outside.ok == 210);
  CHECK(e.workload.ok == 210);
  CHECK(e.workload.info == 1);
  CHECK_FALSE(e.weak);
  CHECK(EvidenceLines(e).find("evidence: 1 fault, 1 bit (partition: 42 "
                              "packets dropped); 210 ok ops\n") == 0);
}

TEST_CASE("evidence: a fault with no visible effect makes the run weak") {
  H h;
  h.Reads(0, 0, 150)
      .Nemesis("start-partition", 300, kPartition)
      .Reads(0, 310, 50)  // every request in the window still ok
      .Nemesis("stop-partition", 400,
               "{\"kind\":\"partition\",\"healed\":[\"n1\"],"
               "\"dropped\":{\"n1\":0}}");
  Evidence e = ComputeEvidence(h.Build());
  REQUIRE(e.faults.size() == 1);
  CHECK(e.faults[0].packets_dropped == 0);
  CHECK(e.faults[0].in_window.ok == 50);
  CHECK_FALSE(e.faults[0].bit);
  CHECK(e.weak);
  REQUIRE(e.weak_reasons.size() == 1);
  CHECK(e.weak_reasons[0] == "no fault had a visible effect");
  CHECK(EvidenceLines(e).find("\nWEAK RUN: no fault had a visible effect") !=
        std::string::npos);
}

TEST_CASE("evidence: a run without faults, or barely any workload, is weak") {
  Evidence none = ComputeEvidence(H().Reads(0, 0, 500).Build());
  CHECK(none.faults.empty());
  CHECK(none.weak);
  CHECK(none.weak_reasons == std::vector<std::string>{"no fault was applied"});

  H few;
  few.Reads(0, 0, static_cast<int>(kWeakMinOkOps) - 1)
      .Nemesis("start-pause", 200, "{\"kind\":\"pause\",\"nodes\":[\"n2\"]}")
      .Op(1, "read", 210, 900, "info", "timeout")
      .Nemesis("stop-pause", 1000, "{\"kind\":\"pause\",\"resumed\":[\"n2\"]}");
  Evidence e = ComputeEvidence(few.Build());
  REQUIRE(e.faults.size() == 1);
  CHECK(e.faults[0].bit);  // its one request timed out, none outside did
  CHECK(e.faults[0].targets == std::vector<std::string>{"n2"});
  CHECK(e.weak);
  CHECK(e.weak_reasons ==
        std::vector<std::string>{"the workload barely ran: 99 ok operations "
                                 "(fewer than 100)"});

  Evidence empty = ComputeEvidence(History{});
  CHECK(empty.weak);
  CHECK(empty.weak_reasons.size() == 2);
}

TEST_CASE("evidence: errors bite only above the share outside faults") {
  H h;
  // Outside: 100 ok and 10 connection errors (9 %). In the window: 1 error
  // of 20 (5 %): no visible effect.
  h.Reads(0, 0, 100);
  for (int i = 0; i < 10; ++i)
    h.Op(0, "read", 100 + i, 100 + i, "fail", "connection-refused");
  h.Nemesis("start-kill", 200, "{\"kind\":\"kill\",\"nodes\":[\"n3\"]}")
      .Reads(0, 210, 19)
      .Op(0, "read", 240, 240, "fail", "connection-refused")
      .Nemesis("stop-kill", 300, "{\"kind\":\"kill\",\"restarted\":[\"n3\"]}");
  Evidence e = ComputeEvidence(h.Build());
  REQUIRE(e.faults.size() == 1);
  CHECK(e.faults[0].errors == 1);
  CHECK_FALSE(e.faults[0].bit);
  CHECK(e.weak);

  // Compares that did not match are answers: outside, 50 mismatches and no
  // error; in the window one timeout of 11: it bit.
  H m;
  m.Reads(0, 0, 100);
  for (int i = 0; i < 50; ++i)
    m.Op(1, "cas", 100 + i, 100 + i, "fail", "mismatch");
  m.Nemesis("start-kill", 200, "{\"nodes\":[\"n3\"]}")
      .Reads(0, 210, 10)
      .Op(0, "read", 240, 240, "info", "timeout")
      .Nemesis("stop-kill", 300, "{}");
  Evidence me = ComputeEvidence(m.Build());
  REQUIRE(me.faults.size() == 1);
  CHECK(me.faults[0].errors == 1);
  CHECK(me.faults[0].bit);
  CHECK(me.faults[0].signs.front() ==
        "1 of 11 requests failed or timed out (9.1 % vs 0.0 % outside faults)");
}

TEST_CASE("evidence: leader changes, clock offsets, a failed start") {
  H h;
  h.Observe(0, 0, 2, "n1")
      .Reads(0, 1, 120)
      .Nemesis("start-pause", 200, "{\"kind\":\"pause\",\"nodes\":[\"n1\"]}")
      .Observe(1, 400, 3, "n2")
      .Observe(2, 410, 3, "n2")  // the same change, seen twice
      .Nemesis("stop-pause", 600, "{\"kind\":\"pause\",\"resumed\":[\"n1\"]}")
      .Nemesis("start-clock", 700,
               "{\"kind\":\"clock\",\"nodes\":[\"n2\"],\"rate\":1,"
               "\"clock_ms\":{\"n2\":-3000}}")
      .Nemesis("stop-clock", 800,
               "{\"kind\":\"clock\",\"healed\":[\"n2\"],"
               "\"offset_ms\":{\"n2\":-2998}}")
      .Nemesis("start-partition", 900, "{\"selector\":\"one\"}", "boom");
  Evidence e = ComputeEvidence(h.Build());
  REQUIRE(e.faults.size() == 2);  // the failed start opens no window
  CHECK(e.faults[0].leader_changes == 1);
  CHECK(e.faults[0].bit);
  CHECK(e.faults[0].signs == std::vector<std::string>{"1 leader change"});
  CHECK(e.faults[1].clock_applied_ms == 3000);
  CHECK(e.faults[1].clock_observed_ms == 2998);
  CHECK(e.faults[1].bit);
  CHECK(e.faults[1].leader_changes == 0);
  CHECK(e.observer.ok == 3);
  CHECK(e.workload.ok == 120);  // observer reads are counted apart
  CHECK_FALSE(e.weak);
}

TEST_CASE("evidence: final reads and CAS share, counted apart") {
  H h;
  h.Reads(0, 0, 100);
  for (int i = 0; i < 4; ++i) h.Op(1, "cas", 200 + i, 200 + i, "fail");
  h.Op(1, "cas", 210, 211, "ok")
      .Op(2, "read", 300, 301, "ok", "", ",\"phase\":\"final\"")
      .Op(3, "read", 302, 303, "fail", "timeout", ",\"phase\":\"final\"");
  Evidence e = ComputeEvidence(h.Build());
  CHECK(e.workload.ok == 101);
  CHECK(e.workload.fail == 4);
  CHECK(e.final_reads.ok == 1);
  CHECK(e.final_reads.fail == 1);
  CHECK(e.cas_completed == 5);
  CHECK(e.cas_ok == 1);
  REQUIRE(e.cas_share());
  CHECK(*e.cas_share() == Approx(0.2));
  std::string lines = EvidenceLines(e);
  CHECK(lines.find("101 ok ops (+ 2 final reads, 0 observer reads); CAS 20 % "
                   "ok\n") != std::string::npos);

  H nocas;
  nocas.Reads(0, 0, 150);
  for (int i = 0; i < 3; ++i) nocas.Op(1, "cas", 200 + i, 200 + i, "fail");
  Evidence n = ComputeEvidence(nocas.Build());
  CHECK(n.weak_reasons.back() == "no compare-and-set succeeded (3 tried)");
}

TEST_CASE("evidence: an uncompleted operation counts as info in its window") {
  H h;
  h.Reads(0, 0, 120)
      .Nemesis("start-pause", 200, "{\"kind\":\"pause\",\"nodes\":[\"n1\"]}")
      .Op(1, "write", 250, 0, "");  // never completed
  Evidence e = ComputeEvidence(h.Build());
  REQUIRE(e.faults.size() == 1);
  CHECK_FALSE(e.faults[0].end);
  CHECK(e.faults[0].in_window.info == 1);
  CHECK(e.faults[0].bit);
  CHECK(e.workload.info == 1);
}

TEST_CASE("evidence: EvidenceFromJson inverts EvidenceToJson") {
  H h;
  h.Reads(0, 0, 120)
      .Nemesis("start-partition", 300, kPartition)
      .Op(1, "cas", 310, 900, "info", "timeout")
      .Nemesis("stop-partition", 1000,
               "{\"kind\":\"partition\",\"dropped\":{\"n1\":7}}");
  Evidence e = ComputeEvidence(h.Build());
  std::string json = EvidenceToJson(e);
  auto back = EvidenceFromJson(json);
  REQUIRE(back);
  CHECK(EvidenceToJson(*back) == json);
  CHECK(EvidenceLines(*back) == EvidenceLines(e));
  CHECK_FALSE(EvidenceFromJson("[1]"));
  CHECK_FALSE(EvidenceFromJson("{oops"));
}

TEST_CASE("evidence: the report's section, escaped, with the weak banner") {
  H h;
  h.Reads(0, 0, 10)
      .Nemesis("start-<b>x</b>", 20, "{\"nodes\":[\"<i>n1</i>\"]}")
      .Nemesis("stop-<b>x</b>", 30, "{}");
  faultline::reports::RunSummary s;
  std::string html =
      faultline::reports::EvidenceSectionHtml(s, h.Build());  // computed
  CHECK(html.find("<section id=\"evidence\">") == 0);
  CHECK(html.find("<b>x</b>") == std::string::npos);
  CHECK(html.find("&lt;b&gt;x&lt;/b&gt;") != std::string::npos);
  CHECK(html.find("&lt;i&gt;n1&lt;/i&gt;") != std::string::npos);
  CHECK(html.find("<b>Weak run:</b> no fault had a visible effect; the "
                  "workload barely ran: 10 ok operations") !=
        std::string::npos);
  CHECK(html.find("no visible effect</td>") != std::string::npos);
  // The whole page holds it, after the checkers.
  std::string page = faultline::reports::ReportHtml(s, h.Build(), {});
  auto at = page.find("<section id=\"evidence\">");
  REQUIRE(at != std::string::npos);
  CHECK(at > page.find("<section id=\"checkers\">"));
  // Nothing recorded and no evidence: no section.
  CHECK(faultline::reports::EvidenceSectionHtml(s, {}).empty());
}

TEST_CASE("evidence: junit.xml names a weak run's reasons, verdict kept") {
  faultline::reports::RunSummary s;
  s.name = "t";
  faultline::checkers::Verdict v;
  v.checker = "stats";
  v.validity = faultline::checkers::Validity::kValid;
  s.verdicts = {v};
  s.evidence = ComputeEvidence(H().Reads(0, 0, 500).Build());
  std::string xml = faultline::reports::JunitXml(s);
  CHECK(xml.find("<property name=\"weak\" value=\"no fault was applied\"/>") !=
        std::string::npos);
  CHECK(xml.find("failures=\"0\" errors=\"0\"") != std::string::npos);
  H bit;
  bit.Reads(0, 0, 200)
      .Nemesis("start-pause", 300, "{\"nodes\":[\"n1\"]}")
      .Op(1, "read", 310, 900, "info", "timeout")
      .Nemesis("stop-pause", 1000, "{}");
  s.evidence = ComputeEvidence(bit.Build());
  CHECK(faultline::reports::JunitXml(s).find("\"weak\"") == std::string::npos);
}

#include "reports/junit.h"

#include <catch2/catch.hpp>

using faultline::checkers::Validity;
using faultline::checkers::Verdict;
using faultline::reports::JunitXml;
using faultline::reports::RunSummary;
using faultline::reports::XmlEscape;

namespace {

RunSummary Base() {
  RunSummary s;
  s.name = "etcd-register";
  s.run_dir = "/store/etcd-register/T";
  s.started_at = "2026-11-30T05:00:00Z";
  s.seed = 7;
  s.target = "etcd";
  s.target_version = "etcd 3.4.23";
  s.faultline_version = "0.1.0";
  s.faultline_commit = "0123456789ab";
  s.phases = {{"setup", 1.0}, {"workload", 60.0}, {"check", 0.5}};
  return s;
}

Verdict V(const char* checker, Validity v, const char* summary,
          const char* explanation = "") {
  Verdict out;
  out.checker = checker;
  out.validity = v;
  out.summary = summary;
  out.explanation = explanation;
  return out;
}

}  // namespace

TEST_CASE("junit: a valid run, golden") {
  RunSummary s = Base();
  s.verdicts = {V("linearizable", Validity::kValid, "ok"),
                V("stats", Validity::kValid, "10 ok")};
  CHECK(JunitXml(s) ==
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<testsuites name=\"faultline\" tests=\"2\" failures=\"0\" "
        "errors=\"0\" time=\"61.500\">\n"
        "  <testsuite name=\"etcd-register\" tests=\"2\" failures=\"0\" "
        "errors=\"0\" time=\"61.500\" skipped=\"0\" "
        "timestamp=\"2026-11-30T05:00:00Z\">\n"
        "    <properties>\n"
        "      <property name=\"seed\" value=\"7\"/>\n"
        "      <property name=\"verdict\" value=\"valid\"/>\n"
        "      <property name=\"target\" value=\"etcd (etcd 3.4.23)\"/>\n"
        "      <property name=\"faultline\" value=\"0.1.0 (commit "
        "0123456789ab)\"/>\n"
        "      <property name=\"run_dir\" value=\"/store/etcd-register/T\"/>\n"
        "    </properties>\n"
        "    <testcase classname=\"etcd-register\" name=\"linearizable\"/>\n"
        "    <testcase classname=\"etcd-register\" name=\"stats\"/>\n"
        "  </testsuite>\n"
        "</testsuites>\n");
}

TEST_CASE("junit: invalid is a failure carrying the escaped explanation") {
  RunSummary s = Base();
  s.verdicts = {V("linearizable", Validity::kInvalid,
                  "key \"k1\": read returned 3 & not 4",
                  "</script><script>alert(1)</script>\x01")};
  std::string xml = JunitXml(s);
  CHECK(xml.find("failures=\"1\" errors=\"0\"") != std::string::npos);
  CHECK(xml.find("<failure type=\"invalid\" message=\"key &quot;k1&quot;: "
                 "read returned 3 &amp; not 4\">&lt;/script&gt;&lt;script&gt;"
                 "alert(1)&lt;/script&gt;\xEF\xBF\xBD</failure>") !=
        std::string::npos);
  CHECK(xml.find("<script>") == std::string::npos);
}

TEST_CASE("junit: unknown is an error, not a pass") {
  RunSummary s = Base();
  s.verdicts = {V("linearizable", Validity::kUnknown, "deadline reached")};
  std::string xml = JunitXml(s);
  CHECK(xml.find("failures=\"0\" errors=\"1\"") != std::string::npos);
  CHECK(xml.find("<error type=\"unknown\" message=\"deadline reached\">") !=
        std::string::npos);
}

TEST_CASE("junit: an expected anomaly found passes; one not found fails") {
  RunSummary s = Base();
  s.expect = "invalid";
  s.verdicts = {V("linearizable", Validity::kInvalid, "stale read", "why")};
  std::string met = JunitXml(s);
  CHECK(met.find("tests=\"2\" failures=\"0\" errors=\"0\"") !=
        std::string::npos);
  CHECK(met.find("<system-out>why</system-out>") != std::string::npos);
  CHECK(met.find("name=\"expect: invalid\"/>") != std::string::npos);

  s.verdicts = {V("linearizable", Validity::kValid, "ok")};
  std::string unmet = JunitXml(s);
  CHECK(unmet.find("tests=\"2\" failures=\"1\" errors=\"0\"") !=
        std::string::npos);
  CHECK(unmet.find("<failure type=\"expectation\" message=\"expected invalid, "
                   "found valid\"/>") != std::string::npos);
}

TEST_CASE("junit: an interrupted run is an error whatever its verdict") {
  RunSummary s = Base();
  s.expect = "invalid";
  s.verdicts = {V("linearizable", Validity::kInvalid, "stale read", "why")};
  s.aborted = true;
  s.interruption.signal = "SIGTERM";
  s.interruption.during = "workload";
  std::string xml = JunitXml(s);
  CHECK(xml.find("tests=\"3\" failures=\"0\" errors=\"1\"") !=
        std::string::npos);
  CHECK(xml.find("name=\"interrupted\">\n      <error type=\"interrupted\" "
                 "message=\"interrupted by SIGTERM during the workload") !=
        std::string::npos);
  CHECK(xml.find("<property name=\"interrupted\" value=\"SIGTERM\"/>") !=
        std::string::npos);
  s.aborted = false;
  CHECK(JunitXml(s).find("interrupted") == std::string::npos);
}

TEST_CASE("junit: XmlEscape") {
  CHECK(XmlEscape("a<b>&'\"\tz\n") == "a&lt;b&gt;&amp;&apos;&quot;\tz\n");
  CHECK(XmlEscape(std::string("\x1f", 1)) == "\xEF\xBF\xBD");
  CHECK(XmlEscape("caf\xC3\xA9") == "caf\xC3\xA9");  // UTF-8 passes through
}

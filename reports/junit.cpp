#include "reports/junit.h"

#include <cstdio>

namespace faultline::reports {
namespace {

using checkers::Validity;

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

double TotalSeconds(const RunSummary& s) {
  double t = 0;
  for (const auto& p : s.phases) t += p.seconds;
  return t;
}

}  // namespace

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";  // U+FFFD: XML 1.0 cannot carry it
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string JunitXml(const RunSummary& s) {
  Validity overall = OverallValidity(s);
  bool expected = s.expect.has_value();
  bool met = expected && std::string(checkers::ToString(overall)) == *s.expect;
  int failures = 0, errors = 0;
  std::string cases;
  auto add_case = [&](const std::string& name, const std::string& inner) {
    cases += "    <testcase classname=\"" + XmlEscape(s.name) + "\" name=\"" +
             XmlEscape(name) + "\"";
    cases += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
  };
  for (const auto& v : s.verdicts) {
    std::string inner;
    if (v.validity != Validity::kValid && !met) {
      bool invalid = v.validity == Validity::kInvalid;
      std::string tag = invalid ? "failure" : "error";
      (invalid ? failures : errors)++;
      inner = "      <" + tag + " type=\"" +
              std::string(checkers::ToString(v.validity)) + "\" message=\"" +
              XmlEscape(v.summary) + "\">" + XmlEscape(v.explanation) + "</" +
              tag + ">\n";
    } else if (!v.explanation.empty()) {
      inner =
          "      <system-out>" + XmlEscape(v.explanation) + "</system-out>\n";
    }
    add_case(v.checker, inner);
  }
  if (expected) {
    std::string inner;
    if (!met) {
      ++failures;
      inner = "      <failure type=\"expectation\" message=\"expected " +
              XmlEscape(*s.expect) + ", found " +
              std::string(checkers::ToString(overall)) + "\"/>\n";
    }
    add_case("expect: " + *s.expect, inner);
  }
  if (s.aborted) {
    // The run stopped early: its verdict covers a prefix, so CI must not
    // show it green whatever the checkers said.
    ++errors;
    add_case("interrupted", "      <error type=\"interrupted\" message=\"" +
                                XmlEscape(InterruptionLine(s)) + "\"/>\n");
  }
  int tests = static_cast<int>(s.verdicts.size()) + (expected ? 1 : 0) +
              (s.aborted ? 1 : 0);
  std::string props;
  props += "      <property name=\"seed\" value=\"" + std::to_string(s.seed) +
           "\"/>\n";
  props += "      <property name=\"verdict\" value=\"" +
           std::string(checkers::ToString(overall)) + "\"/>\n";
  props += "      <property name=\"target\" value=\"" +
           XmlEscape(s.target + (s.target_version.empty()
                                     ? ""
                                     : " (" + s.target_version + ")")) +
           "\"/>\n";
  props +=
      "      <property name=\"faultline\" value=\"" +
      XmlEscape(
          (s.faultline_version.empty() ? "unknown" : s.faultline_version) +
          " (commit " +
          (s.faultline_commit.empty() ? "unknown" : s.faultline_commit) + ")") +
      "\"/>\n";
  props += "      <property name=\"run_dir\" value=\"" + XmlEscape(s.run_dir) +
           "\"/>\n";
  if (s.evidence && s.evidence->weak) {
    // A weak run keeps its verdict; CI can still see it could find little.
    std::string why;
    for (const auto& r : s.evidence->weak_reasons)
      why += (why.empty() ? "" : "; ") + r;
    props +=
        "      <property name=\"weak\" value=\"" + XmlEscape(why) + "\"/>\n";
  }
  if (s.aborted) {
    props += "      <property name=\"interrupted\" value=\"" +
             XmlEscape(s.interruption.signal.empty() ? "unknown signal"
                                                     : s.interruption.signal) +
             "\"/>\n";
  }
  std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" +
                       std::to_string(failures) + "\" errors=\"" +
                       std::to_string(errors) + "\" time=\"" +
                       Seconds(TotalSeconds(s)) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"faultline\"" + counts + ">\n";
  out += "  <testsuite name=\"" + XmlEscape(s.name) + "\"" + counts +
         " skipped=\"0\" timestamp=\"" + XmlEscape(s.started_at) + "\">\n";
  out += "    <properties>\n" + props + "    </properties>\n";
  out += cases;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace faultline::reports

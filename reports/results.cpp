#include "reports/results.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace faultline::reports {

using checkers::Validity;

Validity OverallValidity(const RunSummary& s) {
  return checkers::Compose(s.verdicts);
}

int RunExitCode(const RunSummary& s) {
  Validity v = OverallValidity(s);
  if (!s.expect) return checkers::ExitCode(v);
  if (checkers::ToString(v) == *s.expect) return 0;
  return v == Validity::kValid ? 1 : checkers::ExitCode(v);
}

std::string ResultsJson(const RunSummary& s) {
  using nlohmann::json;
  json j;
  j["schema"] = "faultline.results/1";
  j["name"] = s.name;
  Validity v = OverallValidity(s);
  j["valid"] = std::string(checkers::ToString(v));
  j["expect"] = s.expect ? json(*s.expect) : json(nullptr);
  j["expectation_met"] =
      s.expect ? json(std::string(checkers::ToString(v)) == *s.expect)
               : json(nullptr);
  j["exit_code"] = RunExitCode(s);
  j["seed"] = s.seed;
  j["run_dir"] = s.run_dir;
  j["started_at"] = s.started_at;
  j["cluster"] = {{"provider", s.cluster_provider}, {"nodes", s.nodes}};
  j["target"] = {{"name", s.target}, {"version", s.target_version}};
  json checks = json::array();
  for (const auto& verdict : s.verdicts) {
    json c;
    c["checker"] = verdict.checker;
    c["valid"] = std::string(checkers::ToString(verdict.validity));
    c["summary"] = verdict.summary;
    c["explanation"] = verdict.explanation;
    json details = json::parse(
        verdict.details_json.empty() ? "{}" : verdict.details_json, nullptr,
        /*allow_exceptions=*/false);
    c["details"] = details.is_discarded() ? json::object() : details;
    checks.push_back(std::move(c));
  }
  j["checkers"] = std::move(checks);
  json phases = json::array();
  for (const auto& p : s.phases) {
    phases.push_back({{"name", p.name}, {"seconds", p.seconds}});
  }
  j["phases"] = std::move(phases);
  j["problems"] = s.problems;
  j["aborted"] = s.aborted;
  j["config"] = s.config_yaml;
  return j.dump(2) + "\n";
}

std::string TextSummary(const RunSummary& s) {
  std::ostringstream out;
  Validity v = OverallValidity(s);
  out << s.name << ": " << checkers::ToString(v);
  if (s.expect) {
    bool met = std::string(checkers::ToString(v)) == *s.expect;
    out << (met ? " (as expected)" : " (expected " + *s.expect + ")");
  }
  if (s.aborted) out << " [interrupted]";
  out << "\n";
  for (const auto& verdict : s.verdicts) {
    out << "  " << verdict.checker << ": "
        << checkers::ToString(verdict.validity) << " — " << verdict.summary
        << "\n";
  }
  for (const auto& verdict : s.verdicts) {
    if (verdict.validity == Validity::kValid || verdict.explanation.empty())
      continue;
    out << "\n" << verdict.checker << ":\n" << verdict.explanation;
    if (verdict.explanation.back() != '\n') out << "\n";
  }
  if (!s.problems.empty()) {
    out << "\nproblems during the run:\n";
    for (const auto& p : s.problems) out << "  - " << p << "\n";
  }
  return out.str();
}

}  // namespace faultline::reports

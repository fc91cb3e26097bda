#include "reports/results.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace faultline::reports {

using checkers::Validity;

Validity OverallValidity(const RunSummary& s) {
  return checkers::Compose(s.verdicts);
}

int SignalExitCode(const std::string& signal) {
  if (signal == "SIGHUP") return 129;
  if (signal == "SIGINT") return 130;
  if (signal == "SIGKILL") return 137;
  if (signal == "SIGTERM") return 143;
  return 0;
}

int RunExitCode(const RunSummary& s) {
  Validity v = OverallValidity(s);
  if (s.aborted) {
    if (int code = SignalExitCode(s.interruption.signal); code != 0) {
      return code;
    }
    return v == Validity::kInvalid ? 1 : 2;
  }
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
  j["faultline"] = {{"version", s.faultline_version},
                    {"commit", s.faultline_commit}};
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
  if (s.aborted) {
    const Interruption& i = s.interruption;
    auto or_null = [](const std::string& t) {
      return t.empty() ? json(nullptr) : json(t);
    };
    j["interrupted"] = {
        {"signal", or_null(i.signal)},
        {"at", or_null(i.at)},
        {"after_s", i.after_s >= 0 ? json(i.after_s) : json(nullptr)},
        {"during", or_null(i.during)},
        {"note", i.note}};
  } else {
    j["interrupted"] = nullptr;
  }
  if (s.evidence) {
    json ev = json::parse(EvidenceToJson(*s.evidence), nullptr, false);
    j["evidence"] = ev.is_discarded() ? json(nullptr) : ev;
  } else {
    j["evidence"] = nullptr;
  }
  j["config"] = s.config_yaml;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string InterruptionLine(const RunSummary& s) {
  const Interruption& i = s.interruption;
  std::string line = "interrupted";
  if (!i.signal.empty()) line += " by " + i.signal;
  if (!i.at.empty()) line += " at " + i.at;
  if (i.after_s >= 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%.1f s after the start)", i.after_s);
    line += buf;
  }
  if (!i.during.empty()) line += " during the " + i.during;
  line += ": the verdict covers only the history recorded until then";
  if (!i.note.empty()) line += "; " + i.note;
  return line;
}

std::string TextSummary(const RunSummary& s, bool per_checker) {
  std::ostringstream out;
  Validity v = OverallValidity(s);
  out << s.name << ": " << checkers::ToString(v);
  if (s.expect) {
    bool met = std::string(checkers::ToString(v)) == *s.expect;
    out << (met ? " (as expected)" : " (expected " + *s.expect + ")");
  }
  if (s.aborted) out << " [interrupted]";
  out << "\n";
  if (s.aborted) out << "  " << InterruptionLine(s) << "\n";
  for (const auto& verdict : s.verdicts) {
    if (!per_checker) break;
    out << "  " << verdict.checker << ": "
        << checkers::ToString(verdict.validity) << " — " << verdict.summary
        << "\n";
  }
  if (s.evidence) out << EvidenceLines(*s.evidence);
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

std::optional<RunSummary> ParseResultsJson(const std::string& text) {
  using nlohmann::json;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  auto str = [&](const json& o, const char* k) -> std::string {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : "";
  };
  RunSummary s;
  s.name = str(j, "name");
  s.run_dir = str(j, "run_dir");
  s.started_at = str(j, "started_at");
  if (j.contains("seed") && j["seed"].is_number_unsigned()) {
    s.seed = j["seed"].get<std::uint64_t>();
  }
  if (j.contains("cluster") && j["cluster"].is_object()) {
    s.cluster_provider = str(j["cluster"], "provider");
    if (j["cluster"].contains("nodes") && j["cluster"]["nodes"].is_number()) {
      s.nodes = j["cluster"]["nodes"].get<int>();
    }
  }
  if (j.contains("target") && j["target"].is_object()) {
    s.target = str(j["target"], "name");
    s.target_version = str(j["target"], "version");
  }
  if (j.contains("faultline") && j["faultline"].is_object()) {
    s.faultline_version = str(j["faultline"], "version");
    s.faultline_commit = str(j["faultline"], "commit");
  }
  s.config_yaml = str(j, "config");
  if (j.contains("expect") && j["expect"].is_string()) {
    s.expect = j["expect"].get<std::string>();
  }
  if (j.contains("checkers") && j["checkers"].is_array()) {
    for (const auto& c : j["checkers"]) {
      if (!c.is_object()) continue;
      checkers::Verdict v;
      v.checker = str(c, "checker");
      std::string valid = str(c, "valid");
      v.validity = valid == "valid"     ? Validity::kValid
                   : valid == "invalid" ? Validity::kInvalid
                                        : Validity::kUnknown;
      v.summary = str(c, "summary");
      v.explanation = str(c, "explanation");
      v.details_json = c.contains("details") && c["details"].is_object()
                           ? c["details"].dump(-1, ' ', false,
                                               json::error_handler_t::replace)
                           : "{}";
      s.verdicts.push_back(std::move(v));
    }
  }
  if (j.contains("phases") && j["phases"].is_array()) {
    for (const auto& p : j["phases"]) {
      if (!p.is_object()) continue;
      double sec = p.contains("seconds") && p["seconds"].is_number()
                       ? p["seconds"].get<double>()
                       : 0.0;
      s.phases.push_back({str(p, "name"), sec});
    }
  }
  if (j.contains("problems") && j["problems"].is_array()) {
    for (const auto& p : j["problems"]) {
      if (p.is_string()) s.problems.push_back(p.get<std::string>());
    }
  }
  if (j.contains("aborted") && j["aborted"].is_boolean()) {
    s.aborted = j["aborted"].get<bool>();
  }
  if (j.contains("interrupted") && j["interrupted"].is_object()) {
    const json& i = j["interrupted"];
    s.aborted = true;
    s.interruption.signal = str(i, "signal");
    s.interruption.at = str(i, "at");
    if (i.contains("after_s") && i["after_s"].is_number()) {
      s.interruption.after_s = i["after_s"].get<double>();
    }
    s.interruption.during = str(i, "during");
    s.interruption.note = str(i, "note");
  }
  if (j.contains("evidence") && j["evidence"].is_object()) {
    s.evidence = EvidenceFromJson(j["evidence"].dump());
  }
  return s;
}

std::string StatsRowSummary(const Evidence& e) {
  auto counts = [](const PhaseCounts& c) {
    return std::to_string(c.ok) + " ok, " + std::to_string(c.fail) + " fail, " +
           std::to_string(c.info) + " info";
  };
  std::string out = counts(e.workload);
  if (e.final_reads.total() > 0) {
    // Zero fail and info left out, so the row fits 100 columns.
    const PhaseCounts& f = e.final_reads;
    std::string fr = std::to_string(f.ok) + " ok";
    if (f.fail > 0) fr += ", " + std::to_string(f.fail) + " fail";
    if (f.info > 0) fr += ", " + std::to_string(f.info) + " info";
    out += "; final reads " + fr;
  }
  if (e.observer.total() > 0)
    out += "; observer reads " + std::to_string(e.observer.total());
  return out;
}

std::string SummaryTable(const RunSummary& s, const std::string& report_path) {
  constexpr std::size_t kWidth = 100;
  std::size_t name_w = 7;  // "checker"
  for (const auto& v : s.verdicts) name_w = std::max(name_w, v.checker.size());
  auto pad = [](std::string t, std::size_t w) {
    if (t.size() < w) t.append(w - t.size(), ' ');
    return t;
  };
  auto cut = [&](std::string line) {
    // Cut on a UTF-8 boundary.
    if (line.size() <= kWidth) return line;
    std::size_t n = kWidth - 1;
    while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) --n;
    line.resize(n);
    return line + "\xE2\x80\xA6";
  };
  std::string out;
  std::string rule(std::min(kWidth, name_w + 2 + 9 + 40), '-');
  out += pad("checker", name_w) + "  " + pad("verdict", 9) + "summary\n";
  out += rule + "\n";
  for (const auto& v : s.verdicts) {
    std::string summary = v.checker == "stats" && s.evidence
                              ? StatsRowSummary(*s.evidence)
                              : v.summary;
    std::replace(summary.begin(), summary.end(), '\n', ' ');
    out += cut(pad(v.checker, name_w) + "  " +
               pad(std::string(checkers::ToString(v.validity)), 9) + summary) +
           "\n";
  }
  out += rule + "\n";
  std::string verdict(checkers::ToString(OverallValidity(s)));
  std::string overall = pad("overall", name_w) + "  " + pad(verdict, 9);
  if (s.expect) {
    overall += verdict == *s.expect ? "as expected" : "expected " + *s.expect;
  }
  if (s.aborted) {
    std::string what = "interrupted";
    if (!s.interruption.signal.empty())
      what += " (" + s.interruption.signal + ")";
    overall += s.expect ? ", " + what : what;
  }
  while (!overall.empty() && overall.back() == ' ') overall.pop_back();
  out += overall + "\n";
  if (!s.phases.empty()) {
    std::string phases;
    double total = 0;
    char buf[64];
    for (const auto& p : s.phases) {
      std::snprintf(buf, sizeof buf, "%s%s %.1f s", phases.empty() ? "" : ", ",
                    p.name.c_str(), p.seconds);
      phases += buf;
      total += p.seconds;
    }
    std::snprintf(buf, sizeof buf, " (total %.1f s)", total);
    out += cut("phases: " + phases + buf) + "\n";
  }
  if (!report_path.empty()) out += "report: " + report_path + "\n";
  return out;
}

}  // namespace faultline::reports

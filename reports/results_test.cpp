// results.json on a fixed history (golden file), its parser, and the
// end-of-run table. Regenerate the golden file after an intended change with
// FAULTLINE_UPDATE_GOLDEN=1 ./reports_test "results: golden*".
#include "reports/results.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checkers/history_io.h"
#include "checkers/linearizable.h"
#include "checkers/stats.h"

using faultline::checkers::Validity;
using faultline::reports::Interruption;
using faultline::reports::ParseResultsJson;
using faultline::reports::ResultsJson;
using faultline::reports::RunExitCode;
using faultline::reports::RunSummary;
using faultline::reports::SummaryTable;

namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A run of the fixed stale-read history; times and paths normalised.
RunSummary FixedRun() {
  auto read = faultline::checkers::ParseJsonl(
      ReadText(std::string(REPORTS_TESTDATA) + "/stale_read.jsonl"));
  REQUIRE(read.ok);
  RunSummary s;
  s.name = "etcd-serializable-stale-read";
  s.run_dir = "/STORE/etcd-serializable-stale-read/RUN";
  s.started_at = "2026-01-01T00:00:00Z";
  s.seed = 3;
  s.cluster_provider = "netns";
  s.nodes = 3;
  s.target = "etcd";
  s.target_version = "etcd 3.4.23";
  s.faultline_version = "0.1.0";
  s.faultline_commit = "0123456789ab";
  s.config_yaml = "name: etcd-serializable-stale-read\nexpect: invalid\n";
  s.expect = "invalid";
  faultline::checkers::LinearizableOptions lin;
  lin.model = "cas-register";
  s.verdicts = {faultline::checkers::CheckLinearizable(read.history, lin),
                faultline::checkers::StatsVerdict(read.history)};
  s.phases = {{"setup", 1.25}, {"workload", 60}, {"check", 0.5}};
  s.problems = {"final read of \"k1\" never succeeded"};
  s.evidence = faultline::reports::ComputeEvidence(read.history);
  return s;
}

}  // namespace

TEST_CASE("results: golden results.json of a fixed history") {
  // The search's own measurements are not part of the contract.
  nlohmann::json j = nlohmann::json::parse(ResultsJson(FixedRun()));
  for (auto& c : j["checkers"]) {
    for (const char* k : {"memo_entries", "peak_bytes"}) {
      if (c["details"].contains(k)) c["details"][k] = 0;
    }
  }
  std::string got = j.dump(2) + "\n";
  std::string golden_path =
      std::string(REPORTS_TESTDATA) + "/stale_read.results.json";
  if (std::getenv("FAULTLINE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path, std::ios::binary) << got;
  }
  std::string want = ReadText(golden_path);
  REQUIRE_FALSE(want.empty());
  CHECK(got == want);
}

TEST_CASE("results: ParseResultsJson inverts ResultsJson") {
  RunSummary s = FixedRun();
  std::string text = ResultsJson(s);
  auto parsed = ParseResultsJson(text);
  REQUIRE(parsed);
  CHECK(parsed->verdicts.size() == 2);
  CHECK(parsed->verdicts[0].validity == Validity::kInvalid);
  CHECK(parsed->expect == std::optional<std::string>("invalid"));
  CHECK(parsed->phases.size() == 3);
  CHECK(ResultsJson(*parsed) == text);
  CHECK_FALSE(ParseResultsJson("[1,2]"));
  CHECK_FALSE(ParseResultsJson("{not json"));
}

TEST_CASE("results: invalid UTF-8 does not throw") {
  RunSummary s = FixedRun();
  s.name = "bad\xFF";
  std::string text = ResultsJson(s);
  CHECK(text.find("bad\xEF\xBF\xBD") != std::string::npos);
}

TEST_CASE("results: the end-of-run table") {
  RunSummary s = FixedRun();
  std::string t = SummaryTable(s, "/STORE/x/report.html");
  CHECK(t.find("checker       verdict  summary\n") == 0);
  CHECK(t.find("\nlinearizable  invalid  key \"k0\": ") != std::string::npos);
  CHECK(t.find("\nstats         valid    ") != std::string::npos);
  CHECK(t.find("\noverall       invalid  as expected\n") != std::string::npos);
  CHECK(t.find("phases: setup 1.2 s, workload 60.0 s, check 0.5 s (total "
               "61.8 s)\n") != std::string::npos);
  CHECK(t.find("report: /STORE/x/report.html\n") != std::string::npos);
  for (std::size_t a = 0, b; (b = t.find('\n', a)) != std::string::npos;
       a = b + 1) {
    CHECK(b - a <= 102);  // 100 columns (+ a 3-byte ellipsis)
  }
}

TEST_CASE("results: faultline's version and commit are recorded") {
  nlohmann::json j = nlohmann::json::parse(ResultsJson(FixedRun()));
  CHECK(j["faultline"]["version"] == "0.1.0");
  CHECK(j["faultline"]["commit"] == "0123456789ab");
  auto parsed = ParseResultsJson(ResultsJson(FixedRun()));
  REQUIRE(parsed);
  CHECK(parsed->faultline_commit == "0123456789ab");
}

TEST_CASE("results: an interrupted run never exits 0") {
  RunSummary s = FixedRun();  // invalid, as expected: 0 when not interrupted
  REQUIRE(RunExitCode(s) == 0);
  s.aborted = true;
  s.interruption.signal = "SIGINT";
  CHECK(RunExitCode(s) == 130);
  s.interruption.signal = "SIGTERM";
  CHECK(RunExitCode(s) == 143);
  // A valid prefix interrupted by a signal: still the signal's code.
  s.expect.reset();
  s.verdicts.resize(1);
  s.verdicts[0].validity = Validity::kValid;
  CHECK(RunExitCode(s) == 143);
  // Killed controller (signal unknown): unknown for a valid prefix, invalid
  // stays invalid (an anomaly in a prefix is real).
  s.interruption = Interruption{};
  CHECK(RunExitCode(s) == 2);
  s.verdicts[0].validity = Validity::kInvalid;
  CHECK(RunExitCode(s) == 1);
}

TEST_CASE("results: the interrupt is recorded, unknown parts as null") {
  RunSummary s = FixedRun();
  nlohmann::json j = nlohmann::json::parse(ResultsJson(s));
  CHECK(j["interrupted"].is_null());
  CHECK(j["aborted"] == false);

  s.aborted = true;
  s.interruption.signal = "SIGTERM";
  s.interruption.at = "2026-01-01T00:00:12.345Z";
  s.interruption.after_s = 12.5;
  s.interruption.during = "workload";
  s.interruption.note = "faults healed";
  j = nlohmann::json::parse(ResultsJson(s));
  CHECK(j["aborted"] == true);
  CHECK(j["exit_code"] == 143);
  CHECK(j["interrupted"]["signal"] == "SIGTERM");
  CHECK(j["interrupted"]["after_s"] == 12.5);
  CHECK(j["interrupted"]["during"] == "workload");
  auto parsed = ParseResultsJson(ResultsJson(s));
  REQUIRE(parsed);
  CHECK(parsed->aborted);
  CHECK(parsed->interruption.signal == "SIGTERM");
  CHECK(parsed->interruption.at == "2026-01-01T00:00:12.345Z");
  CHECK(ResultsJson(*parsed) == ResultsJson(s));

  s.interruption = Interruption{};
  s.interruption.note = "controller killed";
  j = nlohmann::json::parse(ResultsJson(s));
  CHECK(j["interrupted"]["signal"].is_null());
  CHECK(j["interrupted"]["at"].is_null());
  CHECK(j["interrupted"]["after_s"].is_null());
  CHECK(j["interrupted"]["during"].is_null());
  CHECK(j["interrupted"]["note"] == "controller killed");
}

TEST_CASE("results: the terminal says interrupted, with the signal") {
  RunSummary s = FixedRun();
  s.aborted = true;
  s.interruption.signal = "SIGINT";
  s.interruption.after_s = 3.25;
  s.interruption.during = "workload";
  std::string text = faultline::reports::TextSummary(s);
  CHECK(text.find("[interrupted]") != std::string::npos);
  CHECK(text.find("interrupted by SIGINT (3.2 s after the start) during the "
                  "workload") != std::string::npos);
  CHECK(SummaryTable(s, "").find("as expected, interrupted (SIGINT)\n") !=
        std::string::npos);
}

TEST_CASE("results: the evidence line, WEAK RUN, and the stats row's counts") {
  RunSummary s = FixedRun();
  std::string text = faultline::reports::TextSummary(s, false);
  // The fixed history: one partition with a timeout and a failed read in it,
  // 4 ok operations in all: too few.
  CHECK(text.find("\nevidence: 1 fault, 1 bit (partition: 2 of 4 requests "
                  "failed or timed out (50.0 % vs 0.0 % outside faults)); 4 "
                  "ok ops\n") != std::string::npos);
  CHECK(text.find("\nWEAK RUN: the workload barely ran: 4 ok operations "
                  "(fewer than 100)") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(ResultsJson(s));
  CHECK(j["evidence"]["weak"] == true);
  CHECK(j["evidence"]["faults"][0]["kind"] == "partition");
  CHECK(j["evidence"]["faults"][0]["packets_dropped"].is_null());

  // The stats row counts the workload, with final and observer reads apart.
  s.evidence->final_reads.ok = 2;
  s.evidence->observer.ok = 30;
  std::string t = SummaryTable(s, "");
  CHECK(t.find("\nstats         valid    4 ok, 1 fail, 1 info; final reads 2 "
               "ok; observer reads 30\n") != std::string::npos);
  s.evidence->final_reads.info = 1;
  CHECK(SummaryTable(s, "").find("; final reads 2 ok, 1 info; observer") !=
        std::string::npos);

  // A summary without evidence (an old results.json) has no evidence line.
  s.evidence.reset();
  CHECK(faultline::reports::TextSummary(s).find("evidence:") ==
        std::string::npos);
  CHECK(nlohmann::json::parse(ResultsJson(s))["evidence"].is_null());
}

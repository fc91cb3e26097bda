// faultline analyze RUN_DIR: re-runs the checkers on a stored history and
// rewrites the run's results.json, junit.xml and report.html (keeping what
// only the run knew: phases, problems, target version, the interrupt).
// A run whose controller was killed (no results.json, ledger never closed)
// is marked interrupted; one killed before its first operation has no
// history and gets `unknown` (nothing was tested). Exit code: the run's
// (reports::RunExitCode).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cmd_report.h"
#include "cli/commands.h"
#include "cli/registry.h"
#include "harness/config/config.h"
#include "harness/run/store.h"
#include "reports/junit.h"
#include "reports/results.h"

namespace faultline::cli {
namespace {

struct AnalyzeOptions {
  std::string run_dir;
  double time_limit = 300;
  int threads = 0;
};

int DoAnalyze(const AnalyzeOptions& o) {
  auto dir = harness::ResolveRunDir(o.run_dir);
  if (!dir.ok()) {
    std::fprintf(stderr, "faultline analyze: %s\n", dir.error().c_str());
    return kExitUsage;
  }
  std::string config_path = *dir + "/" + harness::kConfigFile;
  auto loaded = harness::LoadConfigFile(config_path);
  if (!loaded.ok()) {
    std::fputs(loaded.FormatErrors().c_str(), stderr);
    return kExitUsage;
  }
  const harness::TestSpec& spec = *loaded.spec;
  std::string history_path = *dir + "/" + harness::kHistoryFile;
  auto history = ReadRunHistory(history_path, "analyze");
  if (!history || !WellFormedOrSay(*history, history_path)) return kExitUsage;
  auto workload = MakeWorkload(spec);
  if (!workload.ok()) {
    std::fprintf(stderr, "faultline analyze: %s\n", workload.error().c_str());
    return kExitUsage;
  }
  harness::CheckOptions co;
  co.threads = o.threads;
  co.deadline = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(o.time_limit));

  // Keep what the original run recorded and a re-check cannot know: start
  // time, target version, phases, problems, whether and how it was
  // interrupted. Without results.json (a killed controller), an unclosed
  // ledger says the run was interrupted.
  reports::RunSummary summary;
  std::string results_path = *dir + "/" + harness::kResultsFile;
  if (auto old_text = harness::ReadFile(results_path); old_text.ok()) {
    if (auto old = reports::ParseResultsJson(*old_text)) summary = *old;
  } else {
    NoteUnfinishedRun(*dir, summary);
  }
  DescribeRun(spec, summary);
  summary.run_dir = *dir;
  summary.verdicts = CheckRunHistory(**workload, *history, co);

  (void)harness::WriteFileAtomic(results_path, reports::ResultsJson(summary));
  (void)harness::WriteFileAtomic(*dir + "/" + harness::kJunitFile,
                                 reports::JunitXml(summary));
  std::string report = WriteRunReport(summary, *history);
  if (std::string store = StoreOfRunDir(*dir); !store.empty()) {
    UpdateStoreIndex(store);
  }
  std::printf("%s", reports::TextSummary(summary).c_str());
  if (!report.empty()) std::printf("report: %s\n", report.c_str());
  return reports::RunExitCode(summary);
}

}  // namespace

void AddAnalyzeCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<AnalyzeOptions>();
  auto* cmd = root.add_subcommand(
      "analyze", "Re-run the checkers on a stored run and update its results");
  cmd->add_option("run_dir", o->run_dir,
                  "Run directory (store/<test>/<timestamp> or .../latest)")
      ->required();
  cmd->add_option("--time-limit", o->time_limit,
                  "Give up (unknown) after this many seconds of checking");
  cmd->add_option("--threads", o->threads,
                  "Keys checked in parallel (default: all cores)");
  cmd->footer(
      "Reads config.yaml and history.jsonl from the run directory, applies the "
      "workload's\ncheckers and rewrites results.json. Works on runs that were "
      "interrupted or killed\n(a truncated last history line is ignored with a "
      "warning). A run whose controller was killed (SIGKILL: no results.json, "
      "its\nledger never closed) is marked interrupted; without a history "
      "(killed before its\nfirst operation) the verdict is unknown.\n\n"
      "Exit code: the run's: 0 valid or as expected, 1 invalid, 2 unknown; an "
      "interrupted\nrun never 0 (130/143 for SIGINT/SIGTERM, else 1 invalid, "
      "2 otherwise).\n\nExamples:\n  faultline analyze "
      "store/etcd-register/latest\n"
      "  faultline analyze store/etcd-register/20261130T051122.123Z");
  cmd->callback([o, &exit_code] { exit_code = DoAnalyze(*o); });
}

}  // namespace faultline::cli

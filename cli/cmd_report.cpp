// faultline report RUN_DIR: regenerates a run's results.json, junit.xml and
// report.html from its stored files, and the store index.
// faultline report --index [STORE]: regenerates STORE/index.html.
#include "cli/cmd_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "checkers/history_io.h"
#include "cli/build_info.h"
#include "cli/commands.h"
#include "cli/registry.h"
#include "harness/config/config.h"
#include "harness/config/spec.h"
#include "harness/interfaces/workload.h"
#include "harness/ledger/ledger.h"
#include "harness/run/interpreter.h"
#include "harness/run/store.h"
#include "reports/junit.h"
#include "reports/report_html.h"
#include "reports/results.h"
#include "reports/store_index.h"

namespace faultline::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxNodeLogs = 200;

std::vector<std::string> NodeLogs(const std::string& run_dir) {
  std::vector<std::string> logs;
  std::error_code ec;
  fs::path nodes = fs::path(run_dir) / harness::kNodesDir;
  if (!fs::is_directory(nodes, ec)) return logs;
  for (fs::recursive_directory_iterator it(nodes, ec), end;
       !ec && it != end && logs.size() < kMaxNodeLogs; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;
    logs.push_back(fs::relative(it->path(), run_dir, ec2).generic_string());
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

struct ReportCliOptions {
  std::string target;  // RUN_DIR, or STORE with --index
  bool index = false;
  bool recheck = false;
  double time_limit = 300;
  int threads = 0;
};

// Runs the workload's checkers on `history` with the run's config (the
// analyze path). Fills the verdicts and the config facts of `summary`.
bool Recheck(const std::string& dir, const checkers::History& history,
             const ReportCliOptions& o, reports::RunSummary& summary) {
  auto loaded = harness::LoadConfigFile(dir + "/" + harness::kConfigFile);
  if (!loaded.ok()) {
    std::fputs(loaded.FormatErrors().c_str(), stderr);
    return false;
  }
  const harness::TestSpec& spec = *loaded.spec;
  auto workload = MakeWorkload(spec);
  if (!workload.ok()) {
    std::fprintf(stderr, "faultline report: %s\n", workload.error().c_str());
    return false;
  }
  harness::CheckOptions co;
  co.threads = o.threads;
  co.deadline = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(o.time_limit));
  DescribeRun(spec, summary);
  auto t0 = std::chrono::steady_clock::now();
  summary.verdicts = CheckRunHistory(**workload, history, co);
  double check_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  bool replaced = false;
  for (auto& p : summary.phases) {
    if (p.name == "check") {
      p.seconds = check_s;
      replaced = true;
    }
  }
  if (!replaced) summary.phases.push_back({"check", check_s});
  return true;
}

int DoReportRun(const ReportCliOptions& o) {
  auto dir = harness::ResolveRunDir(o.target);
  if (!dir.ok()) {
    std::fprintf(stderr, "faultline report: %s\n", dir.error().c_str());
    return kExitUsage;
  }
  std::string history_path = *dir + "/" + harness::kHistoryFile;
  auto history = ReadRunHistory(history_path, "report");
  if (!history) return kExitUsage;

  // What the run recorded; a re-check replaces only the verdicts.
  reports::RunSummary summary;
  bool have_results = false;
  std::string results_path = *dir + "/" + harness::kResultsFile;
  if (auto old = harness::ReadFile(results_path); old.ok()) {
    if (auto parsed = reports::ParseResultsJson(*old)) {
      summary = std::move(*parsed);
      have_results = true;
    } else {
      std::fprintf(stderr,
                   "faultline report: %s is not a results file; re-checking\n",
                   results_path.c_str());
    }
  }
  if (!have_results || o.recheck) {
    if (!WellFormedOrSay(*history, history_path)) return kExitUsage;
    if (!Recheck(*dir, *history, o, summary)) return kExitUsage;
  }
  if (!have_results) NoteUnfinishedRun(*dir, summary);
  summary.run_dir = *dir;

  auto written =
      harness::WriteFileAtomic(results_path, reports::ResultsJson(summary));
  if (written.ok()) {
    written = harness::WriteFileAtomic(*dir + "/" + harness::kJunitFile,
                                       reports::JunitXml(summary));
  }
  if (!written.ok()) {
    std::fprintf(stderr, "faultline report: %s\n", written.error().c_str());
    return kExitInternal;
  }
  std::string report = WriteRunReport(summary, *history);
  if (report.empty()) return kExitInternal;
  std::string store = StoreOfRunDir(*dir);
  if (!store.empty()) UpdateStoreIndex(store);
  std::printf("%s", reports::SummaryTable(summary, report).c_str());
  return reports::RunExitCode(summary);
}

int DoReportIndex(const ReportCliOptions& o) {
  std::string store = o.target.empty() ? "store" : o.target;
  std::error_code ec;
  if (!fs::is_directory(store, ec)) {
    std::fprintf(stderr, "faultline report: %s: not a directory (a store)\n",
                 store.c_str());
    return kExitUsage;
  }
  std::string path = UpdateStoreIndex(store);
  if (path.empty()) return kExitInternal;
  std::size_t runs = reports::ScanStore(store).size();
  std::printf("%s (%zu run%s)\n", path.c_str(), runs, runs == 1 ? "" : "s");
  return 0;
}

}  // namespace

std::optional<checkers::History> ReadRunHistory(const std::string& history_path,
                                                const char* command) {
  std::error_code ec;
  if (!fs::exists(history_path, ec) && !ec) return checkers::History{};
  auto text = harness::ReadFile(history_path);
  if (!text.ok()) {
    std::fprintf(stderr, "faultline %s: %s\n", command, text.error().c_str());
    return std::nullopt;
  }
  auto read = checkers::ParseJsonl(*text);
  *text = std::string();  // the history holds what it needs; free the text
  for (const auto& w : read.warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", history_path.c_str(), w.c_str());
  }
  if (!read.ok) {
    std::fprintf(stderr, "%s:%lld:%lld: error: %s\n", history_path.c_str(),
                 static_cast<long long>(read.error.line),
                 static_cast<long long>(read.error.column),
                 read.error.message.c_str());
    return std::nullopt;
  }
  return std::move(read.history);
}

bool WellFormedOrSay(const checkers::History& history,
                     const std::string& history_path) {
  if (auto bad = checkers::CheckWellFormed(history, "")) {
    std::fprintf(stderr, "%s:%lld: error: %s\n", history_path.c_str(),
                 static_cast<long long>(bad->line), bad->message.c_str());
    return false;
  }
  return true;
}

std::string WriteRunReport(const reports::RunSummary& summary,
                           const checkers::History& history) {
  reports::ReportLinks links;
  links.history = harness::kHistoryFile;
  links.results = harness::kResultsFile;
  links.junit = harness::kJunitFile;
  links.config = harness::kConfigFile;
  links.log = harness::kLogFile;
  links.ledger = harness::kLedgerFile;
  // Only files that exist are linked.
  std::error_code ec;
  for (std::string* l : {&links.history, &links.results, &links.junit,
                         &links.config, &links.log, &links.ledger}) {
    if (!fs::exists(fs::path(summary.run_dir) / *l, ec)) l->clear();
  }
  links.node_logs = NodeLogs(summary.run_dir);
  std::string path = summary.run_dir + "/report.html";
  auto s = harness::WriteFileAtomic(
      path, reports::ReportHtml(summary, history, links));
  if (!s.ok()) {
    std::fprintf(stderr, "faultline: report.html: %s\n", s.error().c_str());
    return "";
  }
  return path;
}

void DescribeRun(const harness::TestSpec& spec, reports::RunSummary& summary) {
  summary.name = spec.name;
  summary.seed = spec.seed;
  summary.cluster_provider = spec.cluster.provider;
  summary.nodes = spec.cluster.nodes;
  summary.target = spec.target.name;
  summary.expect = spec.expect;
  summary.config_yaml = harness::DescribeSpec(spec);
  summary.faultline_version = BuildVersion();
  summary.faultline_commit = BuildCommit();
}

std::vector<checkers::Verdict> CheckRunHistory(
    harness::Workload& workload, const checkers::History& history,
    const harness::CheckOptions& options) {
  bool tested = false;
  for (const auto& e : history) {
    if (!e.is_nemesis() && e.type == checkers::EventType::kInvoke) {
      tested = true;
      break;
    }
  }
  if (!tested) {
    checkers::Verdict v;
    v.checker = "run";
    v.validity = checkers::Validity::kUnknown;
    v.summary =
        "nothing was tested: the history holds no client operation (the run "
        "stopped before its first one)";
    return {v};
  }
  std::vector<checkers::Verdict> verdicts = workload.Check(history, options);
  for (auto& v : harness::CheckObservations(history)) {
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

void NoteUnfinishedRun(const std::string& run_dir,
                       reports::RunSummary& summary) {
  std::error_code ec;
  if (fs::exists(fs::path(run_dir) / harness::kResultsFile, ec)) return;
  auto ledger =
      harness::ReadLedger((fs::path(run_dir) / harness::kLedgerFile).string());
  if (!ledger.ok()) return;
  for (const auto& e : *ledger) {
    if (e.kind == "closed") return;
  }
  summary.aborted = true;
  summary.interruption = reports::Interruption{};
  // The start time is in the directory's name (harness/run/store.h).
  std::string stamp = fs::path(run_dir).filename().string();
  if (summary.started_at.empty() && stamp.size() >= 15 && stamp[8] == 'T') {
    summary.started_at = stamp.substr(0, 4) + "-" + stamp.substr(4, 2) + "-" +
                         stamp.substr(6, 2) + "T" + stamp.substr(9, 2) + ":" +
                         stamp.substr(11, 2) + ":" + stamp.substr(13, 2) + "Z";
  }
  summary.interruption.note =
      "the controller stopped before the end of the run without closing its "
      "fault ledger (killed with SIGKILL, crashed, or the machine went "
      "down); when and why are not known";
}

std::string StoreOfRunDir(const std::string& run_dir) {
  fs::path p = fs::path(run_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  fs::path store = p.parent_path().parent_path();
  if (store.empty()) return "";
  return store.string();
}

std::string UpdateStoreIndex(const std::string& store_dir) {
  std::string r = reports::WriteStoreIndex(store_dir);
  if (r.rfind("error: ", 0) == 0) {
    std::fprintf(stderr, "faultline: store index: %s\n", r.c_str() + 7);
    return "";
  }
  return r;
}

void AddReportCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<ReportCliOptions>();
  auto* cmd = root.add_subcommand(
      "report",
      "Regenerate a run's reports (results.json, junit.xml, report.html) or "
      "the store index");
  cmd->add_option("path", o->target,
                  "Run directory (store/<test>/<timestamp> or .../latest); "
                  "with --index, the store (default: store)");
  cmd->add_flag("--index", o->index,
                "Regenerate STORE/index.html, the list of every stored run");
  cmd->add_flag("--recheck", o->recheck,
                "Run the checkers again (as analyze does) instead of reusing "
                "the stored verdicts");
  cmd->add_option("--time-limit", o->time_limit,
                  "With a re-check: give up (unknown) after this many seconds");
  cmd->add_option("--threads", o->threads,
                  "With a re-check: keys checked in parallel (default: all "
                  "cores)");
  cmd->footer(
      "Without --index, reads the run's history.jsonl and results.json (or, "
      "when there is\nno results.json or with --recheck, config.yaml and the "
      "workload's checkers) and\nrewrites results.json, junit.xml and "
      "report.html, then the store's index.html.\nreport.html is one "
      "self-contained file: open it in any browser, offline.\n\n"
      "Exit code: as analyze (0 valid or as expected, 1 invalid, 2 unknown); "
      "--index: 0.\n\nExamples:\n"
      "  faultline report store/etcd-register/latest\n"
      "  faultline report --index /tmp/store");
  cmd->callback([o, &exit_code] {
    if (o->index) {
      exit_code = DoReportIndex(*o);
    } else if (o->target.empty()) {
      std::fprintf(stderr,
                   "faultline report: give a run directory, or --index\n");
      exit_code = kExitUsage;
    } else {
      exit_code = DoReportRun(*o);
    }
  });
}

}  // namespace faultline::cli

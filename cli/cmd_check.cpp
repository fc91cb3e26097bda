// faultline check --model M FILE: checks a history file from anywhere.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "checkers/history_io.h"
#include "checkers/leader_per_term.h"
#include "checkers/linearizable.h"
#include "checkers/mutex_fencing.h"
#include "cli/commands.h"
#include "harness/interfaces/workload.h"
#include "harness/run/store.h"

namespace faultline::cli {
namespace {

struct CheckCliOptions {
  std::string model;
  std::string file;
  std::string format = "jsonl";
  int threads = 0;
  double time_limit = 0;
  double memory_limit_mb = 0;
  bool json = false;
  bool witness = false;
};

// The linearizability check of `history` against o.model.
checkers::Verdict CheckLin(const CheckCliOptions& o,
                           const checkers::History& history) {
  checkers::LinearizableOptions lin;
  lin.model = o.model;
  lin.threads =
      o.threads > 0
          ? o.threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.time_limit > 0) {
    lin.deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(o.time_limit));
  }
  lin.memory_limit_bytes =
      o.memory_limit_mb > 0
          ? static_cast<std::uint64_t>(o.memory_limit_mb * 1024 * 1024)
          : harness::kDefaultCheckMemoryBytes;
  lin.witness = o.witness;
  return checkers::CheckLinearizable(history, lin);
}

int DoCheck(const CheckCliOptions& o) {
  auto text = harness::ReadFile(o.file);
  if (!text.ok()) {
    std::fprintf(stderr, "faultline check: %s\n", text.error().c_str());
    return kExitUsage;
  }
  checkers::HistoryFormat format = checkers::HistoryFormat::kJsonl;
  if (o.format == "edn") format = checkers::HistoryFormat::kJepsenEdn;
  if (o.format == "porcupine") format = checkers::HistoryFormat::kPorcupine;
  auto read = checkers::ParseHistory(*text, format);
  *text = std::string();  // the history holds what it needs; free the text
  for (const auto& w : read.warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", o.file.c_str(), w.c_str());
  }
  if (!read.ok) {
    std::fprintf(stderr, "%s:%lld:%lld: error: %s\n", o.file.c_str(),
                 static_cast<long long>(read.error.line),
                 static_cast<long long>(read.error.column),
                 read.error.message.c_str());
    return kExitUsage;
  }
  if (auto bad = checkers::CheckWellFormed(read.history, o.model)) {
    std::fprintf(stderr, "%s:%lld: error: %s\n", o.file.c_str(),
                 static_cast<long long>(bad->line), bad->message.c_str());
    return kExitUsage;
  }
  checkers::Verdict v;
  if (o.model == checkers::kMutexFencingChecker) {
    v = checkers::CheckMutexFencing(read.history);
  } else if (o.model == checkers::kLeaderPerTermChecker) {
    v = checkers::CheckLeaderPerTerm(read.history);
  } else {
    v = CheckLin(o, read.history);
  }
  if (o.json) {
    std::string out = "{\"checker\":";
    checkers::AppendJsonString(out, v.checker);
    out += ",\"valid\":";
    checkers::AppendJsonString(out, checkers::ToString(v.validity));
    out += ",\"summary\":";
    checkers::AppendJsonString(out, v.summary);
    out += ",\"explanation\":";
    checkers::AppendJsonString(out, v.explanation);
    out += ",\"details\":";
    out += v.details_json.empty() ? "{}" : v.details_json;
    out += "}\n";
    std::fputs(out.c_str(), stdout);
  } else {
    std::printf("%s: %s — %s\n", o.file.c_str(),
                std::string(checkers::ToString(v.validity)).c_str(),
                v.summary.c_str());
    if (!v.explanation.empty()) std::printf("\n%s\n", v.explanation.c_str());
  }
  return checkers::ExitCode(v.validity);
}

// Linearizability models, plus the lock and leader checkers
// (docs/history-locks.md), which take the same place on the command line.
std::vector<std::string> CheckModelNames() {
  std::vector<std::string> names = checkers::LinearizableModelNames();
  names.push_back(checkers::kMutexFencingChecker);
  names.push_back(checkers::kLeaderPerTermChecker);
  return names;
}

}  // namespace

void AddCheckCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<CheckCliOptions>();
  auto* cmd = root.add_subcommand(
      "check", "Check a history file for linearizability against a model");
  cmd->add_option("--model,-m", o->model,
                  "Model of the system, or the checker mutex-fencing or "
                  "leader-per-term (docs/history-locks.md)")
      ->required()
      ->check(CLI::IsMember(CheckModelNames()));
  cmd->add_option("history", o->file, "History file")->required();
  cmd->add_option("--format", o->format,
                  "Input format: jsonl (faultline), edn (Jepsen history.edn), "
                  "porcupine (Porcupine's test logs)")
      ->check(CLI::IsMember({"jsonl", "edn", "porcupine"}));
  cmd->add_option("--threads", o->threads,
                  "Keys checked in parallel (default: all cores)");
  cmd->add_option("--time-limit", o->time_limit,
                  "Give up (unknown) after this many seconds");
  cmd->add_option("--memory-limit", o->memory_limit_mb,
                  "Give up (unknown) past this many MiB of search state "
                  "(default 4096)");
  cmd->add_flag("--json", o->json, "Print the verdict as JSON");
  cmd->add_flag("--witness", o->witness,
                "On valid, print a linearization order per key");
  cmd->footer(
      "The history format is docs/history-format.md (JSON Lines). Malformed "
      "input is\nreported with its line and column and exits 254.\n\n"
      "Exit code: 0 valid, 1 invalid, 2 unknown (nothing checked, e.g. no "
      "client\noperation in the file, or a time or memory bound hit), 254 "
      "bad input.\n\nExamples:\n"
      "  faultline check --model cas-register store/etcd-register/latest/"
      "history.jsonl\n"
      "  faultline check -m kv --time-limit 30 --json history.jsonl\n"
      "  faultline check -m register --format edn history.edn\n"
      "  faultline check -m mutex-fencing store/redis-lock/latest/"
      "history.jsonl");
  cmd->callback([o, &exit_code] { exit_code = DoCheck(*o); });
}

}  // namespace faultline::cli

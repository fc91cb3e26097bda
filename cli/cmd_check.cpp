// faultline check --model M FILE: checks a history file from anywhere
// (cli/cmd_check.h). Without --format the reader is chosen from the file's
// extension or first line (cli/history_format.h); an explicit --format
// always wins. When the reader fails, the error (file:line:column, exit 254)
// says which other --format reads the file, if one does.
//
// Precedence of what is reported: a reading error (254), then the memory
// limit hit while reading (unknown, 2), then a well-formedness error (254),
// then the checker's verdict. A time that steps back (Jepsen's histories)
// is a warning.
#include "cli/cmd_check.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "checkers/collections/bank.h"
#include "checkers/collections/counter.h"
#include "checkers/collections/set.h"
#include "checkers/history_io.h"
#include "checkers/leader_per_term.h"
#include "checkers/linearizable.h"
#include "checkers/mutex_fencing.h"
#include "checkers/txn/txn.h"
#include "cli/commands.h"
#include "cli/history_format.h"
#include "cli/history_input.h"
#include "cli/output.h"
#include "cli/registry.h"

namespace faultline::cli {
namespace {

using checkers::Verdict;

constexpr double kMiB = 1024.0 * 1024.0;

std::optional<std::chrono::steady_clock::time_point> Deadline(double seconds) {
  if (seconds <= 0) return std::nullopt;
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

bool IsTxnModel(const std::string& model) {
  return model == checkers::txn::kListAppendChecker ||
         model == checkers::txn::kRwRegisterChecker;
}

// The checker a verdict for `model` comes from (its "checker" in --json).
std::string CheckerOf(const std::string& model) {
  for (const char* named :
       {checkers::kMutexFencingChecker, checkers::kLeaderPerTermChecker,
        checkers::txn::kListAppendChecker, checkers::txn::kRwRegisterChecker,
        checkers::collections::kSetChecker, checkers::collections::kBankChecker,
        checkers::collections::kCounterChecker}) {
    if (model == named) return model;
  }
  return checkers::kLinearizableChecker;
}

std::string MiB(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB",
                static_cast<double>(bytes) / kMiB);
  return buf;
}

// Unknown: the memory limit was reached while reading.
Verdict OverMemory(const CheckArgs& a, const MemoryBound& bound,
                   const InputResult& in) {
  Verdict v;
  v.checker = CheckerOf(a.model);
  v.validity = checkers::Validity::kUnknown;
  v.summary = "gave up reading the history: the process held " +
              MiB(in.held_bytes) + " after " + std::to_string(in.events) +
              " event(s) (up to line " + std::to_string(in.last_line) +
              "), past the memory limit of " + MiB(bound.limit_bytes);
  v.explanation = v.summary +
                  "\n--memory-limit counts everything the process holds, the "
                  "history it reads included. Raise it (0: no limit) to check "
                  "this history; a bounded check that gives up is unknown, "
                  "never valid.\n";
  v.details_json = "{\"reason\":";
  checkers::AppendJsonString(v.details_json, v.summary);
  v.details_json +=
      ",\"memory_limit_bytes\":" + std::to_string(bound.limit_bytes) +
      ",\"held_bytes\":" + std::to_string(in.held_bytes) +
      ",\"events_read\":" + std::to_string(in.events) +
      ",\"line\":" + std::to_string(in.last_line) + "}";
  return v;
}

void PrintVerdict(std::FILE* out, const CheckArgs& a, const Verdict& v) {
  if (a.json) {
    std::string s = "{\"checker\":";
    checkers::AppendJsonString(s, v.checker);
    s += ",\"valid\":";
    checkers::AppendJsonString(s, checkers::ToString(v.validity));
    s += ",\"summary\":";
    checkers::AppendJsonString(s, v.summary);
    s += ",\"explanation\":";
    checkers::AppendJsonString(s, v.explanation);
    s += ",\"details\":";
    s += v.details_json.empty() ? "{}" : v.details_json;
    s += "}\n";
    std::fputs(s.c_str(), out);
  } else {
    std::fprintf(out, "%s: %s — %s\n", a.file.c_str(),
                 std::string(checkers::ToString(v.validity)).c_str(),
                 v.summary.c_str());
    if (!v.explanation.empty()) {
      std::fprintf(out, "\n%s\n", v.explanation.c_str());
    }
  }
}

class Check {
 public:
  Check(const CheckArgs& a, std::FILE* out, std::FILE* err)
      : a_(a), out_(out), err_(err) {
    bound_.limit_bytes =
        static_cast<std::uint64_t>(std::max(0.0, a.memory_limit_mib) * kMiB);
    if (a.memory_held) bound_.held = a.memory_held;
  }

  int Run() {
    if (std::string e = file_.Open(a_.file); !e.empty()) {
      std::fprintf(err_, "faultline check: %s\n", e.c_str());
      return kExitUsage;
    }
    if (auto named = FormatFromName(a_.format)) {
      choice_ = {*named, "--format"};
    } else {
      choice_ = DetectHistoryFormat(a_.file, file_.view());
    }
    if (CurrentConsole().verbosity > 0) {
      std::fprintf(err_, "faultline check: reading %s as %s (from %s)\n",
                   a_.file.c_str(),
                   std::string(FormatName(choice_.format)).c_str(),
                   choice_.reason.c_str());
    }
    return IsTxnModel(a_.model) ? RunTxn() : RunHistory();
  }

 private:
  // list-append, rw-register: events go through the well-formedness check
  // into the checker's builder as they are read; no History is built.
  int RunTxn() {
    checkers::WellFormedChecker well_formed(a_.model);
    checkers::txn::TxnHistoryBuilder builder(
        a_.model == checkers::txn::kListAppendChecker
            ? checkers::txn::Workload::kListAppend
            : checkers::txn::Workload::kRwRegister);
    InputResult in = StreamHistoryInput(
        file_, choice_.format,
        [&](const checkers::Event& e, std::size_t) {
          if (!well_formed.Add(e)) builder.Add(e);
          return true;
        },
        bound_);
    if (int rc = AfterReading(in); rc >= 0) return rc;
    if (int rc = WellFormed(well_formed); rc >= 0) return rc;
    checkers::txn::TxnOptions t;
    t.consistency_model = a_.consistency_model;
    t.deadline = Deadline(a_.time_limit);
    if (bound_.limited()) {
      t.memory_limit_bytes = bound_.limit_bytes;
      t.memory_in_use = bound_.held;
    }
    return Print(builder.Finish(t));
  }

  int RunHistory() {
    InputResult in = ReadHistoryInput(file_, choice_.format, bound_);
    if (int rc = AfterReading(in); rc >= 0) return rc;
    const checkers::History& history = in.read.history;
    checkers::WellFormedChecker well_formed(a_.model);
    for (const checkers::Event& e : history) {
      if (well_formed.Add(e)) break;
    }
    if (int rc = WellFormed(well_formed); rc >= 0) return rc;
    if (a_.model == checkers::kMutexFencingChecker) {
      return Print(checkers::CheckMutexFencing(history));
    }
    if (a_.model == checkers::kLeaderPerTermChecker) {
      return Print(checkers::CheckLeaderPerTerm(history));
    }
    if (a_.model == checkers::collections::kSetChecker) {
      return Print(checkers::collections::CheckSet(history));
    }
    if (a_.model == checkers::collections::kBankChecker) {
      return Print(checkers::collections::CheckBank(history));
    }
    if (a_.model == checkers::collections::kCounterChecker) {
      return Print(checkers::collections::CheckCounter(history));
    }
    checkers::LinearizableOptions lin;
    lin.model = a_.model;
    lin.threads = a_.threads > 0
                      ? a_.threads
                      : static_cast<int>(
                            std::max(1u, std::thread::hardware_concurrency()));
    lin.deadline = Deadline(a_.time_limit);
    if (bound_.limited()) {
      lin.memory_limit_bytes = bound_.limit_bytes;
      lin.memory_in_use = bound_.held;
    }
    lin.witness = a_.witness;
    return Print(checkers::CheckLinearizable(history, lin));
  }

  // Warnings, then a reading error (254) or the memory limit (unknown);
  // -1 to go on. Frees the text when reading succeeded.
  int AfterReading(const InputResult& in) {
    for (const auto& w : in.read.warnings) Warn(w);
    if (!in.read.ok) {
      PrintReadError(in.read.error);
      return kExitUsage;
    }
    file_.Release();  // what the checker needs is read; free the text
    if (in.over_memory) return Print(OverMemory(a_, bound_, in));
    return -1;
  }

  int WellFormed(const checkers::WellFormedChecker& well_formed) {
    if (const auto& bad = well_formed.error()) {
      std::fprintf(err_, "%s:%lld: error: %s\n", a_.file.c_str(),
                   static_cast<long long>(bad->line), bad->message.c_str());
      return kExitUsage;
    }
    if (const auto& note = well_formed.time_note()) Warn(ToString(*note));
    return -1;
  }

  int Print(const Verdict& v) {
    PrintVerdict(out_, a_, v);
    return checkers::ExitCode(v.validity);
  }

  void Warn(const std::string& w) {
    std::fprintf(err_, "%s: warning: %s\n", a_.file.c_str(), w.c_str());
  }

  // file:line:column (the column left out when the error is about a whole
  // line), the format it was read as and a --format that reads it, if one
  // does (judged on the file's beginning: the text is mapped again).
  void PrintReadError(const checkers::ReadError& e) {
    const std::string format_name(FormatName(choice_.format));
    std::string where = a_.file + ":" + std::to_string(e.line);
    if (e.column > 0) where += ":" + std::to_string(e.column);
    std::fprintf(err_, "%s: error: %s\n", where.c_str(), e.message.c_str());
    std::fprintf(err_, "  note: read as %s (from %s)\n", format_name.c_str(),
                 choice_.reason.c_str());
    std::optional<checkers::HistoryFormat> other;
    if (file_.view().empty()) (void)file_.Open(a_.file);
    other = SuggestFormat(file_.view(), choice_.format);
    if (other) {
      std::string name(FormatName(*other));
      std::fprintf(err_,
                   "  hint: the file reads as %s: try --format %s, e.g.\n"
                   "    faultline check --model %s --format %s %s\n",
                   name.c_str(), name.c_str(), a_.model.c_str(), name.c_str(),
                   a_.file.c_str());
    } else {
      std::fprintf(err_,
                   "  hint: no reader (jsonl, edn, porcupine) reads this "
                   "file; docs/history-formats.md says what each accepts\n");
    }
  }

  const CheckArgs& a_;
  std::FILE* out_;
  std::FILE* err_;
  MemoryBound bound_;
  HistoryText file_;
  FormatChoice choice_;
};

// Linearizability models, plus the lock and leader checkers
// (docs/history-locks.md), which take the same place on the command line.
std::vector<std::string> CheckModelNames() {
  std::vector<std::string> names;
  for (const Described& d : CheckModelDescriptions()) names.push_back(d.name);
  return names;
}

}  // namespace

int RunCheck(const CheckArgs& args, std::FILE* out, std::FILE* err) {
  return Check(args, out, err).Run();
}

std::string MemoryLimitProblem(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  const bool number = end != s && *end == '\0';
  if (!number) {
    return "--memory-limit must be a number of MiB (0: no limit), not \"" +
           text + "\"";
  }
  if (std::isnan(v) || std::isinf(v)) {
    return "--memory-limit must be a finite number of MiB (0: no limit), "
           "not " +
           text;
  }
  if (v < 0) {
    return "--memory-limit must be >= 0 MiB (0: no limit), not " + text;
  }
  return {};
}

void AddCheckCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<CheckArgs>();
  o->memory_limit_mib = kDefaultCheckMemoryMiB;
  auto* cmd = root.add_subcommand(
      "check",
      "Check a history file against a model: linearizability, locks and "
      "leaders, or transactions (list-append, rw-register)");
  cmd->add_option("--model,-m", o->model,
                  "Model of the system, the checker mutex-fencing or "
                  "leader-per-term (docs/history-locks.md), or the "
                  "transactional list-append or rw-register, or set, bank "
                  "or counter (docs/transactions.md)")
      ->required()
      ->check(CLI::IsMember(CheckModelNames()));
  cmd->add_option("history", o->file, "History file")->required();
  cmd->add_option("--format", o->format,
                  "Input format: jsonl (faultline), edn (Jepsen history.edn), "
                  "porcupine (Porcupine's test logs); default: from the "
                  "extension (.jsonl .json .edn .log) or the first line")
      ->check(CLI::IsMember({"jsonl", "edn", "porcupine"}));
  cmd->add_option("--threads", o->threads,
                  "Keys checked in parallel (default: all cores)");
  cmd->add_option("--time-limit", o->time_limit,
                  "Give up (unknown) after this many seconds");
  cmd->add_option("--memory-limit", o->memory_limit_mib,
                  "Give up (unknown) when the process holds more than this "
                  "many MiB, the history it reads included (default 4096; 0: "
                  "no limit)")
      ->check(CLI::Validator(MemoryLimitProblem, "MiB", "MEMORY"));
  cmd->add_option("--consistency-model", o->consistency_model,
                  "list-append and rw-register: the model the history must "
                  "satisfy (default strict-serializable)")
      ->check(CLI::IsMember(checkers::txn::ConsistencyModelNames()));
  cmd->add_flag("--json", o->json, "Print the verdict as JSON");
  cmd->add_flag("--witness", o->witness,
                "On valid, print a linearization order per key");
  cmd->footer(
      "faultline's history format is docs/history-format.md (JSON Lines). "
      "Without --format\nthe reader is chosen from the extension (.jsonl/.json "
      "jsonl, .edn edn, .log porcupine)\nor, for others such as .txt, from the "
      "first line (docs/history-formats.md).\nThe file is read as a stream: "
      "malformed input is reported at its first bad\nline, with its line and "
      "column, without the rest being read, and exits 254;\nthe message names "
      "the --format that reads the file when another one does.\n"
      "--memory-limit counts everything the process holds, reading included; "
      "0 means\nno limit.\n\n"
      "Exit code: 0 valid, 1 invalid, 2 unknown (nothing checked, e.g. no "
      "client\noperation in the file, or a time or memory bound hit), 254 "
      "bad input.\n\nExamples:\n"
      "  faultline check --model cas-register store/etcd-register/latest/"
      "history.jsonl\n"
      "  faultline check -m kv --time-limit 30 --json history.jsonl\n"
      "  faultline check -m register history.edn\n"
      "  faultline check -m register --format porcupine etcd_000.log\n"
      "  faultline check -m mutex-fencing store/redis-lock/latest/"
      "history.jsonl\n"
      "  faultline check -m list-append --consistency-model serializable "
      "history.edn");
  cmd->callback([o, &exit_code] { exit_code = RunCheck(*o, stdout, stderr); });
}

}  // namespace faultline::cli

// faultline check --model M FILE: checks a history file from anywhere.
// Without --format the reader is chosen from the file's extension or first
// line (cli/history_format.h); an explicit --format always wins. When the
// reader fails, the error (file:line:column, exit 254) says which other
// --format reads the file, if one does. list-append and rw-register on a
// JSONL file stream: the file is mapped, and each event goes through the
// well-formedness check into the checker's builder as it is parsed, so no
// History is built (the same output and exit code as reading one).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
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
#include "cli/output.h"
#include "cli/registry.h"
#include "harness/interfaces/workload.h"
#include "harness/run/store.h"

namespace faultline::cli {
namespace {

struct CheckCliOptions {
  std::string model;
  std::string file;
  std::string format;  // "" = detect
  int threads = 0;
  double time_limit = 0;
  double memory_limit_mb = 0;
  bool json = false;
  bool witness = false;
  std::string consistency_model = "strict-serializable";
};

std::optional<std::chrono::steady_clock::time_point> Deadline(double seconds) {
  if (seconds <= 0) return std::nullopt;
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

// --memory-limit in bytes, or the checkers' default bound.
std::uint64_t MemoryLimitBytes(const CheckCliOptions& o) {
  return o.memory_limit_mb > 0
             ? static_cast<std::uint64_t>(o.memory_limit_mb * 1024 * 1024)
             : harness::kDefaultCheckMemoryBytes;
}

checkers::txn::TxnOptions TxnOptionsOf(const CheckCliOptions& o) {
  checkers::txn::TxnOptions t;
  t.consistency_model = o.consistency_model;
  t.deadline = Deadline(o.time_limit);
  t.memory_limit_bytes = MemoryLimitBytes(o);
  return t;
}

// The transactional check of `history` (list-append or rw-register): EDN
// and Porcupine files, read into a History first.
checkers::Verdict CheckTxn(const CheckCliOptions& o,
                           const checkers::History& history) {
  const checkers::txn::TxnOptions t = TxnOptionsOf(o);
  return o.model == checkers::txn::kListAppendChecker
             ? checkers::txn::CheckListAppend(history, t)
             : checkers::txn::CheckRwRegister(history, t);
}

// The same check on a JSONL file's events, already fed to `builder`.
checkers::Verdict CheckTxnBuilt(const CheckCliOptions& o,
                                checkers::txn::TxnHistoryBuilder& builder) {
  return builder.Finish(TxnOptionsOf(o));
}

// The linearizability check of `history` against o.model.
checkers::Verdict CheckLin(const CheckCliOptions& o,
                           const checkers::History& history) {
  checkers::LinearizableOptions lin;
  lin.model = o.model;
  lin.threads =
      o.threads > 0
          ? o.threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  lin.deadline = Deadline(o.time_limit);
  lin.memory_limit_bytes = MemoryLimitBytes(o);
  lin.witness = o.witness;
  return checkers::CheckLinearizable(history, lin);
}

// A history file's text: mapped read-only when it is a regular non-empty
// file (no copy; the kernel pages it in as the reader walks it), else read
// into memory as harness::ReadFile does (pipes, /proc files, directories,
// empty files), with ReadFile's error message when it cannot be opened.
class FileText {
 public:
  FileText() = default;
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;
  ~FileText() { Release(); }

  // "" on success, else the error ("cannot read PATH: why").
  std::string Open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "cannot read " + path + ": " + std::strerror(errno);
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      const auto size = static_cast<std::size_t>(st.st_size);
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        ::close(fd);
        ::madvise(p, size, MADV_SEQUENTIAL);
        map_ = p;
        size_ = size;
        return {};
      }
    }
    ::close(fd);
    auto text = harness::ReadFile(path);
    if (!text.ok()) return text.error();
    owned_ = std::move(*text);
    return {};
  }
  std::string_view view() const {
    return map_ != nullptr
               ? std::string_view(static_cast<const char*>(map_), size_)
               : std::string_view(owned_);
  }
  // Frees the text (the checker holds what it needs).
  void Release() {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
    size_ = 0;
    std::string().swap(owned_);
  }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::string owned_;
};

bool IsTxnModel(const std::string& model) {
  return model == checkers::txn::kListAppendChecker ||
         model == checkers::txn::kRwRegisterChecker;
}

// The reader's failure: file:line:column, the format it was read as and a
// --format that reads it, if one does.
void PrintReadError(const CheckCliOptions& o, std::string_view text,
                    const FormatChoice& choice, const checkers::ReadError& e) {
  const std::string format_name(FormatName(choice.format));
  std::fprintf(stderr, "%s:%lld:%lld: error: %s\n", o.file.c_str(),
               static_cast<long long>(e.line), static_cast<long long>(e.column),
               e.message.c_str());
  std::fprintf(stderr, "  note: read as %s (from %s)\n", format_name.c_str(),
               choice.reason.c_str());
  if (auto other = SuggestFormat(text, choice.format)) {
    std::string name(FormatName(*other));
    std::fprintf(stderr,
                 "  hint: the file reads as %s: try --format %s, e.g.\n"
                 "    faultline check --model %s --format %s %s\n",
                 name.c_str(), name.c_str(), o.model.c_str(), name.c_str(),
                 o.file.c_str());
  } else {
    std::fprintf(stderr,
                 "  hint: no reader (jsonl, edn, porcupine) reads this file; "
                 "docs/history-formats.md says what each accepts\n");
  }
}

void PrintWarnings(const CheckCliOptions& o,
                   const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) {
    std::fprintf(stderr, "%s: warning: %s\n", o.file.c_str(), w.c_str());
  }
}

void PrintNotWellFormed(const CheckCliOptions& o,
                        const checkers::ReadError& bad) {
  std::fprintf(stderr, "%s:%lld: error: %s\n", o.file.c_str(),
               static_cast<long long>(bad.line), bad.message.c_str());
}

// list-append or rw-register on a JSONL file without a History: each event
// goes, as it is parsed, through the well-formedness check and into the
// checker's builder. The same messages, in the same order, and the same
// verdict as reading the History first (a parse error anywhere wins over
// a well-formedness error, which wins over the verdict).
int StreamTxnCheck(const CheckCliOptions& o, FileText& file,
                   const FormatChoice& choice, checkers::Verdict& v) {
  const std::string_view text = file.view();
  checkers::WellFormedChecker well_formed(o.model);
  checkers::txn::TxnHistoryBuilder builder(
      o.model == checkers::txn::kListAppendChecker
          ? checkers::txn::Workload::kListAppend
          : checkers::txn::Workload::kRwRegister);
  builder.Reserve(checkers::CountJsonlEvents(text));
  auto read =
      checkers::StreamJsonl(text, [&](const checkers::Event& e, std::size_t) {
        if (!well_formed.Add(e)) builder.Add(e);
        return true;
      });
  PrintWarnings(o, read.warnings);
  if (!read.ok) {
    PrintReadError(o, text, choice, read.error);
    return kExitUsage;
  }
  file.Release();
  if (const auto& bad = well_formed.error()) {
    PrintNotWellFormed(o, *bad);
    return kExitUsage;
  }
  v = CheckTxnBuilt(o, builder);
  return 0;
}

void PrintVerdict(const CheckCliOptions& o, const checkers::Verdict& v) {
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
}

int DoCheck(const CheckCliOptions& o) {
  FileText file;
  if (std::string err = file.Open(o.file); !err.empty()) {
    std::fprintf(stderr, "faultline check: %s\n", err.c_str());
    return kExitUsage;
  }
  const std::string_view text = file.view();
  FormatChoice choice;
  if (auto named = FormatFromName(o.format)) {
    choice = {*named, "--format"};
  } else {
    choice = DetectHistoryFormat(o.file, text);
  }
  const std::string format_name(FormatName(choice.format));
  if (CurrentConsole().verbosity > 0) {
    std::fprintf(stderr, "faultline check: reading %s as %s (from %s)\n",
                 o.file.c_str(), format_name.c_str(), choice.reason.c_str());
  }
  if (IsTxnModel(o.model) && choice.format == checkers::HistoryFormat::kJsonl) {
    checkers::Verdict v;
    if (int rc = StreamTxnCheck(o, file, choice, v); rc != 0) return rc;
    PrintVerdict(o, v);
    return checkers::ExitCode(v.validity);
  }
  auto read = checkers::ParseHistory(text, choice.format);
  PrintWarnings(o, read.warnings);
  if (!read.ok) {
    PrintReadError(o, text, choice, read.error);
    return kExitUsage;
  }
  file.Release();  // the history holds what it needs; free the text
  if (auto bad = checkers::CheckWellFormed(read.history, o.model)) {
    PrintNotWellFormed(o, *bad);
    return kExitUsage;
  }
  checkers::Verdict v;
  if (o.model == checkers::kMutexFencingChecker) {
    v = checkers::CheckMutexFencing(read.history);
  } else if (o.model == checkers::kLeaderPerTermChecker) {
    v = checkers::CheckLeaderPerTerm(read.history);
  } else if (o.model == checkers::txn::kListAppendChecker ||
             o.model == checkers::txn::kRwRegisterChecker) {
    v = CheckTxn(o, read.history);
  } else if (o.model == checkers::collections::kSetChecker) {
    v = checkers::collections::CheckSet(read.history);
  } else if (o.model == checkers::collections::kBankChecker) {
    v = checkers::collections::CheckBank(read.history);
  } else if (o.model == checkers::collections::kCounterChecker) {
    v = checkers::collections::CheckCounter(read.history);
  } else {
    v = CheckLin(o, read.history);
  }
  PrintVerdict(o, v);
  return checkers::ExitCode(v.validity);
}

// Linearizability models, plus the lock and leader checkers
// (docs/history-locks.md), which take the same place on the command line.
std::vector<std::string> CheckModelNames() {
  std::vector<std::string> names;
  for (const Described& d : CheckModelDescriptions()) names.push_back(d.name);
  return names;
}

}  // namespace

void AddCheckCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<CheckCliOptions>();
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
  cmd->add_option("--memory-limit", o->memory_limit_mb,
                  "Give up (unknown) past this many MiB of search state "
                  "(default 4096)");
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
      "first line (docs/history-formats.md).\nMalformed input is reported with "
      "its line and column and exits 254; the\nmessage names the --format that "
      "reads the file when another one does.\n\n"
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
  cmd->callback([o, &exit_code] { exit_code = DoCheck(*o); });
}

}  // namespace faultline::cli

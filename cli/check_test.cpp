// `faultline check` (RunCheck) on files written the way Jepsen and
// faultline write them: exit codes, file:line[:column] messages, the time
// note, the memory limit counting what reading holds, --memory-limit's
// validation, and reading as a stream (cli/history_input.h).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "checkers/history.h"
#include "cli/cmd_check.h"
#include "cli/commands.h"
#include "cli/history_input.h"

namespace fs = std::filesystem;
using faultline::cli::CheckArgs;

namespace {

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / Name()) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  static std::string Name() {
    static int n = 0;
    return "check-test-" + std::to_string(getpid()) + "-" + std::to_string(++n);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
  const fs::path path;
};

std::string Jepsen(const std::string& name) {
  return (fs::path(__FILE__).parent_path().parent_path() / "checkers" /
          "testdata" / "jepsen" / name)
      .string();
}

struct Ran {
  int rc = 0;
  std::string out, err;
};

Ran Run(const CheckArgs& args) {
  char* out = nullptr;
  char* err = nullptr;
  std::size_t out_n = 0, err_n = 0;
  std::FILE* o = open_memstream(&out, &out_n);
  std::FILE* e = open_memstream(&err, &err_n);
  Ran r;
  r.rc = faultline::cli::RunCheck(args, o, e);
  std::fclose(o);
  std::fclose(e);
  r.out.assign(out, out_n);
  r.err.assign(err, err_n);
  std::free(out);
  std::free(err);
  return r;
}

CheckArgs Args(const std::string& model, const std::string& file) {
  CheckArgs a;
  a.model = model;
  a.file = file;
  a.threads = 1;
  a.memory_limit_mib = faultline::cli::kDefaultCheckMemoryMiB;
  return a;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `n` sequential write/read pairs of a register as JSONL.
std::string Register(int n) {
  std::string text;
  std::int64_t index = 0;
  for (int i = 0; i < n; ++i) {
    for (const char* type : {"invoke", "ok"}) {
      faultline::checkers::Event e;
      e.index = index++;
      e.time = index * 1000;
      e.type = *faultline::checkers::ParseEventType(type);
      e.f = i % 2 == 0 ? "write" : "read";
      e.value = faultline::checkers::Value::Int(i / 2);
      if (e.f == "read" && e.type == faultline::checkers::EventType::kInvoke) {
        e.value = {};
      }
      text += faultline::checkers::ToJsonLine(e) + "\n";
    }
  }
  return text;
}

}  // namespace

TEST_CASE("check: Jepsen's histories read as Jepsen writes them", "[check]") {
  SECTION("times that step back are a warning; the file's order is used") {
    Ran r = Run(Args("register", Jepsen("register_lines.edn")));
    INFO(r.err);
    CHECK(r.rc == 0);
    CHECK(Has(r.out, "valid"));
    CHECK(Has(r.err,
              "register_lines.edn: warning: line 11: time 1950000 is "
              "50000 ns earlier than time 2000000 at line 9"));
  }
  SECTION("a transactional history with a model that is not: refused") {
    for (const char* model : {"cas-register", "set", "mutex-fencing"}) {
      Ran r = Run(Args(model, Jepsen("list_append.edn")));
      INFO(r.err);
      CHECK(r.rc == faultline::cli::kExitUsage);
      CHECK(Has(r.err, "list_append.edn:2: error: "));
      CHECK(Has(r.err, "--model list-append"));
      CHECK(Has(r.err, "--model rw-register"));
      CHECK(r.out.empty());
    }
    Ran ok = Run(Args("list-append", Jepsen("list_append.edn")));
    INFO(ok.err);
    CHECK(ok.rc == 0);
  }
  SECTION("a cut-off vector: its complete ops, with a warning") {
    TempDir dir;
    std::ifstream in(Jepsen("register_vector.edn"));
    std::string text((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    std::string cut = text.substr(0, text.find("  :index 3}") + 11);
    Ran r = Run(Args("cas-register", dir.Write("cut.edn", cut)));
    INFO(r.err);
    CHECK(r.rc == 0);
    CHECK(Has(r.err,
              "cut.edn: warning: line 1: the vector of op maps that "
              "starts here is not closed"));
    CHECK(Has(r.out, "2 ops"));
  }
  SECTION(
      "errors point at the line and column; a whole-line one at the "
      "line") {
    TempDir dir;
    Ran bad = Run(
        Args("register", dir.Write("bad.edn",
                                   "; a comment\n{:type :invoke,\n :f :read,\n "
                                   ":process 0, :time -5}\n")));
    CHECK(bad.rc == faultline::cli::kExitUsage);
    CHECK(Has(bad.err, "bad.edn:4:20: error: :time must be an integer >= 0"));
    // jepsen.independent tuples whose key is a list: an event, not a place.
    Ran tuple = Run(Args(
        "register",
        dir.Write("tuple.edn",
                  "{:type :invoke, :f :write, :value [[1] 2], :process 0}\n"
                  "{:type :ok, :f :write, :value [[1] 2], :process 0}\n")));
    CHECK(tuple.rc == faultline::cli::kExitUsage);
    CHECK(Has(tuple.err, "tuple.edn:1: error: a tuple's key"));
    // A byte-order mark is skipped, in EDN and JSONL.
    Ran bom = Run(
        Args("register", dir.Write("bom.jsonl", "\xEF\xBB\xBF" + Register(4))));
    INFO(bom.err);
    CHECK(bom.rc == 0);
  }
}

TEST_CASE("check: a file is read as a stream", "[check]") {
  TempDir dir;
  // A bad first line and then 32 MiB that are no history: refused at the
  // first line (without the rest being read: see cli/history_input.h).
  std::string garbage = "this is not a history\n";
  garbage += std::string(32u << 20, '\x7f');
  Ran r = Run(Args("register", dir.Write("garbage.jsonl", garbage)));
  CHECK(r.rc == faultline::cli::kExitUsage);
  CHECK(Has(r.err, "garbage.jsonl:1:1: error: "));
  CHECK(Has(r.err, "no reader (jsonl, edn, porcupine) reads this file"));
  // The hint still names another format that reads the file.
  Ran edn =
      Run(Args("register", dir.Write("h.jsonl",
                                     "{:type :invoke, :f :read, :process "
                                     "0}\n{:type :ok, :f :read, :value nil, "
                                     ":process 0}\n")));
  CHECK(edn.rc == faultline::cli::kExitUsage);
  CHECK(Has(edn.err, "try --format edn"));
}

TEST_CASE("check: --memory-limit counts what reading holds", "[check]") {
  TempDir dir;
  const std::string file = dir.Write("h.jsonl", Register(5000));  // 10k events
  SECTION("past the limit while reading: unknown, saying where it stopped") {
    CheckArgs a = Args("register", file);
    a.memory_limit_mib = 150;
    int calls = 0;
    a.memory_held = [&calls] {  // 100 MiB more at each look
      return static_cast<std::uint64_t>(++calls) * (100u << 20);
    };
    a.json = true;
    Ran r = Run(a);
    CHECK(r.rc == 2);
    CHECK(calls == 2);  // at event 4096, then at 8192: over
    CHECK(Has(r.out, "\"valid\":\"unknown\""));
    CHECK(Has(r.out,
              "gave up reading the history: the process held 200.0 "
              "MiB after 8192 event(s) (up to line 8192), past the "
              "memory limit of 150.0 MiB"));
    CHECK(Has(r.out, "\"events_read\":8192"));
  }
  SECTION("the checker is held to the same measure and limit") {
    CheckArgs a = Args("register", file);
    a.memory_limit_mib = 150;
    a.memory_held = [] { return std::uint64_t{10} << 20; };
    CHECK(Run(a).rc == 0);
    // 10 MiB while reading (two looks), 160 MiB once the checker runs.
    int calls = 0;
    a.memory_held = [&calls] {
      return std::uint64_t{++calls <= 3 ? 10u : 160u} << 20;
    };
    Ran r = Run(a);
    CHECK(r.rc == 2);
    CHECK(calls > 3);
    CHECK(Has(r.out, "memory limit of 157286400 bytes reached"));
    // The same for list-append, streamed into its builder.
    TempDir txn_dir;
    std::string txns;
    for (int i = 0; i < 3000; ++i) {
      txns += "{\"index\":" + std::to_string(2 * i) +
              ",\"process\":0,\"type\":\"invoke\",\"f\":\"txn\",\"value\":"
              "[[\"append\",1," +
              std::to_string(i) +
              "]]}\n{\"index\":" + std::to_string(2 * i + 1) +
              ",\"process\":0,\"type\":\"ok\",\"f\":\"txn\",\"value\":"
              "[[\"append\",1," +
              std::to_string(i) + "]]}\n";
    }
    CheckArgs t = Args("list-append", txn_dir.Write("t.jsonl", txns));
    t.memory_limit_mib = 150;
    calls = 0;
    t.memory_held = a.memory_held;
    Ran tr = Run(t);
    INFO(tr.out);
    CHECK(tr.rc == 2);
    CHECK(Has(tr.out,
              "memory limit of 157286400 bytes exceeded (the process "
              "holds 167772160 bytes)"));
    t.memory_held = [] { return std::uint64_t{10} << 20; };
    CHECK(Run(t).rc == 0);
  }
  SECTION("0 is no limit: nothing is measured") {
    CheckArgs a = Args("register", file);
    a.memory_limit_mib = 0;
    bool measured = false;
    a.memory_held = [&measured] {
      measured = true;
      return std::uint64_t{1} << 40;
    };
    CHECK(Run(a).rc == 0);
    CHECK_FALSE(measured);
  }
  SECTION("negative, NaN, infinite and non-numbers are refused") {
    using faultline::cli::MemoryLimitProblem;
    CHECK(MemoryLimitProblem("0").empty());
    CHECK(MemoryLimitProblem("256").empty());
    CHECK(MemoryLimitProblem("0.5").empty());
    CHECK(Has(MemoryLimitProblem("-1"), ">= 0 MiB (0: no limit)"));
    CHECK(Has(MemoryLimitProblem("nan"), "finite"));
    CHECK(Has(MemoryLimitProblem("inf"), "finite"));
    CHECK(Has(MemoryLimitProblem("12MB"), "a number of MiB"));
    for (const char* bad : {"-1", "nan", "inf", "-0.5"}) {
      CLI::App app;
      int exit_code = 0;
      faultline::cli::AddCheckCommand(app, exit_code);
      // CLI11 takes the arguments last first.
      std::vector<std::string> argv = {file,       bad,  "--memory-limit",
                                       "register", "-m", "check"};
      INFO(bad);
      CHECK_THROWS_AS(app.parse(argv), CLI::ValidationError);
      CHECK(exit_code == 0);  // refused before anything was checked
    }
  }
}

TEST_CASE("HistoryText gives back the pages it read", "[check]") {
  TempDir dir;
  const std::string text = Register(40000);  // ~6 MB
  faultline::cli::HistoryText file;
  REQUIRE(file.Open(dir.Write("h.jsonl", text)).empty());
  REQUIRE(file.view() == text);
  file.DropBefore(text.size() / 2);
  CHECK(file.view() == text);  // read again from the file when needed
  faultline::cli::MemoryBound none;
  faultline::cli::InputResult in = faultline::cli::ReadHistoryInput(
      file, faultline::checkers::HistoryFormat::kJsonl, none);
  REQUIRE(in.read.ok);
  CHECK(in.read.history.size() == 80000);
  CHECK(in.events == 80000);
  CHECK(in.last_line == 80000);
  CHECK(in.read.history.back().line == 80000);
  REQUIRE(file.Open("/proc/self/statm").empty());  // not mappable: read
  CHECK_FALSE(file.view().empty());
  CHECK(faultline::cli::ResidentBytes() > 0);
}

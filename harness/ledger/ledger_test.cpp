// Unit tests of the fault ledger: JSONL round trip, torn last line, index
// directory, and heal of processes (no root needed).
#include "harness/ledger/ledger.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/process/process.h"

namespace fs = std::filesystem;
using namespace faultline::harness;

namespace {

// A fresh temporary directory, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/faultline-ledger-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Waits until the process state letter of `pid` satisfies `want`.
bool AwaitState(pid_t pid, char want, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() &&
        line[paren + 2] == want)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace

TEST_CASE("ledger records entries as JSONL and reads them back", "[ledger]") {
  TempDir dir;
  const std::string path = (dir.path / "run" / "ledger.jsonl").string();
  auto ledger = Ledger::Create(path, "run1", (dir.path / "active").string());
  REQUIRE(ledger.ok());
  LedgerEntry bridge;
  bridge.kind = "bridge";
  bridge.name = "flb-run1";
  LedgerEntry proc;
  proc.kind = "process";
  proc.pid = 4242;
  proc.start_time = 123456789012ull;
  proc.node = "n2";
  proc.netns = "fl-run1-n2";
  CHECK((*ledger)->Record(bridge) == 1);
  CHECK((*ledger)->Record(proc) == 2);
  (*ledger)->MarkHealed(1);

  auto read = ReadLedger(path);
  REQUIRE(read.ok());
  REQUIRE(read->size() == 3);
  CHECK((*read)[0].kind == "bridge");
  CHECK((*read)[0].name == "flb-run1");
  CHECK((*read)[1].seq == 2);
  CHECK((*read)[1].pid == 4242);
  CHECK((*read)[1].start_time == 123456789012ull);
  CHECK((*read)[1].node == "n2");
  CHECK((*read)[1].netns == "fl-run1-n2");
  CHECK((*read)[2].kind == "healed");
  CHECK((*read)[2].ref == 1);

  // One line per entry.
  std::ifstream in(path);
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  CHECK(lines == 3);
}

TEST_CASE("ledger lists the run in the index until Close", "[ledger]") {
  TempDir dir;
  const std::string index = (dir.path / "active").string();
  const std::string path = (dir.path / "ledger.jsonl").string();
  auto ledger = Ledger::Create(path, "abc", index);
  REQUIRE(ledger.ok());
  const fs::path index_file = fs::path(index) / "abc";
  REQUIRE(fs::exists(index_file));
  std::ifstream in(index_file);
  std::string listed;
  std::getline(in, listed);
  CHECK(fs::equivalent(listed, path));
  (*ledger)->Close();
  CHECK_FALSE(fs::exists(index_file));
  auto read = ReadLedger(path);
  REQUIRE(read.ok());
  REQUIRE_FALSE(read->empty());
  CHECK(read->back().kind == "closed");
}

TEST_CASE("ledger rejects run ids that are not file names", "[ledger]") {
  TempDir dir;
  auto bad = Ledger::Create((dir.path / "l.jsonl").string(), "a/b",
                            (dir.path / "active").string());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("run id") != std::string::npos);
}

TEST_CASE("ReadLedger ignores a torn last line but not a corrupt middle",
          "[ledger]") {
  TempDir dir;
  const std::string path = (dir.path / "ledger.jsonl").string();
  {
    std::ofstream out(path);
    out << R"({"seq":1,"kind":"netns","name":"fl-x-n1"})"
        << "\n"
        << R"({"seq":2,"kind":"veth","name":"flv-x-1"})"
        << "\n"
        << R"({"seq":3,"kind":"ipt)";  // torn by a crash mid-write
  }
  auto read = ReadLedger(path);
  REQUIRE(read.ok());
  REQUIRE(read->size() == 2);
  CHECK((*read)[1].name == "flv-x-1");

  {
    std::ofstream out(path);
    out << R"({"seq":1,"kind":"netns","name":"fl-x-n1"})"
        << "\n"
        << "garbage\n"
        << R"({"seq":2,"kind":"veth","name":"flv-x-1"})"
        << "\n";
  }
  auto corrupt = ReadLedger(path);
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.error().find("line 2") != std::string::npos);
  CHECK_FALSE(ReadLedger((dir.path / "missing").string()).ok());
}

TEST_CASE("HealLedger continues stopped processes and kills started ones",
          "[ledger]") {
  TempDir dir;
  const std::string path = (dir.path / "ledger.jsonl").string();
  auto ledger = Ledger::Create(path, "heal1", (dir.path / "active").string());
  REQUIRE(ledger.ok());

  auto stopped = Spawn({"sleep", "60"}, {});
  REQUIRE(stopped.ok());
  auto started = Spawn({"sleep", "60"}, {});
  REQUIRE(started.ok());
  auto healed_already = Spawn({"sleep", "60"}, {});
  REQUIRE(healed_already.ok());

  LedgerEntry stop;
  stop.kind = "stop";
  stop.pid = *stopped;
  stop.start_time = ProcessStartTime(*stopped).value();
  (*ledger)->Record(stop);
  REQUIRE(kill(*stopped, SIGSTOP) == 0);
  REQUIRE(AwaitState(*stopped, 'T', std::chrono::milliseconds(5000)));

  LedgerEntry proc;
  proc.kind = "process";
  proc.pid = *started;
  proc.start_time = ProcessStartTime(*started).value();
  (*ledger)->Record(proc);

  LedgerEntry done = proc;
  done.pid = *healed_already;
  done.start_time = ProcessStartTime(*healed_already).value();
  long done_seq = (*ledger)->Record(done);
  (*ledger)->MarkHealed(done_seq);

  // A pid whose start time no longer matches must not be touched.
  LedgerEntry reused = proc;
  reused.pid = *healed_already;
  reused.start_time = 1;
  (*ledger)->Record(reused);

  std::vector<std::string> log;
  Status healed = HealLedger(path, &log);
  INFO("heal log size " << log.size());
  REQUIRE(healed.ok());
  CHECK(AwaitState(*stopped, 'S', std::chrono::milliseconds(5000)));
  CHECK_FALSE(ProcessAlive(*started));
  CHECK(ProcessAlive(*healed_already));

  // Idempotent: a second heal succeeds and kills nothing new.
  log.clear();
  REQUIRE(HealLedger(path, &log).ok());
  CHECK(ProcessAlive(*healed_already));

  for (pid_t pid : {*stopped, *healed_already})
    CHECK(TerminateProcess(pid, SIGKILL, std::chrono::milliseconds(2000)));
}

TEST_CASE("HealAll heals every listed run and empties the index", "[ledger]") {
  TempDir dir;
  const std::string index = (dir.path / "active").string();
  auto a = Ledger::Create((dir.path / "a.jsonl").string(), "a", index);
  auto b = Ledger::Create((dir.path / "b.jsonl").string(), "b", index);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto child = Spawn({"sleep", "60"}, {});
  REQUIRE(child.ok());
  LedgerEntry proc;
  proc.kind = "process";
  proc.pid = *child;
  proc.start_time = ProcessStartTime(*child).value();
  (*b)->Record(proc);
  // A run whose ledger vanished is dropped from the index.
  auto c = Ledger::Create((dir.path / "c.jsonl").string(), "c", index);
  REQUIRE(c.ok());
  fs::remove(dir.path / "c.jsonl");

  std::vector<std::string> log;
  REQUIRE(HealAll(index, &log).ok());
  CHECK_FALSE(ProcessAlive(*child));
  CHECK(fs::is_empty(index));
  // Nothing listed: still fine.
  REQUIRE(HealAll(index, &log).ok());
  REQUIRE(HealAll((dir.path / "nope").string(), &log).ok());
}

TEST_CASE("UndoLedgerEntry treats missing resources as undone", "[ledger]") {
  std::vector<std::string> log;
  LedgerEntry ns;
  ns.kind = "netns";
  ns.name = "fl-nonexistent-n9";
  CHECK(UndoLedgerEntry(ns, &log).ok());
  LedgerEntry ipt;
  ipt.kind = "iptables";
  ipt.netns = "fl-nonexistent-n9";
  CHECK(UndoLedgerEntry(ipt, &log).ok());
  CHECK(log.size() == 2);
}

// Unit tests of the fault ledger: JSONL round trip, torn last line, index
// directory, heal of processes, the heal's own `healed` entries (a second
// heal does nothing), refused foreign names (no root needed).
#include "harness/ledger/ledger.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
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
  ns.name = "fl-nonexist-n9";
  CHECK(UndoLedgerEntry(ns, &log).ok());
  LedgerEntry ipt;
  ipt.kind = "iptables";
  ipt.name = "faultline-part";
  ipt.netns = "fl-nonexist-n9";
  CHECK(UndoLedgerEntry(ipt, &log).ok());
  CHECK(log.size() == 2);
}

namespace {

int LineCount(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}

std::set<long> HealedSeqs(const std::string& path) {
  std::set<long> out;
  auto entries = ReadLedger(path);
  REQUIRE(entries.ok());
  for (const auto& e : *entries)
    if (e.kind == "healed") out.insert(e.ref);
  return out;
}

}  // namespace

TEST_CASE("HealLedger records what it undid, so a second heal does nothing",
          "[ledger]") {
  TempDir dir;
  const std::string index = (dir.path / "active").string();
  const std::string path = (dir.path / "ledger.jsonl").string();
  auto ledger = Ledger::Create(path, "twice", index);
  REQUIRE(ledger.ok());
  auto child = Spawn({"sleep", "60"}, {});
  REQUIRE(child.ok());
  LedgerEntry proc;
  proc.kind = "process";
  proc.pid = *child;
  proc.start_time = ProcessStartTime(*child).value();
  const long proc_seq = (*ledger)->Record(proc);
  const fs::path scratch = dir.path / "faultline-scratch";
  fs::create_directories(scratch / "data");
  LedgerEntry work;
  work.kind = "dir";
  work.name = scratch.string();
  const long dir_seq = (*ledger)->Record(work);
  // Killed by SIGKILL: no `closed`, still listed.
  ledger->reset();
  REQUIRE(fs::exists(fs::path(index) / "twice"));

  std::vector<std::string> log;
  REQUIRE(HealLedger(path, &log, index).ok());
  CHECK_FALSE(ProcessAlive(*child));
  CHECK_FALSE(fs::exists(scratch));
  CHECK(HealedSeqs(path) == std::set<long>{proc_seq, dir_seq});
  // The heal's entries continue the run's seqs.
  auto entries = ReadLedger(path);
  REQUIRE(entries.ok());
  CHECK(entries->back().seq == dir_seq + 2);
  // Healed entirely: the run left the active index.
  CHECK_FALSE(fs::exists(fs::path(index) / "twice"));

  // The second heal has nothing to do and writes nothing.
  const int lines = LineCount(path);
  log.clear();
  REQUIRE(HealLedger(path, &log, index).ok());
  CHECK(log.empty());
  CHECK(LineCount(path) == lines);
}

TEST_CASE("HealLedger refuses names that are not faultline's", "[ledger]") {
  TempDir dir;
  const std::string index = (dir.path / "active").string();
  const std::string path = (dir.path / "ledger.jsonl").string();
  auto ledger = Ledger::Create(path, "edited", index);
  REQUIRE(ledger.ok());
  auto child = Spawn({"sleep", "60"}, {});
  REQUIRE(child.ok());
  LedgerEntry proc;
  proc.kind = "process";
  proc.pid = *child;
  proc.start_time = ProcessStartTime(*child).value();
  const long proc_seq = (*ledger)->Record(proc);
  // A hand-edited ledger: someone else's namespace, rules and directory.
  LedgerEntry ns;
  ns.kind = "netns";
  ns.name = "probe-ns";
  (*ledger)->Record(ns);
  LedgerEntry rules;
  rules.kind = "iptables";
  rules.netns = "probe-ns";
  (*ledger)->Record(rules);
  LedgerEntry chain;
  chain.kind = "iptables";
  chain.name = "owner-chain";
  chain.remote.kind = "ssh";
  chain.remote.host = "192.0.2.1";  // never contacted: refused first
  (*ledger)->Record(chain);
  const fs::path owner = dir.path / "owner-data";
  fs::create_directories(owner);
  LedgerEntry work;
  work.kind = "dir";
  work.name = owner.string();
  (*ledger)->Record(work);
  ledger->reset();

  std::vector<std::string> log;
  Status healed = HealLedger(path, &log, index);
  REQUIRE_FALSE(healed.ok());
  CHECK(healed.error().find("refused") != std::string::npos);
  CHECK(healed.error().find("probe-ns") != std::string::npos);
  CHECK(healed.error().find("owner-chain") != std::string::npos);
  CHECK(healed.error().find("owner-data") != std::string::npos);
  CHECK(healed.error().find("line 3") != std::string::npos);
  int refusals = 0;
  for (const auto& line : log)
    if (line.rfind("error: refused ", 0) == 0) ++refusals;
  CHECK(refusals == 4);
  // The rest was healed and recorded; the refused entries were not.
  CHECK_FALSE(ProcessAlive(*child));
  CHECK(fs::exists(owner));
  CHECK(HealedSeqs(path) == std::set<long>{proc_seq});
  // Not everything healed: the run stays listed.
  CHECK(fs::exists(fs::path(index) / "edited"));
  // Again: the same refusals, nothing else done.
  log.clear();
  CHECK_FALSE(HealLedger(path, &log, index).ok());
  CHECK(log.size() == 4);
}

TEST_CASE("Ledger::Append cuts a torn last line and continues the seqs",
          "[ledger]") {
  TempDir dir;
  const std::string path = (dir.path / "ledger.jsonl").string();
  {
    std::ofstream out(path);
    out << R"({"seq":1,"kind":"dir","name":"/tmp/faultline-q"})"
        << "\n"
        << R"({"seq":5,"kind":"healed","ref":1})"
        << "\n"
        << R"({"seq":6,"kind":"ipt)";  // torn by a crash mid-write
  }
  auto ledger = Ledger::Append(path);
  REQUIRE(ledger.ok());
  (*ledger)->MarkHealed(1);
  ledger->reset();
  auto entries = ReadLedger(path);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 3);
  CHECK(entries->back().kind == "healed");
  CHECK(entries->back().seq == 6);
  CHECK(entries->back().line == 3);
  CHECK_FALSE(Ledger::Append((dir.path / "missing.jsonl").string()).ok());
}

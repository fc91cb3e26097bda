// Linearizability checker benchmark. Each case runs in a fresh child process
// so its peak RSS (VmHWM, and wait4's ru_maxrss) is its own. File cases are
// simulated and written to a JSONL file by one child and read, parsed and
// checked by another, so the figures are those of checking a file. Prints,
// per case: ops, verdict, the time of each step, the child's CPU time, ops
// checked per second (check step only and end to end) and peak RSS.
//
// Usage: linearizability_bench [--quick] [--threads N] [--case K]
//                              [--keep-files]
//   --quick skips the 1M-op case; --case K runs only the K-th (0-based);
//   --keep-files keeps the JSONL files in /tmp and reuses them when present
//   (e.g. to profile only the read/parse/check child).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_cases.h"
#include "bench/process_usage.h"
#include "checkers/history_io.h"
#include "checkers/linearizable.h"
#include "checkers/sim.h"

namespace fc = faultline::checkers;
using faultline::bench::CpuSeconds;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Case {
  std::string name;
  fc::SimOptions sim;
  bool file = false;  // write JSONL to a file and parse it back
  double deadline_s = 0;
  std::uint64_t memory_limit = 0;
  std::string model = "cas-register";
};

long JsonCounter(const std::string& json, const char* name) {
  std::string pat = std::string("\"") + name + "\":";
  std::size_t at = json.find(pat);
  if (at == std::string::npos) return -1;
  return std::stol(json.substr(at + pat.size()));
}

// Reads a whole file with one sized read (as harness::ReadFile does), so
// the text is held once.
bool ReadWhole(const std::string& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  out.resize(static_cast<std::size_t>(std::max(0L, size)));
  std::size_t got = std::fread(out.data(), 1, out.size(), f);
  std::fclose(f);
  return got == out.size();
}

std::string FilePath(const Case& c) {
  return "/tmp/faultline-linbench-" + std::to_string(c.sim.seed) + "-" +
         std::to_string(c.sim.ops) + ".jsonl";
}

// Child for file cases, step 1: simulates and writes the JSONL file.
int WriteCase(const Case& c) {
  Clock::time_point t0 = Clock::now();
  fc::History h = fc::Simulate(c.sim);
  Clock::time_point t1 = Clock::now();
  std::FILE* out = std::fopen(FilePath(c).c_str(), "wb");
  if (out == nullptr) return 1;
  std::string line;
  for (const fc::Event& e : h) {
    line = fc::ToJsonLine(e);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), out);
  }
  long size = std::ftell(out);
  std::fclose(out);
  std::printf("%-34s %8lld sim %.2fs write %.2fs, %.0f MB of JSONL\n",
              c.name.c_str(), static_cast<long long>(c.sim.ops),
              Seconds(t0, t1), Seconds(t1, Clock::now()),
              static_cast<double>(size) / 1e6);
  std::fflush(stdout);
  return 0;
}

// Runs in a fresh child; prints one result line. For file cases the child
// only reads the file, parses it and checks it, so its peak RSS and times
// are those of `faultline check` on that file (the simulation ran in
// another child).
int RunCase(const Case& c, int threads) {
  Clock::time_point t0 = Clock::now();
  fc::History h;
  double read_s = 0, parse_s = 0, sim_s = 0, parse_cpu = 0;
  if (c.file) {
    std::string text;
    if (!ReadWhole(FilePath(c), text)) {
      std::printf("%-34s cannot read %s\n", c.name.c_str(),
                  FilePath(c).c_str());
      return 1;
    }
    Clock::time_point t1 = Clock::now();
    double cpu1 = CpuSeconds();
    fc::ReadResult r = fc::ParseJsonl(text);
    parse_cpu = CpuSeconds() - cpu1;
    text.clear();
    text.shrink_to_fit();
    if (!r.ok) {
      std::printf("%-34s parse error line %lld: %s\n", c.name.c_str(),
                  static_cast<long long>(r.error.line),
                  r.error.message.c_str());
      return 1;
    }
    h = std::move(r.history);
    Clock::time_point t2 = Clock::now();
    read_s = Seconds(t0, t1);
    parse_s = Seconds(t1, t2);
  } else {
    h = fc::Simulate(c.sim);
    sim_s = Seconds(t0, Clock::now());
  }
  Clock::time_point t3 = Clock::now();
  double cpu3 = CpuSeconds();
  fc::LinearizableOptions o;
  o.model = c.model;
  o.threads = threads;
  if (c.deadline_s > 0) {
    o.deadline = Clock::now() + std::chrono::milliseconds(
                                    static_cast<long>(c.deadline_s * 1000));
  }
  o.memory_limit_bytes = c.memory_limit;
  fc::Verdict v = fc::CheckLinearizable(h, o);
  Clock::time_point t4 = Clock::now();
  double check_s = Seconds(t3, t4);
  double check_cpu = CpuSeconds() - cpu3;
  double e2e_s = Seconds(t0, t4) - sim_s;  // read + parse + check
  double ops = static_cast<double>(c.sim.ops);
  double cpu_s = CpuSeconds();
  std::printf(
      "%-34s %8lld %-8s %s %5.2fs parse %5.2fs (cpu %5.2fs) check %5.2fs "
      "(cpu %5.2fs) e2e %5.2fs (cpu %5.2fs) | %9.0f ops/s check, %9.0f ops/s "
      "e2e | segments %ld, memo %ld, checker peak %.1f MB | VmHWM %.0f MB",
      c.name.c_str(), static_cast<long long>(c.sim.ops),
      std::string(fc::ToString(v.validity)).c_str(), c.file ? "read" : "sim ",
      c.file ? read_s : sim_s, parse_s, parse_cpu, check_s, check_cpu, e2e_s,
      cpu_s, ops / check_s, ops / e2e_s,
      JsonCounter(v.details_json, "segments"),
      JsonCounter(v.details_json, "memo_entries"),
      static_cast<double>(JsonCounter(v.details_json, "peak_bytes")) / 1e6,
      static_cast<double>(faultline::bench::PeakRssBytes()) /
          (1024.0 * 1024.0));
  if (v.validity != fc::Validity::kValid) {
    std::printf(" | %s", v.summary.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
  return 0;
}

// Forks a child running `fn`; returns false when it failed. Prints the
// child's peak RSS (wait4's ru_maxrss) when `report` is set.
bool InChild(const std::function<int()>& fn, bool report) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return false;
  }
  if (pid == 0) _exit(fn());
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) < 0) {
    std::perror("wait4");
    return false;
  }
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (report || !ok) {
    std::printf("%-34s peak RSS %.0f MB (ru_maxrss)%s\n", "",
                static_cast<double>(ru.ru_maxrss) / 1024.0,
                ok ? "" : "  (FAILED)");
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  bool keep = false;
  int threads = 2;
  int only = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--keep-files") == 0) keep = true;
    if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    }
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    }
  }
  std::vector<Case> cases;
  for (const auto& sc : faultline::bench::ScalingCases(quick)) {
    Case c;
    c.name = sc.name;
    c.sim = sc.sim;
    c.file = sc.many_keys;
    cases.push_back(c);
  }
  {
    // Unpruneable: values reused, so crashed writes cannot be dropped or
    // closed; many of them are concurrent and pending to the end.
    Case c;
    c.name = "hard: reused values, 30% info";
    c.model = "register";
    c.sim.seed = 44;
    c.sim.model = "register";
    c.sim.processes = 30;
    c.sim.ops = 3000;
    c.sim.info_rate = 0.3;
    c.sim.unique_values = false;
    c.sim.value_range = 5;
    c.sim.max_latency = 100;
    c.sim.max_gap = 5;
    Case t = c;
    t.name += ", 2 s deadline";
    t.deadline_s = 2;
    cases.push_back(t);
    Case m = c;
    m.name += ", 64 MB limit";
    m.memory_limit = 64u << 20;
    m.deadline_s = 30;
    cases.push_back(m);
  }

  std::printf(
      "threads %d; each case in a fresh child; file cases: a first child "
      "simulates and writes the JSONL, a second reads, parses and checks "
      "it (e2e = read + parse + check)\n",
      threads);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    if (only >= 0 && static_cast<std::size_t>(only) != k) continue;
    bool have = keep && access(FilePath(c).c_str(), R_OK) == 0;
    if (c.file && !have && !InChild([&] { return WriteCase(c); }, false)) {
      return 1;
    }
    bool ok = InChild([&] { return RunCase(c, threads); }, true);
    if (c.file && !keep) std::remove(FilePath(c).c_str());
    if (!ok) return 1;
  }
  return 0;
}

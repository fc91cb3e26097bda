// Linearizability checker benchmark. Each case runs in a fresh child process
// so its peak RSS (wait4's ru_maxrss) is its own. Prints, per case: ops,
// verdict, the time of each step (simulate, write JSONL, parse, check), ops
// checked per second (check step only and end to end) and peak RSS.
//
// Usage: linearizability_bench [--quick] [--threads N] [--case K]
//   --quick skips the 1M-op case; --case K runs only the K-th (0-based).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "checkers/history_io.h"
#include "checkers/linearizable.h"
#include "checkers/sim.h"

namespace fc = faultline::checkers;

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

// Runs in the child; prints one result line.
int RunCase(const Case& c, int threads) {
  Clock::time_point t0 = Clock::now();
  fc::History h = fc::Simulate(c.sim);
  Clock::time_point t1 = Clock::now();
  double write_s = 0, parse_s = 0;
  if (c.file) {
    std::string path =
        "/tmp/faultline-linbench-" + std::to_string(getpid()) + ".jsonl";
    {
      std::ofstream out(path, std::ios::binary);
      std::string line;
      for (const fc::Event& e : h) {
        line = fc::ToJsonLine(e);
        line += '\n';
        out.write(line.data(), static_cast<std::streamsize>(line.size()));
      }
    }
    h.clear();
    h.shrink_to_fit();
    Clock::time_point t2 = Clock::now();
    std::string text;
    {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    }
    std::remove(path.c_str());
    fc::ReadResult r = fc::ParseJsonl(text);
    text.clear();
    text.shrink_to_fit();
    if (!r.ok) {
      std::printf("%-34s parse error line %lld: %s\n", c.name.c_str(),
                  static_cast<long long>(r.error.line),
                  r.error.message.c_str());
      return 1;
    }
    h = std::move(r.history);
    Clock::time_point t3 = Clock::now();
    write_s = Seconds(t1, t2);
    parse_s = Seconds(t2, t3);
    t1 = t3;
  }
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
  double check_s = Seconds(t1, t4);
  double total_s = Seconds(t0, t4);
  double ops = static_cast<double>(c.sim.ops);
  std::printf(
      "%-34s %8lld %-8s sim %6.2fs write %6.2fs parse %6.2fs check %6.2fs | "
      "%10.0f ops/s check, %10.0f ops/s e2e | memo %ld, checker peak %.1f MB",
      c.name.c_str(), static_cast<long long>(c.sim.ops),
      std::string(fc::ToString(v.validity)).c_str(),
      Seconds(t0, t1) - parse_s - write_s, write_s, parse_s, check_s,
      ops / check_s, ops / total_s, JsonCounter(v.details_json, "memo_entries"),
      static_cast<double>(JsonCounter(v.details_json, "peak_bytes")) / 1e6);
  if (v.validity != fc::Validity::kValid) {
    std::printf(" | %s", v.summary.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int threads = 2;
  int only = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    }
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    }
  }
  std::vector<Case> cases;
  for (std::int64_t n : {1000, 10000, 100000}) {
    Case c;
    c.name = "1 key, 10 procs, 2% info";
    c.sim.seed = 42;
    c.sim.processes = 10;
    c.sim.ops = n;
    c.sim.info_rate = 0.02;
    c.sim.max_latency = 1000;
    c.sim.max_gap = 200;
    cases.push_back(c);
  }
  for (std::int64_t n : {100000, 1000000}) {
    if (quick && n > 100000) continue;
    Case c;
    c.name = "1000 keys, 50 procs, 1% info, file";
    c.sim.seed = 43;
    c.sim.processes = 50;
    c.sim.keys = 1000;
    c.sim.ops = n;
    c.sim.info_rate = 0.01;
    c.sim.max_latency = 1000;
    c.sim.max_gap = 200;
    c.file = true;
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

  std::printf("threads %d; peak RSS is the child's ru_maxrss\n", threads);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    if (only >= 0 && static_cast<std::size_t>(only) != k) continue;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) _exit(RunCase(c, threads));
    int status = 0;
    rusage ru{};
    if (wait4(pid, &status, 0, &ru) < 0) {
      std::perror("wait4");
      return 1;
    }
    std::printf(
        "%-34s peak RSS %.0f MB%s\n", "", ru.ru_maxrss / 1024.0,
        WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "  (FAILED)");
  }
  return 0;
}

// The linearizability checker at the sizes its goals name: one key with 1M
// and 10M operations and 2% crashed (valid, and invalid with one stale read
// in the last tenth), 100k operations with 30% crashed, and 100 clients on
// 8 keys. Each case runs in a fresh child so its peak RSS is its own; the
// history is simulated in memory (checkers/sim.h), so the figures are the
// checker's plus the in-memory history's. Prints, per case: ops, verdict,
// check wall and CPU time, the search's own peak (details_json.peak_bytes),
// the keys the unique-value fast path decided, the resident set with the
// history before the check, and the peak resident set during the check.
//
// Usage: linear_goals_bench [--quick] [--search] [--case K]
//   --quick   skips the 10M-op cases;
//   --search  turns the unique-value fast path off (the search alone), for
//             a side-by-side run;
//   --case K  runs only the K-th case (0-based).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/process_usage.h"
#include "checkers/linearizable.h"
#include "checkers/sim.h"

namespace fc = faultline::checkers;
using faultline::bench::CpuSeconds;

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  std::string name;
  fc::SimOptions sim;
  // Inject one stale read this far into the history (0: none).
  double stale_at = 0;
};

long Counter(const std::string& json, const char* name) {
  std::string pat = std::string("\"") + name + "\":";
  std::size_t at = json.find(pat);
  if (at == std::string::npos) return -1;
  return std::stol(json.substr(at + pat.size()));
}

// The invoke of completion `done`: the process's previous event.
std::size_t FindInvoke(const fc::History& h, const fc::Event& done) {
  for (auto i = static_cast<std::size_t>(done.index); i-- > 0;) {
    if (h[i].process == done.process) return i;
  }
  return 0;
}

// Makes the first ok read after `fraction` of the history return a value
// that was overwritten long before: the first acknowledged write's.
void InjectStaleRead(fc::History& h, double fraction) {
  const fc::Value* first = nullptr;
  for (const fc::Event& e : h) {
    if (e.type == fc::EventType::kOk && e.f == "write") {
      first = &h[FindInvoke(h, e)].value;
      break;
    }
  }
  if (first == nullptr) return;
  fc::Value stale = *first;
  auto from =
      static_cast<std::size_t>(static_cast<double>(h.size()) * fraction);
  for (std::size_t i = from; i < h.size(); ++i) {
    if (h[i].type == fc::EventType::kOk && h[i].f == "read") {
      h[i].value = stale;
      return;
    }
  }
}

double RssMb() {
  return static_cast<double>(faultline::bench::CurrentRssBytes()) /
         (1024.0 * 1024.0);
}

int RunCase(const Case& c, bool search_only) {
  fc::History h = fc::Simulate(c.sim);
  if (c.stale_at > 0) InjectStaleRead(h, c.stale_at);
  double history_mb = RssMb();
  // The simulation's own peak is not the checker's: restart VmHWM here
  // (Linux >= 4.0: writing 5 to clear_refs resets the peak to the current
  // resident set).
  if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
  fc::LinearizableOptions o;
  o.model = c.sim.model;
  o.threads = 2;
  o.unique_fast_path = !search_only;
  o.deadline = Clock::now() + std::chrono::seconds(300);
  double cpu0 = CpuSeconds();
  Clock::time_point t0 = Clock::now();
  fc::Verdict v = fc::CheckLinearizable(h, o);
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  double cpu = CpuSeconds() - cpu0;
  std::printf(
      "%-44s %9lld %-8s check %6.2fs (cpu %6.2fs) | fast-path keys %ld of "
      "%ld | checker peak %6.0f MB | RSS with history %6.0f MB, peak during "
      "the check %6.0f MB",
      c.name.c_str(), static_cast<long long>(c.sim.ops),
      std::string(fc::ToString(v.validity)).c_str(), wall, cpu,
      Counter(v.details_json, "fast_path_keys"),
      Counter(v.details_json, "keys"),
      static_cast<double>(Counter(v.details_json, "peak_bytes")) / 1e6,
      history_mb,
      static_cast<double>(faultline::bench::PeakRssBytes()) /
          (1024.0 * 1024.0));
  if (v.validity != fc::Validity::kValid) {
    std::printf(" | %s", v.summary.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
  return 0;
}

bool InChild(const Case& c, bool search_only) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(RunCase(c, search_only));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

Case OneKey(std::int64_t ops, double info, bool invalid) {
  Case c;
  c.name = "1 key, 10 procs, " + std::to_string(static_cast<int>(info * 100)) +
           "% crashed, " + (invalid ? "invalid" : "valid");
  c.sim.seed = 46;
  c.sim.processes = 10;
  c.sim.ops = ops;
  c.sim.info_rate = info;
  c.sim.max_latency = 1000;
  c.sim.max_gap = 200;
  if (invalid) c.stale_at = 0.9;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, search_only = false;
  int only = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--search") == 0) search_only = true;
    if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    }
  }
  std::vector<Case> cases;
  for (std::int64_t n : {1000000LL, 10000000LL}) {
    if (quick && n > 1000000) continue;
    cases.push_back(OneKey(n, 0.02, false));
    cases.push_back(OneKey(n, 0.02, true));
  }
  cases.push_back(OneKey(100000, 0.3, false));
  cases.push_back(OneKey(100000, 0.3, true));
  for (std::int64_t n : {400000LL, 1200000LL}) {
    // 100 clients on 8 keys, as a campaign at concurrency 100 writes it.
    Case c;
    c.name = "8 keys, 100 procs, 1% crashed";
    c.sim.seed = 47;
    c.sim.processes = 100;
    c.sim.keys = 8;
    c.sim.ops = n;
    c.sim.info_rate = 0.01;
    c.sim.max_latency = 1000;
    c.sim.max_gap = 20;
    cases.push_back(c);
  }
  std::printf("%s; 2 threads; each case in a fresh child\n",
              search_only ? "search only (fast path off)"
                          : "unique-value fast path on");
  for (std::size_t k = 0; k < cases.size(); ++k) {
    if (only >= 0 && static_cast<std::size_t>(only) != k) continue;
    if (!InChild(cases[k], search_only)) {
      std::printf("%-44s FAILED\n", cases[k].name.c_str());
    }
  }
  return 0;
}

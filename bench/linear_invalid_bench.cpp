// Linearizability checker benchmark of the invalid path: simulated histories
// with rare injected anomalies (stale reads, lost writes), so most keys are
// linearizable and a few are not, checked with 2 threads. Prints, per case:
// ops, keys, verdict, the check's wall and CPU time (best and median of the
// repetitions), and which violation was reported (key, the invoke index of
// the first stuck op, and the summary), so runs of two builds can be
// compared line by line.
//
// Usage: linear_invalid_bench [--quick] [--threads N] [--reps N]
//   --quick skips the 1M-op case.

#include <algorithm>
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

// The text after `"name":` in `json`, up to the next ',' or '}'.
std::string Field(const std::string& json, const std::string& name) {
  std::size_t at = json.find("\"" + name + "\":");
  if (at == std::string::npos) return "-";
  at += name.size() + 3;
  std::size_t end = json.find_first_of(",}", at);
  return json.substr(at, end - at);
}

struct Case {
  const char* name;
  fc::SimOptions sim;
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int threads = 2;
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    }
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    }
  }
  std::vector<Case> cases;
  auto base = [](std::uint64_t seed, int procs, std::int64_t ops, int keys) {
    fc::SimOptions s;
    s.seed = seed;
    s.processes = procs;
    s.ops = ops;
    s.keys = keys;
    s.info_rate = 0.01;
    s.max_latency = 1000;
    s.max_gap = 200;
    return s;
  };
  {
    Case c{"1 key, 10 procs, stale 1e-4", base(51, 10, 100000, 1)};
    c.sim.stale_read_rate = 1e-4;
    cases.push_back(c);
  }
  {
    Case c{"3 keys, 9 procs, stale 1e-4", base(52, 9, 30000, 3)};
    c.sim.stale_read_rate = 1e-4;
    cases.push_back(c);
  }
  {
    Case c{"3 keys, 9 procs, lost 1e-3", base(53, 9, 30000, 3)};
    c.sim.lost_write_rate = 1e-3;
    cases.push_back(c);
  }
  {
    // Two big keys: once one fails, the other is searched up to that
    // instant (before, it stopped at once).
    Case c{"2 keys, 20 procs, stale 2e-5", base(57, 20, 200000, 2)};
    c.sim.stale_read_rate = 2e-5;
    cases.push_back(c);
  }
  {
    Case c{"1000 keys, 50 procs, stale 1e-4", base(54, 50, 100000, 1000)};
    c.sim.stale_read_rate = 1e-4;
    cases.push_back(c);
  }
  {
    Case c{"1000 keys, 50 procs, lost 1e-4", base(55, 50, 100000, 1000)};
    c.sim.lost_write_rate = 1e-4;
    cases.push_back(c);
  }
  if (!quick) {
    Case c{"1000 keys, 50 procs, stale 1e-5", base(56, 50, 1000000, 1000)};
    c.sim.stale_read_rate = 1e-5;
    cases.push_back(c);
  }

  std::printf("threads %d, %d repetitions per case (best / median)\n", threads,
              reps);
  for (const Case& c : cases) {
    fc::History h = fc::Simulate(c.sim);
    std::vector<double> wall, cpu;
    fc::Verdict v;
    for (int r = 0; r < reps; ++r) {
      fc::LinearizableOptions o;
      o.threads = threads;
      double c0 = CpuSeconds();
      Clock::time_point t0 = Clock::now();
      v = fc::CheckLinearizable(h, o);
      wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      cpu.push_back(CpuSeconds() - c0);
    }
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    std::size_t stuck = v.details_json.find("\"stuck\":[{\"op\":");
    std::string stuck_index =
        stuck == std::string::npos
            ? "-"
            : Field(v.details_json.substr(stuck + 15), "index");
    std::printf(
        "%-34s %8lld ops %5d keys %-8s check %6.3f / %6.3f s (cpu %6.3f / "
        "%6.3f s) | key %s, first stuck op invoked at event %s | %s\n",
        c.name, static_cast<long long>(c.sim.ops), c.sim.keys,
        std::string(fc::ToString(v.validity)).c_str(), wall.front(),
        wall[wall.size() / 2], cpu.front(), cpu[cpu.size() / 2],
        Field(v.details_json.substr(std::min(
                  v.details_json.size(), v.details_json.find("\"failure\":"))),
              "key")
            .c_str(),
        stuck_index.c_str(), v.summary.c_str());
    std::fflush(stdout);
  }
  return 0;
}

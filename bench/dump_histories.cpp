// Writes the simulated histories of the linearizability benchmark's
// cas-register cases to JSONL files, so that other checkers (Porcupine, see
// bench/porcupine/) can be run on exactly the histories faultline is
// benchmarked on.
//
// The SimOptions below replicate bench/linearizability_bench.cpp's cases
// (seeds 42 and 43, same processes, keys, info rates, latency and gap): that
// file builds them inline in main(), so they cannot be shared through a
// header. If the benchmark's parameters change, change them here too.
// checkers::Simulate is a pure function of its options, so the same options
// give the same history.
//
// Usage: dump_histories [--out DIR] [--quick] [--invalid] [--concurrent]
//   Writes DIR/<name>.jsonl for each case (DIR defaults to /tmp) and prints
//   one line per file: name, ops, events, bytes, path. --quick skips the
//   1M-op case; --invalid adds a case with injected stale reads (not one of
//   the benchmark's cases); --concurrent adds a high-concurrency case (100
//   processes on 8 keys, 400k ops, 1% info: the shape of a 30 s raftkv
//   campaign at concurrency 100), a profiling case for the general search.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_cases.h"
#include "checkers/history.h"
#include "checkers/sim.h"

namespace fc = faultline::checkers;

namespace {

struct DumpCase {
  std::string name;  // file stem
  fc::SimOptions sim;
};

std::vector<DumpCase> Cases(bool quick, bool invalid, bool concurrent) {
  std::vector<DumpCase> cases;
  for (const auto& c : faultline::bench::ScalingCases(quick)) {
    cases.push_back({c.stem, c.sim});
  }
  if (invalid) {
    // Not a benchmark case: the 100k-op, 1,000-key case with stale reads
    // injected, so that the checkers are also compared on a history that is
    // (very likely) not linearizable.
    DumpCase c = cases[3];
    c.name = "stale-reads-1000-keys-50p-1info-100000";
    c.sim.seed = 45;
    c.sim.stale_read_rate = 0.001;
    cases.push_back(c);
  }
  if (concurrent) {
    DumpCase c;
    c.name = "8-keys-100p-1info-400000";
    c.sim.seed = 46;
    c.sim.processes = 100;
    c.sim.keys = 8;
    c.sim.ops = 400000;
    c.sim.info_rate = 0.01;
    c.sim.max_latency = 1000;
    c.sim.max_gap = 200;
    cases.push_back(c);
  }
  return cases;
}

// Writes one case; returns false (after printing why) on an I/O error.
bool Dump(const DumpCase& c, const std::string& dir) {
  std::string path = dir + "/" + c.name + ".jsonl";
  fc::History h = fc::Simulate(c.sim);
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  std::string line;
  bool ok = true;
  for (const fc::Event& e : h) {
    line = fc::ToJsonLine(e);
    line += '\n';
    if (std::fwrite(line.data(), 1, line.size(), out) != line.size()) {
      ok = false;
      break;
    }
  }
  long size = std::ftell(out);
  if (std::fclose(out) != 0) ok = false;
  if (!ok) {
    std::fprintf(stderr, "write error on %s\n", path.c_str());
    return false;
  }
  std::printf("%-28s ops %8lld events %8zu bytes %10ld %s\n", c.name.c_str(),
              static_cast<long long>(c.sim.ops), h.size(), size, path.c_str());
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "/tmp";
  bool quick = false;
  bool invalid = false;
  bool concurrent = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      dir = argv[++i];
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--invalid") == 0) {
      invalid = true;
    } else if (std::strcmp(argv[i], "--concurrent") == 0) {
      concurrent = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--out DIR] [--quick] [--invalid] "
                   "[--concurrent]\n",
                   argv[0]);
      return 254;
    }
  }
  for (const DumpCase& c : Cases(quick, invalid, concurrent)) {
    if (!Dump(c, dir)) return 1;
  }
  return 0;
}

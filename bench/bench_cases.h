// The generated histories the benchmarks measure, shared by
// linearizability_bench (which checks them) and dump_histories (which writes
// them out for other checkers, e.g. Porcupine): one definition, so both
// always measure the same histories.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/sim.h"

namespace faultline::bench {

struct ScalingCase {
  std::string name;  // for tables: "1 key, 10 procs, 2% info"
  std::string stem;  // for file names: "single-key-10p-2info-1000"
  checkers::SimOptions sim;
  bool many_keys = false;  // the 1,000-key cases (measured through a file)
};

// Single key, 10 processes, 2% info: 1k, 10k, 100k ops (seed 42); 1,000
// keys, 50 processes, 1% info: 100k and, unless `quick`, 1M ops (seed 43).
inline std::vector<ScalingCase> ScalingCases(bool quick) {
  std::vector<ScalingCase> cases;
  for (std::int64_t n : {1000, 10000, 100000}) {
    ScalingCase c;
    c.name = "1 key, 10 procs, 2% info";
    c.stem = "single-key-10p-2info-" + std::to_string(n);
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
    ScalingCase c;
    c.name = "1000 keys, 50 procs, 1% info, file";
    c.stem = "1000-keys-50p-1info-" + std::to_string(n);
    c.sim.seed = 43;
    c.sim.processes = 50;
    c.sim.keys = 1000;
    c.sim.ops = n;
    c.sim.info_rate = 0.01;
    c.sim.max_latency = 1000;
    c.sim.max_gap = 200;
    c.many_keys = true;
    cases.push_back(c);
  }
  return cases;
}

}  // namespace faultline::bench

// Seeded simulated histories for tests and benchmarks: concurrent clients of
// registers (register or cas-register vocabulary) whose operations take
// effect at a random instant inside their interval, with crashes (info and
// never-completed ops), failed cas, optional nemesis events and injected
// anomalies (stale reads, lost writes, reordered writes).
//
// Without anomalies the history is linearizable by construction. With them
// it may or may not be; tests compare checkers rather than assume.
//
// Thread-safety: pure function of its options (the seed included).
#pragma once

#include <cstdint>
#include <string>

#include "checkers/history.h"

namespace faultline::checkers {

struct SimOptions {
  std::uint64_t seed = 1;
  std::string model = "cas-register";  // "register" or "cas-register"
  int processes = 5;                   // concurrent clients
  std::int64_t ops = 100;              // operations (invocations) in total
  int keys = 1;                        // 1: the `key` field is omitted
  double read_ratio = 0.4;             // the rest: writes, and cas when the
  double cas_ratio = 0.2;              // model has it
  double info_rate = 0.0;              // crash probability per op
  double pending_share = 0.3;          // of crashes: never completed
  double fail_rate = 0.0;              // writes refused before being sent
  bool unique_values = true;           // else values drawn from [0, range)
  int value_range = 3;
  bool with_time = true;          // else only `index` orders events
  std::int64_t max_latency = 10;  // time units of an op, >= 1
  std::int64_t max_gap = 5;       // idle time between a process's ops
  double nemesis_rate = 0.0;      // nemesis events per op
  // Anomalies, per operation.
  double stale_read_rate = 0.0;  // a read returns an older value
  double lost_write_rate = 0.0;  // an ok write never takes effect
  double reorder_rate = 0.0;     // a write's effect is delayed past the next
};

History Simulate(const SimOptions& options);

}  // namespace faultline::checkers

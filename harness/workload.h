// Workload: what the clients do and how the history is checked. The
// generator side is pure and seeded (the same seed gives the same
// operations); the interpreter alone owns threads and sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"
#include "harness/client.h"

namespace faultline::harness {

// The operations of one worker thread, in order. Deterministic given the
// (seed, worker) it was made from.
class WorkerGenerator {
 public:
  virtual ~WorkerGenerator() = default;
  virtual Operation Next() = 0;
};

// The checkers' memory bound when none is configured: past it a checker
// answers unknown instead of exhausting the machine.
inline constexpr std::size_t kDefaultCheckMemoryBytes = std::size_t{4} << 30;

struct CheckOptions {
  int threads = 0;  // 0: all cores
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::size_t memory_limit_bytes = 0;  // 0: kDefaultCheckMemoryBytes
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<WorkerGenerator> ForWorker(int worker,
                                                     std::uint64_t seed) = 0;
  // Operations to run after the final heal and recovery (e.g. a read of
  // every key), retried by the interpreter until ok or out of time.
  virtual std::vector<Operation> FinalOps() = 0;
  // Runs the workload's checkers on a history. Pure.
  virtual std::vector<checkers::Verdict> Check(const checkers::History& h,
                                               const CheckOptions& o) = 0;
};

}  // namespace faultline::harness

// Workload: what the clients do and how the history is checked. The
// generator side is pure and seeded (the same seed gives the same
// operations); the interpreter alone owns threads and sleeps.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"
#include "harness/interfaces/client.h"

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
  // The bound a checker gets: memory_limit_bytes, or the default when 0.
  std::size_t MemoryLimit() const {
    return memory_limit_bytes > 0 ? memory_limit_bytes
                                  : kDefaultCheckMemoryBytes;
  }
};

// What the interpreter does with one generated operation, as decided by a
// StatefulClient (below) from its own state, before anything is recorded.
struct PreparedOp {
  bool skip = false;  // nothing to do now: neither recorded nor invoked
  Operation op;       // what is recorded and then passed to Invoke
  // Extra fields of the invoke event (and its completion), e.g. "fenced".
  std::vector<std::pair<std::string, checkers::Value>> extra;
  // The interpreter waits this long (interruptibly) before recording the
  // invocation: hold time, or a stall such as a paused lock holder.
  std::chrono::milliseconds delay{0};
  // Whether the workload's `rate` pacing (a random wait before an
  // operation) applies. False for the steps inside a lock hold, whose own
  // `delay`s space them: pacing goes between holds, not into them, so a
  // hold lasts about hold_ms whatever the rate.
  bool paced = true;
};

// A client that keeps per-process state (e.g. the fencing token of the lock
// it holds) and completes each generated operation from it before the
// interpreter records the invocation. The interpreter calls Prepare, then
// (unless skipped) records prepared.op and calls Invoke(prepared.op).
// Workers only: the final operations (Workload::FinalOps) are recorded and
// invoked as given, without Prepare.
// Thread-safety: like Client, one per worker thread.
class StatefulClient : public Client {
 public:
  virtual PreparedOp Prepare(const Operation& generated) noexcept = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  // The client vocabulary the workload's operations use, which is what
  // Target::OpenClient is asked for ("register", "lock"). Defaults to the
  // workload's name; a workload built on another's operations (election on
  // lock) says so here.
  virtual std::string client_kind() const { return name(); }
  virtual std::unique_ptr<WorkerGenerator> ForWorker(int worker,
                                                     std::uint64_t seed) = 0;
  // Operations to run after the final heal and recovery (e.g. a read of
  // every key), retried by the interpreter until ok or out of time.
  virtual std::vector<Operation> FinalOps() = 0;
  // Wraps the client the target opened for a fresh process (`inner` may be
  // null when the target could not open one). The default is no wrapper.
  // A workload whose operations need per-process state or a controller-side
  // resource returns a StatefulClient here. Called from worker threads.
  virtual std::unique_ptr<Client> WrapClient(std::unique_ptr<Client> inner) {
    return inner;
  }
  // Runs the workload's checkers on a history. Pure.
  virtual std::vector<checkers::Verdict> Check(const checkers::History& h,
                                               const CheckOptions& o) = 0;
};

}  // namespace faultline::harness

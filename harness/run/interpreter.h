// The interpreter: runs a workload's generators on worker threads against a
// target's clients while a nemesis thread applies the fault schedule, then
// heals, waits for recovery and runs the final operations. Every invocation
// and completion goes to the Journal as it happens.
//
// Threads: one per worker (worker w starts as process w, takes a fresh
// process id after every `info`, with a fresh client), one nemesis thread,
// and with workload.observe_ms > 0 one leader observer per node (node i is
// process ObserverProcess(i) for the whole run; docs/history-locks.md).
// A workload's WrapClient wraps every client opened; a StatefulClient's
// Prepare runs before each invocation is recorded (skip, delay, extra
// fields; see harness/interfaces/workload.h).
// The interpreter alone sleeps; generators and schedules are pure.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/config/spec.h"
#include "harness/interfaces/nemesis.h"
#include "harness/interfaces/target.h"
#include "harness/interfaces/workload.h"
#include "harness/run/journal.h"

namespace faultline::harness {

struct InterpreterConfig {
  const TestSpec* spec = nullptr;
  Cluster* cluster = nullptr;
  Target* target = nullptr;
  Nemesis* nemesis = nullptr;  // null: no faults
  Workload* workload = nullptr;
  Journal* journal = nullptr;
  std::function<FaultPlan()> next_fault;  // the seeded schedule
  // Set from another thread (SIGINT/SIGTERM) to end the run early: the
  // workload stops, every fault is healed, and the final operations still
  // run after a shortened recovery pause, all of it within
  // `interrupted_final_s` of the moment the interpreter noticed the flag
  // (so an interrupted run still reads every key once more while its
  // cluster is up, and ends promptly).
  const std::atomic<bool>* abort = nullptr;
  std::chrono::duration<double> interrupted_final_s{10.0};
  // Called once, on the interpreter's main thread, when it notices `abort`
  // (before the workload stops and faults heal, or during the final
  // operations when the flag was set then); may be empty.
  std::function<void()> on_abort;
  // Called about once a second, on the interpreter's main thread, with a
  // one-line status (for the terminal): elapsed time, the workload's ok /
  // fail / info counts, the faults in force with their targets and since
  // when ("fault: partition n1|n2,n3 since 3.2 s"). At the time limit, when
  // workload operations are still outstanding, it is called at once and
  // then every second until none is left with "time limit reached, waiting
  // for N outstanding operations" in place of the elapsed time. May be
  // empty.
  std::function<void(const std::string&)> on_status;
};

// Process ids of the leader observers: far above any worker's ids.
inline constexpr std::int64_t kObserverProcessBase = 1'000'000'000;
inline std::int64_t ObserverProcess(int node_index) {
  return kObserverProcessBase + node_index;
}

struct InterpreterReport {
  std::chrono::steady_clock::time_point first_invoke{};
  std::int64_t observations = 0;  // observe operations (not in the counts)
  // The workload's operations (final operations not included): the same
  // counts as the history's events without "phase": "final" and f other
  // than "observe" (reports/evidence.h, "ops.workload").
  std::int64_t invocations = 0;
  std::int64_t ok = 0, fail = 0, info = 0;
  // The final operations (after the heal), each invoke and completion of
  // which carries "phase": "final" in the history.
  std::int64_t final_invocations = 0;
  std::int64_t final_ok = 0, final_fail = 0, final_info = 0;
  int faults_started = 0;
  int faults_healed = 0;
  std::vector<std::string> problems;  // nemesis errors, final reads not ok
  bool aborted = false;
  // Non-empty when the target's clients said the run cannot go on
  // (ClientHealth, harness/interfaces/target.h): the workload stopped early
  // and no final operation ran.
  std::string client_failure;
  double workload_s = 0;  // wall time of the faulted phase
  double final_s = 0;     // recovery + final operations
};

InterpreterReport RunInterpreter(const InterpreterConfig& config);

// The leader-per-term verdict when the history holds `observe` events
// (from the observer, any workload); empty otherwise. Pure.
std::vector<checkers::Verdict> CheckObservations(
    const checkers::History& history);

// Deterministic per-worker seed derived from the test seed (splitmix64).
std::uint64_t DeriveSeed(std::uint64_t seed, std::uint64_t stream);

}  // namespace faultline::harness

// Nemesis: applies and heals faults on a running cluster. Implementations
// live in nemesis/; the interpreter drives them through this interface.
// Every fault is written to the run's Ledger before it takes effect.
//
// Thread-safety: Start/Stop are called from the nemesis thread only;
// HealAll may be called from any thread, also concurrently with Start/Stop
// (e.g. on SIGINT), and must leave no fault behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/value.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

// One step of the fault schedule, drawn by the seeded schedule generator.
struct FaultStep {
  std::string kind;        // "partition", "pause", "kill", "delay",
                           // "kill-voter", "loss", "clock",
                           // "figure8", "strobe", and the disk faults
                           // "power-loss", "torn-write", "fsync-error",
                           // "disk-full", "slow-disk"
  std::string selector;    // partition shape, or node selector otherwise;
                           // "same" (harness/run/fault_group.h): act on `nodes`
  std::uint64_t seed = 0;  // for random choices inside the step
  int delay_ms = 500;      // "delay": how long packets to the chosen nodes
                           // from the other nodes are held
  double loss_probability = 0.3;  // "loss": share of packets from the other
                                  // nodes the chosen nodes drop, (0, 1]
  long long clock_offset_ms = 0;  // "clock": step of the chosen nodes' clocks
  double clock_rate = 1.0;        // "clock": their rate from then on
  std::string partition_mode = "drop";  // "partition": "drop" | "reset"
  // "strobe" (nemesis/clock/strobe.h): the chosen nodes' clocks flip up by
  // strobe_delta_ms and back every strobe_period_ms while the fault lasts.
  long long clock_strobe_delta_ms = 0;
  long long clock_strobe_period_ms = 0;
  // "fsync-error": how many of the next fsyncs fail; "slow-disk": the delay
  // per file system operation (nemesis/disk/disk_fault.h).
  int fsync_errors = 1;
  int disk_latency_ms = 100;
  // Selector "same": the names of the nodes the group's first fault acted
  // on, bound by the interpreter (BindSame); empty otherwise.
  std::vector<std::string> nodes = {};
};

// One step of the schedule: the faults applied at the same time (started in
// order; one element unless the config combined them with `together`),
// held for duration_s, then healed in reverse order.
struct FaultPlan {
  std::vector<FaultStep> faults;
  double duration_s = 10;
};

class Nemesis {
 public:
  virtual ~Nemesis() = default;
  // Applies the fault. The returned value describes exactly what was done
  // (it becomes the `value` of the nemesis history event), e.g.
  // {"shape":"halves","components":[["n1","n2"],["n3","n4","n5"]]}.
  virtual Result<checkers::Value> Start(const FaultStep& step) = 0;
  // Heals the fault started last (faults started while others are active
  // stack up: each Stop heals the newest one still active); the value
  // describes what was healed.
  virtual Result<checkers::Value> Stop() = 0;
  // Heals everything this nemesis ever applied. Idempotent.
  virtual Status HealAll() = 0;
};

}  // namespace faultline::harness

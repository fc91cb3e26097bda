// SystemClock: the controller's side of the system-clock faults
// (nemesis.clock_mode: system; docs/faults.md "System clocks"). It moves
// the real CLOCK_REALTIME of SSH nodes through faultline-clock
// (nemesis/clock/sysclock_tool.h), which it copies to the nodes.
//
// Kernels: nodes whose /proc/sys/kernel/random/boot_id match share one
// kernel, hence one clock: a step on one moves them all. Create groups the
// nodes by boot id; every action on a chosen node acts once per kernel,
// through that kernel's first node in cluster order (its "anchor"), and
// reports every node the kernel carries as moved. A kernel whose boot id is
// the controller's own is flagged: the controller's wall clock moves too
// (it times runs with steady clocks, so only log timestamps show it).
//
// The state file of a kernel is <node_dir>/sysclock.state on its anchor,
// beside <node_dir>/faultline-clock. Before the first change of a kernel
// (after Create or its last reset) a `sysclock` ledger entry naming that
// state file is recorded, so `faultline heal` resets the clock over SSH
// after a controller crash; a successful reset marks it healed. A strobe
// runs as a faultline-clock process on the anchor (a `process` ledger
// entry), which stops flipping and resets the clock by itself after
// `duration_ms` or on SIGTERM.
//
// Thread-safety: every method may be called from any thread (one mutex,
// held across the SSH commands). The nodes' Remotes and the ledger must
// outlive the object. The destructor does not reset: call ResetAll.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checkers/value.h"
#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger.h"

namespace faultline::nemesis {

class SystemClock {
 public:
  struct Options {
    std::string binary;    // faultline-clock here; "" = beside the running
                           // executable, then PATH
    std::string node_dir;  // the run's directory on every node (exists)
  };
  // Reads the boot ids, copies faultline-clock to each kernel's anchor and
  // records nothing else. Fails naming the node that could not be asked.
  static harness::Result<std::unique_ptr<SystemClock>> Create(
      const std::vector<harness::Node>& nodes, Options options,
      harness::Ledger& ledger);
  ~SystemClock();

  // What a change did: `moved` lists every node whose clock moved (cluster
  // order), `kernels` the groups of them that share a kernel,
  // `controller_moved` whether the controller's kernel was one of them, and
  // `offset_ms` each moved node's clock - its baseline after the change.
  struct Move {
    std::vector<int> moved;
    std::vector<std::vector<int>> kernels;
    bool controller_moved = false;
    std::map<int, double> offset_ms;
  };
  // Steps the clocks of the kernels of `chosen` by delta_ms.
  harness::Result<Move> Bump(const std::vector<int>& chosen,
                             long long delta_ms);
  // Starts a strobe on the kernels of `chosen`: up by delta_ms and back
  // every period_ms, ending (at the baseline) after duration_ms at most.
  harness::Result<Move> StartStrobe(const std::vector<int>& chosen,
                                    long long delta_ms, long long period_ms,
                                    long long duration_ms);
  // Ends every strobe (SIGTERM, then waits until it exits) and returns its
  // flips, as StrobeFlipsValue does (nemesis/clock/strobe.h); none: empty list.
  checkers::Value StopStrobes();
  // Resets the kernels of `nodes` (the moved ones) to their baselines;
  // returns each node's offset after the reset in ms. Idempotent.
  harness::Result<std::map<int, double>> Reset(const std::vector<int>& nodes);
  // Stops strobes and resets every kernel. Idempotent.
  harness::Status ResetAll();

  // Node index -> the indices of every node on its kernel (itself included).
  std::vector<int> KernelOf(int node) const;
  bool SharesController(int node) const;

 private:
  struct Kernel {
    std::string boot_id;
    std::vector<int> nodes;  // cluster order; nodes[0] is the anchor
    bool controller = false;
    long seq = 0;  // the open `sysclock` ledger entry, 0: at baseline
    pid_t strobe_pid = 0;
    long strobe_seq = 0;
  };
  SystemClock(std::vector<harness::Node> nodes, Options options,
              harness::Ledger& ledger, std::vector<Kernel> kernels);
  std::vector<std::size_t> KernelsOf(const std::vector<int>& nodes) const;
  harness::Status RecordLocked(Kernel& k);
  harness::Result<double> RunLocked(Kernel& k,
                                    const std::vector<std::string>& args);
  harness::Status ResetLocked(Kernel& k, double* offset_ms);
  void StopStrobeLocked(Kernel& k, checkers::Value::List* flips);
  Move Describe(const std::vector<std::size_t>& ks,
                const std::map<std::size_t, double>& offsets) const;
  std::string StatePath() const;
  std::string ToolPath() const;

  const std::vector<harness::Node> nodes_;
  const Options options_;
  harness::Ledger& ledger_;
  std::mutex mu_;
  std::vector<Kernel> kernels_;
};

}  // namespace faultline::nemesis

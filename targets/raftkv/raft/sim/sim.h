// Seeded random runs of the simulator: a Cluster under a random workload
// (puts with unique values, linearizable reads, follower-lease local reads)
// and random faults (message drop/duplicate/delay/reorder, partitions,
// crashes at any phase of handling a Ready, restarts, clock-rate skew),
// with the invariant checker run after every step. The same seed and
// options give the same run.
//
// Thread-safety: RunRandom is reentrant (no globals).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/sim/invariants.h"
#include "targets/raftkv/raft/sim/network.h"

namespace faultline::raftkv::raft::sim {

struct RunOptions {
  std::size_t nodes = 3;
  ReadMode read_mode = ReadMode::kReadIndex;
  Unsafe unsafe = Unsafe::kNone;
  Nanos duration = 1'000'000'000;  // simulated real time
  Nanos tick = 5'000'000;          // each node is ticked this often

  // Core timing (scaled down from the server's defaults).
  Nanos heartbeat = 20'000'000;
  Nanos election = 100'000'000;
  Nanos follower_lease = 60'000'000;
  Nanos lease_guard = 2'000'000;
  double drift_epsilon = 0.001;
  bool pre_vote = true;
  bool check_quorum = true;
  std::size_t max_append_entries = 8;
  Index snapshot_every = 16;  // 0: never compact
  std::size_t snapshot_chunk_bytes = 64;

  NetOptions net{0.02, 0.02, 500'000, 4'000'000, 0.01, 40'000'000};
  // Clock rates are drawn in [1/(1+k*e), 1+k*e] with k = skew; k <= 1 is
  // within the drift bound the lease rules assume.
  double skew = 1.0;

  // Faults, as mean events per simulated second.
  double crashes_per_sec = 1.0;
  double partitions_per_sec = 1.0;
  double ready_crash = 0.002;  // per phase of each Ready
  // Probability of crashing right after sending a vote grant.
  double crash_after_vote = 0;
  // Probability of isolating a leader in the step its commit advanced
  // (messages it just sent are lost with it).
  double isolate_on_commit = 0;
  // Probability of isolating a node in the step it became leader (its
  // new-term entries stay local).
  double isolate_new_leader = 0;
  Nanos max_down = 300'000'000;
  Nanos max_partition = 300'000'000;
  // Restart a crashed node immediately after its crash with this
  // probability (a node that forgets its vote revotes in the same term).
  double quick_restart = 0.2;

  // Workload.
  double proposes_per_sec = 100;
  double reads_per_sec = 100;
  int keys = 3;
  double transfers_per_sec = 0.5;  // leadership transfers asked of leaders
  double leader_bias = 0.8;        // proposals sent to the current leader
  double read_at_leader = 0.3;     // reads sent to the current leader

  bool trace = false;  // print the run's events to stderr
};

struct RunResult {
  bool ok = true;
  std::optional<Finding> finding;
  std::uint64_t steps = 0;
  std::size_t terms_with_leader = 0;
  Index commit = 0;  // highest commit reached
  std::uint64_t reads_checked = 0;
  std::uint64_t local_reads = 0;  // of which follower-lease local reads
  std::uint64_t proposals_accepted = 0;
  std::uint64_t crashes = 0;
};

RunResult RunRandom(std::uint64_t seed, const RunOptions& opt);

// "seed 12 step 345 ...: read-safety: ..." or "ok (...)".
std::string Describe(const RunResult& r);

}  // namespace faultline::raftkv::raft::sim

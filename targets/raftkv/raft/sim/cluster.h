// The simulator's driver: N raft::Node instances driven exactly like the
// real server drives one (Tick, Step, GetReady -> persist to the node's
// MemDisk -> send to the Network -> apply to its SimKv -> serve reads ->
// Advance), on one SimClock, reporting everything to an InvariantChecker.
//
// Nothing here decides *when* things happen: the random runner (sim.h) and
// the scenario runner (scenario.h) do. A crash can be injected between the
// phases of handling a Ready through `crash_hook`.
//
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/sim/clock.h"
#include "targets/raftkv/raft/sim/invariants.h"
#include "targets/raftkv/raft/sim/memdisk.h"
#include "targets/raftkv/raft/sim/network.h"

namespace faultline::raftkv::raft::sim {

struct ClusterOptions {
  std::size_t nodes = 3;
  Config base;  // timing, read mode, unsafe; id/voters/seed set per node
  NetOptions net;
  Index snapshot_every = 0;  // compact when applied - snapshot >= this
};

// Where in the handling of one Ready a crash may strike.
enum class ReadyPhase : std::uint8_t {
  kBeforePersist,  // nothing of this Ready reached the disk
  kAfterPersist,   // persisted, nothing sent
  kAfterSend,      // sent, not applied
  kAfterApply,     // applied, not advanced
};

struct ServedRead {
  NodeId node = kNone;
  std::string key;
  std::optional<std::string> value;
  bool local = false;  // follower-lease local read
};

class Cluster {
 public:
  Cluster(std::uint64_t seed, ClusterOptions opt);
  ~Cluster();

  const std::vector<NodeId>& ids() const { return ids_; }
  bool Up(NodeId n) const;
  Node* node(NodeId n);
  const MemDisk& disk(NodeId n) const;
  const SimKv& kv(NodeId n) const;
  Nanos Now(NodeId n) const { return clock_.Local(n); }
  Status StatusOf(NodeId n) const;  // default Status if down
  // The node that is leader with the highest term, if any is up.
  NodeId Leader() const;

  SimClock& clock() { return clock_; }
  Network& net() { return net_; }
  InvariantChecker& checker() { return checker_; }
  const ClusterOptions& options() const { return opt_; }
  std::uint64_t steps() const { return step_; }

  // Crash: the node and all volatile state are gone; its disk stays.
  void Crash(NodeId n);
  // Restart from the disk only. No-op if up.
  void Restart(NodeId n);
  int restarts(NodeId n) const;
  // How many Readys of n carried Vote or PreVote requests (campaigns).
  std::uint64_t campaigns(NodeId n) const;

  // Drive one node.
  void TickNode(NodeId n);
  // Delivers `m` to m.to (dropped if it is down).
  void Deliver(const Message& m);
  // Delivers every message due by now.
  void DeliverDue();
  // Handles every pending Ready of n.
  void ProcessReady(NodeId n);
  // Invariant observations of every running node; one "step".
  void Observe();

  // Clients. Propose: a put on node n (the result says if it was accepted).
  ProposeResult Propose(NodeId n, const std::string& key,
                        const std::string& value);
  // A linearizable read on n: a follower-lease local read first if
  // `try_local` (and the mode allows it), else RequestRead. Served reads
  // are checked by the checker and appended to served().
  void Read(NodeId n, const std::string& key, bool try_local);
  bool TransferLeadership(NodeId from, NodeId to);
  std::vector<ServedRead>& served() { return served_; }
  std::size_t PendingReads() const;
  std::uint64_t failed_reads() const { return failed_reads_; }

  // Called at each ReadyPhase with the Ready being handled; returning true
  // crashes the node there.
  std::function<bool(NodeId, ReadyPhase, const Ready&)> crash_hook;
  // If set, receives one line per notable event (debugging a seed).
  std::function<void(const std::string&)> trace;
  void Trace(const std::string& line);

 private:
  struct PendingRead {
    ReadTicket ticket;
    bool has_index = false;
    Index index = 0;
  };
  struct Slot;
  Slot& S(NodeId n);
  const Slot& S(NodeId n) const;
  Config ConfigFor(NodeId n, int restarts) const;
  bool MaybeCrash(NodeId n, ReadyPhase p, const Ready& rd);
  // Handles pending Readys; false if the node crashed meanwhile.
  bool ProcessReadyOnce(NodeId n);
  void ServeReads(NodeId n);
  void RetryLocalReads(NodeId n);
  void StartRead(NodeId n, const ReadTicket& t);

  std::uint64_t seed_;
  ClusterOptions opt_;
  std::vector<NodeId> ids_;
  SimClock clock_;
  Network net_;
  InvariantChecker checker_;
  std::map<NodeId, std::unique_ptr<Slot>> slots_;
  std::uint64_t step_ = 0;
  std::uint64_t next_ctx_ = 1;
  std::vector<ServedRead> served_;
  std::uint64_t failed_reads_ = 0;
};

}  // namespace faultline::raftkv::raft::sim

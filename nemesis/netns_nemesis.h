// NetnsNemesis: partitions (iptables INPUT rules inside the nodes'
// namespaces), pause (Target::Pause/Resume), kill (Target::Kill/Start) and
// delay (an NFQUEUE rule per other node plus a faultline-netdelay daemon in
// each chosen node's namespace, nemesis/net/netdelay_node.h), loss, clock,
// strobe, and the disk faults on the lazy file system (power-loss,
// torn-write, fsync-error, disk-full, slow-disk; nemesis/disk/) for a cluster
// from any provider: netns nodes are acted on from the controller, ssh and
// docker nodes through their Remote. See docs/faults.md.
//
// Several faults may be active at once (a `together` entry of the schedule):
// each Start stacks a fault on the active ones, each Stop heals the newest
// (and returns {"kind":"none"} when nothing is active), HealAll heals them
// all. Start fails when the new fault would act on what an active one holds
// (CanStack: two of one kind, pause/kill on the same processes, kill-voter
// or figure8 with anything). Partition and delay rules live in their own
// iptables chains (nemesis/net/iptables_chain.h) and loss rules are commented,
// so healing one fault never removes another's rules. A Start that fails
// half-way undoes what it applied before returning the error. Every iptables
// change is recorded in the Ledger before it is applied (an "iptables" entry
// naming the fault's chain or loss comment, all that `faultline heal` then
// removes) and marked healed after it is undone; pause/kill ledger entries
// are the Target's (it knows the pids).
// A delay records its daemon (process entry, right after the spawn and before
// any packet is queued to it) and its rules (iptables entry, before they are
// applied).
//
// Thread-safety: Start/Stop/HealAll serialize on one mutex, so HealAll may
// be called from any thread, also while Start/Stop run (it then heals what
// they applied once they return). cluster, target and ledger must outlive
// the nemesis. The destructor does not heal: call HealAll.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/clock/clock.h"
#include "harness/cluster/cluster.h"
#include "harness/interfaces/nemesis.h"
#include "harness/interfaces/target.h"
#include "harness/ledger/ledger.h"
#include "nemesis/net/netdelay_node.h"

namespace faultline::nemesis {

class ClockStrobe;  // nemesis/clock/strobe.h
namespace disk {
class LazyfsNodes;  // nemesis/disk/lazyfs_nodes.h
}
class SystemClock;  // nemesis/clock/sysclock.h

// The names of nodes[i] for each i of `indices`, as a JSON list (the
// "nodes" of a fault's value).
checkers::Value NodeNames(const std::vector<harness::Node>& nodes,
                          const std::vector<int>& indices);

class NetnsNemesis : public harness::Nemesis {
 public:
  static constexpr std::chrono::milliseconds kVoterWatchLimit{3000};

  NetnsNemesis(harness::Cluster& cluster, harness::Target& target,
               harness::Ledger& ledger);
  ~NetnsNemesis() override;

  // step.kind: "partition" (selector = shape, see partition.h;
  // step.partition_mode "drop" or "reset", see PartitionRuleSpecs), "pause",
  // "kill" or "delay" (selector: "one", "leader", "follower" (one random
  // node that is not the leader), "minority", "majority", "all", or "same":
  // exactly step.nodes, see harness/run/fault_group.h; a partition "same" cuts
  // step.nodes off from the other nodes, both ways). "delay"
  // holds every packet that a chosen node receives from the other nodes
  // (never from the controller) for step.delay_ms; packets it sends are not
  // delayed (unless their receiver is chosen too).
  // Returns e.g. {"kind":"partition","shape":"halves","components":
  // [["n1","n2"],["n3","n4","n5"]],"grudge":{"n1":["n3","n4","n5"],...},
  // "direction":"both","mode":"drop"} (a one-way shape: "direction":
  // "one-way" and "blocked":["n3->n1",...], sender->receiver)
  // or {"kind":"pause","selector":"leader","nodes":["n3"]}, or
  // {"kind":"delay","selector":"follower","nodes":["n2"],"delay_ms":600}.
  // "kill-voter" kills the selected nodes like "kill", then watches the
  // others (up to kVoterWatchLimit) and kills the first one that answers a
  // candidate of a newer term (vote_watch.h); all restart at Stop:
  // {"kind":"kill-voter","selector":"leader","nodes":["n1"],"term":4,
  //  "voter":"n3","voter_term":5,"polls":12} ("voter": null if none).
  // "figure8" needs exactly 3 nodes and ignores the selector; it returns
  // how far the scenario got ("reached") and what the nodes reported,
  // e.g. {"kind":"figure8","leader":"n1","term":3,...,"reached":
  // "handover"}; Stop lifts its cuts and delays (figure8.h).
  harness::Result<checkers::Value> Start(
      const harness::FaultStep& step) override;
  // e.g. {"kind":"partition","healed":["n1","n2","n3","n4","n5"]},
  // {"kind":"pause","resumed":["n3"]}, {"kind":"kill","restarted":["n3"]},
  // {"kind":"delay","healed":["n2"]}.
  harness::Result<checkers::Value> Stop() override;
  harness::Status HealAll() override;

  // The lazy file system on the nodes, for the disk faults (power-loss,
  // torn-write, fsync-error, disk-full, slow-disk: nemesis/disk/disk_fault.h);
  // without it they fail. Must outlive the nemesis. Call before Start.
  void SetDisk(disk::LazyfsNodes* disk) { disk_ = disk; }

  // The node that reports role "leader" with the highest term, if any.
  std::optional<int> FindLeader();

  // Path of the faultline-netdelay executable for "delay", "kill-voter"
  // and "figure8". Default (""): next to the running executable, then PATH.
  // Call before Start.
  void SetNetdelayBinary(std::string path) { netdelay_.SetBinary(path); }
  // The run's directory on nodes reached through a Remote of their own
  // (ssh, docker), where the daemon is copied (nemesis/net/netdelay_node.h).
  // Call before Start.
  void SetNodeDir(std::string dir) { netdelay_.SetNodeDir(dir); }
  // Copies faultline-netdelay to the remote nodes now and checks that it
  // runs there (else the first delay does). Call before Start.
  harness::Status PrepareNetdelay() {
    return netdelay_.Prepare(cluster_.nodes());
  }

  // The clocks "clock" skews (the target's, see harness/clock/clock.h); without
  // one, "clock" fails. Call before Start.
  void SetClock(harness::ClockControl* clock) { clock_ = clock; }
  // With a SystemClock, "clock" steps and "strobe" flips the nodes' real
  // system clocks instead (nemesis/clock/sysclock_fault.cpp): clock_rate must
  // be 1; a strobe on a node ends by itself after strobe_limit_ms (the longest
  // fault duration plus a margin) if nobody stops it. Call before Start.
  void SetSystemClock(std::unique_ptr<SystemClock> clock,
                      long long strobe_limit_ms);

 private:
  struct Active {
    std::string kind;
    std::vector<int> nodes;   // nodes acted on (partition: rules applied)
    std::vector<long> seqs;   // partition/delay: iptables ledger seq per node;
                              // disk faults: the `disk` entry per node
                              // (-1: no rules applied yet)
    std::vector<pid_t> pids;  // delay: daemon per node
    std::vector<long> proc_seqs;  // delay: its process ledger seq
  };

  harness::Status CanStack(const std::string& kind) const;
  harness::Result<checkers::Value> StartKind(const harness::FaultStep& s);
  harness::Result<checkers::Value> StartPartition(const harness::FaultStep& s);
  harness::Result<checkers::Value> StartProcessFault(
      const harness::FaultStep& s);
  harness::Result<checkers::Value> StartDelay(const harness::FaultStep& s);
  harness::Result<checkers::Value> StartKillVoter(const harness::FaultStep& s);
  // "figure8" (nemesis/scenarios/figure8.cpp): the Raft paper's figure-8
  // sequence on a 3-node cluster, steered by what the nodes report (figure8.h).
  harness::Result<checkers::Value> StartFigure8(const harness::FaultStep& s);
  // The faultline-netdelay executable ("" if not found).
  std::string NetdelayPath() const { return netdelay_.BinaryPath(); }
  harness::Status StartDelayOn(int who, const harness::FaultStep& s);
  harness::Status StopDelayOn(std::size_t k);
  // "loss" (nemesis/net/loss.cpp) and "clock" (nemesis/clock/clock.cpp).
  harness::Result<checkers::Value> StartLoss(const harness::FaultStep& s);
  harness::Status StopLossOn(std::size_t k);
  harness::Result<checkers::Value> StartClock(const harness::FaultStep& s);
  harness::Status StopClockOn(std::size_t k);
  // "strobe" (nemesis/clock/clock.cpp, nemesis/clock/strobe.h): Stop ends the
  // flipping thread before it resets the clocks (StopClockOn).
  harness::Result<checkers::Value> StartStrobe(const harness::FaultStep& s);
  // "clock"/"strobe" on system clocks (nemesis/clock/sysclock_fault.cpp).
  harness::Result<checkers::Value> StartSystemClock(
      const harness::FaultStep& s);
  harness::Status StopSystemClockOn(std::size_t k);
  harness::Status SystemClockResetAll();
  // The disk faults (nemesis/disk/disk_fault.cpp).
  harness::Result<checkers::Value> StartDisk(const harness::FaultStep& s);
  harness::Status StopDiskOn(std::size_t k);
  std::vector<std::string> PeerSources(int who) const;
  harness::Result<std::vector<int>> SelectNodes(const std::string& selector,
                                                std::uint64_t seed,
                                                bool* leader_known);
  // Undoes `active_` as far as possible; what could not be undone stays.
  harness::Result<checkers::Value> StopLocked();

  harness::Cluster& cluster_;
  harness::Target& target_;
  harness::Ledger& ledger_;
  std::mutex mu_;
  std::optional<Active> active_;  // the newest active fault
  std::vector<Active> held_;      // older active faults, oldest first
  NetdelayNodes netdelay_;
  harness::ClockControl* clock_ = nullptr;
  disk::LazyfsNodes* disk_ = nullptr;
  std::vector<std::string> same_nodes_;  // the starting step's `nodes`
  double loss_probability_ = 0;          // loss: the active rules' probability
  checkers::Value::Object details_;  // loss/clock: per healed node, for Stop
  std::unique_ptr<ClockStrobe> strobe_;    // strobe: while active
  checkers::Value strobe_flips_;           // strobe: the flips, for Stop
  std::unique_ptr<SystemClock> sysclock_;  // clock_mode system
  long long strobe_limit_ms_ = 0;
};

}  // namespace faultline::nemesis

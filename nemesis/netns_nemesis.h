// NetnsNemesis: partitions (iptables INPUT rules inside the nodes'
// namespaces), pause (Target::Pause/Resume) and kill (Target::Kill/Start)
// for a cluster from the netns provider. See docs/faults.md.
//
// One fault is active at a time: Start fails while one is active; Stop heals
// it (and returns {"kind":"none"} when nothing is active). A Start that
// fails half-way undoes what it applied before returning the error.
// Every iptables change is recorded in the Ledger before it is applied and
// marked healed after it is undone; pause/kill ledger entries are the
// Target's (it knows the pids).
//
// Thread-safety: Start/Stop/HealAll serialize on one mutex, so HealAll may
// be called from any thread, also while Start/Stop run (it then heals what
// they applied once they return). cluster, target and ledger must outlive
// the nemesis. The destructor does not heal: call HealAll.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/cluster.h"
#include "harness/ledger.h"
#include "harness/nemesis.h"
#include "harness/target.h"

namespace faultline::nemesis {

class NetnsNemesis : public harness::Nemesis {
 public:
  NetnsNemesis(harness::Cluster& cluster, harness::Target& target,
               harness::Ledger& ledger);

  // step.kind: "partition" (selector = shape, see partition.h), "pause" or
  // "kill" (selector: "one", "leader", "minority", "majority", "all").
  // Returns e.g. {"kind":"partition","shape":"halves","components":
  // [["n1","n2"],["n3","n4","n5"]],"grudge":{"n1":["n3","n4","n5"],...}}
  // or {"kind":"pause","selector":"leader","nodes":["n3"]}.
  harness::Result<checkers::Value> Start(
      const harness::FaultStep& step) override;
  // e.g. {"kind":"partition","healed":["n1","n2","n3","n4","n5"]},
  // {"kind":"pause","resumed":["n3"]}, {"kind":"kill","restarted":["n3"]}.
  harness::Result<checkers::Value> Stop() override;
  harness::Status HealAll() override;

  // The node that reports role "leader" with the highest term, if any.
  std::optional<int> FindLeader();

 private:
  struct Active {
    std::string kind;
    std::vector<int> nodes;  // nodes acted on (partition: rules applied)
    std::vector<long> seqs;  // partition: ledger seq per entry of `nodes`
  };

  harness::Result<checkers::Value> StartPartition(const harness::FaultStep& s);
  harness::Result<checkers::Value> StartProcessFault(
      const harness::FaultStep& s);
  harness::Result<std::vector<int>> SelectNodes(const std::string& selector,
                                                std::uint64_t seed,
                                                bool* leader_known);
  // Undoes `active_` as far as possible; what could not be undone stays.
  harness::Result<checkers::Value> StopLocked();

  harness::Cluster& cluster_;
  harness::Target& target_;
  harness::Ledger& ledger_;
  std::mutex mu_;
  std::optional<Active> active_;
};

}  // namespace faultline::nemesis

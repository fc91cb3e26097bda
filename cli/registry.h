// Factories from config names to implementations: the only place that knows
// every target, workload and nemesis.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/config/spec.h"
#include "harness/interfaces/nemesis.h"
#include "harness/interfaces/result.h"
#include "harness/interfaces/target.h"
#include "harness/interfaces/workload.h"
#include "harness/ledger/ledger.h"

namespace faultline::nemesis::disk {
class LazyfsNodes;
}

namespace faultline::cli {

harness::Result<std::unique_ptr<harness::Target>> MakeTarget(
    const harness::TestSpec& spec, harness::Ledger* ledger,
    const std::string& work_dir, const std::string& controller_dir = "");

harness::Result<std::unique_ptr<harness::Workload>> MakeWorkload(
    const harness::TestSpec& spec);

// The nemesis for the run. `node_dir` is the run's directory on ssh and
// docker nodes: with nemesis.clock_mode system faultline-clock is copied
// there (nemesis/clock/sysclock.h); with a fault that needs faultline-netdelay
// (delay, kill-voter, figure8) on ssh or docker nodes the daemon is copied
// there and checked to run on every node. Either may fail the setup.
// `disk`: the lazy file system on the nodes for the disk faults (nullptr
// when the run has none); must outlive the nemesis.
harness::Result<std::unique_ptr<harness::Nemesis>> MakeNemesis(
    const harness::TestSpec& spec, harness::Cluster& cluster,
    harness::Target& target, harness::Ledger& ledger,
    const std::string& node_dir, nemesis::disk::LazyfsNodes* disk = nullptr);

// Absolute path of the target's main binary, or "" when it is not installed.
// raftkv: a bare `binary` name is looked for next to the running faultline
// executable (/proc/self/exe) first, then on PATH; a path is used as given.
std::string FindTargetBinary(const harness::TestSpec& spec);

// How to get the target's binary when FindTargetBinary finds none, e.g.
// "run scripts/install-deps.sh (Debian package etcd-server)".
std::string InstallHint(const harness::TestSpec& spec);

// A name faultline knows with its description in one line (no newline),
// for `faultline list` and its --json.
struct Described {
  std::string name;
  std::string description;
};

// The checkers a run applies, by the name results.json gives them:
// linearizable, stats, mutex-fencing, leader-per-term.
std::vector<Described> CheckerDescriptions();

// What `faultline check --model` accepts, in this order: every
// linearizability model of checkers::LinearizableModelNames() (one without
// a description here gets "(no description)", which cli_test catches), then
// the checkers mutex-fencing and leader-per-term.
std::vector<Described> CheckModelDescriptions();

}  // namespace faultline::cli

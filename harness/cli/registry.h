// Factories from config names to implementations: the only place that knows
// every target, workload and nemesis.
#pragma once

#include <memory>
#include <string>

#include "harness/cluster.h"
#include "harness/ledger.h"
#include "harness/nemesis.h"
#include "harness/result.h"
#include "harness/spec.h"
#include "harness/target.h"
#include "harness/workload.h"

namespace faultline::cli {

harness::Result<std::unique_ptr<harness::Target>> MakeTarget(
    const harness::TestSpec& spec, harness::Ledger* ledger,
    const std::string& work_dir);

harness::Result<std::unique_ptr<harness::Workload>> MakeWorkload(
    const harness::TestSpec& spec);

std::unique_ptr<harness::Nemesis> MakeNemesis(const harness::TestSpec& spec,
                                              harness::Cluster& cluster,
                                              harness::Target& target,
                                              harness::Ledger& ledger);

// Absolute path of the target's main binary, or "" when it is not installed.
// raftkv: a bare `binary` name is looked for next to the running faultline
// executable (/proc/self/exe) first, then on PATH; a path is used as given.
std::string FindTargetBinary(const harness::TestSpec& spec);

// How to get the target's binary when FindTargetBinary finds none, e.g.
// "run scripts/install-deps.sh (Debian package etcd-server)".
std::string InstallHint(const harness::TestSpec& spec);

}  // namespace faultline::cli

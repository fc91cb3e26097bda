// The register workload: per-key read / write / cas against a set of
// registers, with unique written values so that stale and lost writes are
// attributable. Checked as a cas-register per key (linearizability) plus
// operation statistics.
#pragma once

#include <memory>

#include "harness/config/spec.h"
#include "harness/interfaces/workload.h"

namespace faultline::workloads {

// Written values are unique per history: worker w's n-th written value is
// n * concurrency + w + 1. A cas expects the value this worker last wrote to
// that key (so it succeeds when no one wrote since) and writes a fresh one.
std::unique_ptr<harness::Workload> MakeRegisterWorkload(
    const harness::WorkloadSpec& spec);

}  // namespace faultline::workloads

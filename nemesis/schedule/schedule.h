// The fault schedule: from a NemesisSpec and a seed, the sequence of
// FaultPlans the nemesis thread applies. Pure and deterministic: the same
// spec and seed give the same plans (design.md: the same seed gives the
// same fault schedule). Timing (interval_s, duration_s) is the caller's.
//
// Each plan: an entry uniform over EffectiveFaultEntries(spec); for each of
// its faults (one, or several for a `together` entry, in the written
// order) a selector uniform over its partitions ("partition") or targets
// (everything else), the fault's own list if it has one, else the spec's
// (an empty list yields "halves" resp. "one"), and a seed. The generator is
// derived from the schedule seed and the step number, so step k does not
// depend on how many draws earlier steps made. delay_ms, loss_probability,
// clock_offset_ms, clock_rate, partition_mode and the duration come from
// the fault or entry when it sets them, else from the spec. A config whose
// entries are all plain names gives the same steps as before per-fault
// settings existed.
//
// Thread-safety: a FaultSchedule is not shared; MakeSchedule is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "harness/config/spec.h"
#include "harness/interfaces/nemesis.h"

namespace faultline::nemesis {

// spec.entries, or one plain entry per name of spec.faults when it is empty.
std::vector<harness::FaultEntry> EffectiveFaultEntries(
    const harness::NemesisSpec& spec);

class FaultSchedule {
 public:
  FaultSchedule(harness::NemesisSpec spec, std::uint64_t seed);
  // The next plan, or nullopt when there are no faults.
  std::optional<harness::FaultPlan> Next();
  // How many plans Next has returned.
  std::uint64_t steps() const { return step_; }

 private:
  harness::NemesisSpec spec_;
  std::vector<harness::FaultEntry> entries_;
  std::uint64_t seed_;
  std::uint64_t step_ = 0;
};

// The first `count` plans of FaultSchedule(spec, seed).
std::vector<harness::FaultPlan> MakeSchedule(const harness::NemesisSpec& spec,
                                             std::uint64_t seed, int count);

}  // namespace faultline::nemesis

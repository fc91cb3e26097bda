// The fault schedule: from a NemesisSpec and a seed, the sequence of
// FaultSteps the nemesis thread applies. Pure and deterministic: the same
// spec and seed give the same steps (design.md: the same seed gives the
// same fault schedule). Timing (interval_s, duration_s) is the caller's.
//
// Each step: kind uniform over spec.faults; selector uniform over
// spec.partitions for "partition", over spec.targets otherwise (an empty
// list yields "halves" resp. "one"); seed derived from the schedule seed and
// the step number, so step k does not depend on how many draws earlier
// steps made; delay_ms, loss_probability, clock_offset_ms and clock_rate
// come from the spec.
//
// Thread-safety: a FaultSchedule is not shared; MakeSchedule is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "harness/nemesis.h"
#include "harness/spec.h"

namespace faultline::nemesis {

class FaultSchedule {
 public:
  FaultSchedule(harness::NemesisSpec spec, std::uint64_t seed);
  // The next step, or nullopt when spec.faults is empty.
  std::optional<harness::FaultStep> Next();
  // How many steps Next has returned.
  std::uint64_t steps() const { return step_; }

 private:
  harness::NemesisSpec spec_;
  std::uint64_t seed_;
  std::uint64_t step_ = 0;
};

// The first `count` steps of FaultSchedule(spec, seed).
std::vector<harness::FaultStep> MakeSchedule(const harness::NemesisSpec& spec,
                                             std::uint64_t seed, int count);

}  // namespace faultline::nemesis

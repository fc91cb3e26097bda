#include "nemesis/schedule.h"

#include <random>

#include "nemesis/partition.h"

namespace faultline::nemesis {

FaultSchedule::FaultSchedule(harness::NemesisSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), seed_(seed) {}

std::optional<harness::FaultStep> FaultSchedule::Next() {
  if (spec_.faults.empty()) return std::nullopt;
  // One generator per step, keyed by (schedule seed, step number).
  std::mt19937_64 rng(SplitMix64(seed_ ^ SplitMix64(step_ + 1)));
  ++step_;
  auto pick = [&](const std::vector<std::string>& from,
                  const char* fallback) -> std::string {
    if (from.empty()) return fallback;
    return from[UniformBelow(rng, from.size())];
  };
  harness::FaultStep step;
  step.kind = pick(spec_.faults, "");
  step.selector = step.kind == "partition" ? pick(spec_.partitions, "halves")
                                           : pick(spec_.targets, "one");
  step.seed = rng();
  step.delay_ms = spec_.delay_ms;
  step.loss_probability = spec_.loss_probability;
  step.clock_offset_ms = spec_.clock_offset_ms;
  step.clock_rate = spec_.clock_rate;
  return step;
}

std::vector<harness::FaultStep> MakeSchedule(const harness::NemesisSpec& spec,
                                             std::uint64_t seed, int count) {
  FaultSchedule schedule(spec, seed);
  std::vector<harness::FaultStep> out;
  for (int i = 0; i < count; ++i) {
    auto step = schedule.Next();
    if (!step) break;
    out.push_back(std::move(*step));
  }
  return out;
}

}  // namespace faultline::nemesis

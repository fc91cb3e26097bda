#include "nemesis/schedule/schedule.h"

#include <random>

#include "nemesis/net/partition.h"

namespace faultline::nemesis {

std::vector<harness::FaultEntry> EffectiveFaultEntries(
    const harness::NemesisSpec& spec) {
  if (!spec.entries.empty()) return spec.entries;
  std::vector<harness::FaultEntry> out;
  for (const auto& kind : spec.faults) {
    harness::FaultEntry e;
    e.plain = true;
    harness::FaultSettings f;
    f.fault = kind;
    e.faults.push_back(std::move(f));
    out.push_back(std::move(e));
  }
  return out;
}

FaultSchedule::FaultSchedule(harness::NemesisSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)),
      entries_(EffectiveFaultEntries(spec_)),
      seed_(seed) {}

std::optional<harness::FaultPlan> FaultSchedule::Next() {
  if (entries_.empty()) return std::nullopt;
  // One generator per step, keyed by (schedule seed, step number).
  std::mt19937_64 rng(SplitMix64(seed_ ^ SplitMix64(step_ + 1)));
  ++step_;
  auto pick = [&](const std::vector<std::string>& from,
                  const char* fallback) -> std::string {
    if (from.empty()) return fallback;
    return from[UniformBelow(rng, from.size())];
  };
  const harness::FaultEntry& entry =
      entries_[UniformBelow(rng, entries_.size())];
  harness::FaultPlan plan;
  plan.duration_s = entry.duration_s.value_or(spec_.duration_s);
  for (const harness::FaultSettings& f : entry.faults) {
    harness::FaultStep step;
    step.kind = f.fault;
    step.selector =
        step.kind == "partition"
            ? pick(f.partitions.value_or(spec_.partitions), "halves")
            : pick(f.targets.value_or(spec_.targets), "one");
    step.seed = rng();
    step.delay_ms = f.delay_ms.value_or(spec_.delay_ms);
    step.loss_probability = f.loss_probability.value_or(spec_.loss_probability);
    step.clock_offset_ms = f.clock_offset_ms.value_or(spec_.clock_offset_ms);
    step.clock_rate = f.clock_rate.value_or(spec_.clock_rate);
    step.partition_mode = f.partition_mode.value_or(spec_.partition_mode);
    step.clock_strobe_delta_ms = spec_.clock_strobe_delta_ms;
    step.clock_strobe_period_ms = spec_.clock_strobe_period_ms;
    step.fsync_errors = spec_.fsync_errors;
    step.disk_latency_ms = spec_.disk_latency_ms;
    plan.faults.push_back(std::move(step));
  }
  return plan;
}

std::vector<harness::FaultPlan> MakeSchedule(const harness::NemesisSpec& spec,
                                             std::uint64_t seed, int count) {
  FaultSchedule schedule(spec, seed);
  std::vector<harness::FaultPlan> out;
  for (int i = 0; i < count; ++i) {
    auto plan = schedule.Next();
    if (!plan) break;
    out.push_back(std::move(*plan));
  }
  return out;
}

}  // namespace faultline::nemesis

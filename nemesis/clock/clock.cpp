#include "nemesis/clock/clock.h"

#include <cstdio>

#include "nemesis/clock/strobe.h"
#include "nemesis/netns_nemesis.h"

namespace faultline::nemesis {

std::string DescribeClockStep(long long offset_ms, double rate) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+lld ms x%g", offset_ms, rate);
  return buf;
}

harness::Result<checkers::Value> NetnsNemesis::StartClock(
    const harness::FaultStep& step) {
  using checkers::Value;
  if (sysclock_)
    return StartSystemClock(step);  // nemesis/clock/sysclock_fault.cpp
  if (clock_ == nullptr)
    return harness::Fail(
        "nemesis: the target " + target_.name() +
        " runs without faked clocks, so the clock fault cannot move them");
  const auto& nodes = cluster_.nodes();
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return harness::Fail(chosen.error());
  active_ = Active{"clock", {}, {}, {}, {}};
  details_.clear();
  Value::List names;
  Value::Object now_ms;
  for (int who : *chosen) {
    const harness::Node& node = nodes[static_cast<std::size_t>(who)];
    // Listed before the change, so a half-done start is reset by Stop.
    active_->nodes.push_back(who);
    auto off = clock_->Skew(node, step.clock_offset_ms, step.clock_rate);
    if (!off.ok()) {
      (void)StopLocked();  // `off` is ours: StopLocked does not touch it
      return harness::Fail("nemesis: clock " + node.name + ": " + off.error());
    }
    names.push_back(Value::String(node.name));
    now_ms.emplace_back(node.name, Value::Double(*off));
  }
  details_.clear();  // a failed start's resets are not reported
  Value::Object out = {{"kind", Value::String("clock")},
                       {"selector", Value::String(step.selector)},
                       {"nodes", Value::MakeList(std::move(names))},
                       {"offset_ms", Value::Int(step.clock_offset_ms)},
                       {"rate", Value::Double(step.clock_rate)},
                       {"monotonic", Value::Bool(clock_->fake_monotonic())},
                       {"clock_ms", Value::MakeObject(std::move(now_ms))}};
  if (step.selector == "leader" || step.selector == "follower")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

// --- strobe -----------------------------------------------------------------

harness::Result<checkers::Value> NetnsNemesis::StartStrobe(
    const harness::FaultStep& step) {
  using checkers::Value;
  if (sysclock_)
    return StartSystemClock(step);  // nemesis/clock/sysclock_fault.cpp
  if (clock_ == nullptr)
    return harness::Fail(
        "nemesis: the target " + target_.name() +
        " runs without faked clocks, so the strobe fault cannot move them");
  if (clock_->fake_monotonic())
    return harness::Fail(
        "nemesis: strobe with a faked CLOCK_MONOTONIC would step it back");
  const auto& nodes = cluster_.nodes();
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return harness::Fail(chosen.error());
  std::vector<harness::Node> chosen_nodes;
  Value::List names;
  for (int who : *chosen) {
    chosen_nodes.push_back(nodes[static_cast<std::size_t>(who)]);
    names.push_back(Value::String(chosen_nodes.back().name));
  }
  // Listed before the first flip, so a half-done start is reset by Stop.
  active_ = Active{"strobe", *chosen, {}, {}, {}};
  details_.clear();
  strobe_ = std::make_unique<ClockStrobe>(*clock_, chosen_nodes,
                                          step.clock_strobe_delta_ms,
                                          step.clock_strobe_period_ms);
  if (auto started = strobe_->Start(); !started.ok()) {
    (void)StopLocked();
    return harness::Fail("nemesis: " + started.error());
  }
  Value::Object now_ms;
  for (const auto& node : chosen_nodes)
    now_ms.emplace_back(node.name, Value::Double(clock_->OffsetMs(node)));
  Value::Object out = {{"kind", Value::String("strobe")},
                       {"selector", Value::String(step.selector)},
                       {"nodes", Value::MakeList(std::move(names))},
                       {"delta_ms", Value::Int(step.clock_strobe_delta_ms)},
                       {"period_ms", Value::Int(step.clock_strobe_period_ms)},
                       {"monotonic", Value::Bool(false)},
                       {"clock_ms", Value::MakeObject(std::move(now_ms))}};
  if (step.selector == "leader" || step.selector == "follower")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

harness::Status NetnsNemesis::StopClockOn(std::size_t k) {
  if (sysclock_)
    return StopSystemClockOn(k);  // nemesis/clock/sysclock_fault.cpp
  Active& a = *active_;
  const harness::Node& node =
      cluster_.nodes()[static_cast<std::size_t>(a.nodes[k])];
  if (strobe_) {  // no flip after this: the resets below are the last word
    strobe_flips_ = StrobeFlipsValue(strobe_->Stop());
    strobe_.reset();
  }
  if (clock_ == nullptr) return harness::Ok();
  auto off = clock_->Reset(node);
  if (!off.ok()) return harness::Fail(off.error());
  details_.emplace_back(node.name, checkers::Value::Double(*off));
  return harness::Ok();
}

}  // namespace faultline::nemesis

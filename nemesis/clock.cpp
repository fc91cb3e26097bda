#include "nemesis/clock.h"

#include <cstdio>

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

harness::Status NetnsNemesis::StopClockOn(std::size_t k) {
  Active& a = *active_;
  const harness::Node& node =
      cluster_.nodes()[static_cast<std::size_t>(a.nodes[k])];
  if (clock_ == nullptr) return harness::Ok();
  auto off = clock_->Reset(node);
  if (!off.ok()) return harness::Fail(off.error());
  details_.emplace_back(node.name, checkers::Value::Double(*off));
  return harness::Ok();
}

}  // namespace faultline::nemesis

// The "clock" and "strobe" faults of NetnsNemesis on the nodes' real system
// clocks (nemesis.clock_mode: system; nemesis/clock/sysclock.h). Start returns
// e.g. {"kind":"clock","mode":"system","selector":"one","nodes":["n2"],
// "offset_ms":3000,"rate":1,"monotonic":false,"moved":["n1","n2","n3"],
// "kernels":[["n1","n2","n3"]],"controller_moved":true,"clock_ms":{"n1":
// 3000.01,...}} ("moved": every node whose clock moved, since nodes on one
// kernel share one clock); a strobe has "delta_ms" and "period_ms" instead
// of offset_ms and rate. Stop resets the moved kernels and returns
// {"kind":"clock","healed":[moved...],"offset_ms":{node: ms after}}, with
// the strobe's "flips" (as the node's faultline-clock made them, each with
// the "node" that made it).
#include <spdlog/spdlog.h>

#include "nemesis/clock/sysclock.h"
#include "nemesis/netns_nemesis.h"

namespace faultline::nemesis {
namespace {

using checkers::Value;

}  // namespace

void NetnsNemesis::SetSystemClock(std::unique_ptr<SystemClock> clock,
                                  long long strobe_limit_ms) {
  sysclock_ = std::move(clock);
  strobe_limit_ms_ = strobe_limit_ms;
}

harness::Result<Value> NetnsNemesis::StartSystemClock(
    const harness::FaultStep& step) {
  const bool strobe = step.kind == "strobe";
  if (!strobe && step.clock_rate != 1.0)
    return harness::Fail(
        "nemesis: a system clock can be stepped, not drifted (clock_rate "
        "must be 1)");
  const auto& nodes = cluster_.nodes();
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return harness::Fail(chosen.error());
  // Listed before the change (every node of the chosen kernels), so a
  // half-done start is reset by Stop.
  std::vector<int> moved;
  for (int who : *chosen)
    for (int n : sysclock_->KernelOf(who))
      if (std::find(moved.begin(), moved.end(), n) == moved.end())
        moved.push_back(n);
  std::sort(moved.begin(), moved.end());
  active_ = Active{step.kind, moved, {}, {}, {}};
  details_.clear();
  auto move = strobe ? sysclock_->StartStrobe(
                           *chosen, step.clock_strobe_delta_ms,
                           step.clock_strobe_period_ms, strobe_limit_ms_)
                     : sysclock_->Bump(*chosen, step.clock_offset_ms);
  if (!move.ok()) {
    (void)StopLocked();
    return harness::Fail("nemesis: system clock: " + move.error());
  }
  for (int n : move->moved) {
    if (!sysclock_->SharesController(n)) continue;
    spdlog::warn(
        "the {} fault moved the controller's own clock too ({} shares its "
        "kernel); the run times itself with steady clocks, log timestamps "
        "move",
        step.kind, nodes[static_cast<std::size_t>(n)].name);
    break;
  }
  Value::List kernels;
  for (const auto& k : move->kernels) kernels.push_back(NodeNames(nodes, k));
  Value::Object now_ms;
  for (const auto& [n, ms] : move->offset_ms)
    now_ms.emplace_back(nodes[static_cast<std::size_t>(n)].name,
                        Value::Double(ms));
  Value::Object out = {{"kind", Value::String(step.kind)},
                       {"mode", Value::String("system")},
                       {"selector", Value::String(step.selector)},
                       {"nodes", NodeNames(nodes, *chosen)}};
  if (strobe) {
    out.emplace_back("delta_ms", Value::Int(step.clock_strobe_delta_ms));
    out.emplace_back("period_ms", Value::Int(step.clock_strobe_period_ms));
  } else {
    out.emplace_back("offset_ms", Value::Int(step.clock_offset_ms));
    out.emplace_back("rate", Value::Double(1.0));
  }
  out.emplace_back("monotonic", Value::Bool(false));
  out.emplace_back("moved", NodeNames(nodes, move->moved));
  out.emplace_back("kernels", Value::MakeList(std::move(kernels)));
  out.emplace_back("controller_moved", Value::Bool(move->controller_moved));
  out.emplace_back("clock_ms", Value::MakeObject(std::move(now_ms)));
  if (step.selector == "leader" || step.selector == "follower")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

// Node k of the active fault: the first one stops the strobes (their flips
// go to Stop's value); each resets its kernel (a no-op for a kernel reset
// already) and reports its offset after.
harness::Status NetnsNemesis::StopSystemClockOn(std::size_t k) {
  Active& a = *active_;
  if (k == 0 && a.kind == "strobe") strobe_flips_ = sysclock_->StopStrobes();
  const int who = a.nodes[k];
  auto off = sysclock_->Reset({who});
  if (!off.ok()) return harness::Fail(off.error());
  for (const auto& [n, ms] : *off)
    if (n == who)
      details_.emplace_back(cluster_.nodes()[static_cast<std::size_t>(n)].name,
                            Value::Double(ms));
  return harness::Ok();
}

harness::Status NetnsNemesis::SystemClockResetAll() {
  return sysclock_->ResetAll();
}

}  // namespace faultline::nemesis

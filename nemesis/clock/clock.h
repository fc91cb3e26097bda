// The "clock" fault of NetnsNemesis (declared in netns_nemesis.h, defined
// in nemesis/clock/clock.cpp): steps and/or drifts the clocks of the chosen
// nodes' target processes through the target's harness::ClockControl
// (harness/clock/clock.h), and resets them at Stop. Only for targets that are
// harness::ClockSkewable and were given a ClockControl (the config allows
// the fault only for those). See docs/faults.md ("clock").
//
// Start returns e.g. {"kind":"clock","selector":"one","nodes":["n2"],
// "offset_ms":5000,"rate":1.5,"monotonic":false,"clock_ms":{"n2":5000}}
// (clock_ms: fake - real per node right after the change); Stop returns
// {"kind":"clock","healed":["n2"],"offset_ms":{"n2":0}}.
#pragma once

#include <string>

namespace faultline::nemesis {

// One line for logs, e.g. "+5000 ms x1.5".
std::string DescribeClockStep(long long offset_ms, double rate);

}  // namespace faultline::nemesis

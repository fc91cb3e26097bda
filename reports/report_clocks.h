// The "Clock offsets" chart of report.html: each node's faked clock, fake -
// real in ms, over the run, rebuilt from the history's nemesis events only
// (docs/faults.md, "clock" and "strobe"):
//   start-clock  info {"nodes","rate","clock_ms":{node: ms}}: the node's
//                offset steps to clock_ms and then drifts by (rate - 1) ms
//                per ms;
//   stop-clock   info {"offset_ms":{node: ms}}: the offset right after heal;
//   start-strobe info {"clock_ms":{node: ms}}: the first flip (up);
//   stop-strobe  info {"flips":[{"at_ms","clock_ms"}],"offset_ms":{...}}:
//                every flip, at_ms after the start-strobe invoke.
// Without event times the flips cannot be placed, and drift is not drawn.
//
// Pure; thread-safe; never throws for any input (malformed values are
// skipped).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>

#include "checkers/history.h"

namespace faultline::reports {

// {"nodes":[name...],"series":[[[x, ms], ...] per node],"max_abs":ms}, with
// x in µs since start when `timed`, else the event index; a step is two
// points at the same x. null when the history has no clock events.
nlohmann::json ClockSeries(const checkers::History& history, bool timed,
                           std::int64_t end);

}  // namespace faultline::reports

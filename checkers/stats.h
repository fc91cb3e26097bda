// Operation statistics over a history: counts per f, latency quantiles per
// f, and fault windows drawn from nemesis events; plus the "stats" checker.
// Pure functions; safe to call from many threads on shared const histories.
//
// Definitions (client events only, i.e. process != nemesis, for counts and
// latencies):
// - Counts: every ok/fail/info completion counts under its f and type; an
//   invoke with no completion by the end of the history counts as info.
// - Latency: completion time - invoke time, in ns, for every completion
//   (ok, fail and info) whose invoke is known and both carry `time`.
//   Quantiles use the nearest-rank method on the sorted latencies
//   (pXX = the ceil(XX% * n)-th smallest).
// - Fault windows, faultline's vocabulary (docs/run-history.md): fault X is
//   in effect from the `info` of "start-X" (one carrying `error` failed and
//   opens nothing) to the `info` of the next "stop-X"; the window's f is X.
// - Fault windows, other nemesis events (e.g. Jepsen-style histories
//   read from elsewhere): a nemesis `invoke` opens a window for its f; the next
//   nemesis `info` with the same f closes it (oldest open window first).
//   A window still open at the end has no end (it lasted to the end of the
//   history). An `info` with no open window of its f is an instant window
//   (start = end = its time). `value` is the opening event's value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/value.h"
#include "checkers/verdict.h"

namespace faultline::checkers {

struct OpCounts {
  std::int64_t ok = 0;
  std::int64_t fail = 0;
  std::int64_t info = 0;  // includes invokes never completed
};

struct LatencyStats {
  std::int64_t count = 0;  // latencies measured; quantiles are 0 when 0
  std::int64_t p50 = 0;
  std::int64_t p90 = 0;
  std::int64_t p99 = 0;
  std::int64_t max = 0;
};

struct FaultWindow {
  std::string f;
  std::optional<std::int64_t> start;  // time of the opening event, if timed
  std::optional<std::int64_t> end;    // absent: open until the end
  std::int64_t start_index = 0;       // index of the opening event
  std::int64_t end_index = -1;        // -1 while open
  Value value;
};

struct HistoryStats {
  OpCounts total;
  std::map<std::string, OpCounts> counts;       // by f
  std::map<std::string, LatencyStats> latency;  // by f, ns
  std::vector<FaultWindow> faults;              // in order of opening
  std::int64_t client_events = 0;
  std::int64_t nemesis_events = 0;
};

HistoryStats ComputeStats(const History& history);

// Compact JSON object, for results.json details_json:
// {"ops":{"ok":N,"fail":N,"info":N},
//  "by_f":{"read":{"ok":N,"fail":N,"info":N,
//          "latency_ns":{"count":N,"p50":N,"p90":N,"p99":N,"max":N}},...},
//  "faults":[{"f":"partition","start":T|null,"end":T|null,
//             "start_index":I,"end_index":I|null,"value":V},...],
//  "events":{"client":N,"nemesis":N}}
std::string StatsToJson(const HistoryStats& stats);

// Checker "stats": unknown when no client operation completed ok (nothing
// was tested), otherwise valid. Summary like "4210 ok, 12 fail, 31 info";
// explanation lists counts and latencies per f; details_json is
// StatsToJson.
Verdict StatsVerdict(const History& history);

}  // namespace faultline::checkers

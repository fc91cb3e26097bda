// Was the run able to find anything? A pure function of a history that says,
// for each fault, whether it visibly bit, how much of the workload ran in
// each phase, and how often compare-and-sets succeeded; a run where nothing
// bit or the workload barely ran is "weak". The verdict never changes: a
// weak run that the checker found valid is still valid, only less telling.
//
// What it reads (docs/run-history.md, docs/history-format.md):
// - Fault windows: a nemesis `info` of "start-X" without `error` opens a
//   window of kind X, the next `info` of "stop-X" closes it (oldest open
//   window of that kind first); a window left open lasts to the end of the
//   history. Targets: the start value's "components" (partitions, each
//   component "n1,n2"), else its "nodes", else its "moved".
// - Packets dropped: the stop value's "dropped" object (node -> packets),
//   summed; absent (null) when the nemesis did not record it (older runs,
//   faults that drop nothing).
// - Clock offsets: applied = the largest |ms| of the start value's
//   "clock_ms" (or its "offset_ms" when that is a number); observed = the
//   largest |ms| of the stop value's "offset_ms" object (fake - real read
//   back at heal).
// - Client operations: an invoke and the next completion of its process.
//   Those whose invoke carries "phase": "final" are the final reads, f
//   "observe" are the leader observers' reads; both are counted apart and
//   never in a fault window. An invoke never completed counts as info.
// - A workload operation is in a window when it was invoked at or before
//   the window's end and completed (or, uncompleted, stayed open) at or
//   after its start; "outside" holds those in no window. Without times,
//   event indices take their place.
// - Errors: `info` completions and `fail` completions that carry `error`,
//   except the error "mismatch" (a compare-and-set whose compare did not
//   match, as every target's client writes it, is an answer, not an
//   error). Timeouts: errors whose `error` contains "timeout".
// - Leader changes: every ok `observe` completion with a leader names a
//   (term, leader); the first sighting of each term (of each leader name
//   when no term is given), after the first of the run, is a change at that
//   time. A window's leader changes are those within it.
//
// A fault bit when any of these holds: it dropped at least one packet; its
// window had at least one error and a larger share of errors than the
// operations outside every window; a leader change happened in it; a clock
// offset of at least 1 ms was observed at its heal.
//
// The run is weak, with one reason each, when: no fault was applied; faults
// were applied but none bit; fewer than kWeakMinOkOps workload operations
// completed ok; compare-and-sets completed but not one succeeded.
//
// Pure; thread-safe; never throws for any input (malformed values are
// skipped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"

namespace faultline::reports {

// Fewer ok workload operations than this make a run weak.
inline constexpr std::int64_t kWeakMinOkOps = 100;

struct PhaseCounts {
  std::int64_t ok = 0, fail = 0, info = 0;
  std::int64_t total() const { return ok + fail + info; }
};

struct FaultEvidence {
  std::string kind;                   // "partition", "pause", ...
  std::vector<std::string> targets;   // node names, or "n1,n2" components
  std::optional<std::int64_t> start;  // ns (or event index when untimed)
  std::optional<std::int64_t> end;    // absent: open until the end
  std::int64_t invoked = 0;           // workload invocations in the window
  PhaseCounts in_window;              // completions of ops in the window
  std::int64_t errors = 0;            // info, and fail with an error
  std::int64_t timeouts = 0;
  std::optional<std::int64_t> packets_dropped;
  std::int64_t leader_changes = 0;
  std::optional<std::int64_t> clock_applied_ms;
  std::optional<std::int64_t> clock_observed_ms;
  bool bit = false;
  std::vector<std::string> signs;  // why it bit, for people
};

struct Evidence {
  bool timed = true;  // false: start/end are event indices
  std::vector<FaultEvidence> faults;
  PhaseCounts outside;   // workload ops in no fault window
  PhaseCounts workload;  // every workload op
  PhaseCounts final_reads;
  PhaseCounts observer;
  std::int64_t cas_ok = 0;
  std::int64_t cas_completed = 0;  // ok + fail + info
  bool weak = false;
  std::vector<std::string> weak_reasons;

  int faults_bit() const;
  // cas_ok / cas_completed, or nullopt when no cas completed.
  std::optional<double> cas_share() const;
};

Evidence ComputeEvidence(const checkers::History& history);

// Compact JSON object (the "evidence" section of results.json,
// docs/results.schema.json).
std::string EvidenceToJson(const Evidence& e);
// The inverse of EvidenceToJson; nullopt when `json` is not such an object.
std::optional<Evidence> EvidenceFromJson(const std::string& json);

// The terminal summary's lines: "evidence: 5 faults, 4 bit (partition:
// 1,234 packets dropped; ...); 8,455 ok ops (+ 5 final reads, 300 observer
// reads); CAS 31 % ok", then "WEAK RUN: ..." when weak. Each ends in '\n'.
std::string EvidenceLines(const Evidence& e);

// "n1|n2,n3": a fault's targets for people.
std::string TargetsLabel(const FaultEvidence& f);

}  // namespace faultline::reports

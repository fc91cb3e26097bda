// Internal to checkers/txn: what Analyze found, and its rendering as the
// Verdict's explanation and details_json (report.cpp).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkers/txn/cycles.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {

// Every anomaly type found, with its examples, in report order.
struct TypeFound {
  std::string type;
  bool is_cycle = false;
  std::vector<const Cycle*> cycles;       // is_cycle
  std::vector<const Anomaly*> anomalies;  // !is_cycle
  std::size_t count() const {
    return is_cycle ? cycles.size() : anomalies.size();
  }
};

struct Findings {
  const Inference* inference = nullptr;
  std::uint64_t ok = 0, info = 0, fail = 0;
  std::uint64_t ww = 0, wr = 0, rw = 0, realtime = 0, process = 0;
  std::uint64_t components = 0;  // non-trivial strongly connected ones
  std::vector<TypeFound> types;
  std::uint32_t violated = 0;  // union of ViolatedModels bits
  std::string gave_up;         // inference's or the analysis's
  bool capped = false;         // the cycle search skipped start edges
};

// The readable explanation: each cycle (up to max_cycles_per_type per
// type) with its transactions and the reason for every edge, then the
// other anomalies, then the models satisfied and violated.
std::string RenderExplanation(const Findings& f, int max_per_type);

// The details_json object (see docs/transactions.md).
std::string RenderDetails(const Findings& f, int max_per_type);

// "G-single (1 cycle, 3 transactions)", "G1a (2)".
std::string TypeSummary(const TypeFound& t);

// "workload" value: "list-append" or "rw-register".
const char* WorkloadName(Workload w);

}  // namespace faultline::checkers::txn

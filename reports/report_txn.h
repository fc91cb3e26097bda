// The "Transaction cycles" panel of report.html: the dependency cycles the
// transactional checkers ("list-append", "rw-register", checkers/txn/txn.h)
// found, taken from their verdicts' details_json (checkers/txn/report.h):
// per cycle its type and steps, each step a transaction and the edge from
// it to the next step's transaction (the last step's edge closes the cycle),
// with the models the history satisfies and violates.
//
// Every string is carried as data (the page puts it into the DOM as text);
// long ones are cut on a UTF-8 boundary. Pure; thread-safe; never throws
// for any input (malformed details and fields of the wrong type are
// skipped or read as defaults).
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>

#include "reports/results.h"

namespace faultline::reports {

// Per cycle drawn at most; the rest are counted in "cycles_more".
inline constexpr std::size_t kMaxTxnCycles = 20;
// Steps kept per cycle (a longer cycle is cut and marked "cut": true).
inline constexpr std::size_t kMaxTxnSteps = 40;

// [{"checker","summary","satisfied":[model...],"violated":[model...],
//   "cycles":[{"type","steps":[{"txn","process","invoke_index",
//   "complete_index","ops","edge","to","why"}],"cut"?}],"cycles_more"}]
// for each verdict of checker "list-append" or "rw-register" whose details
// hold at least one cycle, in verdict order; null when there is none.
// `max_chars` bounds "ops" (4x) and "why" (8x) in bytes.
nlohmann::json TxnCyclesData(const RunSummary& s, std::size_t max_chars);

}  // namespace faultline::reports

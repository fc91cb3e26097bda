// The bank checker (checker name "bank"), after Jepsen's bank test: money
// moves between accounts by transfers; every read of all balances must
// see the same total.
//
// History shape (client events; nemesis events are skipped, any other f is
// ignored):
// - f "transfer": invoke value {"from": A, "to": B, "amount": N}, with A
//   and B account names (strings or integers) and N an integer. ok = done,
//   fail = refused (e.g. insufficient funds), info = unknown. Completion
//   values are not looked at; transfers are only counted (the rules below
//   hold whatever transfers did).
// - f "read": invoke value not looked at (null by convention); ok value =
//   an object mapping account name -> integer balance, e.g.
//   {"a": 60, "b": 40}. Account names are the object's keys (strings; an
//   EDN map with integer keys reads as an object whose keys are their
//   decimal text). fail/info reads are ignored.
//
// Rules, for every ok read:
// - wrong-total: its balances sum to the total: options.total, or, when
//   not given, the sum of the first ok read (in event order; the verdict
//   says so). A sum beyond int64 is a wrong total.
// - negative: no balance is below 0, unless options.allow_negative.
// - missing-account / unknown-account: when options.accounts is given, the
//   read lists exactly those accounts (each missing one and each other one
//   is a problem).
//
// Verdict: unknown when the history is malformed (the summary names the
// line and the shape expected) or when no read completed ok; invalid when
// any read breaks a rule; valid otherwise.
//
// Summary e.g. "invalid: wrong total: p1's read at 3.200 s (event 12)
// summed to 97, expected 100; 2 of 30 reads bad". The explanation has one
// line per problem of each kept bad read, then the counts. details_json:
//   {"total":T, "total_source":"option"|"first-read", "reads_checked":N,
//    "transfers":{"ok":N,"fail":N,"info":N}, "bad_reads":N,
//    "kinds":{"wrong-total":N,"negative":N,"missing-account":N,
//             "unknown-account":N},   (reads with at least one such problem)
//    "min_total":S|null, "max_total":S|null,   (over the ok reads)
//    "examples":[{"read":{"index","process","time"},"value":{...},
//                 "sum":S|null,"kinds":[...],"problems":["..."]}]}
// Pure; thread-safe on a const history. O(n + total size of the reads).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers::collections {

inline constexpr char kBankChecker[] = "bank";

struct BankOptions {
  // The total every read must see; when absent, the first ok read's sum.
  std::optional<std::int64_t> total;
  // When given, the account names every read must list, exactly.
  std::optional<std::vector<std::string>> accounts;
  bool allow_negative = false;
  int max_examples = 20;  // bad reads kept (all are counted); >= 1
};

Verdict CheckBank(const History& history, const BankOptions& options = {});

}  // namespace faultline::checkers::collections

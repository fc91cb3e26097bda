// The bank checker: totals, signs and account sets of every ok read. See
// bank.h.
#include "checkers/collections/bank.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "checkers/collections/common.h"
#include "checkers/json_parser.h"
#include "checkers/op_pairs.h"

namespace faultline::checkers::collections {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): our helpers

enum Kind { kWrongTotal, kNegative, kMissing, kUnknown, kKinds };
constexpr const char* kKindNames[kKinds] = {
    "wrong-total", "negative", "missing-account", "unknown-account"};

struct BadRead {
  std::size_t done = 0;  // position of the read's ok
  std::optional<std::int64_t> sum;
  bool kinds[kKinds] = {};
  std::vector<std::string> problems;
};

bool IsAccount(const Value* v) { return v && (v->is_string() || v->is_int()); }

std::string ShapeProblem(const Event& e) {
  if (e.f == "transfer" && e.is_invoke()) {
    const Value& v = e.value;
    if (v.is_object() && IsAccount(v.Find("from")) && IsAccount(v.Find("to")) &&
        v.Find("amount") && v.Find("amount")->is_int()) {
      return {};
    }
    return LineText(e) +
           ": a bank transfer's invoke value must be {\"from\": account, "
           "\"to\": account, \"amount\": integer} (accounts as strings or "
           "integers), not " +
           v.ToJson();
  }
  if (e.f == "read" && e.type == EventType::kOk) {
    const Value& v = e.value;
    if (v.is_object()) {
      bool ints = std::all_of(v.as_object().begin(), v.as_object().end(),
                              [](const auto& f) { return f.second.is_int(); });
      if (ints) return {};
    }
    return LineText(e) +
           ": a bank read that completes ok must carry an object mapping "
           "each account name to its integer balance, e.g. {\"a\":60,\"b\":"
           "40}, not " +
           (v.is_object() ? v.ToJson() : std::string(KindName(v)));
  }
  return {};
}

std::optional<std::int64_t> Sum(const Value::Object& balances) {
  std::int64_t sum = 0;
  for (const auto& [name, balance] : balances) {
    (void)name;
    if (__builtin_add_overflow(sum, balance.as_int(), &sum)) {
      return std::nullopt;
    }
  }
  return sum;
}

std::string Quote(const std::string& s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

}  // namespace

Verdict CheckBank(const History& h, const BankOptions& options) {
  if (auto bad = StructureProblem(h)) return Malformed(kBankChecker, *bad);
  for (const Event& e : h) {
    if (e.is_nemesis()) continue;
    if (std::string bad = ShapeProblem(e); !bad.empty()) {
      return Malformed(kBankChecker, bad);
    }
  }
  std::int64_t transfers[3] = {0, 0, 0};  // ok, fail, info
  for (const PairedOp& op : PairOps(h, false)) {
    if (h[op.inv].f != "transfer") continue;
    ++transfers[op.outcome == EventType::kOk     ? 0
                : op.outcome == EventType::kFail ? 1
                                                 : 2];
  }
  std::set<std::string> expected;
  if (options.accounts) {
    expected.insert(options.accounts->begin(), options.accounts->end());
  }
  const std::size_t max_examples =
      static_cast<std::size_t>(std::max(1, options.max_examples));

  std::optional<std::int64_t> total = options.total;
  std::optional<std::size_t> total_from;  // the read it was taken from
  std::optional<std::int64_t> min_total, max_total;
  std::int64_t reads = 0, bad_reads = 0, kind_counts[kKinds] = {};
  std::vector<BadRead> examples;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const Event& e = h[i];
    if (e.is_nemesis() || e.f != "read" || e.type != EventType::kOk) continue;
    ++reads;
    const Value::Object& balances = e.value.as_object();
    BadRead b;
    b.done = i;
    b.sum = Sum(balances);
    if (b.sum) {
      min_total = std::min(min_total.value_or(*b.sum), *b.sum);
      max_total = std::max(max_total.value_or(*b.sum), *b.sum);
    }
    std::string who = OpAt(e);
    if (!total && b.sum) {
      total = *b.sum;
      total_from = i;
    }
    if (!b.sum) {
      b.kinds[kWrongTotal] = true;
      b.problems.push_back("wrong total: " + who +
                           " has balances whose sum overflows int64");
    } else if (total && *b.sum != *total) {
      b.kinds[kWrongTotal] = true;
      b.problems.push_back("wrong total: " + who + " summed to " +
                           std::to_string(*b.sum) + ", expected " +
                           std::to_string(*total));
    }
    std::set<std::string> seen;
    for (const auto& [name, balance] : balances) {
      seen.insert(name);
      if (!options.allow_negative && balance.as_int() < 0) {
        b.kinds[kNegative] = true;
        b.problems.push_back("negative balance: " + who + " shows account " +
                             Quote(name) + " at " +
                             std::to_string(balance.as_int()));
      }
      if (options.accounts && !expected.count(name)) {
        b.kinds[kUnknown] = true;
        b.problems.push_back(
            "unknown account: " + who + " lists account " + Quote(name) +
            " (balance " + std::to_string(balance.as_int()) +
            "), which is not one of the " + std::to_string(expected.size()) +
            " accounts expected");
      }
    }
    for (const std::string& name : expected) {
      if (seen.count(name)) continue;
      b.kinds[kMissing] = true;
      b.problems.push_back("missing account: " + who +
                           " does not list account " + Quote(name));
    }
    if (b.problems.empty()) continue;
    ++bad_reads;
    for (int k = 0; k < kKinds; ++k) kind_counts[k] += b.kinds[k] ? 1 : 0;
    if (examples.size() < max_examples) examples.push_back(std::move(b));
  }

  Verdict v;
  v.checker = kBankChecker;
  std::string& d = v.details_json;
  d = "{";
  Key(d, "total");
  d += total ? std::to_string(*total) : "null";
  d += ",";
  Str(d, "total_source", options.total ? "option" : "first-read");
  d += ",";
  Int(d, "reads_checked", reads);
  d += ",\"transfers\":{";
  Int(d, "ok", transfers[0]);
  d += ",";
  Int(d, "fail", transfers[1]);
  d += ",";
  Int(d, "info", transfers[2]);
  d += "},";
  Int(d, "bad_reads", bad_reads);
  d += ",\"kinds\":{";
  for (int k = 0; k < kKinds; ++k) {
    if (k > 0) d += ",";
    Int(d, kKindNames[k], kind_counts[k]);
  }
  d += "},";
  Key(d, "min_total");
  d += min_total ? std::to_string(*min_total) : "null";
  d += ",";
  Key(d, "max_total");
  d += max_total ? std::to_string(*max_total) : "null";
  d += ",\"examples\":[";
  for (std::size_t k = 0; k < examples.size(); ++k) {
    const BadRead& b = examples[k];
    if (k > 0) d += ",";
    d += "{";
    EventRef(d, "read", h[b.done]);
    d += ",\"value\":";
    h[b.done].value.AppendJson(d);
    d += ",";
    Key(d, "sum");
    d += b.sum ? std::to_string(*b.sum) : "null";
    d += ",\"kinds\":[";
    bool first = true;
    for (int j = 0; j < kKinds; ++j) {
      if (!b.kinds[j]) continue;
      if (!first) d += ",";
      first = false;
      AppendJsonString(d, kKindNames[j]);
    }
    d += "],\"problems\":[";
    for (std::size_t j = 0; j < b.problems.size(); ++j) {
      if (j > 0) d += ",";
      AppendJsonString(d, b.problems[j]);
    }
    d += "]}";
  }
  d += "]}";

  if (reads == 0) {
    v.validity = Validity::kUnknown;
    v.summary = "unknown: no read completed ok, so nothing was checked";
    v.explanation = v.summary + " (" + std::to_string(transfers[0]) +
                    " transfers ok, " + std::to_string(transfers[1]) +
                    " refused, " + std::to_string(transfers[2]) +
                    " indeterminate)";
    return v;
  }
  std::string source;
  if (options.total) {
    source = "the expected total " + std::to_string(*total) + " was given";
  } else if (total_from) {
    source = "no total was given, so the total " + std::to_string(*total) +
             " is taken from the first ok read, " + OpAt(h[*total_from]);
  } else {
    source = "no total was given and no read's sum fits in int64";
  }
  std::string counts = std::to_string(reads) +
                       " ok reads checked, totals from " +
                       (min_total ? std::to_string(*min_total) : "?") + " to " +
                       (max_total ? std::to_string(*max_total) : "?") + "; " +
                       std::to_string(transfers[0]) + " transfers ok, " +
                       std::to_string(transfers[1]) + " refused, " +
                       std::to_string(transfers[2]) + " indeterminate";
  if (bad_reads == 0) {
    v.validity = Validity::kValid;
    v.summary = "valid: all " + std::to_string(reads) + " ok reads sum to " +
                std::to_string(*total) +
                (options.allow_negative ? "" : " with no negative balance") +
                (options.accounts ? " and list exactly the " +
                                        std::to_string(expected.size()) +
                                        " expected accounts"
                                  : "") +
                (options.total ? "" : " (total taken from the first read)");
    v.explanation = source + "\n" + counts;
    return v;
  }
  v.validity = Validity::kInvalid;
  v.summary = "invalid: " + examples.front().problems.front() + "; " +
              std::to_string(bad_reads) + " of " + std::to_string(reads) +
              " reads bad";
  if (!options.total) v.summary += " (total taken from the first read)";
  for (const BadRead& b : examples) {
    for (const std::string& p : b.problems) v.explanation += p + "\n";
  }
  if (bad_reads > static_cast<std::int64_t>(examples.size())) {
    v.explanation +=
        "... and " +
        std::to_string(bad_reads - static_cast<std::int64_t>(examples.size())) +
        " more bad reads\n";
  }
  std::string kinds;
  for (int k = 0; k < kKinds; ++k) {
    if (kind_counts[k] == 0) continue;
    if (!kinds.empty()) kinds += ", ";
    kinds += std::string(kKindNames[k]) + " " + std::to_string(kind_counts[k]);
  }
  v.explanation +=
      "bad reads by kind: " + kinds + "\n" + source + "\n" + counts;
  return v;
}

}  // namespace faultline::checkers::collections

// The counter checker: bounds from running sums of acknowledged and
// possibly applied increments. See counter.h.
#include "checkers/collections/counter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkers/collections/common.h"
#include "checkers/json_parser.h"
#include "checkers/op_pairs.h"

namespace faultline::checkers::collections {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): our helpers

struct Violation {
  bool below = false;
  std::int64_t value = 0;
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  std::size_t inv = 0;   // position of the read's invoke
  std::size_t done = 0;  // position of its ok
};

// The shape rules; empty when they hold.
std::string ShapeProblem(const Event& e) {
  if (e.f == "add" && e.is_invoke()) {
    if (e.value.is_int() && e.value.as_int() >= 0) return {};
    return LineText(e) +
           ": a counter add's invoke value must be the increment, a "
           "non-negative integer, not " +
           (e.value.is_int() ? e.value.ToJson()
                             : std::string(KindName(e.value)));
  }
  if (e.f == "read" && e.type == EventType::kOk) {
    if (e.value.is_int()) return {};
    return LineText(e) +
           ": a counter read that completes ok must carry the value read, an "
           "integer, not " +
           std::string(KindName(e.value));
  }
  return {};
}

std::string Count(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string ViolationText(const History& h, const Violation& v,
                          std::int64_t initial) {
  const Event& inv = h[v.inv];
  const Event& done = h[v.done];
  std::string who = "p" + std::to_string(inv.process) + "'s read";
  std::string bounds = "(lower bound " + std::to_string(v.lower) + ", upper " +
                       std::to_string(v.upper) + ")";
  if (v.below) {
    std::string acked =
        initial == 0 ? std::to_string(v.lower) + " had been acknowledged"
                     : "the initial value " + std::to_string(initial) +
                           " plus " + std::to_string(v.lower - initial) +
                           " acknowledged made " + std::to_string(v.lower);
    return who + " invoked at " + Where(inv) + " returned " +
           std::to_string(v.value) + ", but " + acked + " before it began " +
           bounds;
  }
  return who + " completed at " + Where(done) + " returned " +
         std::to_string(v.value) + ", but at most " + std::to_string(v.upper) +
         " could have been added by then (the initial value and every add "
         "invoked before it completed that did not fail) " +
         bounds;
}

}  // namespace

Verdict CheckCounter(const History& h, const CounterOptions& options) {
  if (auto bad = StructureProblem(h)) return Malformed(kCounterChecker, *bad);
  for (const Event& e : h) {
    if (e.is_nemesis()) continue;
    if (std::string bad = ShapeProblem(e); !bad.empty()) {
      return Malformed(kCounterChecker, bad);
    }
  }
  // The outcome of each add, by the position of its invoke.
  std::vector<EventType> outcome(h.size(), EventType::kInfo);
  std::int64_t adds_ok = 0, adds_fail = 0, adds_info = 0;
  for (const PairedOp& op : PairOps(h, false)) {
    outcome[op.inv] = op.outcome;
    if (h[op.inv].f != "add") continue;
    ++(op.outcome == EventType::kOk     ? adds_ok
       : op.outcome == EventType::kFail ? adds_fail
                                        : adds_info);
  }

  const std::size_t max_examples =
      static_cast<std::size_t>(std::max(1, options.max_examples));
  std::int64_t acked = options.initial;     // initial + ok adds completed
  std::int64_t possible = options.initial;  // initial + non-failed invoked
  // Per process: the increment of its open add, or the lower bound and
  // invoke position of its open read.
  struct Open {
    std::int64_t amount = 0;
    std::int64_t lower = 0;
    std::size_t inv = 0;
  };
  std::unordered_map<std::int64_t, Open> open;
  std::int64_t reads_ok = 0, reads_not_ok = 0, below = 0, above = 0;
  std::vector<Violation> examples;
  std::optional<std::string> overflow;
  for (std::size_t i = 0; i < h.size() && !overflow; ++i) {
    const Event& e = h[i];
    if (e.is_nemesis() || (e.f != "add" && e.f != "read")) continue;
    if (e.is_invoke()) {
      Open& o = open[e.process];
      o.inv = i;
      if (e.f == "add") {
        o.amount = e.value.as_int();
        if (outcome[i] != EventType::kFail &&
            __builtin_add_overflow(possible, o.amount, &possible)) {
          overflow = LineText(e) + ": the sum of increments overflows int64";
        }
      } else {
        o.lower = acked;
      }
      continue;
    }
    auto it = open.find(e.process);
    if (it == open.end()) continue;  // excluded by well-formedness
    const Open o = it->second;
    open.erase(it);
    if (e.f == "add") {
      if (e.type == EventType::kOk &&
          __builtin_add_overflow(acked, o.amount, &acked)) {
        overflow = LineText(e) + ": the sum of increments overflows int64";
      }
      continue;
    }
    if (e.type != EventType::kOk) {
      ++reads_not_ok;
      continue;
    }
    ++reads_ok;
    std::int64_t r = e.value.as_int();
    if (r >= o.lower && r <= possible) continue;
    Violation v{r < o.lower, r, o.lower, possible, o.inv, i};
    ++(v.below ? below : above);
    if (examples.size() < max_examples) examples.push_back(v);
  }
  if (overflow) return Malformed(kCounterChecker, *overflow);
  for (const auto& [process, o] : open) {
    (void)process;
    if (h[o.inv].f == "read") ++reads_not_ok;
  }

  Verdict v;
  v.checker = kCounterChecker;
  std::string& d = v.details_json;
  d = "{";
  Int(d, "initial", options.initial);
  d += ",\"adds\":{";
  Int(d, "ok", adds_ok);
  d += ",";
  Int(d, "fail", adds_fail);
  d += ",";
  Int(d, "info", adds_info);
  d += "},\"reads\":{";
  Int(d, "ok", reads_ok);
  d += ",";
  Int(d, "not_ok", reads_not_ok);
  d += "},";
  Int(d, "reads_checked", reads_ok);
  d += ",\"violations\":{";
  Int(d, "count", below + above);
  d += ",";
  Int(d, "below", below);
  d += ",";
  Int(d, "above", above);
  d += ",\"examples\":[";
  for (std::size_t k = 0; k < examples.size(); ++k) {
    const Violation& x = examples[k];
    if (k > 0) d += ",";
    d += "{";
    Str(d, "kind", x.below ? "below" : "above");
    d += ",";
    Int(d, "value", x.value);
    d += ",";
    Int(d, "lower", x.lower);
    d += ",";
    Int(d, "upper", x.upper);
    d += ",";
    EventRef(d, "invoke", h[x.inv]);
    d += ",";
    EventRef(d, "complete", h[x.done]);
    d += "}";
  }
  d += "]}}";

  std::string counts = std::to_string(reads_ok) + " ok reads; " +
                       std::to_string(adds_ok + adds_fail + adds_info) +
                       " adds: " + std::to_string(adds_ok) + " ok, " +
                       std::to_string(adds_fail) + " failed, " +
                       std::to_string(adds_info) + " indeterminate";
  if (reads_ok == 0) {
    v.validity = Validity::kUnknown;
    v.summary = "unknown: no read completed ok (" +
                Count(reads_not_ok, "read", "reads") +
                " attempted), so nothing was checked";
    v.explanation = v.summary + "\n" + counts;
    return v;
  }
  for (const Violation& x : examples) {
    v.explanation += ViolationText(h, x, options.initial) + "\n";
  }
  if (below + above > 0) {
    v.validity = Validity::kInvalid;
    v.summary =
        "invalid: " + ViolationText(h, examples.front(), options.initial);
    if (below + above > 1) {
      v.summary += "; " + std::to_string(below + above) + " of " +
                   std::to_string(reads_ok) + " reads out of bounds";
    }
    if (below + above > static_cast<std::int64_t>(examples.size())) {
      v.explanation +=
          "... and " +
          std::to_string(below + above -
                         static_cast<std::int64_t>(examples.size())) +
          " more\n";
    }
    v.explanation += Count(below, "read", "reads") +
                     " below the lower bound, " + std::to_string(above) +
                     " above the upper bound\n" + counts;
    return v;
  }
  v.validity = Validity::kValid;
  v.summary = "valid: all " + std::to_string(reads_ok) +
              " ok reads lie between the acknowledged and the possible sum "
              "of increments (" +
              std::to_string(adds_ok + adds_fail + adds_info) +
              " adds: " + std::to_string(adds_ok) + " ok, " +
              std::to_string(adds_fail) + " failed, " +
              std::to_string(adds_info) + " indeterminate)";
  v.explanation = counts;
  return v;
}

}  // namespace faultline::checkers::collections

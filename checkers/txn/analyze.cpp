// Analyze (checkers/txn/txn_internal.h): real-time and process order added
// to the data graph, cycles found and named, anomalies mapped to models,
// and the Verdict built.
#include <array>
#include <string>
#include <utility>

#include "checkers/txn/classify.h"
#include "checkers/txn/cycles.h"
#include "checkers/txn/infer_common.h"
#include "checkers/txn/report.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

constexpr const char* kCycleTypes[] = {
    "G0",          "G1c",          "G-single",          "G2-item",
    "G0-process",  "G1c-process",  "G-single-process",  "G2-item-process",
    "G0-realtime", "G1c-realtime", "G-single-realtime", "G2-item-realtime"};
constexpr const char* kOtherTypes[] = {"G1a",
                                       "G1b",
                                       "internal",
                                       "lost-update",
                                       "duplicate-elements",
                                       "incompatible-order",
                                       "garbage-read"};

Verdict Unknown(Verdict v, std::string summary, std::string explanation,
                std::string details) {
  v.validity = Validity::kUnknown;
  v.summary = "unknown: " + std::move(summary);
  v.explanation = std::move(explanation);
  v.details_json = std::move(details);
  return v;
}

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void GroupTypes(const CycleSearch& search, const Inference& inf, Findings& f) {
  for (const char* name : kCycleTypes) {
    TypeFound t;
    t.type = name;
    t.is_cycle = true;
    for (const Cycle& c : search.cycles) {
      if (c.type == name) t.cycles.push_back(&c);
    }
    if (!t.cycles.empty()) f.types.push_back(std::move(t));
  }
  std::vector<std::string> order(std::begin(kOtherTypes),
                                 std::end(kOtherTypes));
  for (const Anomaly& a : inf.anomalies) {  // types outside the list last
    bool known = false;
    for (const std::string& o : order) known |= o == a.type;
    if (!known) order.push_back(a.type);
  }
  for (const std::string& name : order) {
    TypeFound t;
    t.type = name;
    for (const Anomaly& a : inf.anomalies) {
      if (a.type == name) t.anomalies.push_back(&a);
    }
    if (!t.anomalies.empty()) f.types.push_back(std::move(t));
  }
  for (const TypeFound& t : f.types) f.violated |= ViolatedModels(t.type);
}

std::string StrongestClause(std::uint32_t violated) {
  const std::vector<std::string> s = StrongestSatisfied(violated);
  if (s.empty()) return "no model checked here is satisfied";
  return (s.size() == 1 ? "the strongest model satisfied is "
                        : "the strongest models satisfied are ") +
         JoinAnd(s);
}

}  // namespace

const char* WorkloadName(Workload w) {
  return w == Workload::kListAppend ? kListAppendChecker : kRwRegisterChecker;
}

Verdict Analyze(Inference inference, const TxnOptions& options) {
  const Inference& inf = inference;
  Verdict v;
  v.checker = WorkloadName(inf.workload);
  std::string head = "{\"workload\":\"" + v.checker + "\"";
  if (inf.error) {
    std::string msg =
        "line " + std::to_string(inf.error->line) + ": " + inf.error->message;
    std::string details = head + ",\"error\":";
    AppendJsonString(details, msg);
    details += "}";
    return Unknown(std::move(v), msg,
                   "The history could not be read as " + v.checker +
                       " transactions: " + msg,
                   std::move(details));
  }
  const int target = ModelIndex(options.consistency_model);
  if (target < 0) {
    std::string msg = "consistency model \"" + options.consistency_model +
                      "\" is not one of " + JoinAnd(ConsistencyModelNames());
    std::string details = head + ",\"error\":";
    AppendJsonString(details, msg);
    details += "}";
    return Unknown(std::move(v), msg, msg + ".", std::move(details));
  }

  Findings f;
  f.inference = &inf;
  for (const Txn& t : inf.set.txns) {
    f.ok += t.status == Status::kOk;
    f.info += t.status == Status::kInfo;
    f.fail += t.status == Status::kFail;
  }
  for (TxnId n = 0; n < inf.graph.nodes(); ++n) {
    for (std::uint32_t e = inf.graph.OutBegin(n); e < inf.graph.OutEnd(n);
         ++e) {
      const std::uint8_t b = inf.graph.Bits(e);
      f.ww += (b & kWW) != 0;
      f.wr += (b & kWR) != 0;
      f.rw += (b & kRW) != 0;
    }
  }
  const std::uint64_t n = inf.set.txns.size();
  if (f.ok == 0) {
    return Unknown(std::move(v),
                   "nothing to check: no ok transaction among " +
                       Plural(n, "transaction", "transactions"),
                   "No transaction completed ok, so no read can be checked.",
                   RenderDetails(f, options.max_cycles_per_type));
  }

  f.gave_up = inf.gave_up;
  CycleSearch search;
  if (f.gave_up.empty()) {
    Limits limits{options.deadline, options.memory_limit_bytes,
                  options.memory_in_use ? &options.memory_in_use : nullptr};
    LimitCheck check(limits);
    FullGraph g = BuildFullGraph(inf.graph, inf.set);
    f.realtime = g.realtime_edges;
    f.process = g.process_edges;
    const std::uint64_t bytes = check.Measured([&] {
      return SetBytes(inf.set) + inf.graph.MemoryBytes() + g.MemoryBytes() +
             static_cast<std::uint64_t>(g.nodes()) * 16;
    });
    if (check.OverMemory(bytes)) {
      f.gave_up = check.MemoryMessage(bytes) + " while building the graph";
    } else if (check.Expired()) {
      f.gave_up = "deadline reached after building the graph";
    } else {
      Components comps = StronglyConnected(g);
      f.components = comps.nontrivial;
      CycleSearchOptions so;
      so.limits = limits;
      search = FindCycles(g, comps, so);
      f.gave_up = search.gave_up;
      // Unknown only when a class that could have violated the target
      // model was capped.
      for (const std::string& type : search.capped_types) {
        if ((ViolatedModels(type) >> target) & 1) f.capped = true;
      }
    }
  }
  GroupTypes(search, inf, f);

  std::vector<std::string> bad;
  std::vector<std::string> allowed;
  for (const TypeFound& t : f.types) {
    ((ViolatedModels(t.type) >> target) & 1 ? bad : allowed)
        .push_back(TypeSummary(t));
  }
  const std::string& model = options.consistency_model;
  v.explanation = RenderExplanation(f, options.max_cycles_per_type);
  v.details_json = RenderDetails(f, options.max_cycles_per_type);
  const std::string txns = Plural(n, "transaction", "transactions");
  if (!bad.empty()) {
    v.validity = Validity::kInvalid;
    v.summary = "invalid: " + JoinAnd(bad) +
                (bad.size() == 1 ? " violates " : " violate ") + model + "; " +
                StrongestClause(f.violated);
    if (!f.gave_up.empty()) {
      v.summary += " (the check was incomplete: " + f.gave_up + ")";
    }
    return v;
  }
  if (!f.gave_up.empty()) {
    v.validity = Validity::kUnknown;
    v.summary = "unknown: gave up: " + f.gave_up;
    if (!allowed.empty()) v.summary += "; found so far: " + JoinAnd(allowed);
    return v;
  }
  if (f.capped) {
    v.validity = Validity::kUnknown;
    v.summary =
        "unknown: the cycle search was capped in a large strongly connected "
        "component, so a cycle violating " +
        model + " may have been missed";
    if (!allowed.empty()) v.summary += "; found: " + JoinAnd(allowed);
    return v;
  }
  v.validity = Validity::kValid;
  if (allowed.empty()) {
    v.summary = "valid: " + txns + ", no anomaly; " + model + " holds";
  } else {
    v.summary = "valid: " + txns + "; " + JoinAnd(allowed) +
                (allowed.size() == 1 ? " is" : " are") + " allowed by " +
                model + "; " + StrongestClause(f.violated);
  }
  return v;
}

}  // namespace faultline::checkers::txn

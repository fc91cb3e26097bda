// CheckLinearizable: partitions the history by key, runs the pre-passes and
// the segment searches of each key (in parallel), and composes the verdict.
#include <algorithm>
#include <thread>

#include "checkers/linear_internal.h"
#include "checkers/linearizable.h"

namespace faultline::checkers {
namespace {

using linear::Outcome;
using linear::Partition;

struct KeyResult {
  Outcome outcome = Outcome::kUnknown;
  std::string reason;
  linear::Explanation explanation;
  std::vector<std::int64_t> witness;  // invoke indices in order
  std::uint64_t memo_entries = 0;
  std::size_t segments = 0;
};

// A violation in segment `failed_at` > 0 starts from a state the earlier
// segments can reach; re-searches them with witnesses (they passed before,
// so this is bounded by the same work) and prepends an order of their ops
// reaching that state, so the explanation's prefix starts at the beginning.
// Leaves `r` unchanged when the limits stop the re-search.
void PrependEarlierSegments(const Partition& p,
                            const std::vector<std::size_t>& starts_at,
                            std::size_t failed_at, linear::StateTable& table,
                            const linear::Limits& limits,
                            linear::SegmentResult& r) {
  std::vector<linear::SegmentResult> done;
  std::vector<std::uint32_t> states = {table.Intern(table.Get(0))};
  for (std::size_t s = 0; s < failed_at; ++s) {
    linear::SegmentResult w = linear::SearchSegment(
        p, starts_at[s], starts_at[s + 1], states, true, true, table, limits);
    if (w.outcome != Outcome::kOk) return;
    states = w.end_states;
    done.push_back(std::move(w));
  }
  std::vector<std::size_t> prefix;
  std::uint32_t want = r.best_start;
  for (std::size_t s = done.size(); s-- > 0;) {
    const linear::SegmentResult& w = done[s];
    std::size_t k = 0;
    while (k < w.end_states.size() && w.end_states[k] != want) ++k;
    if (k == w.end_states.size()) return;
    prefix.insert(prefix.begin(), w.witness_order[k].begin(),
                  w.witness_order[k].end());
    want = w.witness_start[k];
  }
  prefix.insert(prefix.end(), r.best_prefix.begin(), r.best_prefix.end());
  r.best_prefix = std::move(prefix);
  r.seg_begin = 0;
}

KeyResult CheckPartition(Partition& p, const Model& model,
                         const LinearizableOptions& options,
                         const linear::Limits& limits) {
  KeyResult out;
  if (options.prune) linear::Prune(p, model);
  if (p.ops.empty()) {
    out.outcome = Outcome::kOk;
    return out;
  }
  std::vector<std::size_t> starts_at = options.split_quiescent
                                           ? linear::QuiescentSplits(p)
                                           : std::vector<std::size_t>{0};
  out.segments = starts_at.size();
  linear::StateTable table(model, p);
  std::uint32_t init = table.Intern(model.Init());
  std::vector<linear::SegmentResult> done;
  // Pass 1 (optimistic) carries one end state from segment to segment: a
  // success is a real linearization. A failure after the first segment may
  // be due to the end state picked earlier, so pass 2 (complete) carries
  // every reachable end state.
  for (int pass = 0; pass < 2; ++pass) {
    bool complete = pass == 1;
    bool retry = false;
    std::vector<std::uint32_t> states = {init};
    done.clear();
    for (std::size_t s = 0; s < starts_at.size() && !retry; ++s) {
      bool last = s + 1 == starts_at.size();
      std::size_t end = last ? p.ops.size() : starts_at[s + 1];
      linear::SegmentResult r =
          linear::SearchSegment(p, starts_at[s], end, states, complete && !last,
                                options.witness, table, limits);
      out.memo_entries += r.memo_entries;
      if (r.outcome == Outcome::kUnknown) {
        out.outcome = Outcome::kUnknown;
        out.reason = r.reason;
        return out;
      }
      if (r.outcome == Outcome::kViolation) {
        if (!complete && s > 0) {
          retry = true;
          break;
        }
        out.outcome = Outcome::kViolation;
        if (s > 0) PrependEarlierSegments(p, starts_at, s, table, limits, r);
        out.explanation = linear::Explain(p, model, table, r);
        return out;
      }
      states = r.end_states;
      std::sort(states.begin(), states.end());
      if (options.witness) done.push_back(std::move(r));
    }
    if (!retry) break;
  }
  out.outcome = Outcome::kOk;
  if (options.witness && !done.empty()) {
    // Walk back from the last segment's end state through the start states.
    std::vector<std::vector<std::size_t>> orders;
    std::uint32_t want = done.back().end_states.front();
    for (std::size_t s = done.size(); s-- > 0;) {
      const linear::SegmentResult& r = done[s];
      std::size_t k = 0;
      while (k < r.end_states.size() && r.end_states[k] != want) ++k;
      if (k == r.end_states.size()) break;  // cannot happen
      orders.push_back(r.witness_order[k]);
      want = r.witness_start[k];
    }
    for (std::size_t s = orders.size(); s-- > 0;) {
      for (std::size_t i : orders[s]) {
        out.witness.push_back(p.ops[i].invoke_index());
      }
    }
  }
  return out;
}

std::string KeyName(const Value& key) {
  return key.is_null() ? std::string("(no key)") : key.ToJson();
}

}  // namespace

std::vector<std::string> LinearizableModelNames() { return ModelNames(); }

Verdict CheckLinearizable(const History& history,
                          const LinearizableOptions& options) {
  Verdict v;
  v.checker = kLinearizableChecker;
  v.validity = Validity::kUnknown;
  v.details_json = "{}";
  std::unique_ptr<Model> model = MakeModel(options.model);
  if (!model) {
    v.summary = "unknown model '" + options.model + "'";
    v.details_json = "{\"reason\":";
    AppendJsonString(v.details_json, v.summary);
    v.details_json += "}";
    return v;
  }
  linear::BuildResult built = linear::BuildPartitions(history, *model);
  if (!built.error.empty()) {
    v.summary = "malformed history: " + built.error;
    v.details_json = "{\"reason\":";
    AppendJsonString(v.details_json, v.summary);
    v.details_json += "}";
    return v;
  }
  std::vector<Partition>& parts = built.partitions;
  std::size_t total_ops = 0;
  for (const Partition& p : parts) total_ops += p.ops.size();
  if (total_ops + built.failed_ops == 0) {
    // An empty file, blank lines, or only nemesis events: a verdict of
    // valid would claim a check that never happened.
    v.summary = "no client operation in the history (" +
                std::to_string(history.size()) +
                " event(s)), so nothing was checked";
    v.explanation = v.summary +
                    "\nA history without client operations is unknown, "
                    "never valid.\n";
    v.details_json = "{\"model\":";
    AppendJsonString(v.details_json, options.model);
    v.details_json += ",\"keys\":0,\"ops\":0,\"reason\":";
    AppendJsonString(v.details_json, v.summary);
    v.details_json += "}";
    return v;
  }

  linear::Budget budget;
  budget.limit = options.memory_limit_bytes;
  std::atomic<bool> violation{false};
  linear::Limits limits;
  limits.deadline = options.deadline;
  limits.cancel = options.cancel;
  limits.violation = &violation;
  limits.budget = &budget;

  // Largest keys first, so one big key does not start last.
  std::vector<std::size_t> order(parts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) {
                     return parts[a].ops.size() > parts[b].ops.size();
                   });
  std::vector<KeyResult> results(parts.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    while (true) {
      std::size_t k = next.fetch_add(1);
      if (k >= order.size()) return;
      std::size_t i = order[k];
      results[i] = CheckPartition(parts[i], *model, options, limits);
      if (results[i].outcome == Outcome::kViolation) violation.store(true);
    }
  };
  std::size_t threads = static_cast<std::size_t>(std::max(1, options.threads));
  threads = std::min(threads, std::max<std::size_t>(1, parts.size()));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }

  std::size_t pruned = 0, closed = 0, segments = 0;
  std::uint64_t memo = 0;
  const KeyResult* bad = nullptr;
  std::size_t bad_part = 0;
  const KeyResult* unknown = nullptr;
  std::size_t unknown_part = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    pruned += parts[i].pruned;
    closed += parts[i].closed;
    segments += results[i].segments;
    memo += results[i].memo_entries;
    if (results[i].outcome == Outcome::kViolation && bad == nullptr) {
      bad = &results[i];
      bad_part = i;
    }
    if (results[i].outcome == Outcome::kUnknown && unknown == nullptr) {
      unknown = &results[i];
      unknown_part = i;
    }
  }

  std::string& j = v.details_json;
  j = "{\"model\":";
  AppendJsonString(j, options.model);
  j += ",\"keys\":" + std::to_string(parts.size());
  j += ",\"ops\":" + std::to_string(total_ops);
  j += ",\"failed_ops_ignored\":" + std::to_string(built.failed_ops);
  j += ",\"pruned\":" + std::to_string(pruned);
  j += ",\"closed\":" + std::to_string(closed);
  j += ",\"segments\":" + std::to_string(segments);
  j += ",\"memo_entries\":" + std::to_string(memo);
  j += ",\"peak_bytes\":" + std::to_string(budget.peak.load());

  if (bad != nullptr) {
    v.validity = Validity::kInvalid;
    v.summary = bad->explanation.summary;
    v.explanation = bad->explanation.text;
    j += ",\"failure\":" + bad->explanation.json;
  } else if (unknown != nullptr) {
    v.validity = Validity::kUnknown;
    v.summary = "gave up on key " + KeyName(parts[unknown_part].key) + ": " +
                unknown->reason;
    v.explanation = v.summary +
                    "\nA bounded search that gives up is unknown, "
                    "never valid.\n";
    j += ",\"reason\":";
    AppendJsonString(j, unknown->reason);
    j += ",\"key\":";
    parts[unknown_part].key.AppendJson(j);
  } else {
    v.validity = Validity::kValid;
    v.summary = "linearizable: " + std::to_string(total_ops) + " ops over " +
                std::to_string(parts.size()) + " key(s), model " +
                options.model;
    if (options.witness) {
      v.explanation = "Witness order (invoke event indices) per key:\n";
      j += ",\"witness\":[";
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) j += ",";
        j += "{\"key\":";
        parts[i].key.AppendJson(j);
        j += ",\"order\":[";
        v.explanation += "  key " + KeyName(parts[i].key) + ":";
        for (std::size_t k = 0; k < results[i].witness.size(); ++k) {
          if (k > 0) j += ",";
          j += std::to_string(results[i].witness[k]);
          v.explanation += " " + std::to_string(results[i].witness[k]);
        }
        v.explanation += "\n";
        j += "]}";
      }
      j += "]";
    }
  }
  (void)bad_part;
  j += "}";
  return v;
}

}  // namespace faultline::checkers

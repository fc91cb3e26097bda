// CheckLinearizable: partitions the history by key, runs the pre-passes and
// the segment searches of each key (in parallel), and composes the verdict
// from the earliest violation in time.
#include <algorithm>
#include <thread>

#include "checkers/linear_internal.h"
#include "checkers/linearizable.h"
#include "checkers/violation_context.h"

namespace faultline::checkers {
namespace {

using linear::Outcome;
using linear::Partition;

struct KeyResult {
  Outcome outcome = Outcome::kUnknown;
  std::string reason;
  // kViolation: the position of the blocker's return; kUnknown: how far
  // the search got (no violation of this key returns before it).
  std::int64_t at = linear::kNever;
  linear::Explanation explanation;
  std::vector<std::int64_t> witness;  // invoke indices in order
  std::uint64_t memo_entries = 0;
  std::size_t segments = 0;
  bool fast = false;       // the unique-value fast path decided this key
  bool overruled = false;  // it said invalid, the search found an order
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

// Lowers `bound` to `at` unless it is already lower.
void LowerBound(std::atomic<std::int64_t>& bound, std::int64_t at) {
  std::int64_t cur = bound.load();
  while (at < cur && !bound.compare_exchange_weak(cur, at)) {
  }
}

// The explanation of a violation the fast path located: its prefix and
// blocker, given to Explain as a search result would be.
linear::Explanation ExplainFastViolation(const Partition& p, const Model& model,
                                         linear::UniqueResult u) {
  linear::StateTable table(model, p);
  linear::SegmentResult r;
  r.outcome = Outcome::kViolation;
  r.best_start = table.Intern(model.Init());
  Value state = model.Init();
  for (std::size_t i : u.prefix) {
    StepResult step = model.Step(state, p.ops[i].Make());
    if (!step.ok) break;  // cannot happen: the prefix was decided
    state = std::move(step.next);
  }
  r.best_state = table.Intern(state);
  r.best_prefix = std::move(u.prefix);
  r.best_ret = u.blocker_ret;
  r.seg_begin = 0;
  r.seg_end = p.ops.size();
  return linear::Explain(p, model, table, r);
}

KeyResult CheckPartition(Partition& p, const Model& model,
                         const LinearizableOptions& options,
                         const linear::Limits& limits,
                         std::atomic<std::int64_t>& bound) {
  KeyResult out;
  bool fast_invalid = false;
  if (options.unique_fast_path) {
    linear::UniqueResult u =
        linear::CheckUnique(p, model, options.witness, &limits);
    if (u.gave_up) {
      out.outcome = Outcome::kUnknown;
      out.reason = u.reason;
      out.at = p.ops.empty() ? linear::kNever : p.ops.front().call;
      return out;
    }
    if (u.applies && u.valid) {
      out.fast = true;
      out.outcome = Outcome::kOk;
      out.segments = linear::QuiescentSplits(p).size();
      for (std::size_t i : u.order) {
        out.witness.push_back(p.ops[i].invoke_index());
      }
      return out;
    }
    if (u.applies && u.prefix_found) {
      // The violation and a prefix that gets to it, as the search would
      // report them: explained the same way.
      out.fast = true;
      out.outcome = Outcome::kViolation;
      out.at = u.blocker_ret;
      out.segments = linear::QuiescentSplits(p).size();
      LowerBound(bound, u.blocker_ret);
      out.explanation = ExplainFastViolation(p, model, std::move(u));
      return out;
    }
    // Not applicable, or (never seen) no prefix: the search decides.
    fast_invalid = u.applies;
  }
  if (options.prune && !fast_invalid) linear::Prune(p, model);
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
      // Every op of this segment returns after its first call: a violation
      // here would come after one already found.
      if (p.ops[starts_at[s]].call >= bound.load(std::memory_order_relaxed)) {
        out.outcome = Outcome::kPassed;
        return out;
      }
      linear::SegmentResult r =
          linear::SearchSegment(p, starts_at[s], end, states, complete && !last,
                                options.witness, table, limits);
      out.memo_entries += r.memo_entries;
      if (r.outcome == Outcome::kUnknown || r.outcome == Outcome::kPassed) {
        out.outcome = r.outcome;
        out.reason = r.reason;
        out.at = r.best_ret != linear::kNever ? r.best_ret
                                              : p.ops[starts_at[s]].call;
        return out;
      }
      if (r.outcome == Outcome::kViolation) {
        if (!complete && s > 0) {
          retry = true;
          break;
        }
        out.outcome = Outcome::kViolation;
        out.at = r.best_ret;
        LowerBound(bound, r.best_ret);
        if (s > 0) {
          // Earlier segments pass before this one's violation: no bound.
          linear::Limits unbounded = limits;
          unbounded.bound = nullptr;
          PrependEarlierSegments(p, starts_at, s, table, unbounded, r);
        }
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
  out.overruled = fast_invalid;
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

// A position as a time or an event, for text: "3.20 s" or "event 812".
std::string PositionText(std::int64_t pos, bool timed) {
  if (timed) return linear::Seconds(pos / 2);
  return "event " + std::to_string(pos / 2);
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
  linear::Budget budget;
  budget.limit = options.memory_limit_bytes;
  if (options.memory_in_use) budget.meter = &options.memory_in_use;
  linear::BuildResult built = linear::BuildPartitions(history, *model, &budget);
  if (built.over_memory || budget.MeterOver()) {
    v.summary = "gave up pairing the history's operations: memory limit of " +
                std::to_string(budget.limit) + " bytes reached";
    v.explanation = v.summary +
                    "\nA bounded check that gives up is unknown, never "
                    "valid.\n";
    v.details_json = "{\"model\":";
    AppendJsonString(v.details_json, options.model);
    v.details_json += ",\"reason\":";
    AppendJsonString(v.details_json, v.summary);
    v.details_json += "}";
    return v;
  }
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

  // Nothing was observed: every client operation failed, timed out or
  // never completed. No history of such operations can be refuted, so
  // "valid" would claim a check that never happened.
  bool any_ok = std::any_of(history.begin(), history.end(), [](const Event& e) {
    return !e.is_nemesis() && e.type == EventType::kOk;
  });
  if (!any_ok) {
    v.summary = "no client operation completed ok (" +
                std::to_string(total_ops + built.failed_ops) +
                " failed, timed out or never completed), so nothing was "
                "observed to check";
    v.explanation = v.summary +
                    "\nA history in which nothing succeeded is unknown, "
                    "never valid: look at the run's errors (is the "
                    "cluster reachable from the clients?).\n";
    v.details_json = "{\"model\":";
    AppendJsonString(v.details_json, options.model);
    v.details_json +=
        ",\"keys\":" + std::to_string(parts.size()) +
        ",\"ops\":" + std::to_string(total_ops) +
        ",\"failed_ops_ignored\":" + std::to_string(built.failed_ops) +
        ",\"reason\":";
    AppendJsonString(v.details_json, v.summary);
    v.details_json += "}";
    return v;
  }

  // The earliest violation found so far (its blocker's return position):
  // keys go on after a violation, but only until they get past it.
  std::atomic<std::int64_t> first_violation{linear::kNever};
  linear::Limits limits;
  limits.deadline = options.deadline;
  limits.cancel = options.cancel;
  limits.bound = &first_violation;
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
      results[i] =
          CheckPartition(parts[i], *model, options, limits, first_violation);
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

  std::size_t pruned = 0, closed = 0, segments = 0, fast = 0, overruled = 0;
  std::uint64_t memo = 0;
  // The earliest violation in time; among equal ones, the key that
  // appears first in the history. Both are independent of scheduling.
  const KeyResult* bad = nullptr;
  std::size_t bad_part = 0;
  const KeyResult* unknown = nullptr;
  std::size_t unknown_part = 0;
  std::vector<std::size_t> unfinished;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    pruned += parts[i].pruned;
    closed += parts[i].closed;
    segments += results[i].segments;
    memo += results[i].memo_entries;
    if (results[i].fast) ++fast;
    if (results[i].overruled) ++overruled;
    if (results[i].outcome == Outcome::kViolation &&
        (bad == nullptr || results[i].at < bad->at)) {
      bad = &results[i];
      bad_part = i;
    }
    if (results[i].outcome == Outcome::kUnknown) unfinished.push_back(i);
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
  j += ",\"fast_path_keys\":" + std::to_string(fast);
  if (overruled != 0) {
    j += ",\"fast_path_overruled\":" + std::to_string(overruled);
  }
  j += ",\"peak_bytes\":" + std::to_string(budget.peak.load());

  if (bad != nullptr) {
    const Partition& bp = parts[bad_part];
    linear::ViolationContext ctx =
        linear::DescribeViolation(history, bp, *model, bad->explanation);
    v.validity = Validity::kInvalid;
    v.summary =
        (bp.key.is_null() ? "" : "key " + KeyName(bp.key) + ": ") + ctx.summary;
    v.explanation = ctx.text;
    if (unfinished.empty()) {
      if (parts.size() > 1) {
        v.explanation += "This is the earliest violation in time over all " +
                         std::to_string(parts.size()) + " keys.\n";
      }
    } else {
      v.explanation +=
          "This is the earliest violation among the keys that "
          "finished; " +
          std::to_string(unfinished.size()) +
          " key(s) did not, and may hold an earlier one:\n";
      for (std::size_t k = 0; k < unfinished.size() && k < 10; ++k) {
        const KeyResult& u = results[unfinished[k]];
        v.explanation += "  key " + KeyName(parts[unfinished[k]].key) + ": " +
                         u.reason + "; no violation before " +
                         PositionText(u.at, built.timed) + "\n";
      }
      if (unfinished.size() > 10) {
        v.explanation +=
            "  ... " + std::to_string(unfinished.size() - 10) + " more\n";
      }
    }
    v.explanation += "\n" + bad->explanation.text;
    j += ",\"failure\":{" + bad->explanation.json + ctx.json + "}";
    j += ",\"unfinished\":[";
    for (std::size_t k = 0; k < unfinished.size(); ++k) {
      const KeyResult& u = results[unfinished[k]];
      if (k > 0) j += ",";
      j += "{\"key\":";
      parts[unfinished[k]].key.AppendJson(j);
      j += ",\"reason\":";
      AppendJsonString(j, u.reason);
      j += ",\"clear_before\":";
      if (built.timed) {
        std::int64_t ns = u.at / 2;
        std::string frac = std::to_string(ns % 1000000000);
        while (frac.size() < 9) frac.insert(frac.begin(), '0');
        j += "{\"s\":" + std::to_string(ns / 1000000000) + "." + frac + "}";
      } else {
        j += "{\"index\":" + std::to_string(u.at / 2) + "}";
      }
      j += "}";
    }
    j += "]";
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
  j += "}";
  return v;
}

}  // namespace faultline::checkers

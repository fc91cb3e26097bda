// Building per-key partitions from a history, the interned state table and
// the memory budget of the linearizability checker.
#include <algorithm>
#include <unordered_map>

#include "checkers/linear_internal.h"

namespace faultline::checkers::linear {
namespace {

struct Pending {
  std::size_t partition;
  std::size_t op;
};

}  // namespace

BuildResult BuildPartitions(const History& history, const Model& model) {
  BuildResult out;
  bool all_timed = true;
  for (const Event& e : history) {
    if (!e.is_nemesis() && !e.time) {
      all_timed = false;
      break;
    }
  }
  auto pos = [&](const Event& e, bool is_return) -> std::int64_t {
    std::int64_t base = all_timed ? *e.time : e.index;
    return base * 2 + (is_return ? 1 : 0);
  };

  std::unordered_map<Value, std::size_t, ValueHash> part_of;
  std::unordered_map<std::int64_t, Pending> pending;  // by process
  std::vector<std::vector<bool>> failed;              // per partition op
  std::int64_t last_time = std::numeric_limits<std::int64_t>::min();

  for (const Event& e : history) {
    if (e.is_nemesis()) continue;
    std::string where = "event " + std::to_string(e.index) + ": ";
    if (e.process < 0) {
      out.error = where + "process must be >= 0 or \"nemesis\"";
      return out;
    }
    if (all_timed) {
      if (*e.time < last_time) {
        out.error = where + "time goes backwards";
        return out;
      }
      last_time = *e.time;
    }
    auto it = pending.find(e.process);
    if (e.is_invoke()) {
      if (it != pending.end()) {
        out.error = where + "process " + std::to_string(e.process) +
                    " invokes while an operation is outstanding";
        return out;
      }
      Op op;
      op.inv = &e;
      op.call = pos(e, false);
      Value key = model.PartitionKey(e.key, op.Make());
      auto [pit, inserted] = part_of.emplace(key, out.partitions.size());
      if (inserted) {
        out.partitions.emplace_back();
        out.partitions.back().key = key;
        failed.emplace_back();
      }
      Partition& part = out.partitions[pit->second];
      part.ops.push_back(std::move(op));
      failed[pit->second].push_back(false);
      pending[e.process] = {pit->second, part.ops.size() - 1};
      continue;
    }
    if (it == pending.end()) {
      out.error = where +
                  "completion without an outstanding invoke by process " +
                  std::to_string(e.process);
      return out;
    }
    Pending pd = it->second;
    pending.erase(it);
    Op& op = out.partitions[pd.partition].ops[pd.op];
    if (op.inv->f != e.f) {
      out.error = where + "completion f '" + e.f +
                  "' does not match invoke f '" + op.inv->f + "'";
      return out;
    }
    op.complete_index = e.index;
    op.outcome = e.type;
    if (e.type == EventType::kOk) {
      op.ok = &e;
      op.ret = pos(e, true);
    } else if (e.type == EventType::kFail) {
      failed[pd.partition][pd.op] = true;
      ++out.failed_ops;
    }
  }

  for (std::size_t i = 0; i < out.partitions.size(); ++i) {
    Partition& part = out.partitions[i];
    std::vector<Op> kept;
    kept.reserve(part.ops.size());
    for (std::size_t j = 0; j < part.ops.size(); ++j) {
      if (failed[i][j]) continue;
      if (auto err = model.Validate(part.ops[j].Make())) {
        out.error =
            "event " + std::to_string(part.ops[j].invoke_index()) + ": " + *err;
        return out;
      }
      kept.push_back(std::move(part.ops[j]));
    }
    // Invocations arrive in line order, which is call order; with times a
    // stable sort keeps it (times are non-decreasing).
    std::stable_sort(kept.begin(), kept.end(),
                     [](const Op& a, const Op& b) { return a.call < b.call; });
    part.ops = std::move(kept);
  }
  return out;
}

std::vector<std::size_t> QuiescentSplits(const Partition& p) {
  std::vector<std::size_t> starts = {0};
  std::int64_t max_ret = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (i > 0 && p.ops[i].call > max_ret) starts.push_back(i);
    max_ret = std::max(max_ret, p.ops[i].ret);
  }
  return starts;
}

bool Budget::Charge(std::int64_t delta) {
  std::uint64_t now = used.fetch_add(static_cast<std::uint64_t>(delta)) +
                      static_cast<std::uint64_t>(delta);
  std::uint64_t prev = peak.load();
  while (now > prev && delta > 0 && !peak.compare_exchange_weak(prev, now)) {
  }
  return limit == 0 || now <= limit;
}

StateTable::StateTable(const Model& model, const Partition& p)
    : model_(model),
      p_(p),
      ids_(16, Hash{&model}, Eq{&model}),
      cache_(p.ops.size()) {}

std::uint32_t StateTable::Intern(const Value& v) {
  auto [it, inserted] =
      ids_.emplace(v, static_cast<std::uint32_t>(states_.size()));
  if (inserted) {
    states_.push_back(v);
    bytes_ += 2 * sizeof(Value) + 32;
  }
  return it->second;
}

std::int64_t StateTable::Step(std::uint32_t s, std::size_t op) {
  auto& c = cache_[op];
  for (const auto& [state, next] : c) {
    if (state == s) return next;
  }
  StepResult r = model_.Step(states_[s], p_.ops[op].Make());
  std::int32_t next = r.ok ? static_cast<std::int32_t>(Intern(r.next)) : -1;
  c.emplace_back(s, next);
  bytes_ += sizeof(c[0]);
  return next;
}

}  // namespace faultline::checkers::linear

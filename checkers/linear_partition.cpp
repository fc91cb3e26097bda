// Building per-key partitions from a history, the interned state table and
// the memory budget of the linearizability checker.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <unordered_map>

#include "checkers/linear_internal.h"
#include "checkers/op_pairs.h"

namespace faultline::checkers::linear {
namespace {

struct Pending {
  std::size_t partition;
  std::size_t op;
};

}  // namespace

BuildResult BuildPartitions(const History& history, const Model& model,
                            const Budget* budget) {
  BuildResult out;
  // Times place the operations only when they follow the file's order;
  // otherwise positions do (op_pairs.h).
  const bool all_timed = OrderedByTime(history);
  std::int64_t max_process = -1;
  std::size_t invokes = 0;
  for (const Event& e : history) {
    if (e.is_nemesis()) continue;
    max_process = std::max(max_process, e.process);
    if (e.is_invoke()) ++invokes;
  }
  out.timed = all_timed;
  auto pos = [&](const Event& e, bool is_return) -> std::int64_t {
    std::int64_t base = all_timed ? *e.time : e.index;
    return base * 2 + (is_return ? 1 : 0);
  };

  std::unordered_map<Value, std::size_t, ValueHash> part_of;
  // Outstanding op per process: a dense table when process ids are small
  // (the usual case), a hash map otherwise.
  constexpr Pending kNone{SIZE_MAX, 0};
  bool dense = max_process < static_cast<std::int64_t>(
                                 std::max<std::size_t>(1024, history.size()));
  std::vector<Pending> pending_dense(
      dense ? static_cast<std::size_t>(max_process + 1) : 0, kNone);
  std::unordered_map<std::int64_t, Pending> pending_map;
  auto pending_of = [&](std::int64_t process) -> Pending* {
    if (dense) {
      Pending& pd = pending_dense[static_cast<std::size_t>(process)];
      return pd.partition == SIZE_MAX ? nullptr : &pd;
    }
    auto it = pending_map.find(process);
    return it == pending_map.end() ? nullptr : &it->second;
  };
  auto set_pending = [&](std::int64_t process, Pending pd) {
    if (dense) {
      pending_dense[static_cast<std::size_t>(process)] = pd;
    } else if (pd.partition == SIZE_MAX) {
      pending_map.erase(process);
    } else {
      pending_map[process] = pd;
    }
  };
  // The last key seen and its partition: consecutive events often share a
  // key (and, read from JSONL, the same string node).
  const Value* last_key = nullptr;
  std::size_t last_part = 0;

  std::size_t seen = 0;
  for (const Event& e : history) {
    if ((++seen & 0xffff) == 0 && budget != nullptr && budget->MeterOver()) {
      out.over_memory = true;
      return out;
    }
    if (e.is_nemesis()) continue;
    auto where = [&e] { return "event " + std::to_string(e.index) + ": "; };
    if (e.process < 0) {
      out.error = where() + "process must be >= 0 or \"nemesis\"";
      return out;
    }
    Pending* outstanding = pending_of(e.process);
    if (e.is_invoke()) {
      if (outstanding != nullptr) {
        out.error = where() + "process " + std::to_string(e.process) +
                    " invokes while an operation is outstanding";
        return out;
      }
      Op op;
      op.inv = &e;
      op.call = pos(e, false);
      op.operation.f = e.f;
      op.operation.input = e.value;
      std::size_t part_index;
      Value key = model.PartitionKey(e.key, op.Make());
      if (last_key != nullptr && *last_key == key) {
        part_index = last_part;
      } else {
        auto [pit, inserted] = part_of.emplace(key, out.partitions.size());
        if (inserted) {
          out.partitions.emplace_back();
          out.partitions.back().key = key;
          // The first key may hold every op (one key is the common case):
          // room for all of them saves copying them as the vector grows,
          // and the capacity never touched is never resident.
          if (out.partitions.size() == 1) {
            out.partitions.back().ops.reserve(invokes);
          }
        }
        part_index = pit->second;
        last_key = &pit->first;
        last_part = part_index;
      }
      Partition& part = out.partitions[part_index];
      part.ops.push_back(std::move(op));
      set_pending(e.process, {part_index, part.ops.size() - 1});
      continue;
    }
    if (outstanding == nullptr) {
      out.error = where() +
                  "completion without an outstanding invoke by process " +
                  std::to_string(e.process);
      return out;
    }
    Pending pd = *outstanding;
    set_pending(e.process, kNone);
    Op& op = out.partitions[pd.partition].ops[pd.op];
    if (op.inv->f != e.f) {
      out.error = where() + "completion f '" + e.f +
                  "' does not match invoke f '" + op.inv->f + "'";
      return out;
    }
    op.complete_index = e.index;
    op.outcome = e.type;
    if (e.type == EventType::kOk) {
      op.ok = &e;
      op.ret = pos(e, true);
      op.operation.output = e.value;
      op.operation.completed = true;
    } else if (e.type == EventType::kFail) {
      ++out.failed_ops;  // op.outcome marks it
    }
  }

  for (std::size_t i = 0; i < out.partitions.size(); ++i) {
    Partition& part = out.partitions[i];
    std::size_t kept = 0;
    for (std::size_t j = 0; j < part.ops.size(); ++j) {
      if (part.ops[j].outcome == EventType::kFail) continue;
      if (auto err = model.Validate(part.ops[j].Make())) {
        out.error =
            "event " + std::to_string(part.ops[j].invoke_index()) + ": " + *err;
        return out;
      }
      if (kept != j) part.ops[kept] = std::move(part.ops[j]);
      ++kept;
    }
    part.ops.resize(kept);
    // No shrink_to_fit: the unused tail was never touched, so it is not
    // resident, and copying every op again costs more than it saves.
    // Invocations arrive in line order, which is call order; with times a
    // stable sort keeps it (times are non-decreasing).
    auto by_call = [](const Op& a, const Op& b) { return a.call < b.call; };
    if (!std::is_sorted(part.ops.begin(), part.ops.end(), by_call)) {
      std::stable_sort(part.ops.begin(), part.ops.end(), by_call);
    }
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
  if (meter != nullptr) return !MeterOver();
  return limit == 0 || now <= limit;
}

StateTable::StateTable(const Model& model, const Partition& p)
    : model_(model), p_(p), ids_(16, Hash{&model}, Eq{&model}) {
  Grow();
}

std::uint32_t StateTable::Intern(const Value& v) {
  auto [it, inserted] =
      ids_.emplace(v, static_cast<std::uint32_t>(states_.size()));
  if (inserted) {
    states_.push_back(v);
    bytes_ += 2 * sizeof(Value) + 32;
  }
  return it->second;
}

void StateTable::Grow() {
  std::vector<std::uint64_t> old_keys = std::move(keys_);
  std::vector<std::int32_t> old_next = std::move(next_);
  std::size_t size = old_keys.empty() ? 16 : old_keys.size() * 2;
  bytes_ +=
      (size - old_keys.size()) * (sizeof(std::uint64_t) + sizeof(std::int32_t));
  keys_.assign(size, kEmpty);
  next_.assign(size, 0);
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(size));
  std::size_t mask = size - 1;
  for (std::size_t k = 0; k < old_keys.size(); ++k) {
    if (old_keys[k] == kEmpty) continue;
    std::size_t i = (old_keys[k] * 0x9e3779b97f4a7c15ULL) >> shift_;
    while (keys_[i] != kEmpty) i = (i + 1) & mask;
    keys_[i] = old_keys[k];
    next_[i] = old_next[k];
  }
}

std::int64_t StateTable::Step(std::uint32_t s, std::size_t op) {
  const std::uint64_t key = (static_cast<std::uint64_t>(op) << 32) | s;
  std::size_t mask = keys_.size() - 1;
  std::size_t i = (key * 0x9e3779b97f4a7c15ULL) >> shift_;
  while (keys_[i] != kEmpty) {
    if (keys_[i] == key) return next_[i];
    i = (i + 1) & mask;
  }
  StepResult r = model_.Step(states_[s], p_.ops[op].Make());
  std::int32_t next = r.ok ? static_cast<std::int32_t>(Intern(r.next)) : -1;
  // Load at most 3/4: probes stay short with a multiplicative hash.
  if (4 * (used_ + 1) > 3 * keys_.size()) {
    Grow();
    mask = keys_.size() - 1;
    i = (key * 0x9e3779b97f4a7c15ULL) >> shift_;
    while (keys_[i] != kEmpty) i = (i + 1) & mask;
  }
  keys_[i] = key;
  next_[i] = next;
  ++used_;
  return next;
}

}  // namespace faultline::checkers::linear

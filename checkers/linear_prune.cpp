// Exact pre-passes over one partition (proofs in docs/checker.md, checked
// against the brute-force reference by differential_test.cpp):
//
//  R1 (any model) a crashed read-only op has no effect and no observed
//     output: drop it.
//  R2 (ValueFlow models) a crashed write/cas whose produced value v is
//     observed by no remaining op (no ok read returns v, no remaining cas
//     expects v) can be treated as never taking effect: in any
//     linearization, the ops between it and the next state change would see
//     v, so there are none, and the next state change is a blind write
//     (a cas would have to expect v). Applied to a fixpoint, because
//     dropping a cas removes its own observation of its expected value.
//  R3 (ValueFlow models) a crashed write/cas that is the only op producing
//     v, with v different from the initial state, and an ok op observing v
//     (a read returning v, a cas expecting v): it must have taken effect
//     before the earliest such observer returned, so it becomes mandatory
//     with that return as its deadline.
#include <algorithm>
#include <unordered_map>

#include "checkers/linear_internal.h"

namespace faultline::checkers::linear {

void Prune(Partition& p, const Model& model) {
  std::vector<bool> drop(p.ops.size(), false);
  // R1
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    if (!op.mandatory() && model.ReadOnly(op.Make())) drop[i] = true;
  }

  std::vector<std::optional<ValueFlow>> flows(p.ops.size());
  bool flow_model = true;
  for (std::size_t i = 0; i < p.ops.size() && flow_model; ++i) {
    if (drop[i]) continue;
    flows[i] = model.Flow(p.ops[i].Make());
    if (!flows[i]) flow_model = false;
  }

  if (flow_model) {
    // R2: observers per value among the kept ops. A crashed cas counts as an
    // observer of its expected value (it may have taken effect).
    std::unordered_map<Value, std::size_t, ValueHash> observers;
    std::unordered_map<Value, std::vector<std::size_t>, ValueHash>
        crashed_producers;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      if (drop[i]) continue;
      const ValueFlow& fl = *flows[i];
      if (fl.observes &&
          (fl.kind == ValueFlow::Kind::kCas || p.ops[i].completed())) {
        ++observers[*fl.observes];
      }
      if (fl.produces && !p.ops[i].mandatory()) {
        crashed_producers[*fl.produces].push_back(i);
      }
    }
    std::vector<std::size_t> work;
    for (auto& [v, list] : crashed_producers) {
      if (observers[v] == 0) work.insert(work.end(), list.begin(), list.end());
    }
    while (!work.empty()) {
      std::size_t i = work.back();
      work.pop_back();
      if (drop[i]) continue;
      drop[i] = true;
      const ValueFlow& fl = *flows[i];
      if (fl.kind == ValueFlow::Kind::kCas && fl.observes) {
        std::size_t& n = observers[*fl.observes];
        if (--n == 0) {
          auto it = crashed_producers.find(*fl.observes);
          if (it != crashed_producers.end()) {
            work.insert(work.end(), it->second.begin(), it->second.end());
          }
        }
      }
    }

    // R3: unique producers among the kept ops; earliest ok observer return.
    std::unordered_map<Value, std::size_t, ValueHash> producers;
    std::unordered_map<Value, std::int64_t, ValueHash> first_seen;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      if (drop[i]) continue;
      const ValueFlow& fl = *flows[i];
      if (fl.produces) ++producers[*fl.produces];
      if (fl.observes && p.ops[i].completed()) {
        auto [it, inserted] = first_seen.emplace(*fl.observes, p.ops[i].ret);
        if (!inserted) it->second = std::min(it->second, p.ops[i].ret);
      }
    }
    Value init = model.Init();
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      Op& op = p.ops[i];
      if (drop[i] || op.mandatory()) continue;
      const Value& v = *flows[i]->produces;
      if (v == init || producers[v] != 1) continue;
      auto it = first_seen.find(v);
      if (it == first_seen.end() || it->second <= op.call) continue;
      op.ret = it->second;
      op.closed = true;
      ++p.closed;
    }
  }

  std::size_t kept = 0;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (drop[i]) continue;
    if (kept != i) p.ops[kept] = std::move(p.ops[i]);
    ++kept;
  }
  p.pruned += p.ops.size() - kept;
  p.ops.resize(kept);
}

}  // namespace faultline::checkers::linear

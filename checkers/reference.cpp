// Brute-force reference checker (see reference.h).
#include "checkers/reference.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "checkers/model.h"

namespace faultline::checkers {
namespace {

struct RefOp {
  Operation op;
  Value key;
  std::int64_t call = 0;  // time (or index) of the invoke
  std::int64_t ret = 0;   // time (or index) of the ok completion
  bool must = false;      // completed ok: must be in every linearization
  bool failed = false;
};

class Enumerator {
 public:
  Enumerator(const Model& model, std::vector<RefOp> ops)
      : model_(model), ops_(std::move(ops)) {
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].must) must_mask_ |= std::uint64_t{1} << i;
    }
  }

  bool Run() {
    std::map<Value, Value> state;
    return Dfs(0, state);
  }

 private:
  // `i` may go next only if no other pending ok op returned before i's call.
  bool Ready(std::uint64_t done, std::size_t i) const {
    for (std::size_t j = 0; j < ops_.size(); ++j) {
      if (j == i || (done >> j & 1) || !ops_[j].must) continue;
      if (ops_[j].ret < ops_[i].call) return false;
    }
    return true;
  }

  bool Dfs(std::uint64_t done, std::map<Value, Value>& state) {
    if ((done & must_mask_) == must_mask_) return true;
    if (!seen_.insert({done, state}).second) return false;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if ((done >> i & 1) || !Ready(done, i)) continue;
      auto it = state.find(ops_[i].key);
      Value cur = it == state.end() ? model_.Init() : it->second;
      StepResult r = model_.Step(cur, ops_[i].op);
      if (!r.ok) continue;
      std::map<Value, Value> next = state;
      next[ops_[i].key] = r.next;
      if (Dfs(done | std::uint64_t{1} << i, next)) return true;
    }
    return false;
  }

  const Model& model_;
  std::vector<RefOp> ops_;
  std::uint64_t must_mask_ = 0;
  std::set<std::pair<std::uint64_t, std::map<Value, Value>>> seen_;
};

}  // namespace

ReferenceResult CheckReference(const History& history,
                               std::string_view model_name) {
  ReferenceResult out;
  std::unique_ptr<Model> model = MakeModel(model_name);
  if (!model) {
    out.error = "unknown model";
    return out;
  }
  bool timed = true;
  for (const Event& e : history) {
    if (!e.is_nemesis() && !e.time) timed = false;
  }
  std::vector<RefOp> ops;
  std::unordered_map<std::int64_t, std::size_t> open;
  for (const Event& e : history) {
    if (e.is_nemesis()) continue;
    std::int64_t t = timed ? *e.time : e.index;
    if (e.is_invoke()) {
      if (open.count(e.process) != 0) {
        out.error = "overlapping ops in one process";
        return out;
      }
      RefOp op;
      op.op.f = e.f;
      op.op.input = e.value;
      op.call = t;
      op.key = model->PartitionKey(e.key, op.op);
      open[e.process] = ops.size();
      ops.push_back(std::move(op));
      continue;
    }
    auto it = open.find(e.process);
    if (it == open.end()) {
      out.error = "completion without invoke";
      return out;
    }
    RefOp& op = ops[it->second];
    open.erase(it);
    if (e.type == EventType::kOk) {
      op.must = true;
      op.op.completed = true;
      op.op.output = e.value;
      op.ret = t;
    } else if (e.type == EventType::kFail) {
      op.failed = true;
    }
  }
  std::vector<RefOp> kept;
  for (RefOp& op : ops) {
    if (!op.failed) kept.push_back(std::move(op));
  }
  if (kept.size() > 62) {
    out.error = "too many operations for the reference checker";
    return out;
  }
  Enumerator en(*model, std::move(kept));
  out.validity = en.Run() ? Validity::kValid : Validity::kInvalid;
  return out;
}

}  // namespace faultline::checkers

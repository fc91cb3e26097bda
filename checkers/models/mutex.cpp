// mutex: one lock per key, initially free. acquire succeeds only on a free
// lock, release only on a held one. Owners are not tracked: process ids
// change after a crash, so "who holds it" is not observable from the history.
#include <optional>
#include <string>

#include "checkers/models/models.h"

namespace faultline::checkers::models {
namespace {

class MutexModel : public Model {
 public:
  std::string_view name() const override { return "mutex"; }
  Value Init() const override { return Value::Bool(false); }

  StepResult Step(const Value& state, const Operation& op) const override {
    bool held = state.as_bool();
    if (op.f == "acquire" && !held) return {true, Value::Bool(true)};
    if (op.f == "release" && held) return {true, Value::Bool(false)};
    return {false, {}};
  }

  std::optional<std::string> Validate(const Operation& op) const override {
    if (op.f == "acquire" || op.f == "release") return std::nullopt;
    return "unknown operation '" + op.f + "' for model mutex";
  }

  bool ReadOnly(const Operation&) const override { return false; }

  std::string DescribeOp(const Operation& op) const override {
    return op.f + (op.completed ? "" : " (indeterminate)");
  }
  std::string DescribeState(const Value& state) const override {
    return state.as_bool() ? "held" : "free";
  }
  std::string WhyRejected(const Value& state,
                          const Operation& op) const override {
    if (op.f == "acquire") return "acquire succeeded but the lock was held";
    if (op.f == "release") return "release succeeded but the lock was free";
    return Model::WhyRejected(state, op);
  }
};

}  // namespace

std::unique_ptr<Model> MakeMutex() { return std::make_unique<MutexModel>(); }

}  // namespace faultline::checkers::models

// kv: string cells per key; a missing key reads "". get, put, append.
#include <optional>
#include <string>

#include "checkers/models/models.h"

namespace faultline::checkers::models {
namespace {

class KvModel : public Model {
 public:
  std::string_view name() const override { return "kv"; }
  Value Init() const override { return Value::String(""); }

  StepResult Step(const Value& state, const Operation& op) const override {
    if (op.f == "get") {
      if (!op.completed || op.output == state) return {true, state};
      return {false, {}};
    }
    if (op.f == "put" && op.input.is_string()) return {true, op.input};
    if (op.f == "append" && op.input.is_string()) {
      return {true, Value::String(state.as_string() + op.input.as_string())};
    }
    return {false, {}};
  }

  std::optional<std::string> Validate(const Operation& op) const override {
    if (op.f == "get") {
      if (!op.completed || op.output.is_string()) return std::nullopt;
      return "get must return a string, got " + op.output.ToJson();
    }
    if (op.f == "put" || op.f == "append") {
      if (op.input.is_string()) return std::nullopt;
      return op.f + " value must be a string, got " + op.input.ToJson();
    }
    return "unknown operation '" + op.f + "' for model kv";
  }

  bool ReadOnly(const Operation& op) const override { return op.f == "get"; }

  std::string DescribeState(const Value& state) const override {
    return "cell " + state.ToJson();
  }

  std::string WhyRejected(const Value& state,
                          const Operation& op) const override {
    if (op.f == "get") {
      return "get returned " + op.output.ToJson() + " but the cell held " +
             state.ToJson();
    }
    return Model::WhyRejected(state, op);
  }
};

}  // namespace

std::unique_ptr<Model> MakeKv() { return std::make_unique<KvModel>(); }

}  // namespace faultline::checkers::models

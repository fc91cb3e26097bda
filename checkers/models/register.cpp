// register and cas-register: one value per key, initially null.
#include <optional>
#include <string>

#include "checkers/models/models.h"

namespace faultline::checkers::models {
namespace {

bool IsCasArg(const Value& v) { return v.is_list() && v.as_list().size() == 2; }

class RegisterModel : public Model {
 public:
  explicit RegisterModel(bool with_cas) : with_cas_(with_cas) {}

  std::string_view name() const override {
    return with_cas_ ? "cas-register" : "register";
  }
  Value Init() const override { return Value::Null(); }

  StepResult Step(const Value& state, const Operation& op) const override {
    if (op.f == "read") {
      if (!op.completed || op.output == state) return {true, state};
      return {false, {}};
    }
    if (op.f == "write") return {true, op.input};
    if (op.f == "cas" && with_cas_ && IsCasArg(op.input)) {
      const auto& arg = op.input.as_list();
      if (state == arg[0]) return {true, arg[1]};
      return {false, {}};
    }
    return {false, {}};
  }

  std::optional<std::string> Validate(const Operation& op) const override {
    if (op.f == "read" || op.f == "write") return std::nullopt;
    if (op.f == "cas" && with_cas_) {
      if (IsCasArg(op.input)) return std::nullopt;
      return "cas value must be [expected, new], got " + op.input.ToJson();
    }
    return "unknown operation '" + op.f + "' for model " + std::string(name());
  }

  bool ReadOnly(const Operation& op) const override { return op.f == "read"; }

  std::string DescribeOp(const Operation& op) const override {
    std::string done = op.completed ? "" : " (indeterminate)";
    if (op.f == "read") {
      return op.completed ? "read -> " + op.output.ToJson()
                          : "read -> ?" + done;
    }
    if (op.f == "write") return "write " + op.input.ToJson() + done;
    if (op.f == "cas" && IsCasArg(op.input)) {
      return "cas " + op.input.as_list()[0].ToJson() + " -> " +
             op.input.as_list()[1].ToJson() + done;
    }
    return Model::DescribeOp(op);
  }

  std::string WhyRejected(const Value& state,
                          const Operation& op) const override {
    if (op.f == "read") {
      return "read returned " + op.output.ToJson() + " but the register held " +
             state.ToJson();
    }
    if (op.f == "cas" && IsCasArg(op.input)) {
      return "cas expected " + op.input.as_list()[0].ToJson() +
             " but the register held " + state.ToJson();
    }
    return Model::WhyRejected(state, op);
  }

  std::optional<ValueFlow> Flow(const Operation& op) const override {
    ValueFlow flow;
    if (op.f == "read") {
      flow.kind = ValueFlow::Kind::kRead;
      if (op.completed) flow.observes = op.output;
      return flow;
    }
    if (op.f == "write") {
      flow.kind = ValueFlow::Kind::kWrite;
      flow.produces = op.input;
      return flow;
    }
    if (op.f == "cas" && IsCasArg(op.input)) {
      flow.kind = ValueFlow::Kind::kCas;
      flow.observes = op.input.as_list()[0];
      flow.produces = op.input.as_list()[1];
      return flow;
    }
    return std::nullopt;
  }

 private:
  bool with_cas_;
};

}  // namespace

std::unique_ptr<Model> MakeRegister(bool with_cas) {
  return std::make_unique<RegisterModel>(with_cas);
}

}  // namespace faultline::checkers::models

// Model registry and the default describe helpers of the Model interface.
#include <algorithm>

#include "checkers/model.h"
#include "checkers/models/models.h"

namespace faultline::checkers {

std::string Model::DescribeOp(const Operation& op) const {
  std::string out = op.f + "(" + op.input.ToJson() + ")";
  if (op.completed) {
    out += " -> " + op.output.ToJson();
  } else {
    out += " -> ?";
  }
  return out;
}

std::string Model::DescribeState(const Value& state) const {
  return state.ToJson();
}

std::string Model::WhyRejected(const Value& state, const Operation& op) const {
  return DescribeOp(op) + " is not possible in state " + DescribeState(state);
}

std::unique_ptr<Model> MakeModel(std::string_view name) {
  if (name == "register") return models::MakeRegister(false);
  if (name == "cas-register") return models::MakeRegister(true);
  if (name == "kv") return models::MakeKv();
  if (name == "mutex") return models::MakeMutex();
  return nullptr;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names = {"cas-register", "kv", "mutex", "register"};
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace faultline::checkers

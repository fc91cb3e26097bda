#include "harness/run/fault_group.h"

#include <utility>

namespace faultline::harness {

std::optional<std::vector<std::string>> NodesActedOn(
    const checkers::Value& started) {
  if (!started.is_object()) return std::nullopt;
  const checkers::Value* nodes = started.Find("nodes");
  if (nodes == nullptr || !nodes->is_list() || nodes->as_list().empty())
    return std::nullopt;
  std::vector<std::string> out;
  for (const checkers::Value& v : nodes->as_list()) {
    if (!v.is_string()) return std::nullopt;
    out.push_back(v.as_string());
  }
  return out;
}

Result<FaultStep> BindSame(FaultStep step,
                           const checkers::Value* first_started) {
  if (first_started == nullptr)
    return Fail(
        "the group's first fault did not start, so `same` names no nodes");
  auto nodes = NodesActedOn(*first_started);
  if (!nodes)
    return Fail("the group's first fault names no nodes (" +
                first_started->ToJson() + "), so `same` has none to act on");
  step.nodes = std::move(*nodes);
  return step;
}

}  // namespace faultline::harness

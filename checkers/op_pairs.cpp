#include "checkers/op_pairs.h"

#include <unordered_map>

namespace faultline::checkers {

bool OrderedByTime(const History& h) {
  std::int64_t last = 0;
  for (const Event& e : h) {
    if (e.is_nemesis()) continue;
    if (!e.time || *e.time < last) return false;
    last = *e.time;
  }
  return true;
}

std::vector<PairedOp> PairOps(const History& h, bool timed) {
  std::vector<PairedOp> ops;
  std::unordered_map<std::int64_t, std::size_t> open;  // process -> op
  for (std::size_t i = 0; i < h.size(); ++i) {
    const Event& e = h[i];
    if (e.is_nemesis()) continue;
    if (e.is_invoke()) {
      PairedOp op;
      op.inv = i;
      op.t_inv = op.t_done = TimeOf(e, timed);
      open[e.process] = ops.size();
      ops.push_back(op);
      continue;
    }
    auto it = open.find(e.process);
    if (it == open.end()) continue;  // excluded by well-formedness
    PairedOp& op = ops[it->second];
    op.done = static_cast<std::ptrdiff_t>(i);
    op.outcome = e.type;
    op.t_done = TimeOf(e, timed);
    open.erase(it);
  }
  return ops;
}

}  // namespace faultline::checkers

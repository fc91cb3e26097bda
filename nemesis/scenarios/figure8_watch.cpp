#include <thread>

#include "nemesis/scenarios/figure8.h"

namespace faultline::nemesis {

bool HasBacklog(const harness::NodeStatus& s, long long term,
                long long entries) {
  return s.reachable && s.role == "leader" && s.term == term && s.commit >= 0 &&
         s.last_index >= s.commit + entries;
}

bool ReachedConflict(const harness::NodeStatus& s, long long after_term,
                     long long index) {
  return s.reachable && s.role == "leader" && s.term > after_term &&
         index >= 0 && s.commit >= index;
}

Poll PollUntil(
    const std::vector<int>& nodes,
    const std::function<harness::NodeStatus(int)>& inspect,
    const std::function<bool(int, const harness::NodeStatus&)>& done,
    std::chrono::milliseconds limit, std::chrono::microseconds gap,
    const std::function<std::chrono::steady_clock::time_point()>& now) {
  Poll out;
  if (nodes.empty()) return out;
  const auto deadline = now() + limit;
  for (std::size_t k = 0;; k = (k + 1) % nodes.size()) {
    harness::NodeStatus st = inspect(nodes[k]);
    ++out.polls;
    if (done(nodes[k], st)) {
      out.node = nodes[k];
      out.status = st;
      return out;
    }
    if (now() >= deadline) return out;
    if (gap.count() > 0 && k + 1 == nodes.size())
      std::this_thread::sleep_for(gap);
  }
}

}  // namespace faultline::nemesis

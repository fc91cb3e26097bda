#include "nemesis/scenarios/vote_watch.h"

namespace faultline::nemesis {

bool LooksLikeFreshVoter(const harness::NodeStatus& status,
                         long long base_term) {
  return status.reachable && base_term >= 0 && status.term > base_term &&
         status.role == "follower" && status.leader.empty();
}

VoterWatch WatchForVoter(
    const std::vector<int>& nodes, long long base_term,
    const std::function<harness::NodeStatus(int)>& inspect,
    std::chrono::milliseconds limit,
    const std::function<std::chrono::steady_clock::time_point()>& now) {
  VoterWatch out;
  if (nodes.empty()) return out;
  const auto deadline = now() + limit;
  for (std::size_t k = 0;; k = (k + 1) % nodes.size()) {
    harness::NodeStatus st = inspect(nodes[k]);
    ++out.polls;
    if (LooksLikeFreshVoter(st, base_term)) {
      out.voter = nodes[k];
      out.term = st.term;
      return out;
    }
    if (now() >= deadline) return out;
  }
}

std::optional<int> WatchForLeader(
    const std::vector<int>& nodes, long long term,
    const std::function<harness::NodeStatus(int)>& inspect,
    std::chrono::milliseconds limit,
    const std::function<std::chrono::steady_clock::time_point()>& now) {
  if (nodes.empty()) return std::nullopt;
  const auto deadline = now() + limit;
  for (std::size_t k = 0;; k = (k + 1) % nodes.size()) {
    harness::NodeStatus st = inspect(nodes[k]);
    if (st.reachable && st.role == "leader" && st.term >= term) return nodes[k];
    if (now() >= deadline) return std::nullopt;
  }
}

}  // namespace faultline::nemesis

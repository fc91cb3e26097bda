// The "kill-voter" fault's watch: after the leader is killed, spot the
// first node that answers a candidate of the election that follows, so the
// nemesis can kill it before the new leader's first entry reaches it
// (docs/faults.md "kill-voter"). Target-agnostic: it reads only the role,
// term and leader a node reports about itself (Target::Inspect).
//
// A node "looks like a fresh voter" when it reports a term newer than the
// term of the leader that was killed, the role follower and no known
// leader: it has moved to the new term because a candidate asked for its
// vote (granted or refused) and has not heard from a leader of that term
// yet. A candidate or a node that already names a leader does not qualify.
//
// Thread-safety: pure functions, except WatchForVoter, which calls
// `inspect` from the calling thread only.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "harness/interfaces/target.h"

namespace faultline::nemesis {

bool LooksLikeFreshVoter(const harness::NodeStatus& status,
                         long long base_term);

struct VoterWatch {
  std::optional<int> voter;  // the node index found, if any
  long long term = -1;       // the term it reported
  int polls = 0;             // Inspect calls made
};

// Polls `nodes` round-robin with `inspect` (no sleeping: the window between
// a vote and the winner's first entry is a few milliseconds) until one
// looks like a fresh voter or `limit` has passed (then `voter` is empty).
// `now` is injectable for tests.
VoterWatch WatchForVoter(
    const std::vector<int>& nodes, long long base_term,
    const std::function<harness::NodeStatus(int)>& inspect,
    std::chrono::milliseconds limit,
    const std::function<std::chrono::steady_clock::time_point()>& now = [] {
      return std::chrono::steady_clock::now();
    });

// Polls `nodes` like WatchForVoter until one reports role leader in a
// term >= `term` (the candidate the voter granted has won), or `limit`
// passes (then nullopt). The kill-voter fault kills the voter only then:
// a node that reports the new term may not have sent its grant yet.
std::optional<int> WatchForLeader(
    const std::vector<int>& nodes, long long term,
    const std::function<harness::NodeStatus(int)>& inspect,
    std::chrono::milliseconds limit,
    const std::function<std::chrono::steady_clock::time_point()>& now = [] {
      return std::chrono::steady_clock::now();
    });

}  // namespace faultline::nemesis

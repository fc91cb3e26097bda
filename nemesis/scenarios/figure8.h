// The "figure8" fault's watches: the pure decisions of a fault that steers
// a 3-node Raft cluster through the scenario of the Raft paper's figure 8
// (docs/faults.md "figure8"), so that a leader that commits entries of an
// earlier term by counting replicas is caught losing a committed write.
// Target-agnostic: it reads only what a node reports about itself
// (Target::Inspect: role, term, leader, commit, last log index).
//
// The steps, for leader A of term t and the other nodes B and C:
//   1. backlog: A, cut off from B and C, holds at least three entries of
//      term t that it cannot commit (HasBacklog);
//   2. lonely leader: B and C elect one of them, X, whose first entries of
//      the new term must reach nobody: the moment the other, Y, is seen
//      having voted (vote_watch.h), X is paused and Y's input from X is
//      cut; X then wins with Y's grant, alone;
//   3. return: A and Y are joined again; A wins a later term (its log is
//      longer) and replicates its old entries to Y one append at a time;
//      once A reports a commit index that reaches an index where X holds a
//      different entry (ReachedConflict), A is paused and cut off again
//      before its own new-term entry can reach Y;
//   4. handover: X and Y are joined; with A's new-term entry on A alone, X
//      (last term newer than Y's) can win and overwrite what A committed.
// With the safe rule A's commit index moves only when its new-term entry
// is on Y, so step 4 finds Y ahead of X and nothing is lost.
//
// Thread-safety: pure functions, except PollUntil, which calls `inspect`
// from the calling thread only.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "harness/interfaces/target.h"

namespace faultline::nemesis {

// A leader of `term` whose log holds at least `entries` entries past its
// commit index.
bool HasBacklog(const harness::NodeStatus& s, long long term,
                long long entries);

// A node that leads a term newer than `after_term` and reports a commit
// index of at least `index`.
bool ReachedConflict(const harness::NodeStatus& s, long long after_term,
                     long long index);

struct Poll {
  std::optional<int> node;     // the first node for which `done` held
  harness::NodeStatus status;  // what it reported then
  int polls = 0;               // inspect calls made
};

// Inspects `nodes` round-robin until `done(node, status)` holds or `limit`
// has passed (then `node` is empty). Between rounds it sleeps `gap`
// (zero: none). `now` and `sleep` are injectable for tests.
Poll PollUntil(
    const std::vector<int>& nodes,
    const std::function<harness::NodeStatus(int)>& inspect,
    const std::function<bool(int, const harness::NodeStatus&)>& done,
    std::chrono::milliseconds limit, std::chrono::microseconds gap,
    const std::function<std::chrono::steady_clock::time_point()>& now = [] {
      return std::chrono::steady_clock::now();
    });

}  // namespace faultline::nemesis

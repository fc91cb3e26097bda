// A tiny deterministic harness for the core's unit tests: N Nodes on one
// shared clock, a message queue delivered in FIFO order between nodes that
// are "up" and not cut off, an in-memory persisted state per node (so a node
// can be restarted from what it persisted), and a trivial state machine (the
// list of applied command strings). Tests only; the full simulator with
// fault injection and invariant checks lives in raft/sim/.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "targets/raftkv/raft/raft.h"

namespace faultline::raftkv::raft::testing {

struct Persisted {
  HardState hs;
  std::optional<Snapshot> snap;
  std::vector<Entry> entries;  // after snap
};

struct TestNode {
  std::unique_ptr<Node> node;
  Persisted disk;
  std::vector<std::pair<Index, std::string>> applied;  // (index, data)
  std::vector<ReadState> reads;
  std::vector<std::uint64_t> failed_reads;
  int snapshots_applied = 0;
  Index applied_index = 0;
};

inline std::string JoinState(
    const std::vector<std::pair<Index, std::string>>& a) {
  std::string s;
  for (const auto& [i, d] : a) s += std::to_string(i) + "=" + d + ";";
  return s;
}

class Pump {
 public:
  Pump(int n, std::function<void(Config&)> tweak = nullptr) : tweak_(tweak) {
    for (int i = 1; i <= n; ++i) ids_.push_back(static_cast<NodeId>(i));
    for (NodeId id : ids_) Start(id);
  }

  Config MakeConfig(NodeId id) const {
    Config c;
    c.id = id;
    c.voters = ids_;
    c.seed = 42 + id;
    c.heartbeat_interval = 10;
    c.election_timeout = 100;
    c.follower_lease = 60;
    c.lease_guard = 1;
    if (tweak_) tweak_(c);
    return c;
  }

  void Start(NodeId id) {
    TestNode& t = nodes_[id];
    t.node = std::make_unique<Node>(MakeConfig(id), now);
    t.node->Restore(t.disk.hs, t.disk.snap, t.disk.entries);
    // The state machine restarts from the persisted snapshot.
    t.applied.clear();
    t.applied_index = 0;
    if (t.disk.snap) {
      t.applied = Decode(t.disk.snap->data);
      t.applied_index = t.disk.snap->meta.index;
    }
  }
  // Crash + restart from the persisted state.
  void Restart(NodeId id) {
    nodes_[id].node.reset();
    Start(id);
  }

  Node& N(NodeId id) { return *nodes_.at(id).node; }
  TestNode& T(NodeId id) { return nodes_.at(id); }

  // Cuts every link of `id` (both directions) or restores them.
  void Isolate(NodeId id) { isolated_.insert(id); }
  void Heal() {
    isolated_.clear();
    cut_.clear();
  }
  void Cut(NodeId a, NodeId b) {
    cut_.insert({a, b});
    cut_.insert({b, a});
  }
  bool Linked(NodeId a, NodeId b) const {
    return !isolated_.count(a) && !isolated_.count(b) && !cut_.count({a, b});
  }

  // Extra filter: return true to drop a message.
  std::function<bool(const Message&)> drop;
  // Extra hook: may rewrite a message before delivery.
  std::function<void(Message&)> mutate;
  // Every message handed out by any node, in order (for assertions).
  std::vector<Message> sent;

  // Processes the Ready of one node: persist, queue messages, apply.
  bool ProcessReady(NodeId id) {
    TestNode& t = nodes_.at(id);
    if (!t.node->HasReady()) return false;
    Ready rd = t.node->GetReady();
    if (rd.hard_state) t.disk.hs = *rd.hard_state;
    if (rd.snapshot) {
      t.disk.snap = rd.snapshot;
      std::erase_if(t.disk.entries, [&](const Entry& e) {
        return e.index <= rd.snapshot->meta.index;
      });
    }
    if (!rd.entries.empty()) {
      Index first = rd.entries.front().index;
      std::erase_if(t.disk.entries,
                    [&](const Entry& e) { return e.index >= first; });
      for (const Entry& e : rd.entries) t.disk.entries.push_back(e);
    }
    for (const Message& m : rd.messages) {
      sent.push_back(m);
      queue_.push_back(m);
    }
    if (rd.snapshot) {
      // The applier never goes back.
      if (rd.snapshot->meta.index <= t.applied_index) regressions++;
      t.applied = Decode(rd.snapshot->data);
      t.applied_index = rd.snapshot->meta.index;
      t.snapshots_applied++;
    }
    for (const Entry& e : rd.committed) {
      if (e.index != t.applied_index + 1) regressions++;
      t.applied_index = e.index;
      if (e.type == EntryType::kNormal) t.applied.push_back({e.index, e.data});
    }
    for (const ReadState& r : rd.read_states) t.reads.push_back(r);
    for (auto c : rd.failed_reads) t.failed_reads.push_back(c);
    t.node->Advance(rd);
    return true;
  }

  // Delivers one queued message; returns false if the queue is empty.
  bool DeliverOne() {
    if (queue_.empty()) return false;
    Message m = queue_.front();
    queue_.pop_front();
    if (!Linked(m.from, m.to) || (drop && drop(m)) || !nodes_.count(m.to) ||
        down_.count(m.to))
      return true;
    if (mutate) mutate(m);
    nodes_.at(m.to).node->Step(m, now);
    return true;
  }

  // Runs Ready processing and delivery until nothing is left to do.
  void Stabilize(int max_steps = 100000) {
    for (int i = 0; i < max_steps; ++i) {
      bool any = false;
      for (NodeId id : ids_) {
        if (!down_.count(id)) any |= ProcessReady(id);
      }
      any |= DeliverOne();
      if (!any) return;
    }
  }

  // Advances the clock by dt in steps of `step`, ticking the given nodes
  // (all up nodes if empty) and stabilizing after each step.
  void Run(Nanos dt, Nanos step = 5, std::vector<NodeId> only = {}) {
    for (Nanos t = 0; t < dt; t += step) {
      now += step;
      for (NodeId id : ids_) {
        if (down_.count(id)) continue;
        if (!only.empty() &&
            std::find(only.begin(), only.end(), id) == only.end())
          continue;
        nodes_.at(id).node->Tick(now);
      }
      Stabilize();
    }
  }

  void Down(NodeId id) { down_.insert(id); }
  void Up(NodeId id) { down_.erase(id); }
  void DropQueue() { queue_.clear(); }
  std::size_t Queued() const { return queue_.size(); }

  // Runs until exactly one node leads, or gives up; returns it (0 if none).
  NodeId WaitLeader(Nanos limit = 5000) {
    for (Nanos t = 0; t < limit; t += 5) {
      NodeId l = Leader();
      if (l != kNone) return l;
      Run(5);
    }
    return Leader();
  }

  // The unique leader of the highest term among up nodes, 0 if none.
  NodeId Leader() {
    NodeId best = kNone;
    Term bt = 0;
    for (NodeId id : ids_) {
      if (down_.count(id)) continue;
      Status s = N(id).GetStatus(now);
      if (s.role == Role::kLeader && s.term >= bt) {
        best = id;
        bt = s.term;
      }
    }
    return best;
  }

  // Makes `id` campaign: its clock-driven timer fires while the others are
  // not ticked (they cannot compete); others must be out of their leader
  // lease, so time jumps by 3 election timeouts first.
  bool Elect(NodeId id, int attempts = 10) {
    for (int a = 0; a < attempts; ++a) {
      now += 3 * MakeConfig(id).election_timeout;
      N(id).Tick(now);
      Stabilize();
      if (N(id).GetStatus(now).role == Role::kLeader) return true;
    }
    return false;
  }

  int regressions = 0;
  Nanos now = 0;
  const std::vector<NodeId>& ids() const { return ids_; }

  static std::string Encode(
      const std::vector<std::pair<Index, std::string>>& a) {
    std::string s;
    for (const auto& [i, d] : a) {
      s += std::to_string(i) + ":" + std::to_string(d.size()) + ":" + d;
    }
    return s;
  }
  static std::vector<std::pair<Index, std::string>> Decode(
      const std::string& s) {
    std::vector<std::pair<Index, std::string>> out;
    std::size_t p = 0;
    while (p < s.size()) {
      std::size_t c1 = s.find(':', p);
      std::size_t c2 = s.find(':', c1 + 1);
      Index i = std::stoull(s.substr(p, c1 - p));
      std::size_t n = std::stoull(s.substr(c1 + 1, c2 - c1 - 1));
      out.push_back({i, s.substr(c2 + 1, n)});
      p = c2 + 1 + n;
    }
    return out;
  }

 private:
  std::function<void(Config&)> tweak_;
  std::vector<NodeId> ids_;
  std::map<NodeId, TestNode> nodes_;
  std::deque<Message> queue_;
  std::set<NodeId> isolated_;
  std::set<std::pair<NodeId, NodeId>> cut_;
  std::set<NodeId> down_;
};

}  // namespace faultline::raftkv::raft::testing

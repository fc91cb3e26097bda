#include "targets/raftkv/raft/sim/sim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

#include "targets/raftkv/raft/sim/cluster.h"
#include "targets/raftkv/raft/sim/rng.h"

namespace faultline::raftkv::raft::sim {
namespace {

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

Nanos NextAfter(Rng& rng, Nanos now, double per_sec) {
  if (per_sec <= 0) return kNever;
  const double mean = 1e9 / per_sec;
  // Uniform in [0, 2*mean]: cheap, deterministic, the right mean.
  return now + 1 + static_cast<Nanos>(rng.Unit() * 2 * mean);
}

ClusterOptions ToCluster(const RunOptions& o) {
  ClusterOptions c;
  c.nodes = o.nodes;
  c.net = o.net;
  c.snapshot_every = o.snapshot_every;
  Config& b = c.base;
  b.heartbeat_interval = o.heartbeat;
  b.election_timeout = o.election;
  b.follower_lease = o.follower_lease;
  b.lease_guard = o.lease_guard;
  b.drift_epsilon = o.drift_epsilon;
  b.pre_vote = o.pre_vote;
  b.check_quorum = o.check_quorum;
  b.max_append_entries = o.max_append_entries;
  b.snapshot_chunk_bytes = o.snapshot_chunk_bytes;
  b.read_mode = o.read_mode;
  b.unsafe = o.unsafe;
  return c;
}

class Runner {
 public:
  Runner(std::uint64_t seed, const RunOptions& o)
      : seed_(seed), o_(o), rng_(seed), c_(seed, ToCluster(o)) {}

  RunResult Run();

 private:
  NodeId Pick() { return c_.ids()[rng_.Below(c_.ids().size())]; }
  NodeId PickUp();
  void Fault();
  void Partition();
  void Client();
  void IsolateLeaders();

  std::uint64_t seed_;
  RunOptions o_;
  Rng rng_;
  Cluster c_;
  std::map<NodeId, Nanos> next_tick_;
  std::map<NodeId, Nanos> restart_at_;
  std::map<NodeId, Index> last_commit_;
  std::map<NodeId, Term> led_term_;
  Nanos heal_at_ = kNever;
  std::uint64_t value_seq_ = 0;
  RunResult res_;
};

NodeId Runner::PickUp() {
  std::vector<NodeId> up;
  for (NodeId n : c_.ids()) {
    if (c_.Up(n)) up.push_back(n);
  }
  if (up.empty()) return kNone;
  return up[rng_.Below(up.size())];
}

void Runner::Partition() {
  const std::vector<NodeId>& all = c_.ids();
  switch (rng_.Below(3)) {
    case 0: {  // isolate one node (often the leader)
      NodeId n = c_.Leader();
      if (n == kNone || rng_.Chance(0.4)) n = Pick();
      c_.net().Isolate(n, all);
      c_.Trace("isolate n" + std::to_string(n));
      break;
    }
    case 1: {  // random split into two groups
      std::vector<std::vector<NodeId>> g(2);
      for (NodeId n : all) g[rng_.Below(2)].push_back(n);
      c_.net().Partition(g, all);
      c_.Trace("partition");
      break;
    }
    default: {  // one-way cut(s)
      const int cuts = 1 + static_cast<int>(rng_.Below(all.size()));
      for (int i = 0; i < cuts; ++i) {
        NodeId a = Pick(), b = Pick();
        if (a != b) c_.net().Cut(a, b);
      }
      break;
    }
  }
  heal_at_ = c_.clock().Real() + rng_.Range(20'000'000, o_.max_partition);
}

void Runner::Fault() {
  const Nanos now = c_.clock().Real();
  if (heal_at_ <= now) {
    c_.net().Heal();
    c_.Trace("heal");
    heal_at_ = kNever;
  }
  for (auto it = restart_at_.begin(); it != restart_at_.end();) {
    if (it->second <= now) {
      c_.Restart(it->first);
      it = restart_at_.erase(it);
    } else {
      ++it;
    }
  }
}

void Runner::IsolateLeaders() {
  for (NodeId n : c_.ids()) {
    if (!c_.Up(n)) continue;
    const Status st = c_.StatusOf(n);
    Index& last = last_commit_[n];
    const bool advanced = st.commit > last;
    last = st.commit;
    if (st.role != Role::kLeader) continue;
    const bool elected = led_term_[n] != st.term;
    led_term_[n] = st.term;
    if (heal_at_ != kNever) continue;
    const double p = elected    ? o_.isolate_new_leader
                     : advanced ? o_.isolate_on_commit
                                : 0.0;
    if (p <= 0 || !rng_.Chance(p)) continue;
    c_.net().Isolate(n, c_.ids());
    c_.Trace("isolate leader n" + std::to_string(n) + " term " +
             std::to_string(st.term) + " commit " + std::to_string(st.commit));
    heal_at_ = c_.clock().Real() + rng_.Range(20'000'000, o_.max_partition);
  }
}

void Runner::Client() {
  const std::string key =
      "k" + std::to_string(rng_.Below(static_cast<std::uint64_t>(o_.keys)));
  const double total = o_.proposes_per_sec + o_.reads_per_sec;
  if (rng_.Unit() * total < o_.proposes_per_sec) {
    NodeId n = c_.Leader();
    if (n == kNone || !rng_.Chance(o_.leader_bias)) n = Pick();
    if (!c_.Up(n)) return;
    const std::string value = "v" + std::to_string(++value_seq_);
    if (c_.Propose(n, key, value).ok) ++res_.proposals_accepted;
  } else {
    NodeId n = c_.Leader();
    if (n == kNone || !rng_.Chance(o_.read_at_leader)) n = Pick();
    if (!c_.Up(n)) return;
    c_.Read(n, key, /*try_local=*/true);
  }
}

RunResult Runner::Run() {
  // Clock rates within (or, for skew > 1, beyond) the drift bound.
  const double bound = 1 + o_.skew * o_.drift_epsilon;
  for (NodeId n : c_.ids()) {
    const double u = rng_.Unit() * 2 - 1;
    c_.clock().SetRate(n, std::pow(bound, u));
    next_tick_[n] = rng_.Range(0, o_.tick - 1);
  }
  if (o_.trace) {
    c_.trace = [](const std::string& l) {
      std::fprintf(stderr, "%s\n", l.c_str());
    };
  }
  c_.crash_hook = [this](NodeId n, ReadyPhase p, const Ready& rd) {
    bool crash = o_.ready_crash > 0 && rng_.Chance(o_.ready_crash);
    if (!crash && p == ReadyPhase::kAfterSend && o_.crash_after_vote > 0) {
      for (const Message& m : rd.messages) {
        if (m.type == MsgType::kVoteResp && !m.reject) {
          crash = rng_.Chance(o_.crash_after_vote);
          break;
        }
      }
    }
    if (!crash) return false;
    ++res_.crashes;
    restart_at_[n] = rng_.Chance(o_.quick_restart)
                         ? c_.clock().Real()
                         : c_.clock().Real() + rng_.Range(0, o_.max_down);
    return true;
  };
  Nanos next_client =
      NextAfter(rng_, 0, o_.proposes_per_sec + o_.reads_per_sec);
  Nanos next_crash = NextAfter(rng_, 0, o_.crashes_per_sec);
  Nanos next_partition = NextAfter(rng_, 0, o_.partitions_per_sec);
  Nanos next_transfer = NextAfter(rng_, 0, o_.transfers_per_sec);

  while (c_.checker().ok()) {
    Nanos t = std::min(
        {next_client, next_crash, next_partition, next_transfer, heal_at_});
    for (const auto& [n, at] : next_tick_) t = std::min(t, at);
    for (const auto& [n, at] : restart_at_) t = std::min(t, at);
    if (auto d = c_.net().NextDue()) t = std::min(t, *d);
    if (t > o_.duration) break;
    c_.clock().AdvanceTo(std::max(t, c_.clock().Real()));
    const Nanos now = c_.clock().Real();

    Fault();
    c_.DeliverDue();
    for (auto& [n, at] : next_tick_) {
      if (at > now) continue;
      c_.TickNode(n);
      at += o_.tick;
    }
    if (next_crash <= now) {
      const NodeId n = PickUp();
      if (n != kNone) {
        c_.Crash(n);
        ++res_.crashes;
        restart_at_[n] = rng_.Chance(o_.quick_restart)
                             ? now
                             : now + rng_.Range(0, o_.max_down);
      }
      next_crash = NextAfter(rng_, now, o_.crashes_per_sec);
    }
    if (next_partition <= now) {
      if (heal_at_ == kNever) Partition();
      next_partition = NextAfter(rng_, now, o_.partitions_per_sec);
    }
    if (next_transfer <= now) {
      const NodeId l = c_.Leader();
      const NodeId to = Pick();
      if (l != kNone && to != l) {
        c_.Trace("transfer n" + std::to_string(l) + " -> n" +
                 std::to_string(to));
        c_.TransferLeadership(l, to);
      }
      next_transfer = NextAfter(rng_, now, o_.transfers_per_sec);
    }
    if (next_client <= now) {
      Client();
      next_client =
          NextAfter(rng_, now, o_.proposes_per_sec + o_.reads_per_sec);
    }
    c_.Observe();
    if (o_.isolate_on_commit > 0 || o_.isolate_new_leader > 0) {
      IsolateLeaders();
    }
  }
  res_.ok = c_.checker().ok();
  res_.finding = c_.checker().finding();
  res_.steps = c_.steps();
  res_.terms_with_leader = c_.checker().Leaders();
  res_.commit = c_.checker().GlobalCommit();
  res_.reads_checked = c_.checker().ReadsChecked();
  for (const ServedRead& r : c_.served()) res_.local_reads += r.local ? 1 : 0;
  return res_;
}

}  // namespace

RunResult RunRandom(std::uint64_t seed, const RunOptions& opt) {
  Runner r(seed, opt);
  return r.Run();
}

std::string Describe(const RunResult& r) {
  if (r.finding) return r.finding->what;
  std::ostringstream o;
  o << "ok (steps " << r.steps << ", terms with a leader "
    << r.terms_with_leader << ", commit " << r.commit << ", reads checked "
    << r.reads_checked << " (local " << r.local_reads << "), proposals "
    << r.proposals_accepted << ", crashes " << r.crashes << ")";
  return o.str();
}

}  // namespace faultline::raftkv::raft::sim

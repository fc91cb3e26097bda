#include "nemesis/netns_nemesis.h"

#include <algorithm>
#include <random>

#include "harness/process/process.h"
#include "harness/run/fault_group.h"
#include "nemesis/clock/strobe.h"
#include "nemesis/clock/sysclock.h"
#include "nemesis/disk/disk_fault.h"
#include "nemesis/net/delay.h"
#include "nemesis/net/iptables_chain.h"
#include "nemesis/net/partition.h"
#include "nemesis/node_exec.h"
#include "nemesis/scenarios/vote_watch.h"

namespace faultline::nemesis {

checkers::Value NodeNames(const std::vector<harness::Node>& nodes,
                          const std::vector<int>& indices) {
  checkers::Value::List out;
  for (int i : indices)
    out.push_back(
        checkers::Value::String(nodes[static_cast<std::size_t>(i)].name));
  return checkers::Value::MakeList(std::move(out));
}

namespace {

using checkers::Value;
using harness::Fail;
using harness::Result;
using harness::Status;

// The NFQUEUE number the delay rules use in every node namespace (queues
// are per namespace, so one number serves all nodes).
constexpr int kDelayQueue = 7701;

}  // namespace

NetnsNemesis::NetnsNemesis(harness::Cluster& cluster, harness::Target& target,
                           harness::Ledger& ledger)
    : cluster_(cluster), target_(target), ledger_(ledger), netdelay_(ledger) {}

NetnsNemesis::~NetnsNemesis() = default;

std::optional<int> NetnsNemesis::FindLeader() {
  std::optional<int> best;
  long long best_term = -2;
  for (const auto& node : cluster_.nodes()) {
    harness::NodeStatus st = target_.Inspect(node);
    if (st.reachable && st.role == "leader" && st.term > best_term) {
      best = node.index;
      best_term = st.term;
    }
  }
  return best;
}

Result<Value> NetnsNemesis::Start(const harness::FaultStep& step) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cluster_.nodes().empty()) return Fail("nemesis: cluster has no nodes");
  if (Status can = CanStack(step.kind); !can.ok()) return Fail(can.error());
  if (active_) {  // stacks: Stop heals the new fault first
    held_.push_back(std::move(*active_));
    active_.reset();
  }
  same_nodes_ = step.nodes;  // for SelectNodes("same")
  auto started = StartKind(step);
  if (!active_ && !held_.empty()) {  // the new fault did not stay active
    active_ = std::move(held_.back());
    held_.pop_back();
  }
  return started;
}

// Faults active at the same time must not act on the same things: one
// fault per kind (a kind keeps one chain and one set of details), one of
// pause/kill per process, one of clock/strobe, and kill-voter (which uses
// delays and restarts of its own) only alone.
Status NetnsNemesis::CanStack(const std::string& kind) const {
  std::vector<std::string> kinds;
  for (const Active& a : held_) kinds.push_back(a.kind);
  if (active_) kinds.push_back(active_->kind);
  // power-loss and torn-write kill and restart like kill.
  auto process = [](const std::string& k) {
    return k == "pause" || k == "kill" || k == "kill-voter" ||
           disk::IsCrashDiskFault(k);
  };
  // kill-voter and figure8 (nemesis/scenarios/figure8.cpp) steer elections with
  // delays, cuts, kills or pauses of their own: only alone.
  auto alone = [](const std::string& k) {
    return k == "kill-voter" || k == "figure8";
  };
  // clock and strobe move the same faked clocks (nemesis/clock/clock.cpp).
  auto clocks = [](const std::string& k) {
    return k == "clock" || k == "strobe";
  };
  for (const std::string& k : kinds) {
    if (k == kind || (process(k) && process(kind)) ||
        (clocks(k) && clocks(kind)) || alone(k) || alone(kind))
      return Fail("nemesis: a " + k + " fault is still active, so " + kind +
                  " cannot start");
  }
  return harness::Ok();
}

Result<Value> NetnsNemesis::StartKind(const harness::FaultStep& step) {
  if (step.kind == "partition") return StartPartition(step);
  if (step.kind == "pause" || step.kind == "kill")
    return StartProcessFault(step);
  if (step.kind == "delay") return StartDelay(step);
  if (step.kind == "kill-voter") return StartKillVoter(step);
  if (step.kind == "figure8") return StartFigure8(step);  // figure8.cpp
  if (step.kind == "loss") return StartLoss(step);    // nemesis/net/loss.cpp
  if (step.kind == "clock") return StartClock(step);  // nemesis/clock/clock.cpp
  if (step.kind == "strobe")
    return StartStrobe(step);  // nemesis/clock/clock.cpp
  if (disk::IsDiskFault(step.kind))
    return StartDisk(step);  // nemesis/disk/disk_fault.cpp
  return Fail("nemesis: unknown fault kind '" + step.kind + "'");
}

Result<Value> NetnsNemesis::StartPartition(const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  const int n = static_cast<int>(nodes.size());
  for (const auto& node : nodes)
    if (!CanRunFaults(node))
      return Fail("nemesis: node " + node.name +
                  " has no network namespace or remote host");
  for (const auto& node : nodes)
    if (node.remote == nullptr)
      return Fail("nemesis: node " + node.name + " has no remote");
  if (step.partition_mode != "drop" && step.partition_mode != "reset")
    return Fail("nemesis: unknown partition mode '" + step.partition_mode +
                "'");
  const bool by_leader =
      step.selector == "leader" || step.selector == "one-way-leader";
  std::optional<int> leader;
  if (by_leader) leader = FindLeader();
  Result<Partition> partition = Fail("");
  if (step.selector == harness::kSameNodes) {
    // The group's first fault's nodes, cut off from the rest.
    bool unused = true;
    auto side = SelectNodes(step.selector, step.seed, &unused);
    if (!side.ok()) return Fail(side.error());
    partition = IsolateNodes(*side, n);
  } else {
    partition = ComputePartition(step.selector, n, step.seed, leader);
  }
  if (!partition.ok()) return Fail("nemesis: " + partition.error());

  Active active;
  active.kind = "partition";
  active_ = active;  // from here on, Stop/HealAll undo what was applied
  for (const auto& [who, dropped] : partition->grudge) {
    const harness::Node& node = nodes[static_cast<std::size_t>(who)];
    std::vector<std::string> sources;
    for (int peer : dropped) {
      const std::string& ip = nodes[static_cast<std::size_t>(peer)].ip;
      if (ip == cluster_.controller_ip()) continue;  // never cut the controller
      sources.push_back(ip);
    }
    harness::LedgerEntry entry;
    entry.kind = "iptables";
    entry.name = kPartitionChain;  // heal removes this chain and its jumps
    LocateEntry(node, &entry);
    entry.node = node.name;
    long seq = ledger_.Record(entry);
    if (seq < 0) {
      (void)StopLocked();
      return Fail("nemesis: cannot write the fault ledger " + ledger_.path());
    }
    active_->nodes.push_back(who);
    active_->seqs.push_back(seq);
    Status applied =
        ApplyChain(node, kPartitionChain,
                   PartitionRuleSpecs(sources, step.partition_mode));
    if (!applied.ok()) {
      (void)StopLocked();
      return Fail("nemesis: partition: " + applied.error());
    }
  }
  Value::List components;
  for (const auto& c : partition->components)
    components.push_back(NodeNames(nodes, c));
  Value::Object grudge;
  for (const auto& [who, dropped] : partition->grudge)
    grudge.emplace_back(nodes[static_cast<std::size_t>(who)].name,
                        NodeNames(nodes, {dropped.begin(), dropped.end()}));
  Value::Object out = {{"kind", Value::String("partition")},
                       {"shape", Value::String(step.selector)},
                       {"components", Value::MakeList(std::move(components))},
                       {"grudge", Value::MakeObject(std::move(grudge))}};
  // Which way traffic is cut, and how: "blocked" lists every directed flow
  // "sender->receiver" the rules stop (docs/faults.md).
  Value::List blocked;
  for (const auto& [from, to] : BlockedFlows(*partition))
    blocked.push_back(Value::String(nodes[static_cast<std::size_t>(from)].name +
                                    "->" +
                                    nodes[static_cast<std::size_t>(to)].name));
  out.emplace_back("direction",
                   Value::String(partition->one_way ? "one-way" : "both"));
  out.emplace_back("mode", Value::String(step.partition_mode));
  if (partition->one_way)
    out.emplace_back("blocked", Value::MakeList(std::move(blocked)));
  if (by_leader)
    out.emplace_back("leader_known", Value::Bool(leader.has_value()));
  return Value::MakeObject(std::move(out));
}

Result<std::vector<int>> NetnsNemesis::SelectNodes(const std::string& selector,
                                                   std::uint64_t seed,
                                                   bool* leader_known) {
  const int n = static_cast<int>(cluster_.nodes().size());
  if (selector == harness::kSameNodes) {
    if (same_nodes_.empty())
      return Fail("nemesis: selector 'same' without the nodes to act on");
    std::vector<int> chosen;
    for (const std::string& name : same_nodes_) {
      auto node =
          std::find_if(cluster_.nodes().begin(), cluster_.nodes().end(),
                       [&](const harness::Node& x) { return x.name == name; });
      if (node == cluster_.nodes().end())
        return Fail("nemesis: selector 'same' names node " + name +
                    ", which is not in the cluster");
      chosen.push_back(node->index);
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
  }
  std::mt19937_64 rng(SplitMix64(seed));
  std::vector<int> order = ShuffledNodes(n, rng);
  int count = 0;
  if (selector == "one") {
    count = 1;
  } else if (selector == "follower") {
    auto leader = FindLeader();
    *leader_known = leader.has_value();
    for (int i : order)
      if (!leader || i != *leader) return std::vector<int>{i};
    return Fail("nemesis: no node other than the leader");
  } else if (selector == "leader") {
    auto leader = FindLeader();
    *leader_known = leader.has_value();
    if (leader) return std::vector<int>{*leader};
    count = 1;  // nobody claims to lead: a random node, reported as such
  } else if (selector == "minority") {
    count = std::max(1, (n - 1) / 2);
  } else if (selector == "majority") {
    count = n / 2 + 1;
  } else if (selector == "all") {
    count = n;
  } else {
    return Fail("nemesis: unknown node selector '" + selector + "'");
  }
  std::vector<int> chosen(order.begin(), order.begin() + std::min(count, n));
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

Result<Value> NetnsNemesis::StartProcessFault(const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return Fail(chosen.error());
  active_ = Active{step.kind, {}, {}, {}, {}};
  for (int i : *chosen) {
    const harness::Node& node = nodes[static_cast<std::size_t>(i)];
    Status s = step.kind == "pause" ? target_.Pause(node) : target_.Kill(node);
    if (!s.ok()) {
      (void)StopLocked();
      return Fail("nemesis: " + step.kind + " " + node.name + ": " + s.error());
    }
    active_->nodes.push_back(i);
  }
  Value::Object out = {{"kind", Value::String(step.kind)},
                       {"selector", Value::String(step.selector)},
                       {"nodes", NodeNames(nodes, *chosen)}};
  if (step.selector == "leader")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

// kill-voter: holds peer traffic into the nodes that stay up by
// step.delay_ms (so a voter's grant and the winner's first entry are
// 2 x delay_ms apart instead of a fraction of a millisecond), kills the
// selected nodes (typically the leader), kills the first other node seen
// answering a candidate of a newer term (vote_watch.h), then lifts the
// delays. The killed nodes stay down until Stop restarts them, in kill
// order. Any failure restarts what was killed and lifts the delays.
Result<Value> NetnsNemesis::StartKillVoter(const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  if (nodes.size() < 3) return Fail("nemesis: kill-voter needs 3 nodes");
  for (const auto& node : nodes)
    if (!CanRunFaults(node))
      return Fail("nemesis: node " + node.name +
                  " has no network namespace or remote host");
  if (step.delay_ms < kMinDelayMs || step.delay_ms > kMaxDelayMs)
    return Fail("nemesis: delay_ms " + std::to_string(step.delay_ms) +
                " is outside " + std::to_string(kMinDelayMs) + ".." +
                std::to_string(kMaxDelayMs));
  if (NetdelayPath().empty())
    return Fail(
        "nemesis: kill-voter needs faultline-netdelay (built next to "
        "faultline; needs libnetfilter-queue-dev)");
  long long base_term = -1;
  for (const auto& node : nodes)
    base_term = std::max(base_term, target_.Inspect(node).term);
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return Fail(chosen.error());
  std::vector<int> rest;
  for (const auto& node : nodes)
    if (std::find(chosen->begin(), chosen->end(), node.index) == chosen->end())
      rest.push_back(node.index);

  std::vector<int> killed;
  // Undoes everything on failure: delays first, then restarts.
  auto undo = [&](const std::string& why) -> Result<Value> {
    if (active_) (void)StopLocked();
    std::string errors;
    for (int i : killed) {
      Status s = target_.Start(nodes[static_cast<std::size_t>(i)]);
      if (!s.ok()) errors += "; restart: " + s.error();
    }
    return Fail("nemesis: kill-voter: " + why + errors);
  };
  active_.emplace();
  active_->kind = "delay";
  for (int who : rest) {
    Status s = StartDelayOn(who, step);
    if (!s.ok())
      return undo("delay " + nodes[static_cast<std::size_t>(who)].name + ": " +
                  s.error());
  }
  auto kill_node = [&](int i) -> Status {
    Status s = target_.Kill(nodes[static_cast<std::size_t>(i)]);
    if (!s.ok())
      return Fail(nodes[static_cast<std::size_t>(i)].name + ": " + s.error());
    killed.push_back(i);
    return harness::Ok();
  };
  for (int i : *chosen)
    if (Status s = kill_node(i); !s.ok()) return undo(s.error());
  VoterWatch watch = WatchForVoter(
      rest, base_term,
      [&](int i) {
        return target_.Inspect(nodes[static_cast<std::size_t>(i)]);
      },
      kVoterWatchLimit);
  // Kill the voter once the candidate it granted is seen leading (its
  // grant has then surely left; the winner's first entry is still held by
  // the delay). No winner within the limit: the voter is left alone.
  std::optional<int> winner;
  if (watch.voter) {
    std::vector<int> others;
    for (int i : rest)
      if (i != *watch.voter) others.push_back(i);
    winner = WatchForLeader(
        others, watch.term,
        [&](int i) {
          return target_.Inspect(nodes[static_cast<std::size_t>(i)]);
        },
        kVoterWatchLimit);
  }
  if (winner)
    if (Status s = kill_node(*watch.voter); !s.ok()) return undo(s.error());
  auto lifted = StopLocked();  // the delays
  if (!lifted.ok()) return undo(lifted.error());
  active_.emplace();
  active_->kind = step.kind;
  active_->nodes = killed;
  Value::Object out = {
      {"kind", Value::String(step.kind)},
      {"selector", Value::String(step.selector)},
      {"nodes", NodeNames(nodes, *chosen)},
      {"term", Value::Int(base_term)},
      {"voter",
       watch.voter
           ? Value::String(nodes[static_cast<std::size_t>(*watch.voter)].name)
           : Value::Null()},
      {"voter_term", Value::Int(watch.term)},
      {"winner",
       winner ? Value::String(nodes[static_cast<std::size_t>(*winner)].name)
              : Value::Null()},
      {"voter_killed", Value::Bool(winner.has_value())},
      {"polls", Value::Int(watch.polls)},
      {"delay_ms", Value::Int(step.delay_ms)}};
  if (step.selector == "leader")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

Result<Value> NetnsNemesis::StartDelay(const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  if (step.delay_ms < kMinDelayMs || step.delay_ms > kMaxDelayMs)
    return Fail("nemesis: delay_ms " + std::to_string(step.delay_ms) +
                " is outside " + std::to_string(kMinDelayMs) + ".." +
                std::to_string(kMaxDelayMs));
  for (const auto& node : nodes)
    if (!CanRunFaults(node))
      return Fail("nemesis: node " + node.name +
                  " has no network namespace or remote host");
  if (NetdelayPath().empty())
    return Fail(
        "nemesis: faultline-netdelay not found (it is built next to "
        "faultline; needs libnetfilter-queue-dev)");
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return Fail(chosen.error());
  active_ = Active{"delay", {}, {}, {}, {}};
  for (int who : *chosen) {
    Status s = StartDelayOn(who, step);
    if (!s.ok()) {
      (void)StopLocked();
      return Fail("nemesis: delay " +
                  nodes[static_cast<std::size_t>(who)].name + ": " + s.error());
    }
  }
  Value::Object out = {{"kind", Value::String("delay")},
                       {"selector", Value::String(step.selector)},
                       {"nodes", NodeNames(nodes, *chosen)},
                       {"delay_ms", Value::Int(step.delay_ms)}};
  if (step.selector == "leader" || step.selector == "follower")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

// Starts the daemon on node `who` (in its namespace, or on its host or
// container), waits until it has bound the queue, then queues to it
// everything from the other nodes. Adds to active_ as it goes, so
// StopLocked undoes a half-done start.
Status NetnsNemesis::StartDelayOn(int who, const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  const harness::Node& node = nodes[static_cast<std::size_t>(who)];
  NetdelayNodes::Daemon daemon;
  Status started = netdelay_.Start(
      node,
      {"--queue", std::to_string(kDelayQueue), "--delay-ms",
       std::to_string(step.delay_ms), "--seed", std::to_string(step.seed)},
      kDelayQueue, &daemon);
  if (daemon.pid > 0) {
    active_->nodes.push_back(who);
    active_->seqs.push_back(-1);
    active_->pids.push_back(daemon.pid);
    active_->proc_seqs.push_back(daemon.proc_seq);
  }
  if (!started.ok()) return started;

  std::vector<std::string> sources;
  for (const auto& peer : nodes)
    if (peer.index != node.index && peer.ip != cluster_.controller_ip())
      sources.push_back(peer.ip);
  harness::LedgerEntry rules;
  rules.kind = "iptables";
  rules.name = kDelayChain;  // heal removes this chain and its jumps
  LocateEntry(node, &rules);
  rules.node = node.name;
  long seq = ledger_.Record(rules);
  if (seq < 0) return Fail("cannot write the fault ledger " + ledger_.path());
  active_->seqs.back() = seq;
  if (node.remote == nullptr)
    return Fail("node " + node.name + " has no remote");
  auto r = RunOnNode(node, "iptables-restore", {"-w", "--noflush"},
                     DelayRules(sources, kDelayQueue));
  if (!r.ok())
    return Fail("iptables-restore on " + NodeWhere(node) + ": " +
                harness::DescribeResult(r));
  return harness::Ok();
}

// Undoes the delay on active_ entry k: rules first (new packets then pass
// undelayed), then SIGTERM to the daemon, which accepts what it holds.
Status NetnsNemesis::StopDelayOn(std::size_t k) {
  Active& a = *active_;
  const harness::Node& node =
      cluster_.nodes()[static_cast<std::size_t>(a.nodes[k])];
  if (a.seqs[k] >= 0) {
    Status s = RemoveChain(node, kDelayChain);
    if (!s.ok()) return s;
    ledger_.MarkHealed(a.seqs[k]);
    a.seqs[k] = -1;
  }
  if (a.pids[k] > 0) {
    NetdelayNodes::Daemon d{a.pids[k], a.proc_seqs[k]};
    if (Status s = netdelay_.Stop(node, d); !s.ok()) return s;
    a.pids[k] = 0;
    a.proc_seqs[k] = -1;
  }
  return harness::Ok();
}

Result<Value> NetnsNemesis::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = StopLocked();
  if (r.ok() && !active_ && !held_.empty()) {  // the one started before
    active_ = std::move(held_.back());
    held_.pop_back();
  }
  return r;
}

Result<Value> NetnsNemesis::StopLocked() {
  if (!active_) return Value::MakeObject({{"kind", Value::String("none")}});
  const auto& nodes = cluster_.nodes();
  Active& a = *active_;
  std::vector<int> done, left;
  std::vector<long> left_seqs, left_proc_seqs;
  std::vector<pid_t> left_pids;
  std::string errors;
  for (std::size_t k = 0; k < a.nodes.size(); ++k) {
    const harness::Node& node = nodes[static_cast<std::size_t>(a.nodes[k])];
    Status s = harness::Ok();
    if (a.kind == "partition") {
      // What its rules stopped, read before they go (Stop's "dropped").
      if (auto d = ReadChainDropped(node, kPartitionChain); d.ok())
        details_.emplace_back(node.name,
                              Value::Int(static_cast<std::int64_t>(*d)));
      s = RemoveChain(node, kPartitionChain);
      if (s.ok()) ledger_.MarkHealed(a.seqs[k]);
    } else if (a.kind == "delay") {
      s = StopDelayOn(k);
    } else if (a.kind == "figure8") {
      // Its cuts first (its own chain), then the delay and the ledger mark.
      s = RemoveChain(node, kFigure8Chain);
      if (s.ok()) s = StopDelayOn(k);
    } else if (a.kind == "loss") {
      s = StopLossOn(k);
    } else if (a.kind == "clock" || a.kind == "strobe") {
      s = StopClockOn(k);
    } else if (disk::IsDiskFault(a.kind)) {
      s = StopDiskOn(k);
    } else if (a.kind == "pause") {
      s = target_.Resume(node);
    } else {
      s = target_.Start(node);
    }
    if (s.ok()) {
      done.push_back(a.nodes[k]);
    } else {
      left.push_back(a.nodes[k]);
      if (a.kind == "partition" || a.kind == "delay" || a.kind == "loss" ||
          a.kind == "figure8" || disk::IsDiskFault(a.kind))
        left_seqs.push_back(a.seqs[k]);
      if (a.kind == "delay" || a.kind == "figure8") {
        left_pids.push_back(a.pids[k]);
        left_proc_seqs.push_back(a.proc_seqs[k]);
      }
      errors += (errors.empty() ? "" : "; ") + s.error();
    }
  }
  const std::string kind = a.kind;
  Value::Object details = std::move(details_);
  details_.clear();
  if (!errors.empty()) {
    a.nodes = left;
    a.seqs = left_seqs;
    a.pids = left_pids;
    a.proc_seqs = left_proc_seqs;
    return Fail("nemesis: healing " + kind + ": " + errors);
  }
  active_.reset();
  std::sort(done.begin(), done.end());
  const char* verb =
      kind == "partition" || kind == "delay" || kind == "loss" ||
              kind == "clock" || kind == "figure8" || kind == "strobe" ||
              (disk::IsDiskFault(kind) && !disk::IsCrashDiskFault(kind))
          ? "healed"
      : kind == "pause" ? "resumed"
                        : "restarted";
  Value::Object out = {{"kind", Value::String(kind)},
                       {verb, NodeNames(nodes, done)}};
  // loss, partition: packets dropped per node; clock: fake - real per node
  // after heal.
  if (!details.empty())
    out.emplace_back(
        kind == "loss" || kind == "partition" ? "dropped" : "offset_ms",
        Value::MakeObject(std::move(details)));
  if (kind ==
      "strobe") {  // the flips the strobe made (nemesis/clock/clock.cpp)
    out.emplace_back("flips", std::move(strobe_flips_));
    strobe_flips_ = Value();
  }
  return Value::MakeObject(std::move(out));
}

Status NetnsNemesis::HealAll() {
  std::lock_guard<std::mutex> lock(mu_);
  // Every active fault, newest first; what cannot be healed stays active
  // (and is tried again by the next HealAll).
  std::string errors;
  std::vector<Active> unhealed;
  for (;;) {
    auto r = StopLocked();
    if (!r.ok()) {
      errors += (errors.empty() ? "" : "; ") + r.error();
      if (active_) unhealed.push_back(std::move(*active_));
      active_.reset();
    }
    if (held_.empty()) break;
    active_ = std::move(held_.back());
    held_.pop_back();
  }
  if (unhealed.empty() && sysclock_) {  // belt and braces: every kernel
    Status reset = SystemClockResetAll();
    if (!reset.ok()) errors = reset.error();
  }
  if (!unhealed.empty()) {
    active_ = std::move(unhealed.front());
    held_.assign(std::make_move_iterator(unhealed.begin() + 1),
                 std::make_move_iterator(unhealed.end()));
  }
  if (!errors.empty()) return Fail(errors);
  return harness::Ok();
}

}  // namespace faultline::nemesis

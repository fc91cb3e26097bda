#include "nemesis/netns_nemesis.h"

#include <algorithm>
#include <random>

#include "harness/netns.h"
#include "harness/process.h"
#include "nemesis/partition.h"

namespace faultline::nemesis {
namespace {

using checkers::Value;
using harness::Fail;
using harness::Result;
using harness::Status;

Value Names(const std::vector<harness::Node>& nodes,
            const std::vector<int>& indices) {
  Value::List out;
  for (int i : indices)
    out.push_back(Value::String(nodes[static_cast<std::size_t>(i)].name));
  return Value::MakeList(std::move(out));
}

std::string Describe(const harness::CommandResult& r) {
  std::string msg = !r.error.empty() ? r.error : r.err;
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
    msg.pop_back();
  if (msg.empty()) msg = "exit " + std::to_string(r.exit_code);
  return msg;
}

// Flushes the INPUT chain in a node's namespace.
Status FlushInput(const harness::Node& node) {
  const std::string iptables = harness::FindSystemTool("iptables");
  if (iptables.empty()) return Fail("iptables not found");
  harness::CommandOptions o;
  o.netns = node.netns;
  o.timeout = std::chrono::milliseconds(15000);
  auto r = harness::RunCommand({iptables, "-w", "-F", "INPUT"}, o);
  if (!r.ok())
    return Fail("iptables -F INPUT in " + node.netns + ": " + Describe(r));
  return harness::Ok();
}

}  // namespace

NetnsNemesis::NetnsNemesis(harness::Cluster& cluster, harness::Target& target,
                           harness::Ledger& ledger)
    : cluster_(cluster), target_(target), ledger_(ledger) {}

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
  if (active_)
    return Fail("nemesis: a " + active_->kind + " fault is still active");
  if (cluster_.nodes().empty()) return Fail("nemesis: cluster has no nodes");
  if (step.kind == "partition") return StartPartition(step);
  if (step.kind == "pause" || step.kind == "kill")
    return StartProcessFault(step);
  return Fail("nemesis: unknown fault kind '" + step.kind + "'");
}

Result<Value> NetnsNemesis::StartPartition(const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  const int n = static_cast<int>(nodes.size());
  for (const auto& node : nodes)
    if (node.netns.empty())
      return Fail("nemesis: node " + node.name + " has no network namespace");
  const std::string restore = harness::FindSystemTool("iptables-restore");
  if (restore.empty()) return Fail("nemesis: iptables-restore not found");
  std::optional<int> leader;
  if (step.selector == "leader") leader = FindLeader();
  auto partition = ComputePartition(step.selector, n, step.seed, leader);
  if (!partition.ok()) return Fail("nemesis: " + partition.error());

  Active active;
  active.kind = "partition";
  active_ = active;  // from here on, Stop/HealAll undo what was applied
  for (const auto& [who, dropped] : partition->grudge) {
    const harness::Node& node = nodes[static_cast<std::size_t>(who)];
    std::string batch = "*filter\n";
    for (int peer : dropped) {
      const std::string& ip = nodes[static_cast<std::size_t>(peer)].ip;
      if (ip == cluster_.controller_ip()) continue;  // never cut the controller
      batch += "-A INPUT -s " + ip + "/32 -j DROP\n";
    }
    batch += "COMMIT\n";
    harness::LedgerEntry entry;
    entry.kind = "iptables";
    entry.netns = node.netns;
    entry.node = node.name;
    long seq = ledger_.Record(entry);
    if (seq < 0) {
      (void)StopLocked();
      return Fail("nemesis: cannot write the fault ledger " + ledger_.path());
    }
    active_->nodes.push_back(who);
    active_->seqs.push_back(seq);
    harness::CommandOptions o;
    o.netns = node.netns;
    o.stdin_data = batch;
    o.timeout = std::chrono::milliseconds(15000);
    auto r = harness::RunCommand({restore, "-w", "--noflush"}, o);
    if (!r.ok()) {
      std::string why = Describe(r);
      (void)StopLocked();
      return Fail("nemesis: iptables-restore in " + node.netns + ": " + why);
    }
  }
  Value::List components;
  for (const auto& c : partition->components)
    components.push_back(Names(nodes, c));
  Value::Object grudge;
  for (const auto& [who, dropped] : partition->grudge)
    grudge.emplace_back(nodes[static_cast<std::size_t>(who)].name,
                        Names(nodes, {dropped.begin(), dropped.end()}));
  Value::Object out = {{"kind", Value::String("partition")},
                       {"shape", Value::String(step.selector)},
                       {"components", Value::MakeList(std::move(components))},
                       {"grudge", Value::MakeObject(std::move(grudge))}};
  if (step.selector == "leader")
    out.emplace_back("leader_known", Value::Bool(leader.has_value()));
  return Value::MakeObject(std::move(out));
}

Result<std::vector<int>> NetnsNemesis::SelectNodes(const std::string& selector,
                                                   std::uint64_t seed,
                                                   bool* leader_known) {
  const int n = static_cast<int>(cluster_.nodes().size());
  std::mt19937_64 rng(SplitMix64(seed));
  std::vector<int> order = ShuffledNodes(n, rng);
  int count = 0;
  if (selector == "one") {
    count = 1;
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
  active_ = Active{step.kind, {}, {}};
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
                       {"nodes", Names(nodes, *chosen)}};
  if (step.selector == "leader")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

Result<Value> NetnsNemesis::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  return StopLocked();
}

Result<Value> NetnsNemesis::StopLocked() {
  if (!active_) return Value::MakeObject({{"kind", Value::String("none")}});
  const auto& nodes = cluster_.nodes();
  Active& a = *active_;
  std::vector<int> done, left;
  std::vector<long> left_seqs;
  std::string errors;
  for (std::size_t k = 0; k < a.nodes.size(); ++k) {
    const harness::Node& node = nodes[static_cast<std::size_t>(a.nodes[k])];
    Status s = harness::Ok();
    if (a.kind == "partition") {
      s = FlushInput(node);
      if (s.ok()) ledger_.MarkHealed(a.seqs[k]);
    } else if (a.kind == "pause") {
      s = target_.Resume(node);
    } else {
      s = target_.Start(node);
    }
    if (s.ok()) {
      done.push_back(a.nodes[k]);
    } else {
      left.push_back(a.nodes[k]);
      if (a.kind == "partition") left_seqs.push_back(a.seqs[k]);
      errors += (errors.empty() ? "" : "; ") + s.error();
    }
  }
  const std::string kind = a.kind;
  if (!errors.empty()) {
    a.nodes = left;
    a.seqs = left_seqs;
    return Fail("nemesis: healing " + kind + ": " + errors);
  }
  active_.reset();
  std::sort(done.begin(), done.end());
  const char* verb = kind == "partition" ? "healed"
                     : kind == "pause"   ? "resumed"
                                         : "restarted";
  return Value::MakeObject(
      {{"kind", Value::String(kind)}, {verb, Names(nodes, done)}});
}

Status NetnsNemesis::HealAll() {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = StopLocked();
  if (!r.ok()) return Fail(r.error());
  return harness::Ok();
}

}  // namespace faultline::nemesis

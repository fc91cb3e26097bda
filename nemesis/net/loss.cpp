#include "nemesis/net/loss.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

#include "harness/cluster/netns.h"
#include "harness/process/process.h"
#include "nemesis/netns_nemesis.h"
#include "nemesis/node_exec.h"

namespace faultline::nemesis {

std::string FormatProbability(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", p);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::vector<std::string> LossRuleSpecs(const std::vector<std::string>& sources,
                                       double probability) {
  std::vector<std::string> out;
  out.reserve(sources.size());
  const std::string tail = "/32 -m statistic --mode random --probability " +
                           FormatProbability(probability) +
                           " -m comment --comment " + kLossComment + " -j DROP";
  for (const auto& ip : sources) {
    std::string rule = "INPUT -s ";
    rule.append(ip).append(tail);
    out.push_back(std::move(rule));
  }
  return out;
}

std::string LossRules(const std::vector<std::string>& sources,
                      double probability, bool add) {
  std::string batch = "*filter\n";
  for (const auto& rule : LossRuleSpecs(sources, probability))
    batch += (add ? "-A " : "-D ") + rule + "\n";
  batch += "COMMIT\n";
  return batch;
}

std::optional<std::uint64_t> LossDropped(const std::string& iptables_list) {
  // Rule lines of `iptables -L -v -x -n` start with the packet and byte
  // counters, then the target: "   12   1008 DROP  all  --  *  *  ...
  // statistic mode random probability 0.30000000000 /* faultline-loss */".
  const std::string tag = std::string("/* ") + kLossComment + " */";
  std::istringstream in(iptables_list);
  std::string line;
  std::optional<std::uint64_t> total;
  while (std::getline(in, line)) {
    if (line.find(tag) == std::string::npos) continue;
    std::istringstream fields(line);
    std::string pkts, bytes, target;
    if (!(fields >> pkts >> bytes >> target) || target != "DROP") continue;
    char* end = nullptr;
    unsigned long long n = std::strtoull(pkts.c_str(), &end, 10);
    if (end == pkts.c_str() || *end != '\0') continue;
    total = total.value_or(0) + n;
  }
  return total;
}

harness::Status ApplyLoss(const harness::Node& node,
                          const std::vector<std::string>& sources,
                          double probability) {
  auto r = RunOnNode(node, "iptables-restore", {"-w", "--noflush"},
                     LossRules(sources, probability, true));
  if (!r.ok())
    return harness::Fail("iptables-restore in " + NodeWhere(node) + ": " +
                         harness::DescribeResult(r));
  return harness::Ok();
}

harness::Status RemoveLoss(const harness::Node& node,
                           const std::vector<std::string>& sources,
                           double probability, std::uint64_t* dropped) {
  const std::vector<std::string> list_args = {"-w", "-L", "INPUT",
                                              "-v", "-x", "-n"};
  auto list = RunOnNode(node, "iptables", list_args);
  if (!list.ok())
    return harness::Fail("iptables -L INPUT in " + NodeWhere(node) + ": " +
                         harness::DescribeResult(list));
  auto count = LossDropped(list.out);
  if (dropped != nullptr) *dropped = count.value_or(0);
  if (!count) return harness::Ok();  // no rule left to delete
  // One -D per rule, so a rule that is already gone does not stop the rest.
  std::string errors;
  for (const auto& rule : LossRuleSpecs(sources, probability)) {
    std::vector<std::string> argv = {"-w", "-D"};
    std::istringstream words(rule);
    for (std::string w; words >> w;) argv.push_back(w);
    auto r = RunOnNode(node, "iptables", argv);
    if (!r.ok() &&
        r.err.find("does a matching rule exist") == std::string::npos &&
        r.err.find("Bad rule") == std::string::npos)
      errors += (errors.empty() ? "" : "; ") + harness::DescribeResult(r);
  }
  auto after = RunOnNode(node, "iptables", list_args);
  if (after.ok() && !LossDropped(after.out)) return harness::Ok();
  return harness::Fail("removing loss rules in " + NodeWhere(node) + ": " +
                       (errors.empty() ? "rules still listed" : errors));
}

}  // namespace faultline::nemesis

// --- NetnsNemesis: the "loss" fault (declared in netns_nemesis.h) ---------

namespace faultline::nemesis {

std::vector<std::string> NetnsNemesis::PeerSources(int who) const {
  std::vector<std::string> sources;
  for (const auto& peer : cluster_.nodes())
    if (peer.index != who && peer.ip != cluster_.controller_ip())
      sources.push_back(peer.ip);
  return sources;
}

harness::Result<checkers::Value> NetnsNemesis::StartLoss(
    const harness::FaultStep& step) {
  using checkers::Value;
  const auto& nodes = cluster_.nodes();
  if (!(step.loss_probability > kMinLossProbability &&
        step.loss_probability <= kMaxLossProbability))
    return harness::Fail("nemesis: loss_probability " +
                         FormatProbability(step.loss_probability) +
                         " is outside (0, 1]");
  for (const auto& node : nodes)
    if (!CanRunFaults(node))
      return harness::Fail("nemesis: node " + node.name +
                           " has no network namespace or remote host");
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return harness::Fail(chosen.error());
  active_ = Active{"loss", {}, {}, {}, {}};
  loss_probability_ = step.loss_probability;
  details_.clear();
  Value::List names;
  for (int who : *chosen) {
    const harness::Node& node = nodes[static_cast<std::size_t>(who)];
    harness::LedgerEntry entry;
    entry.kind = "iptables";
    entry.name = kLossComment;  // heal deletes the rules that carry it
    LocateEntry(node, &entry);
    entry.node = node.name;
    long seq = ledger_.Record(entry);
    if (seq < 0) {
      (void)StopLocked();
      return harness::Fail("nemesis: cannot write the fault ledger " +
                           ledger_.path());
    }
    active_->nodes.push_back(who);
    active_->seqs.push_back(seq);
    harness::Status s =
        ApplyLoss(node, PeerSources(who), step.loss_probability);
    if (!s.ok()) {
      (void)StopLocked();
      return harness::Fail("nemesis: loss " + node.name + ": " + s.error());
    }
    names.push_back(Value::String(node.name));
  }
  Value::Object out = {{"kind", Value::String("loss")},
                       {"selector", Value::String(step.selector)},
                       {"nodes", Value::MakeList(std::move(names))},
                       {"probability", Value::Double(step.loss_probability)}};
  if (step.selector == "leader" || step.selector == "follower")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

// Removes exactly node k's loss rules and notes how many packets they
// dropped (Active::details, reported by Stop).
harness::Status NetnsNemesis::StopLossOn(std::size_t k) {
  Active& a = *active_;
  const harness::Node& node =
      cluster_.nodes()[static_cast<std::size_t>(a.nodes[k])];
  std::uint64_t dropped = 0;
  harness::Status s =
      RemoveLoss(node, PeerSources(node.index), loss_probability_, &dropped);
  if (!s.ok()) return s;
  ledger_.MarkHealed(a.seqs[k]);
  details_.emplace_back(
      node.name, checkers::Value::Int(static_cast<std::int64_t>(dropped)));
  return harness::Ok();
}

}  // namespace faultline::nemesis

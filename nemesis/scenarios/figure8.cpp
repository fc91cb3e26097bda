// NetnsNemesis "figure8" (figure8.h has the steps and their watches;
// docs/faults.md "figure8").
#include "nemesis/scenarios/figure8.h"

#include <algorithm>
#include <map>

#include "harness/process/process.h"
#include "nemesis/net/delay.h"
#include "nemesis/net/iptables_chain.h"
#include "nemesis/netns_nemesis.h"
#include "nemesis/node_exec.h"
#include "nemesis/scenarios/vote_watch.h"

namespace faultline::nemesis {
namespace {

using checkers::Value;
using harness::Fail;
using harness::Result;
using harness::Status;

using std::chrono::milliseconds;

constexpr milliseconds kBacklogLimit{2000};
constexpr milliseconds kLonelyLimit{3000};
constexpr milliseconds kReturnLimit{4000};
constexpr milliseconds kHandoverLimit{3000};

// Applies `lines` ("-I INPUT 1 -s IP/32 -j DROP" and the like) in one
// iptables-restore batch on the node (in its namespace, or over its Remote).
Status Iptables(const harness::Node& node,
                const std::vector<std::string>& lines) {
  std::string batch = "*filter\n";
  for (const auto& l : lines) batch += l + "\n";
  batch += "COMMIT\n";
  auto r = RunOnNode(node, "iptables-restore", {"-w", "--noflush"}, batch);
  if (r.ok()) return harness::Ok();
  return Fail("iptables-restore on " + NodeWhere(node) + ": " +
              harness::DescribeResult(r));
}

// The cuts are DROP rules in figure8's own chain, which INPUT jumps to
// first (before the delay chain: a cut packet is never queued for delay).
std::string Cut(const harness::Node& from) {
  return std::string("-A ") + kFigure8Chain + " -s " + from.ip + "/32 -j DROP";
}
std::string Uncut(const harness::Node& from) {
  return std::string("-D ") + kFigure8Chain + " -s " + from.ip + "/32 -j DROP";
}
std::string MakeChain() {
  return std::string(":") + kFigure8Chain + " - [0:0]";
}
std::string JumpFirst() {
  return std::string("-I INPUT 1 -j ") + kFigure8Chain;
}

}  // namespace

Result<Value> NetnsNemesis::StartFigure8(const harness::FaultStep& step) {
  const auto& nodes = cluster_.nodes();
  if (nodes.size() != 3)
    return Fail("nemesis: figure8 needs exactly 3 nodes, the cluster has " +
                std::to_string(nodes.size()));
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
        "nemesis: figure8 needs faultline-netdelay (built next to "
        "faultline; needs libnetfilter-queue-dev)");
  auto node_of = [&](int i) -> const harness::Node& {
    return nodes[static_cast<std::size_t>(i)];
  };
  auto name_of = [&](std::optional<int> i) {
    return i ? Value::String(node_of(*i).name) : Value::Null();
  };
  auto inspect = [&](int i) { return target_.Inspect(node_of(i)); };

  Value::Object out = {{"kind", Value::String("figure8")},
                       {"delay_ms", Value::Int(step.delay_ms)}};
  auto finish = [&](const std::string& reached) -> Result<Value> {
    out.emplace_back("reached", Value::String(reached));
    return Value::MakeObject(std::move(out));
  };
  const std::optional<int> a = FindLeader();
  out.emplace_back("leader", name_of(a));
  if (!a) return finish("no-leader");
  const harness::NodeStatus a0 = inspect(*a);
  const long long t = a0.term;
  out.emplace_back("term", Value::Int(t));
  std::vector<int> rest;
  for (const auto& node : nodes)
    if (node.index != *a) rest.push_back(node.index);

  // Everything applied from here on is undone by Stop (kind "figure8":
  // per node, its INPUT chain flushed and its delay daemon stopped).
  std::vector<int> paused;
  auto undo = [&](const std::string& why) -> Result<Value> {
    std::string errors;
    for (int i : paused)
      if (Status s = target_.Resume(node_of(i)); !s.ok())
        errors += "; resume: " + s.error();
    if (active_) {
      auto healed = StopLocked();
      if (!healed.ok()) errors += "; " + healed.error();
    }
    return Fail("nemesis: figure8: " + why + errors);
  };
  auto pause_node = [&](int i) -> Status {
    Status s = target_.Pause(node_of(i));
    if (s.ok()) paused.push_back(i);
    return s;
  };
  auto resume_node = [&](int i) -> Status {
    paused.erase(std::remove(paused.begin(), paused.end(), i), paused.end());
    return target_.Resume(node_of(i));
  };
  active_.emplace();
  active_->kind = "figure8";
  // Peer packets into B and C are held step.delay_ms: a vote grant takes
  // that long to reach its candidate, and each append A sends to Y one
  // round trip that long.
  for (int who : rest)
    if (Status s = StartDelayOn(who, step); !s.ok())
      return undo("delay " + node_of(who).name + ": " + s.error());
  {
    harness::LedgerEntry entry;
    entry.kind = "iptables";
    entry.name = kFigure8Chain;  // heal removes exactly this chain
    LocateEntry(node_of(*a), &entry);
    entry.node = node_of(*a).name;
    long seq = ledger_.Record(entry);
    if (seq < 0) return undo("cannot write the fault ledger " + ledger_.path());
    active_->nodes.push_back(*a);
    active_->seqs.push_back(seq);
    active_->pids.push_back(0);
    active_->proc_seqs.push_back(-1);
  }

  // 1. backlog: A cut off from B and C, both ways.
  if (Status s =
          Iptables(node_of(*a), {MakeChain(), JumpFirst(),
                                 Cut(node_of(rest[0])), Cut(node_of(rest[1]))});
      !s.ok())
    return undo(s.error());
  for (int who : rest)
    if (Status s = Iptables(node_of(who),
                            {MakeChain(), JumpFirst(), Cut(node_of(*a))});
        !s.ok())
      return undo(s.error());
  Poll backlog = PollUntil(
      {*a}, inspect,
      [&](int, const harness::NodeStatus& s) { return HasBacklog(s, t, 3); },
      kBacklogLimit, std::chrono::microseconds(5000));
  if (!backlog.node) return finish("no-backlog");
  out.emplace_back("old_commit", Value::Int(backlog.status.commit));

  // 2. lonely leader: the first of B, C seen voting is Y; X is paused
  // before Y's grant (held by the delay) can reach it, and Y stops
  // hearing X before X leads.
  std::map<int, harness::NodeStatus> seen;
  auto inspect_rest = [&](int i) {
    harness::NodeStatus s = inspect(i);
    seen[i] = s;
    return s;
  };
  VoterWatch vote = WatchForVoter(rest, t, inspect_rest, kLonelyLimit);
  if (!vote.voter) return finish("no-vote");
  const int y = *vote.voter;
  const int x = rest[0] == y ? rest[1] : rest[0];
  if (Status s = pause_node(x); !s.ok()) return undo(s.error());
  Status cut_x = Iptables(node_of(y), {Cut(node_of(x))});
  if (Status s = resume_node(x); !s.ok()) return undo(s.error());
  if (!cut_x.ok()) return undo(cut_x.error());
  // X's entries of the new term start right after what it held as a
  // candidate (A was cut off, so nothing reached it since).
  const long long conflict =
      seen.count(x) && seen[x].last_index >= 0 ? seen[x].last_index + 1 : -1;
  out.emplace_back("voter", Value::String(node_of(y).name));
  out.emplace_back("voter_term", Value::Int(vote.term));
  Poll lonely = PollUntil(
      {x}, inspect,
      [&](int, const harness::NodeStatus& s) {
        return s.reachable && s.role == "leader" && s.term >= vote.term;
      },
      kLonelyLimit, std::chrono::microseconds(0));
  out.emplace_back("lonely", name_of(lonely.node));
  if (!lonely.node) return finish("no-lonely-leader");
  out.emplace_back("lonely_term", Value::Int(lonely.status.term));
  out.emplace_back("conflict_index", Value::Int(conflict));
  if (conflict < 0) return finish("no-conflict-index");

  // 3. return: A and Y joined; A paused the moment it reports a commit
  // index that reaches X's first new-term entry.
  if (Status s = Iptables(node_of(*a), {Uncut(node_of(y))}); !s.ok())
    return undo(s.error());
  if (Status s = Iptables(node_of(y), {Uncut(node_of(*a))}); !s.ok())
    return undo(s.error());
  long long backlog_end = -1;  // A's last index while it did not lead
  Poll back = PollUntil(
      {*a}, inspect,
      [&](int, const harness::NodeStatus& s) {
        if (s.reachable && s.role != "leader") backlog_end = s.last_index;
        return ReachedConflict(s, lonely.status.term, conflict);
      },
      kReturnLimit, std::chrono::microseconds(0));
  if (!back.node) return finish("no-return");
  if (Status s = pause_node(*a); !s.ok()) return undo(s.error());
  Status cut_a = Iptables(node_of(*a), {Cut(node_of(y))});
  if (cut_a.ok()) cut_a = Iptables(node_of(y), {Cut(node_of(*a))});
  if (Status s = resume_node(*a); !s.ok()) return undo(s.error());
  if (!cut_a.ok()) return undo(cut_a.error());
  out.emplace_back("return_term", Value::Int(back.status.term));
  out.emplace_back("return_commit", Value::Int(back.status.commit));
  out.emplace_back("backlog_end", Value::Int(backlog_end));
  // Whether A's commit index stopped inside its old-term entries (the
  // unsafe rule) rather than at or past its new term's first entry.
  out.emplace_back(
      "old_term_commit",
      Value::Bool(backlog_end >= 0 && back.status.commit <= backlog_end));

  // 4. handover: X and Y joined; who leads them next, and how soon.
  if (Status s = Iptables(node_of(y), {Uncut(node_of(x))}); !s.ok())
    return undo(s.error());
  const auto joined = std::chrono::steady_clock::now();
  Poll next = PollUntil(
      rest, inspect,
      [&](int, const harness::NodeStatus& s) {
        return s.reachable && s.role == "leader" && s.term > back.status.term;
      },
      kHandoverLimit, std::chrono::microseconds(1000));
  out.emplace_back("next_leader", name_of(next.node));
  out.emplace_back("handover_ms",
                   Value::Int(std::chrono::duration_cast<milliseconds>(
                                  std::chrono::steady_clock::now() - joined)
                                  .count()));
  out.emplace_back(
      "polls", Value::Int(vote.polls + lonely.polls + back.polls + next.polls));
  return finish("handover");
}

}  // namespace faultline::nemesis

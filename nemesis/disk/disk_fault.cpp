// The disk faults (disk_fault.h) as NetnsNemesis members: each chosen node
// gets a `disk` ledger entry before its file system is told anything (heal
// undoes them with the mount, harness/ledger/ledger.h), then the commands
// of nemesis/disk/control.h through LazyfsNodes.
#include "nemesis/disk/disk_fault.h"

#include <string>

#include "nemesis/disk/lazyfs_nodes.h"
#include "nemesis/netns_nemesis.h"

namespace faultline::nemesis {

namespace {

using checkers::Value;

// The answer's counts, without "ok" (the history keeps what was lost).
Value Counts(const Value& answer) {
  Value::Object out;
  if (answer.is_object())
    for (const auto& [k, v] : answer.as_object())
      if (k != "ok") out.emplace_back(k, v);
  return Value::MakeObject(std::move(out));
}

std::string SetCommand(const harness::FaultStep& s) {
  if (s.kind == "fsync-error")
    return "fsync-error " + std::to_string(s.fsync_errors);
  if (s.kind == "disk-full") return "disk-full on";
  return "latency " + std::to_string(s.disk_latency_ms);
}

std::string ResetCommand(const std::string& kind) {
  if (kind == "fsync-error") return "fsync-error 0";
  if (kind == "disk-full") return "disk-full off";
  return "latency 0";
}

}  // namespace

harness::Result<Value> NetnsNemesis::StartDisk(const harness::FaultStep& step) {
  if (disk_ == nullptr)
    return harness::Fail("nemesis: " + step.kind +
                         " needs the lazy file system on the nodes, and this "
                         "run has none");
  const auto& nodes = cluster_.nodes();
  bool leader_known = true;
  auto chosen = SelectNodes(step.selector, step.seed, &leader_known);
  if (!chosen.ok()) return harness::Fail(chosen.error());
  const bool crash = disk::IsCrashDiskFault(step.kind);
  active_ = Active{step.kind, {}, {}, {}, {}};
  Value::Object per_node;
  for (int who : *chosen) {
    const harness::Node& node = nodes[static_cast<std::size_t>(who)];
    harness::LedgerEntry entry;
    entry.kind = "disk";
    entry.name = step.kind;
    entry.node = node.name;
    const long seq = ledger_.Record(entry);
    if (seq < 0) {
      (void)StopLocked();
      return harness::Fail("nemesis: cannot write the fault ledger " +
                           ledger_.path());
    }
    if (crash) {
      // The node goes down first: nothing it writes can land after the
      // drop (a write the file system already received completes before the
      // process exits).
      if (harness::Status s = target_.Kill(node); !s.ok()) {
        ledger_.MarkHealed(seq);
        (void)StopLocked();
        return harness::Fail("nemesis: " + step.kind + " " + node.name + ": " +
                             s.error());
      }
    }
    active_->nodes.push_back(who);
    active_->seqs.push_back(seq);
    const std::string command = step.kind == "power-loss" ? std::string("drop")
                                : step.kind == "torn-write"
                                    ? "torn " + std::to_string(step.seed + who)
                                    : SetCommand(step);
    auto answer = disk_->Control(node, command);
    if (!answer.ok()) {
      (void)StopLocked();
      return harness::Fail("nemesis: " + step.kind + " " + node.name + ": " +
                           answer.error());
    }
    per_node.emplace_back(node.name, Counts(*answer));
  }
  Value::Object out = {{"kind", Value::String(step.kind)},
                       {"selector", Value::String(step.selector)},
                       {"nodes", NodeNames(nodes, *chosen)}};
  if (step.kind == "fsync-error")
    out.emplace_back("fsync_errors", Value::Int(step.fsync_errors));
  if (step.kind == "slow-disk")
    out.emplace_back("latency_ms", Value::Int(step.disk_latency_ms));
  if (crash) out.emplace_back("disk", Value::MakeObject(std::move(per_node)));
  if (step.selector == "leader" || step.selector == "follower")
    out.emplace_back("leader_known", Value::Bool(leader_known));
  return Value::MakeObject(std::move(out));
}

harness::Status NetnsNemesis::StopDiskOn(std::size_t k) {
  Active& a = *active_;
  const harness::Node& node =
      cluster_.nodes()[static_cast<std::size_t>(a.nodes[k])];
  harness::Status s = harness::Ok();
  if (disk::IsCrashDiskFault(a.kind)) {
    s = target_.Start(node);
  } else if (disk_ != nullptr) {
    auto answer = disk_->Control(node, ResetCommand(a.kind));
    if (!answer.ok()) s = harness::Fail(answer.error());
  }
  if (s.ok()) ledger_.MarkHealed(a.seqs[k]);
  return s;
}

}  // namespace faultline::nemesis

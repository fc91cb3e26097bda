#include "targets/raftkv/raft/sim/invariants.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

namespace faultline::raftkv::raft::sim {
namespace {

constexpr std::array<std::pair<Violation, const char*>, 10> kNames = {{
    {Violation::kNone, "none"},
    {Violation::kElectionSafety, "election-safety"},
    {Violation::kLogMatching, "log-matching"},
    {Violation::kCommittedLost, "committed-lost"},
    {Violation::kLeaderCompleteness, "leader-completeness"},
    {Violation::kStateMachineSafety, "state-machine-safety"},
    {Violation::kApplyOrder, "apply-order"},
    {Violation::kCommitDecreased, "commit-decreased"},
    {Violation::kReadSafety, "read-safety"},
    {Violation::kContract, "contract"},
}};

std::string Show(const Entry& e) {
  std::ostringstream o;
  o << "(i=" << e.index << " t=" << e.term;
  if (e.type == EntryType::kNoop) {
    o << " noop)";
  } else {
    o << " '" << e.data << "')";
  }
  return o.str();
}

std::string Show(const std::optional<std::string>& v) {
  return v ? "'" + *v + "'" : std::string("nil");
}

}  // namespace

const char* ToString(Violation v) {
  for (const auto& [k, name] : kNames) {
    if (k == v) return name;
  }
  return "?";
}

std::optional<Violation> ParseViolation(const std::string& s) {
  for (const auto& [k, name] : kNames) {
    if (s == name) return k;
  }
  return std::nullopt;
}

InvariantChecker::InvariantChecker(std::uint64_t seed, DiskOf disks)
    : seed_(seed), disks_(std::move(disks)) {}

void InvariantChecker::Fail(Violation v, const std::string& what) {
  if (finding_) return;
  std::ostringstream o;
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", static_cast<double>(real_) / 1e6);
  o << "seed " << seed_ << " step " << step_ << " t=" << ms
    << "ms: " << ToString(v) << ": " << what;
  finding_ = Finding{v, o.str()};
}

void InvariantChecker::Contract(NodeId n, const std::string& what) {
  Fail(Violation::kContract, "node " + std::to_string(n) + ": " + what);
}

const Entry* InvariantChecker::Committed(Index i) const {
  auto it = committed_.find(i);
  return it == committed_.end() ? nullptr : &it->second.entry;
}

void InvariantChecker::ObserveNode(NodeId n, Role role, Term term,
                                   Index commit) {
  if (role == Role::kLeader) {
    auto [it, fresh] = leaders_.emplace(term, n);
    if (it->second != n) {
      Fail(Violation::kElectionSafety,
           "nodes " + std::to_string(it->second) + " and " + std::to_string(n) +
               " both lead term " + std::to_string(term));
      return;
    }
    leading_[n] = term;
    if (fresh) CheckLeaderHolds(n, term, 1);
  } else {
    leading_[n] = 0;
  }
  Index& last = last_commit_[n];
  if (commit < last) {
    Fail(Violation::kCommitDecreased,
         "node " + std::to_string(n) + " commit went from " +
             std::to_string(last) + " to " + std::to_string(commit));
    return;
  }
  last = commit;
  RecordCommits(n, term, commit);
  // Every entry n holds at or below its commit is the committed one.
  const MemDisk* d = disks_(n);
  Index& v = verified_upto_[n];
  const Index upto = std::min(commit, recorded_upto_);
  for (Index i = v + 1; i <= upto && d != nullptr; ++i) {
    const Entry* e = d->At(i);
    const Entry* c = Committed(i);
    if (e != nullptr && c != nullptr && !(*e == *c)) {
      Fail(Violation::kStateMachineSafety,
           "node " + std::to_string(n) + " has commit " +
               std::to_string(commit) + " but holds " + Show(*e) + " where " +
               Show(*c) + " was committed");
      return;
    }
  }
  if (upto > v) v = upto;
}

void InvariantChecker::RecordCommits(NodeId n, Term term, Index commit) {
  if (commit > global_commit_) global_commit_ = commit;
  const MemDisk* d = disks_(n);
  if (d == nullptr) return;
  const Index before = recorded_upto_;
  while (recorded_upto_ < commit) {
    const Index i = recorded_upto_ + 1;
    const Entry* e = d->At(i);
    if (e == nullptr) break;
    committed_[i] = Committed_{*e, term};
    NoteValue(*e);
    std::string k, val;
    if (SimKv::DecodePut(*e, &k, &val)) last_write_[k] = i;
    recorded_upto_ = i;
  }
  if (recorded_upto_ == before) return;
  // Leaders of later terms must already hold the newly committed entries.
  for (const auto& [m, t] : leading_) {
    if (t > term) CheckLeaderHolds(m, t, before + 1);
  }
}

void InvariantChecker::CheckLeaderHolds(NodeId n, Term t, Index from) {
  const MemDisk* d = disks_(n);
  if (d == nullptr) return;
  for (auto it = committed_.lower_bound(from); it != committed_.end(); ++it) {
    const Index i = it->first;
    const Committed_& c = it->second;
    if (c.commit_term >= t || i < d->SnapIndex()) continue;
    if (i == d->SnapIndex()) {
      if (d->SnapTerm() != c.entry.term) {
        Fail(Violation::kLeaderCompleteness,
             "leader " + std::to_string(n) + " of term " + std::to_string(t) +
                 " has a snapshot at " + std::to_string(i) + " of term " +
                 std::to_string(d->SnapTerm()) + " but " + Show(c.entry) +
                 " was committed in term " + std::to_string(c.commit_term));
        return;
      }
      continue;
    }
    const Entry* e = d->At(i);
    if (e == nullptr || !(*e == c.entry)) {
      Fail(Violation::kLeaderCompleteness,
           "leader " + std::to_string(n) + " of term " + std::to_string(t) +
               " lacks " + Show(c.entry) + " committed in term " +
               std::to_string(c.commit_term) + " (holds " +
               (e ? Show(*e) : std::string("nothing")) + ")");
      return;
    }
  }
}

void InvariantChecker::OnCrash(NodeId n) { leading_[n] = 0; }

void InvariantChecker::OnRestart(NodeId n, Index commit) {
  Index& last = last_commit_[n];
  // The volatile commit may have been ahead of the persisted one; from now
  // on the persisted one is the floor.
  last = commit;
  verified_upto_[n] = std::min(verified_upto_[n], commit);
}

void InvariantChecker::OnPersistEntries(NodeId n,
                                        const std::vector<Entry>& es) {
  if (es.empty()) return;
  const MemDisk* d = disks_(n);
  if (d == nullptr) return;
  const Index first = es.front().index;
  // Log matching.
  for (std::size_t k = 0; k < es.size(); ++k) {
    const Entry& e = es[k];
    std::optional<Term> prev =
        k == 0 ? d->TermAt(e.index - 1) : std::optional<Term>(es[k - 1].term);
    auto [it, fresh] =
        seen_.try_emplace({e.index, e.term}, Seen{e.type, e.data, prev});
    if (fresh) continue;
    Seen& s = it->second;
    if (s.type != e.type || s.data != e.data) {
      Fail(Violation::kLogMatching,
           "node " + std::to_string(n) + " persists " + Show(e) +
               " but another entry with that index and term was '" + s.data +
               "'");
      return;
    }
    if (prev && s.prev_term && *prev != *s.prev_term) {
      Fail(Violation::kLogMatching,
           "node " + std::to_string(n) + " persists " + Show(e) +
               " after an entry of term " + std::to_string(*prev) +
               ", elsewhere it follows term " + std::to_string(*s.prev_term));
      return;
    }
    if (!s.prev_term) s.prev_term = prev;
  }
  // Committed entries present in the log are never removed or replaced.
  for (Index i = std::max(first, d->FirstIndex()); i <= d->LastIndex(); ++i) {
    const Entry* c = Committed(i);
    const Entry* old = d->At(i);
    if (c == nullptr || old == nullptr || !(*old == *c)) continue;
    const Entry* now = i - first < es.size() ? &es[i - first] : nullptr;
    if (now == nullptr || !(*now == *c)) {
      Fail(Violation::kCommittedLost,
           "node " + std::to_string(n) + " " + (now ? "replaces" : "drops") +
               " committed " + Show(*c) +
               (now ? " with " + Show(*now) : std::string()));
      return;
    }
  }
  Index& v = verified_upto_[n];
  if (first > 0 && v >= first) v = first - 1;
}

void InvariantChecker::OnPersistHardState(NodeId n, const HardState& prev,
                                          const HardState& next) {
  if (next.commit < prev.commit) {
    Fail(Violation::kCommitDecreased,
         "node " + std::to_string(n) + " persists commit " +
             std::to_string(next.commit) + " over " +
             std::to_string(prev.commit));
  } else if (next.term < prev.term) {
    Contract(n, "persists term " + std::to_string(next.term) + " over " +
                    std::to_string(prev.term));
  } else if (next.term == prev.term && prev.vote != kNone &&
             next.vote != prev.vote) {
    Contract(n, "changes its vote in term " + std::to_string(next.term) +
                    " from " + std::to_string(prev.vote) + " to " +
                    std::to_string(next.vote));
  }
}

void InvariantChecker::OnPersistSnapshot(NodeId n, const Snapshot& s) {
  const Entry* c = Committed(s.meta.index);
  if (s.meta.index > global_commit_) {
    Fail(Violation::kStateMachineSafety,
         "node " + std::to_string(n) + " receives a snapshot at " +
             std::to_string(s.meta.index) + " beyond every commit (" +
             std::to_string(global_commit_) + ")");
  } else if (c != nullptr && c->term != s.meta.term) {
    Fail(Violation::kStateMachineSafety,
         "node " + std::to_string(n) + " receives a snapshot at " +
             std::to_string(s.meta.index) + " of term " +
             std::to_string(s.meta.term) + " but " + Show(*c) +
             " was committed");
  }
  Index& v = verified_upto_[n];
  v = std::min(v, s.meta.index);
}

void InvariantChecker::NoteValue(const Entry& e) {
  std::string k, val;
  if (SimKv::DecodePut(e, &k, &val)) value_index_.emplace(val, e.index);
}

void InvariantChecker::OnApply(NodeId n, const Entry& e, Index applied) {
  if (e.index != applied + 1) {
    Fail(Violation::kApplyOrder,
         "node " + std::to_string(n) + " applies " + Show(e) +
             " with applied = " + std::to_string(applied));
    return;
  }
  auto [it, fresh] = applied_.try_emplace(e.index, e);
  if (!fresh && !(it->second == e)) {
    Fail(Violation::kStateMachineSafety,
         "node " + std::to_string(n) + " applies " + Show(e) +
             ", another node applied " + Show(it->second));
    return;
  }
  const Entry* c = Committed(e.index);
  if (c != nullptr && !(*c == e)) {
    Fail(Violation::kStateMachineSafety, "node " + std::to_string(n) +
                                             " applies " + Show(e) + " but " +
                                             Show(*c) + " was committed");
    return;
  }
  NoteValue(e);
}

void InvariantChecker::OnApplySnapshot(NodeId n, const Snapshot& s,
                                       Index applied) {
  if (s.meta.index <= applied) {
    Fail(Violation::kApplyOrder,
         "node " + std::to_string(n) + " restores a snapshot at " +
             std::to_string(s.meta.index) +
             " with applied = " + std::to_string(applied));
    return;
  }
  // The snapshot's state must be the replay of the applied prefix.
  SimKv ref;
  for (Index i = 1; i <= s.meta.index; ++i) {
    auto it = applied_.find(i);
    if (it == applied_.end()) return;  // prefix unknown: cannot compare
    ref.Apply(it->second);
  }
  if (ref.Serialize() != s.data) {
    Fail(Violation::kStateMachineSafety,
         "node " + std::to_string(n) + " restores a snapshot at " +
             std::to_string(s.meta.index) +
             " whose state differs from the replay of entries 1.." +
             std::to_string(s.meta.index));
  }
}

ReadTicket InvariantChecker::OnReadInvoked(const std::string& key) const {
  ReadTicket t;
  t.key = key;
  t.required_commit = global_commit_;
  auto it = last_write_.find(key);
  t.required_write = it == last_write_.end() ? 0 : it->second;
  t.invoked_real = real_;
  return t;
}

void InvariantChecker::OnReadServed(NodeId n, const ReadTicket& t,
                                    Index read_index,
                                    const std::optional<std::string>& value,
                                    const char* how) {
  ++reads_checked_;
  const std::string who =
      std::string(how) + " read of '" + t.key + "' on node " +
      std::to_string(n) +
      " (requested at t=" + std::to_string(t.invoked_real / 1000) + "us)";
  if (read_index != 0 && read_index < t.required_commit) {
    Fail(Violation::kReadSafety, who + " served at index " +
                                     std::to_string(read_index) + " < commit " +
                                     std::to_string(t.required_commit) +
                                     " reached before it was requested");
    return;
  }
  Index idx = 0;
  if (value) {
    auto it = value_index_.find(*value);
    if (it == value_index_.end()) {
      Fail(Violation::kReadSafety,
           who + " returned " + Show(value) + ", which was never applied");
      return;
    }
    idx = it->second;
  }
  if (idx < t.required_write) {
    const Entry* c = Committed(t.required_write);
    Fail(Violation::kReadSafety,
         who + " returned " + Show(value) + " (written at index " +
             std::to_string(idx) + ") but " + (c ? Show(*c) : "?") +
             " was committed before the read was requested");
  }
}

}  // namespace faultline::raftkv::raft::sim

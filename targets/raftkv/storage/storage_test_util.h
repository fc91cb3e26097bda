// Test helpers for the storage tests: a reference model of what DiskStorage
// promises, and scripted operations to run against both. Header-only; used
// only by *_test.cpp.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "targets/raftkv/raft/types.h"
#include "targets/raftkv/storage/storage.h"

namespace faultline::raftkv::storage::testing {

inline raft::Entry E(raft::Index index, raft::Term term, std::size_t pad = 0) {
  raft::Entry e;
  e.index = index;
  e.term = term;
  e.type = pad == 0 && index % 7 == 0 ? raft::EntryType::kNoop
                                      : raft::EntryType::kNormal;
  e.data = "v" + std::to_string(index) + "t" + std::to_string(term) +
           std::string(pad, static_cast<char>('a' + index % 26));
  return e;
}

inline std::vector<raft::Entry> Range(raft::Index from, raft::Index to,
                                      raft::Term term, std::size_t pad = 0) {
  std::vector<raft::Entry> out;
  for (raft::Index i = from; i <= to; ++i) out.push_back(E(i, term, pad));
  return out;
}

inline raft::Snapshot Snap(raft::Index index, raft::Term term) {
  raft::Snapshot s;
  s.meta.index = index;
  s.meta.term = term;
  s.meta.voters = {1, 2, 3};
  s.data = "state-at-" + std::to_string(index) + "-" + std::to_string(term);
  return s;
}

struct Op {
  bool snapshot = false;  // SaveSnapshot(snap) instead of Save
  std::optional<raft::HardState> hs;
  std::vector<raft::Entry> entries;
  bool sync = true;
  raft::Snapshot snap;

  // Acknowledged (durable) once it returned "".
  bool durable() const { return snapshot || sync; }
  std::string Describe() const {
    std::ostringstream o;
    if (snapshot) {
      o << "SaveSnapshot(" << snap.meta.index << "," << snap.meta.term << ")";
      return o.str();
    }
    o << "Save(";
    if (hs)
      o << "hs{" << hs->term << "," << hs->vote << "," << hs->commit << "} ";
    if (!entries.empty()) {
      o << "[" << entries.front().index << ".." << entries.back().index << " t"
        << entries.back().term << "]";
    }
    o << (sync ? " sync)" : " nosync)");
    return o.str();
  }
};

inline Op SaveOp(std::optional<raft::HardState> hs,
                 std::vector<raft::Entry> entries, bool sync) {
  Op op;
  op.hs = hs;
  op.entries = std::move(entries);
  op.sync = sync;
  return op;
}

inline Op SnapOp(raft::Index index, raft::Term term) {
  Op op;
  op.snapshot = true;
  op.snap = Snap(index, term);
  return op;
}

inline std::string Run(DiskStorage* s, const Op& op) {
  return op.snapshot ? s->SaveSnapshot(op.snap)
                     : s->Save(op.hs, op.entries, op.sync);
}

// What the storage must hold after a sequence of operations.
struct Model {
  raft::HardState hs;
  std::optional<raft::Snapshot> snap;
  std::map<raft::Index, raft::Entry> log;  // entries after the snapshot

  raft::Index SnapIndex() const { return snap ? snap->meta.index : 0; }
  raft::Index Last() const {
    return log.empty() ? SnapIndex() : log.rbegin()->first;
  }

  void Apply(const Op& op) {
    if (op.snapshot) {
      const auto& m = op.snap.meta;
      auto it = log.find(m.index);
      if (it != log.end() && it->second.term == m.term) {
        log.erase(log.begin(), std::next(it));
      } else if (it != log.end() || m.index > Last()) {
        log.clear();
      }
      snap = op.snap;
      return;
    }
    bool first = true;
    for (const auto& e : op.entries) {
      if (e.index <= SnapIndex()) continue;  // covered by the snapshot
      if (first) log.erase(log.lower_bound(e.index), log.end());
      first = false;
      log[e.index] = e;
    }
    if (op.hs) hs = *op.hs;
  }

  bool Matches(const Recovered& r) const {
    if (!(r.hard_state == hs) || r.snapshot != snap) return false;
    if (r.entries.size() != log.size()) return false;
    std::size_t i = 0;
    for (const auto& [index, e] : log) {
      if (!(r.entries[i++] == e)) return false;
    }
    return true;
  }

  std::string Describe() const {
    std::ostringstream o;
    o << "hs{" << hs.term << "," << hs.vote << "," << hs.commit << "}";
    if (snap)
      o << " snap(" << snap->meta.index << "," << snap->meta.term << ")";
    o << " log[";
    for (const auto& [index, e] : log) o << " " << index << "t" << e.term;
    o << " ]";
    return o.str();
  }
};

inline std::string Describe(const Recovered& r) {
  Model m;
  m.hs = r.hard_state;
  m.snap = r.snapshot;
  for (const auto& e : r.entries) m.log[e.index] = e;
  return m.Describe() + " torn=" + std::to_string(r.torn_records);
}

}  // namespace faultline::raftkv::storage::testing

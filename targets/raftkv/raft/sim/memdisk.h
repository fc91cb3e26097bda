// The simulator's "disk" and state machine.
//
// MemDisk holds exactly what a driver persisted from Ready (hard state, log
// entries, the latest snapshot): a crash loses everything else, a restart
// rebuilds a Node from it. SimKv is a tiny key-value state machine whose
// commands are "key=value" puts (unique values let the invariant checker
// attribute every read).
//
// Thread-safety: none.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft::sim {

struct MemDisk {
  HardState hs;
  std::optional<Snapshot> snap;
  std::vector<Entry> log;  // contiguous, starting at FirstIndex()

  Index SnapIndex() const { return snap ? snap->meta.index : 0; }
  Term SnapTerm() const { return snap ? snap->meta.term : 0; }
  Index FirstIndex() const { return SnapIndex() + 1; }
  Index LastIndex() const { return SnapIndex() + log.size(); }
  // nullptr if compacted or beyond the end.
  const Entry* At(Index i) const;
  // Term of entry i, the snapshot's term at its index; nullopt if unknown.
  std::optional<Term> TermAt(Index i) const;

  // Replaces the log from es.front().index on with `es`. Returns an error
  // (and changes nothing) if `es` is not contiguous, leaves a gap, or
  // starts inside the snapshot.
  std::optional<std::string> Append(const std::vector<Entry>& es);
  // Installs a snapshot received from the leader: keeps the log suffix
  // after it only if the entry at its index has the snapshot's term.
  void InstallSnapshot(const Snapshot& s);
  // The driver compacted at `index` (<= LastIndex) with state `data`.
  void Compact(Index index, std::string data, std::vector<NodeId> voters);
};

class SimKv {
 public:
  static std::string EncodePut(const std::string& key,
                               const std::string& value);
  // False for anything but a put (e.g. a no-op entry).
  static bool DecodePut(const Entry& e, std::string* key, std::string* value);

  // Applies a committed entry; precondition: e.index == applied() + 1.
  void Apply(const Entry& e);
  std::optional<std::string> Get(const std::string& key) const;
  Index applied() const { return applied_; }
  const std::map<std::string, std::string>& data() const { return data_; }

  std::string Serialize() const;
  // Replaces the state; false if `bytes` is malformed.
  bool Restore(const std::string& bytes, Index index);

 private:
  std::map<std::string, std::string> data_;
  Index applied_ = 0;
};

}  // namespace faultline::raftkv::raft::sim

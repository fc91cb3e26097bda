// The simulator's invariant checker. The driver (cluster.h) reports what it
// observes after every step; the checker keeps a global, omniscient record
// (every leader per term, every committed and applied entry, every log entry
// any node persisted) and flags the first violation of:
//
//   election safety      at most one leader per term, over the whole run
//   log matching         two logs with an entry of the same index and term
//                        hold the same entry there and agree on the term of
//                        the entry before it (hence on the whole prefix)
//   committed lost       no node's persisted log drops or replaces an entry
//                        once it is committed and present there
//   leader completeness  a leader of term t holds every entry committed in
//                        an earlier term
//   state machine safety the entry applied at index i is the same on every
//                        node, and is the committed one; a snapshot's state
//                        equals the replay of the committed prefix
//   apply order          each node applies i = applied+1, never rolls back
//   commit monotonic     a node's commit index never decreases (volatile,
//                        and persisted across restarts)
//   read safety          a read requested at real time t is served at an
//                        index >= the highest commit any node had reached by
//                        t, and returns the value of a committed write no
//                        older than the newest write to that key committed
//                        by t
//   contract             the core asked the driver for something raft.h
//                        forbids (non-contiguous entries, ...)
//
// Commit terms: the term of an index's commit is the term of the first node
// observed with commit >= index (the committing leader is observed in the
// same step it advances commit, before any follower learns it).
//
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/raft/sim/memdisk.h"
#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft::sim {

enum class Violation : std::uint8_t {
  kNone,
  kElectionSafety,
  kLogMatching,
  kCommittedLost,
  kLeaderCompleteness,
  kStateMachineSafety,
  kApplyOrder,
  kCommitDecreased,
  kReadSafety,
  kContract,
};
const char* ToString(Violation v);
// Parses the names ToString returns ("election-safety", ...).
std::optional<Violation> ParseViolation(const std::string& s);

struct Finding {
  Violation kind = Violation::kNone;
  std::string what;  // "seed S step N t=...ms: <description>"
};

// What a read must reflect, fixed when the read is requested.
struct ReadTicket {
  std::string key;
  Index required_commit = 0;  // highest commit any node had reached
  Index required_write = 0;   // newest committed write to key by then
  Nanos invoked_real = 0;
};

class InvariantChecker {
 public:
  using DiskOf = std::function<const MemDisk*(NodeId)>;
  InvariantChecker(std::uint64_t seed, DiskOf disks);

  // Context for descriptions.
  void SetStep(std::uint64_t step, Nanos real) {
    step_ = step;
    real_ = real;
  }

  // --- observations (the driver calls these) ---
  // After every step, for every running node.
  void ObserveNode(NodeId n, Role role, Term term, Index commit);
  void OnCrash(NodeId n);
  // A node restarted from a disk whose persisted commit is `commit`.
  void OnRestart(NodeId n, Index commit);
  // Before the driver persists `es` to n's disk (not yet modified).
  void OnPersistEntries(NodeId n, const std::vector<Entry>& es);
  // Before persisting hard state `next` over `prev`.
  void OnPersistHardState(NodeId n, const HardState& prev,
                          const HardState& next);
  // Before installing snapshot `s` on n's disk.
  void OnPersistSnapshot(NodeId n, const Snapshot& s);
  // n applies `e`; `applied` is its applied index before.
  void OnApply(NodeId n, const Entry& e, Index applied);
  // n restores its state machine from `s`; `applied` before.
  void OnApplySnapshot(NodeId n, const Snapshot& s, Index applied);
  ReadTicket OnReadInvoked(const std::string& key) const;
  // A read was served by n with `value`. `read_index` is the index the core
  // returned for it (0 for a follower-lease local read).
  void OnReadServed(NodeId n, const ReadTicket& t, Index read_index,
                    const std::optional<std::string>& value, const char* how);
  // Raises a contract violation found by the driver.
  void Contract(NodeId n, const std::string& what);

  // --- results ---
  bool ok() const { return !finding_; }
  const std::optional<Finding>& finding() const { return finding_; }
  Index GlobalCommit() const { return global_commit_; }
  std::size_t Leaders() const { return leaders_.size(); }
  std::uint64_t ReadsChecked() const { return reads_checked_; }
  // The committed entry at i, if recorded.
  const Entry* Committed(Index i) const;

 private:
  struct Seen {
    EntryType type;
    std::string data;
    std::optional<Term> prev_term;
  };
  struct Committed_ {
    Entry entry;
    Term commit_term = 0;
  };
  void Fail(Violation v, const std::string& what);
  void RecordCommits(NodeId n, Term term, Index commit);
  void CheckLeaderHolds(NodeId n, Term t, Index from_index);
  void NoteValue(const Entry& e);

  std::uint64_t seed_;
  DiskOf disks_;
  std::uint64_t step_ = 0;
  Nanos real_ = 0;
  std::optional<Finding> finding_;

  std::map<Term, NodeId> leaders_;
  std::map<NodeId, Term> leading_;  // node -> term it currently leads (0)
  std::map<std::pair<Index, Term>, Seen> seen_;
  std::map<Index, Committed_> committed_;
  Index recorded_upto_ = 0;  // committed_ holds every index up to here
  Index global_commit_ = 0;
  std::map<NodeId, Index> last_commit_;
  std::map<NodeId, Index> verified_upto_;  // n's log checked vs committed
  std::map<Index, Entry> applied_;
  std::map<std::string, Index> last_write_;   // key -> newest committed put
  std::map<std::string, Index> value_index_;  // value -> index of its put
  std::uint64_t reads_checked_ = 0;
};

}  // namespace faultline::raftkv::raft::sim

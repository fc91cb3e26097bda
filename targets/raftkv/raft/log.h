// RaftLog: the in-memory Raft log of one node, with a snapshot offset.
//
// Holds entries (snap_index, last_index]; the entry at snap_index is known
// only by its term (snap_term). Tracks three watermarks:
//   committed: highest index known committed (never decreases);
//   stabled:   highest index the driver has persisted (entries beyond it are
//              "unstable" and go out in the next Ready);
//   applied:   highest index the driver has applied (acknowledged through
//              Advance).
// Invariants (aborting with file:line when broken): applied <= committed <=
// last_index; snap_index <= committed; entries are contiguous.
//
// Thread-safety: none; owned by one Node.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft {

[[noreturn]] void Fatal(const char* file, int line, const char* what);
#define RAFT_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) ::faultline::raftkv::raft::Fatal(__FILE__, __LINE__, #cond); \
  } while (0)

class RaftLog {
 public:
  Index snap_index() const { return snap_index_; }
  Term snap_term() const { return snap_term_; }
  Index first_index() const { return snap_index_ + 1; }
  Index last_index() const { return snap_index_ + entries_.size(); }
  Term last_term() const;
  Index committed() const { return committed_; }
  Index stabled() const { return stabled_; }
  Index applied() const { return applied_; }

  // Term of entry `i` if known (i == snap_index or held in memory).
  bool TermAt(Index i, Term* t) const;
  // Term of entry `i`, or 0 when unknown.
  Term TermOr0(Index i) const;
  bool MatchTerm(Index i, Term t) const;
  // True if a log ending at (last_idx, last_term) is at least as up to date
  // as this one (Raft §5.4.1).
  bool IsUpToDate(Index last_idx, Term last_term) const;
  const Entry* At(Index i) const;

  // Leader append: the entry's index must be last_index()+1.
  void Append(Entry e);
  // Follower append after a matched (prev_index, prev_term): entries that
  // conflict (same index, different term) and everything after them are
  // replaced; entries already present are kept. Returns the index of the
  // last entry of `entries` (prev_index if empty). Precondition:
  // MatchTerm(prev_index, prev_term), entries contiguous after prev_index.
  // A conflict at or below `committed` breaks Raft's safety and aborts,
  // unless `allow_committed_conflict` (Unsafe::kCommitOldTerms, where such
  // conflicts are the anomaly being demonstrated: the log is overwritten,
  // the commit index stays).
  Index AppendAfter(Index prev_index, const std::vector<Entry>& entries,
                    bool allow_committed_conflict = false);
  // Largest index <= `index` whose term is <= `term` (for fast backup on a
  // rejected append); returns snap_index when none is known.
  Index FindConflictByTerm(Index index, Term term) const;

  // Entries [lo, hi], at most max_count and about max_bytes of data (always
  // at least one entry when lo <= hi). Precondition: lo > snap_index.
  std::vector<Entry> Slice(Index lo, Index hi, std::size_t max_count,
                           std::size_t max_bytes) const;

  void CommitTo(Index i);          // no-op if i <= committed; i <= last_index
  void StableTo(Index i, Term t);  // if the entry at i still has term t
  void AppliedTo(Index i);
  // Drops entries <= i (i <= applied). The term of i becomes snap_term.
  void CompactTo(Index i);
  // Replaces the whole log with a snapshot (from a leader): committed,
  // stabled and the snapshot offset move to meta.index. `applied` is not
  // moved here; the caller moves it when the driver has applied the
  // snapshot.
  void ResetToSnapshot(Index index, Term term);
  // Restart: the persisted state.
  void Restore(Index snap_index, Term snap_term, std::vector<Entry> entries,
               Index committed);

 private:
  Index snap_index_ = 0;
  Term snap_term_ = 0;
  std::vector<Entry> entries_;  // entries_[k].index == snap_index_ + 1 + k
  Index committed_ = 0;
  Index stabled_ = 0;
  Index applied_ = 0;
};

}  // namespace faultline::raftkv::raft

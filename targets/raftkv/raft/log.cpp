// In-memory Raft log with a snapshot offset (log.h).
#include "targets/raftkv/raft/log.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace faultline::raftkv::raft {

void Fatal(const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: raft invariant broken: %s\n", file, line, what);
  std::abort();
}

Term RaftLog::last_term() const {
  return entries_.empty() ? snap_term_ : entries_.back().term;
}

bool RaftLog::TermAt(Index i, Term* t) const {
  if (i == snap_index_) {
    *t = snap_term_;
    return true;
  }
  if (i < snap_index_ || i > last_index()) return false;
  *t = entries_[i - snap_index_ - 1].term;
  return true;
}

Term RaftLog::TermOr0(Index i) const {
  Term t = 0;
  return TermAt(i, &t) ? t : 0;
}

bool RaftLog::MatchTerm(Index i, Term t) const {
  Term have = 0;
  return TermAt(i, &have) && have == t;
}

bool RaftLog::IsUpToDate(Index last_idx, Term last_term_in) const {
  Term mine = last_term();
  return last_term_in > mine ||
         (last_term_in == mine && last_idx >= last_index());
}

const Entry* RaftLog::At(Index i) const {
  if (i <= snap_index_ || i > last_index()) return nullptr;
  return &entries_[i - snap_index_ - 1];
}

void RaftLog::Append(Entry e) {
  RAFT_CHECK(e.index == last_index() + 1);
  RAFT_CHECK(e.term >= last_term());
  entries_.push_back(std::move(e));
}

Index RaftLog::AppendAfter(Index prev_index, const std::vector<Entry>& es,
                           bool allow_committed_conflict) {
  Index idx = prev_index;
  for (const Entry& e : es) {
    ++idx;
    RAFT_CHECK(e.index == idx);
    Term have = 0;
    if (TermAt(idx, &have)) {
      if (have == e.term) continue;
      // Conflict: a committed entry can never be overwritten.
      RAFT_CHECK(idx > committed_ || allow_committed_conflict);
      RAFT_CHECK(idx > snap_index_);
      entries_.resize(idx - snap_index_ - 1);
      if (stabled_ >= idx) stabled_ = idx - 1;
    }
    RAFT_CHECK(idx == last_index() + 1);
    entries_.push_back(e);
  }
  return idx;
}

Index RaftLog::FindConflictByTerm(Index index, Term term) const {
  Index i = std::min(index, last_index());
  while (i > snap_index_) {
    Term t = 0;
    if (TermAt(i, &t) && t <= term) return i;
    --i;
  }
  return snap_index_;
}

std::vector<Entry> RaftLog::Slice(Index lo, Index hi, std::size_t max_count,
                                  std::size_t max_bytes) const {
  std::vector<Entry> out;
  RAFT_CHECK(lo > snap_index_);
  hi = std::min(hi, last_index());
  std::size_t bytes = 0;
  for (Index i = lo; i <= hi; ++i) {
    const Entry& e = entries_[i - snap_index_ - 1];
    if (!out.empty() &&
        (out.size() >= max_count || bytes + e.data.size() > max_bytes))
      break;
    bytes += e.data.size();
    out.push_back(e);
  }
  return out;
}

void RaftLog::CommitTo(Index i) {
  if (i <= committed_) return;
  RAFT_CHECK(i <= last_index());
  committed_ = i;
}

void RaftLog::StableTo(Index i, Term t) {
  if (MatchTerm(i, t) && i > stabled_) stabled_ = i;
}

void RaftLog::AppliedTo(Index i) {
  if (i <= applied_) return;
  RAFT_CHECK(i <= committed_);
  applied_ = i;
}

void RaftLog::CompactTo(Index i) {
  if (i <= snap_index_) return;
  RAFT_CHECK(i <= applied_ && i <= last_index());
  Term t = TermOr0(i);
  entries_.erase(
      entries_.begin(),
      entries_.begin() + static_cast<std::ptrdiff_t>(i - snap_index_));
  snap_index_ = i;
  snap_term_ = t;
}

void RaftLog::ResetToSnapshot(Index index, Term term) {
  RAFT_CHECK(index >= committed_);
  entries_.clear();
  snap_index_ = index;
  snap_term_ = term;
  committed_ = index;
  stabled_ = index;
}

void RaftLog::Restore(Index snap_index, Term snap_term,
                      std::vector<Entry> entries, Index committed) {
  snap_index_ = snap_index;
  snap_term_ = snap_term;
  entries_ = std::move(entries);
  for (std::size_t k = 0; k < entries_.size(); ++k)
    RAFT_CHECK(entries_[k].index == snap_index_ + 1 + k);
  stabled_ = last_index();
  applied_ = snap_index_;
  committed_ = std::max(snap_index_, std::min(committed, last_index()));
}

}  // namespace faultline::raftkv::raft

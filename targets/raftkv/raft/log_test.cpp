// RaftLog and Progress unit tests.
#include "targets/raftkv/raft/log.h"

#include <catch2/catch.hpp>

#include "targets/raftkv/raft/progress.h"

namespace faultline::raftkv::raft {
namespace {

std::vector<Entry> Entries(Index from, std::vector<Term> terms) {
  std::vector<Entry> es;
  for (Term t : terms) es.push_back(Entry{t, from++, EntryType::kNormal, "d"});
  return es;
}

TEST_CASE("log: follower appends keep matching entries, cut conflicts") {
  RaftLog log;
  CHECK(log.AppendAfter(0, Entries(1, {1, 1, 2, 2})) == 4);
  log.StableTo(4, 2);
  CHECK(log.stabled() == 4);
  // Re-sending a prefix changes nothing.
  CHECK(log.AppendAfter(1, Entries(2, {1, 2})) == 3);
  CHECK(log.last_index() == 4);
  CHECK(log.stabled() == 4);
  // A conflict at 3 replaces 3.. and pulls `stabled` back.
  CHECK(log.AppendAfter(2, Entries(3, {3})) == 3);
  CHECK(log.last_index() == 3);
  CHECK(log.last_term() == 3);
  CHECK(log.stabled() == 2);
  CHECK(log.MatchTerm(3, 3));
  CHECK_FALSE(log.MatchTerm(3, 2));
  CHECK_FALSE(log.MatchTerm(9, 3));
}

TEST_CASE("log: up-to-date comparison and fast backup") {
  RaftLog log;
  log.AppendAfter(0, Entries(1, {1, 1, 3, 3, 5}));
  CHECK(log.IsUpToDate(5, 5));
  CHECK(log.IsUpToDate(1, 6));
  CHECK_FALSE(log.IsUpToDate(9, 4));
  CHECK_FALSE(log.IsUpToDate(4, 5));
  CHECK(log.FindConflictByTerm(5, 4) == 4);
  CHECK(log.FindConflictByTerm(5, 2) == 2);
  CHECK(log.FindConflictByTerm(3, 1) == 2);
  CHECK(log.FindConflictByTerm(9, 9) == 5);
  CHECK(log.FindConflictByTerm(5, 0) == 0);
}

TEST_CASE("log: compaction keeps the term at the snapshot index") {
  RaftLog log;
  log.AppendAfter(0, Entries(1, {1, 2, 2, 3}));
  log.StableTo(4, 3);
  log.CommitTo(3);
  log.AppliedTo(3);
  log.CompactTo(2);
  CHECK(log.snap_index() == 2);
  CHECK(log.snap_term() == 2);
  CHECK(log.At(2) == nullptr);
  REQUIRE(log.At(3) != nullptr);
  CHECK(log.At(3)->index == 3);
  CHECK(log.MatchTerm(2, 2));
  Term t = 0;
  CHECK_FALSE(log.TermAt(1, &t));
  // Slices honour the byte and count limits but return at least one entry.
  auto s = log.Slice(3, 4, 10, 0);
  CHECK(s.size() == 1);
  s = log.Slice(3, 4, 10, 100);
  CHECK(s.size() == 2);
  log.ResetToSnapshot(10, 4);
  CHECK(log.last_index() == 10);
  CHECK(log.committed() == 10);
  CHECK(log.stabled() == 10);
  CHECK(log.applied() == 3);
}

TEST_CASE("progress: probe sends one at a time, replicate fills a window") {
  Progress p(5, 3);
  CHECK(p.state() == ProgressState::kProbe);
  CHECK_FALSE(p.IsPaused());
  p.SentEntries(7);
  CHECK(p.IsPaused());
  // A rejection of an append we did not just send is stale.
  CHECK_FALSE(p.MaybeDecrTo(2, 1));
  CHECK(p.MaybeDecrTo(4, 2));
  CHECK(p.next() == 3);
  CHECK_FALSE(p.IsPaused());
  CHECK(p.MaybeUpdate(4));
  p.BecomeReplicate();
  CHECK(p.next() == 5);
  p.SentEntries(6);
  p.SentEntries(8);
  p.SentEntries(9);
  CHECK(p.next() == 10);
  CHECK(p.IsPaused());  // window of 3 full
  CHECK(p.MaybeUpdate(8));
  CHECK(p.inflight() == 1);
  CHECK_FALSE(p.IsPaused());
  // In replicate, a rejection at or below match is stale; above it, next
  // falls back to match + 1.
  CHECK_FALSE(p.MaybeDecrTo(7, 0));
  CHECK(p.MaybeDecrTo(9, 0));
  CHECK(p.next() == 9);
}

TEST_CASE("progress: snapshot state ends when the follower passes it") {
  Progress p(1, 8);
  p.BecomeSnapshot(50);
  CHECK(p.IsPaused());
  CHECK(p.pending_snapshot() == 50);
  p.SetSnapOffset(100);
  CHECK(p.snap_offset() == 100);
  p.MaybeUpdate(50);
  p.BecomeProbe();
  CHECK(p.next() == 51);
  CHECK(p.snap_offset() == 0);
}

}  // namespace
}  // namespace faultline::raftkv::raft

// Crash at every write boundary of a scripted (and of seeded random)
// sequences of saves, under several power-loss models including torn last
// writes; after recovery the state must be the acknowledged one, or a later
// one the crash interrupted, never anything else.
#include <catch2/catch.hpp>
#include <random>

#include "targets/raftkv/storage/fault_env.h"
#include "targets/raftkv/storage/storage.h"
#include "targets/raftkv/storage/storage_test_util.h"

namespace faultline::raftkv::storage {
namespace {

using testing::E;
using testing::Model;
using testing::Op;
using testing::Range;
using testing::SaveOp;
using testing::SnapOp;
using Loss = FaultEnv::PowerLoss;

constexpr char kDir[] = "/data/n1";

DiskStorage::Options SmallSegments() {
  DiskStorage::Options o;
  o.segment_bytes = 300;  // roll every few saves
  return o;
}

// Overwrites, unsynced saves, a snapshot that keeps the log, one past its
// end, one with a conflicting term, and segment rolls.
std::vector<Op> Script() {
  using raft::HardState;
  return {
      SaveOp(HardState{1, 1, 0}, Range(1, 3, 1), true),
      SaveOp(std::nullopt, Range(4, 4, 1), false),
      SaveOp(HardState{1, 1, 3}, Range(5, 5, 1, 40), true),
      SaveOp(HardState{2, 2, 3}, Range(4, 6, 2), true),  // overwrites 4..5
      SaveOp(std::nullopt, Range(7, 10, 2, 30), true),
      SaveOp(HardState{2, 2, 8}, {}, false),
      SnapOp(6, 2),  // keeps 7..10
      SaveOp(std::nullopt, Range(11, 11, 2, 100), true),
      SaveOp(HardState{3, 0, 8}, {}, true),
      SaveOp(HardState{3, 3, 8}, Range(9, 10, 3), true),  // drops 11
      SnapOp(14, 3),  // past the end: log discarded
      SaveOp(std::nullopt, Range(15, 16, 3, 20), true),
      SnapOp(16, 4),  // conflicting term at 16: log discarded
      SaveOp(HardState{4, 1, 16}, Range(17, 17, 4), true),
      SaveOp(std::nullopt, Range(18, 19, 4, 60), false),
      SaveOp(HardState{5, 5, 17}, Range(18, 18, 5), true),
      SaveOp(std::nullopt, Range(19, 20, 5), false),
  };
}

// A random valid sequence: appends, overwrites, hard states, snapshots.
std::vector<Op> RandomScript(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  Model m;
  raft::Term term = 1;
  std::vector<Op> ops;
  for (int i = 0; i < n; ++i) {
    Op op;
    std::uint64_t kind = pick(0, 9);
    if (kind == 0 && m.Last() > 0) {
      // Snapshot: at or inside the log (kept or conflicting), or past it.
      raft::Index at = pick(m.SnapIndex(), m.Last() + 2);
      if (at == 0) at = 1;
      raft::Term t = term;
      auto it = m.log.find(at);
      if (it != m.log.end() && pick(0, 2) != 0) t = it->second.term;
      if (at == m.SnapIndex()) t = m.snap->meta.term;
      op = SnapOp(at, t);
    } else {
      if (pick(0, 3) == 0) ++term;
      raft::Index from = m.Last() + 1;
      if (pick(0, 3) == 0 && m.Last() > 1) {
        // Overwrite a suffix, sometimes overlapping the snapshot.
        raft::Index lo = m.SnapIndex() > 1 ? m.SnapIndex() - 1 : 1;
        from = pick(lo, m.Last());
      }
      raft::Index count = pick(0, 4);
      op.entries = Range(from, from + count - 1, term, pick(0, 80));
      if (count == 0 || pick(0, 2) == 0) {
        op.hs = raft::HardState{term, pick(0, 3), m.SnapIndex()};
      }
      op.sync = pick(0, 3) != 0;
    }
    m.Apply(op);
    ops.push_back(std::move(op));
  }
  return ops;
}

std::vector<Loss> Losses() {
  std::vector<Loss> out;
  for (bool names : {false, true}) {
    out.push_back({Loss::Data::kSyncedOnly, 0, names});
    out.push_back({Loss::Data::kAll, 0, names});
    for (std::size_t keep : {0, 1, 5, 9, 13, 30, 1000000}) {
      out.push_back({Loss::Data::kTornLast, keep, names});
    }
  }
  return out;
}

struct Totals {
  int runs = 0;
  int torn = 0;            // recoveries that cut a torn tail
  int beyond_acked = 0;    // recovered an unacknowledged later state
  int double_crashes = 0;  // crashes during recovery, checked
};

// Runs `ops` crashing after boundary k under `loss`, recovers, checks.
// Returns "" or a description of the violation.
std::string CrashOnce(const std::vector<Op>& ops,
                      const std::vector<Model>& states, int k, const Loss& loss,
                      Totals* totals) {
  FaultEnv env;
  env.CrashAfter(k);
  std::size_t started = 0, acked = 0;
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(kDir, &env, SmallSegments(), &rec, &err);
    for (std::size_t i = 0; s && i < ops.size(); ++i) {
      started = i + 1;
      if (!testing::Run(s.get(), ops[i]).empty()) break;
      if (ops[i].durable()) acked = i + 1;
    }
  }
  env.LosePower(loss);
  const auto crashed_disk = env.Clone();
  const int before_recovery = env.boundaries();
  Recovered rec;
  std::string err;
  auto s = DiskStorage::Open(kDir, &env, SmallSegments(), &rec, &err);
  std::string where = "crash after boundary " + std::to_string(k) +
                      " (ops started " + std::to_string(started) + ", acked " +
                      std::to_string(acked) + ", loss " +
                      std::to_string(static_cast<int>(loss.data)) + "/" +
                      std::to_string(loss.torn_keep) + "/" +
                      std::to_string(loss.keep_unsynced_names) + ")";
  if (!s) return where + ": Open failed: " + err;
  ++totals->runs;
  if (rec.torn_records > 0) ++totals->torn;
  std::size_t match = states.size();
  for (std::size_t j = acked; j <= started; ++j) {
    if (states[j].Matches(rec)) {
      match = j;
      break;
    }
  }
  if (match == states.size()) {
    std::string allowed;
    for (std::size_t j = acked; j <= started; ++j) {
      allowed += "\n  state " + std::to_string(j) + ": " + states[j].Describe();
    }
    return where + ": recovered " + testing::Describe(rec) +
           "\nallowed:" + allowed;
  }
  if (match > acked) ++totals->beyond_acked;

  // A second crash during recovery itself (cutting the tail, finishing a
  // snapshot) changes nothing: recovery from there gives the same state.
  const int recovery_boundaries = env.boundaries() - before_recovery;
  for (int j = 0; j < recovery_boundaries; ++j) {
    for (const Loss& loss2 : {Loss{Loss::Data::kSyncedOnly, 0, false},
                              Loss{Loss::Data::kTornLast, 7, true}}) {
      auto again = crashed_disk->Clone();
      again->CrashAfter(before_recovery + j);
      {
        Recovered ignored;
        DiskStorage::Open(kDir, again.get(), SmallSegments(), &ignored, &err);
      }
      again->LosePower(loss2);
      Recovered rec2;
      if (!DiskStorage::Open(kDir, again.get(), SmallSegments(), &rec2, &err)) {
        return where + ", then during recovery after " + std::to_string(j) +
               ": Open failed: " + err;
      }
      if (!states[match].Matches(rec2)) {
        return where + ", then during recovery after " + std::to_string(j) +
               ": recovered " + testing::Describe(rec2) + ", want " +
               states[match].Describe();
      }
      ++totals->double_crashes;
    }
  }

  // The recovered storage keeps working: one more save survives a restart.
  Model m = states[match];
  Op next = SaveOp(raft::HardState{9, 1, 0}, {E(m.Last() + 1, 9)}, true);
  if (std::string e = testing::Run(s.get(), next); !e.empty()) {
    return where + ": save after recovery: " + e;
  }
  m.Apply(next);
  s.reset();
  s = DiskStorage::Open(kDir, &env, SmallSegments(), &rec, &err);
  if (!s) return where + ": reopen after recovery: " + err;
  if (!m.Matches(rec) || rec.torn_records != 0) {
    return where + ": after recovery+save got " + testing::Describe(rec) +
           ", want " + m.Describe();
  }
  return "";
}

Totals CrashEverywhere(const std::vector<Op>& ops) {
  std::vector<Model> states(1);
  for (const auto& op : ops) {
    states.push_back(states.back());
    states.back().Apply(op);
  }
  // Dry run: every op succeeds, and the number of boundaries.
  FaultEnv dry;
  {
    Recovered rec;
    std::string err;
    auto s = DiskStorage::Open(kDir, &dry, SmallSegments(), &rec, &err);
    REQUIRE(s);
    for (const auto& op : ops) {
      INFO(op.Describe());
      REQUIRE(testing::Run(s.get(), op) == "");
    }
  }
  const int total = dry.boundaries();
  Totals totals;
  for (int k = 0; k <= total; ++k) {
    for (const Loss& loss : Losses()) {
      std::string problem = CrashOnce(ops, states, k, loss, &totals);
      if (!problem.empty()) {
        std::string trace;
        for (const auto& t : dry.trace()) trace += "\n  " + t;
        std::string script;
        for (const auto& op : ops) script += "\n  " + op.Describe();
        FAIL(problem << "\nops:" << script
                     << "\nboundaries of the dry run:" << trace);
      }
    }
  }
  return totals;
}

TEST_CASE("crash at every write boundary of a scripted sequence",
          "[storage][crash]") {
  Totals t = CrashEverywhere(Script());
  INFO("runs " << t.runs << ", torn " << t.torn << ", beyond acked "
               << t.beyond_acked << ", double crashes " << t.double_crashes);
  CHECK(t.runs > 1000);
  CHECK(t.torn > 100);         // torn tails really were produced and cut
  CHECK(t.beyond_acked > 10);  // and in-flight saves sometimes survive
  CHECK(t.double_crashes > 100);
}

TEST_CASE("crash at every write boundary of seeded random sequences",
          "[storage][crash]") {
  int torn = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    INFO("seed " << seed);
    Totals t = CrashEverywhere(RandomScript(seed, 25));
    torn += t.torn;
  }
  CHECK(torn > 0);
}

}  // namespace
}  // namespace faultline::raftkv::storage

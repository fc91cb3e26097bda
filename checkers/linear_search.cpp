// The Wing & Gong / Lowe depth-first search over one segment of a partition,
// with memoization of (linearized set, state).
//
// Entries: one call entry per op and one return entry per mandatory op,
// sorted by position, in a doubly linked list. The search walks the list
// from the head: a call entry is a candidate to linearize next (lift it and
// its return out of the list); reaching a return entry means the op it
// belongs to was not linearized in time, so the search backtracks. Optional
// ops (crashed, not closed) have no return entry: they may be linearized
// whenever they are a candidate, or never. The segment is done when every
// mandatory op is linearized.
//
// Memo keys are compact and exact. Let r be the first return entry still in
// the list. Every mandatory op returning before r is linearized, every op
// called after r is not, so the linearized set L is determined by r, the
// bits of L over the ops called between lo(r) (the smallest index of a
// mandatory op returning at or after r) and r, and the bits of L over the
// optional ops called before lo(r). The key is (r, state, those bits): its
// size is the concurrency around r, not the segment length. The hash is an
// incremental Zobrist hash of L mixed with the state.
//
// The prefix reported on a violation is the one that got furthest in time:
// the latest first remaining return entry (the blocker), then the deepest.
// Since the search visits every reachable (L, state), the blocker's return
// is then the earliest instant at which the segment stops being
// linearizable. With Limits::bound, the search stops (kPassed) as soon as
// that entry lies after the bound: a violation of this key, if any, comes
// later than one already found.
#include <algorithm>
#include <cstring>

#include "checkers/linear_internal.h"

namespace faultline::checkers::linear {
namespace {

std::uint64_t SplitMix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Appends bits [lo, hi) of `bits` to `out`, 64 per word.
void AppendBits(const std::vector<std::uint64_t>& bits, std::size_t lo,
                std::size_t hi, std::vector<std::uint64_t>& out) {
  std::size_t n = hi - lo;
  for (std::size_t k = 0; k < n; k += 64) {
    std::size_t b = lo + k;
    std::size_t w = b >> 6;
    std::size_t sh = b & 63;
    std::uint64_t x = bits[w] >> sh;
    if (sh != 0 && w + 1 < bits.size()) x |= bits[w + 1] << (64 - sh);
    std::size_t take = std::min<std::size_t>(64, n - k);
    if (take < 64) x &= (std::uint64_t{1} << take) - 1;
    out.push_back(x);
  }
}

// Open-addressing set of variable-length keys stored in one arena.
class Memo {
 public:
  // True when the key was not present (and is now).
  bool Insert(std::uint64_t hash, const std::vector<std::uint64_t>& key) {
    if ((count_ + 1) * 10 > slots_.size() * 7) Grow();
    std::size_t mask = slots_.size() - 1;
    std::size_t i = SplitMix(hash) & mask;
    while (slots_[i].len != 0) {
      const Slot& s = slots_[i];
      if (s.hash == hash && s.len == key.size() &&
          std::memcmp(&arena_[s.off], key.data(), key.size() * 8) == 0) {
        return false;
      }
      i = (i + 1) & mask;
    }
    slots_[i] = {hash, arena_.size(), static_cast<std::uint32_t>(key.size())};
    arena_.insert(arena_.end(), key.begin(), key.end());
    ++count_;
    return true;
  }
  std::size_t count() const { return count_; }
  std::uint64_t bytes() const {
    return slots_.capacity() * sizeof(Slot) + arena_.capacity() * 8;
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::size_t off = 0;
    std::uint32_t len = 0;  // 0: empty (keys have >= 1 word)
  };
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.len == 0) continue;
      std::size_t i = SplitMix(s.hash) & mask;
      while (slots_[i].len != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::vector<std::uint64_t> arena_;
  std::size_t count_ = 0;
};

class Search {
 public:
  Search(const Partition& p, std::size_t begin, std::size_t end,
         StateTable& table, const Limits& limits)
      : p_(p), begin_(begin), n_(end - begin), table_(table), limits_(limits) {
    Build();
  }
  ~Search() {
    if (limits_.budget != nullptr && charged_ != 0) {
      limits_.budget->Charge(-static_cast<std::int64_t>(charged_));
    }
  }

  SegmentResult Run(const std::vector<std::uint32_t>& starts, bool all_ends,
                    bool witness);

 private:
  struct Entry {
    std::int64_t pos;
    std::int32_t op;
    bool is_call;
  };
  struct Frame {
    std::int32_t op;
    std::uint32_t state;
    std::int32_t node;
  };
  struct Node {
    std::int32_t op;
    std::int32_t parent;
  };

  void Build();
  void Lift(std::int32_t i) {
    Unlink(call_ent_[i]);
    if (ret_ent_[i] >= 0) Unlink(ret_ent_[i]);
  }
  void Unlift(std::int32_t i) {
    if (ret_ent_[i] >= 0) Relink(ret_ent_[i]);
    Relink(call_ent_[i]);
  }
  void Unlink(std::int32_t e) {
    next_[prev_[e]] = next_[e];
    if (next_[e] >= 0) prev_[next_[e]] = prev_[e];
  }
  void Relink(std::int32_t e) {
    next_[prev_[e]] = e;
    if (next_[e] >= 0) prev_[next_[e]] = e;
  }
  void SetBit(std::int32_t i, bool on) {
    std::uint64_t m = std::uint64_t{1} << (i & 63);
    if (on) {
      lin_[i >> 6] |= m;
    } else {
      lin_[i >> 6] &= ~m;
    }
    if (opt_rank_[i] >= 0) {
      std::int32_t r = opt_rank_[i];
      std::uint64_t mo = std::uint64_t{1} << (r & 63);
      if (on) {
        optlin_[r >> 6] |= mo;
      } else {
        optlin_[r >> 6] &= ~mo;
      }
    }
    zob_ ^= zobrist_[i];
  }
  // The list node of the first return entry still in the list, or -1.
  std::int32_t FirstReturn() const {
    std::int32_t e = next_[0];
    while (e >= 0 && ents_[e - 1].is_call) e = next_[e];
    return e;
  }
  // Key of the current (L, state) into key_; returns its hash. Sets
  // first_ret_ to FirstReturn().
  std::uint64_t MakeKey(std::uint32_t state);
  std::int64_t Bound() const {
    return limits_.bound == nullptr
               ? kNever
               : limits_.bound->load(std::memory_order_relaxed);
  }
  bool OverLimits(std::string& why);
  bool ChargeMemory();

  const Partition& p_;
  std::size_t begin_;
  std::size_t n_;
  StateTable& table_;
  const Limits& limits_;

  std::vector<Entry> ents_;  // list node k+1 is ents_[k]; node 0 is the head
  std::vector<std::int32_t> next_, prev_;
  std::vector<std::int32_t> call_ent_, ret_ent_;  // list nodes per op
  std::vector<std::int32_t> opt_rank_;            // -1 for mandatory ops
  std::vector<std::int32_t> opt_before_;          // optional ops below index
  std::vector<std::int32_t> lo_, hi_;             // per mandatory op
  std::vector<std::uint64_t> zobrist_;
  std::vector<std::uint64_t> lin_, optlin_;
  std::uint64_t zob_ = 0;
  std::int32_t mandatory_ = 0;
  std::vector<std::uint64_t> key_;
  Memo memo_;
  std::vector<Frame> stack_;
  std::vector<Node> nodes_;
  std::uint64_t charged_ = 0;
  std::uint32_t meter_ticks_ = 0;
  std::int32_t first_ret_ = -1;
};

void Search::Build() {
  ents_.reserve(2 * n_);
  call_ent_.assign(n_, -1);
  ret_ent_.assign(n_, -1);
  opt_rank_.assign(n_, -1);
  opt_before_.assign(n_ + 1, 0);
  zobrist_.resize(n_);
  std::int32_t opts = 0;
  for (std::size_t i = 0; i < n_; ++i) {
    const Op& op = p_.ops[begin_ + i];
    auto ii = static_cast<std::int32_t>(i);
    ents_.push_back({op.call, ii, true});
    if (op.mandatory()) {
      ents_.push_back({op.ret, ii, false});
      ++mandatory_;
    } else {
      opt_rank_[i] = opts++;
    }
    opt_before_[i + 1] = opts;
    zobrist_[i] = SplitMix(i * 0x2545f4914f6cdd1dULL + 0x1234567);
  }
  std::stable_sort(ents_.begin(), ents_.end(),
                   [](const Entry& a, const Entry& b) {
                     if (a.pos != b.pos) return a.pos < b.pos;
                     return a.op < b.op;
                   });
  std::size_t e = ents_.size();
  next_.assign(e + 1, -1);
  prev_.assign(e + 1, 0);
  for (std::size_t k = 0; k < e; ++k) {
    auto node = static_cast<std::int32_t>(k + 1);
    prev_[node] = static_cast<std::int32_t>(k);
    next_[k] = node;
    if (ents_[k].is_call) {
      call_ent_[ents_[k].op] = node;
    } else {
      ret_ent_[ents_[k].op] = node;
    }
  }
  // lo/hi per mandatory op, walking return entries from the last.
  lo_.assign(n_, 0);
  hi_.assign(n_, 0);
  std::int32_t calls_before = 0;
  for (std::size_t k = 0; k < e; ++k) {
    if (ents_[k].is_call) {
      ++calls_before;
    } else {
      hi_[ents_[k].op] = calls_before;
    }
  }
  std::int32_t min_idx = static_cast<std::int32_t>(n_);
  for (std::size_t k = e; k-- > 0;) {
    if (ents_[k].is_call) continue;
    min_idx = std::min(min_idx, ents_[k].op);
    lo_[ents_[k].op] = min_idx;
  }
  lin_.assign((n_ + 63) / 64 + 1, 0);
  optlin_.assign(static_cast<std::size_t>(opts + 63) / 64 + 1, 0);
}

std::uint64_t Search::MakeKey(std::uint32_t state) {
  std::int32_t e = FirstReturn();
  first_ret_ = e;
  std::size_t lo = n_;
  std::size_t hi = n_;
  std::uint64_t r = 0xffffffffULL;
  if (e >= 0) {
    std::int32_t op = ents_[e - 1].op;
    r = static_cast<std::uint64_t>(op);
    lo = static_cast<std::size_t>(lo_[op]);
    hi = static_cast<std::size_t>(hi_[op]);
  }
  key_.clear();
  key_.push_back((r << 32) | state);
  AppendBits(lin_, lo, hi, key_);
  AppendBits(optlin_, 0, static_cast<std::size_t>(opt_before_[lo]), key_);
  return zob_ ^ SplitMix(state + 0x632be59bd9b4e019ULL);
}

bool Search::ChargeMemory() {
  std::uint64_t now = memo_.bytes() + stack_.capacity() * sizeof(Frame) +
                      nodes_.capacity() * sizeof(Node) + table_.bytes();
  if (now < charged_ + (256u << 10)) return true;
  std::int64_t delta = static_cast<std::int64_t>(now - charged_);
  charged_ = now;
  return limits_.budget == nullptr || limits_.budget->Charge(delta);
}

bool Search::OverLimits(std::string& why) {
  if (limits_.cancel != nullptr && limits_.cancel->load()) {
    why = "cancelled";
    return true;
  }
  // Called every 1,024 steps; the meter (a system call) every 65,536.
  if (limits_.budget != nullptr && (++meter_ticks_ & 63) == 0 &&
      limits_.budget->MeterOver()) {
    why = "memory limit reached";
    return true;
  }
  if (limits_.deadline &&
      std::chrono::steady_clock::now() >= *limits_.deadline) {
    why = "deadline reached";
    return true;
  }
  return false;
}

SegmentResult Search::Run(const std::vector<std::uint32_t>& starts,
                          bool all_ends, bool witness) {
  SegmentResult res;
  // The best prefix: the list node of its first return entry (rank), then
  // its depth.
  std::int32_t best_rank = -1;
  std::size_t best_depth = 0;
  std::int32_t best_node = -1;
  bool have_best = false;
  std::uint64_t iter = 0;
  std::vector<bool> is_end;
  auto best_pos = [&] {
    return best_rank > 0 ? ents_[best_rank - 1].pos : kNever;
  };
  auto stop = [&](Outcome outcome, const char* why) {
    res.outcome = outcome;
    res.reason = why;
    res.memo_entries = memo_.count();
    res.best_ret = best_pos();
    return res;
  };

  for (std::uint32_t start : starts) {
    std::uint32_t state = start;
    std::int32_t node = -1;
    std::int32_t remaining = mandatory_;
    std::int32_t entry = next_[0];
    stack_.clear();
    // The empty prefix from this start (the same rank for every start).
    std::int32_t rank0 = FirstReturn();
    if (!have_best || rank0 > best_rank) {
      have_best = true;
      best_rank = rank0;
      best_depth = 0;
      best_node = -1;
      res.best_state = start;
      res.best_start = start;
    }
    while (true) {
      if ((++iter & 1023) == 0) {
        std::string why;
        if (OverLimits(why)) return stop(Outcome::kUnknown, why.c_str());
        if (best_rank > 0 && best_pos() > Bound()) {
          return stop(Outcome::kPassed, "passed the earliest violation");
        }
      }
      bool backtrack = false;
      if (remaining == 0) {
        if (state >= is_end.size()) is_end.resize(state + 1, false);
        if (!is_end[state]) {
          is_end[state] = true;
          res.end_states.push_back(state);
          if (witness) {
            std::vector<std::size_t> order;
            for (std::int32_t k = node; k >= 0; k = nodes_[k].parent) {
              order.push_back(begin_ + nodes_[k].op);
            }
            std::reverse(order.begin(), order.end());
            res.witness_start.push_back(start);
            res.witness_order.push_back(std::move(order));
          }
        }
        if (!all_ends) break;
        backtrack = true;
      } else if (ents_[entry - 1].is_call) {
        std::int32_t i = ents_[entry - 1].op;
        std::int64_t ns = table_.Step(state, begin_ + i);
        if (ns < 0) {
          entry = next_[entry];
          continue;
        }
        bool mand = ret_ent_[i] >= 0;
        Lift(i);
        SetBit(i, true);
        if (mand) --remaining;
        auto nstate = static_cast<std::uint32_t>(ns);
        std::uint64_t h = MakeKey(nstate);
        if (memo_.Insert(h, key_)) {
          stack_.push_back({i, state, node});
          nodes_.push_back({i, node});
          node = static_cast<std::int32_t>(nodes_.size() - 1);
          state = nstate;
          if (first_ret_ > 0 &&
              (first_ret_ > best_rank ||
               (first_ret_ == best_rank && stack_.size() > best_depth))) {
            bool later = first_ret_ > best_rank;
            best_rank = first_ret_;
            best_depth = stack_.size();
            best_node = node;
            res.best_state = state;
            res.best_start = start;
            if (later && best_pos() > Bound()) {
              return stop(Outcome::kPassed, "passed the earliest violation");
            }
          }
          if (!ChargeMemory()) {
            return stop(Outcome::kUnknown, "memory limit reached");
          }
          entry = next_[0];
          continue;
        }
        SetBit(i, false);
        Unlift(i);
        if (mand) ++remaining;
        entry = next_[entry];
        continue;
      } else {
        backtrack = true;
      }
      if (backtrack) {
        if (stack_.empty()) break;
        Frame f = stack_.back();
        stack_.pop_back();
        SetBit(f.op, false);
        Unlift(f.op);
        if (ret_ent_[f.op] >= 0) ++remaining;
        state = f.state;
        node = f.node;
        entry = next_[call_ent_[f.op]];
      }
    }
    // Reset the list and bits for the next start.
    while (!stack_.empty()) {
      Frame f = stack_.back();
      stack_.pop_back();
      SetBit(f.op, false);
      Unlift(f.op);
    }
    if (!all_ends && !res.end_states.empty()) break;
  }
  res.memo_entries = memo_.count();
  if (!res.end_states.empty()) {
    res.outcome = Outcome::kOk;
    return res;
  }
  res.outcome = Outcome::kViolation;
  res.best_ret = best_pos();
  for (std::int32_t k = best_node; k >= 0; k = nodes_[k].parent) {
    res.best_prefix.push_back(begin_ + nodes_[k].op);
  }
  std::reverse(res.best_prefix.begin(), res.best_prefix.end());
  return res;
}

// A segment of one op, without building a Search: the same results
// (memo count and best prefix included) as Search::Run, which here either
// applies the op (mandatory: one memo entry per distinct next state) or,
// for an optional op, stops before trying it because no mandatory op
// remains (optional ops only occur in a key's last segment, see
// QuiescentSplits, which is never searched for all end states).
SegmentResult SearchOne(const Partition& p, std::size_t begin,
                        const std::vector<std::uint32_t>& starts, bool all_ends,
                        bool witness, StateTable& table) {
  SegmentResult res;
  bool mandatory = p.ops[begin].mandatory();
  std::vector<std::uint32_t> seen;  // memoized next states (few)
  bool have_best = false, advanced = false;
  auto add_end = [&](std::uint32_t state, std::uint32_t start, bool applied) {
    for (std::uint32_t e : res.end_states) {
      if (e == state) return;
    }
    res.end_states.push_back(state);
    if (witness) {
      res.witness_start.push_back(start);
      res.witness_order.push_back(applied ? std::vector<std::size_t>{begin}
                                          : std::vector<std::size_t>{});
    }
  };
  for (std::uint32_t start : starts) {
    if (!have_best) {
      have_best = true;
      res.best_state = start;
      res.best_start = start;
    }
    if (!mandatory) {
      add_end(start, start, false);
    } else {
      std::int64_t ns = table.Step(start, begin);
      if (ns >= 0) {
        auto next = static_cast<std::uint32_t>(ns);
        if (std::find(seen.begin(), seen.end(), next) == seen.end()) {
          seen.push_back(next);
          if (!advanced) {
            advanced = true;
            res.best_state = next;
            res.best_start = start;
          }
          add_end(next, start, true);
        }
      }
    }
    if (!all_ends && !res.end_states.empty()) break;
  }
  res.memo_entries = seen.size();
  res.outcome = res.end_states.empty() ? Outcome::kViolation : Outcome::kOk;
  if (res.outcome == Outcome::kViolation) res.best_ret = p.ops[begin].ret;
  return res;
}

}  // namespace

SegmentResult SearchSegment(const Partition& p, std::size_t begin,
                            std::size_t end,
                            const std::vector<std::uint32_t>& starts,
                            bool all_ends, bool witness, StateTable& table,
                            const Limits& limits) {
  if (end == begin + 1) {
    SegmentResult res = SearchOne(p, begin, starts, all_ends, witness, table);
    res.seg_begin = begin;
    res.seg_end = end;
    return res;
  }
  Search search(p, begin, end, table, limits);
  SegmentResult res = search.Run(starts, all_ends, witness);
  res.seg_begin = begin;
  res.seg_end = end;
  return res;
}

}  // namespace faultline::checkers::linear

// Mutual exclusion with fencing: holds, overlaps, tokens and protected
// resources. See mutex_fencing.h for the definitions and
// docs/history-locks.md for the vocabulary.
#include "checkers/mutex_fencing.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "checkers/history_io.h"
#include "checkers/op_pairs.h"

namespace faultline::checkers {
namespace {

// One client operation: its invoke and its completion (if any).
using Op = PairedOp;

std::optional<std::int64_t> IntOf(const Value& v) {
  if (v.is_int()) return v.as_int();
  return std::nullopt;
}

LockOpRef RefOf(const History& h, const Op& op, std::optional<std::int64_t> t) {
  LockOpRef r;
  r.index = h[op.inv].index;
  r.process = h[op.inv].process;
  r.invoke = op.t_inv;
  r.complete = op.t_done;
  r.token = t;
  return r;
}

struct Write {
  Value resource;
  LockOpRef ref;
  EventType outcome = EventType::kInfo;
  bool rejected = false;  // fail with error "fenced"
  bool fenced = false;
  bool has_lock = false;
  Value lock;
  std::optional<std::size_t> hold;
  bool stale = false;         // fenced, token lower than one granted before
  bool stale_accept = false;  // a violation found by CheckFenced
  bool corrupt = false;       // a violation found by CheckUnfenced
};

// Per-process state during the walk: the holds it currently has, by lock.
using CurrentHolds = std::map<Value, std::size_t>;

class Analyzer {
 public:
  Analyzer(const History& h, const MutexFencingOptions& o)
      : h_(h), max_examples_(std::max(1, o.max_examples)) {
    campaigns_ = o.campaigns_as_holds;
  }

  MutexFencingResult Run() {
    if (auto bad = CheckWellFormed(h_, "")) {
      r_.malformed = ToString(*bad);
      return std::move(r_);
    }
    r_.timed = OrderedByTime(h_);
    for (const Event& e : h_) {
      if (!e.is_nemesis()) r_.end = std::max(r_.end, TimeOf(e, r_.timed));
    }
    Walk();
    r_.locks = static_cast<std::int64_t>(acquires_.size());
    CheckOverlaps();
    CheckTokens();
    CheckWrites();
    JudgeOverlaps();
    return std::move(r_);
  }

 private:
  bool IsAcquire(const std::string& f) const {
    return f == "acquire" || (campaigns_ && f == "campaign");
  }
  bool IsRelease(const std::string& f) const {
    return f == "release" || (campaigns_ && f == "resign");
  }

  void EndHold(CurrentHolds& cur, CurrentHolds::iterator it, const Op& op,
               const char* why) {
    Hold& hold = r_.holds[it->second];
    hold.end = std::max(op.t_inv, hold.start);
    hold.end_index = h_[op.inv].index;
    hold.ended_by = why;
    cur.erase(it);
  }

  void Walk() {
    std::unordered_map<std::int64_t, CurrentHolds> procs;
    for (const Op& op : PairOps(h_, r_.timed)) {
      const Event& inv = h_[op.inv];
      const Event* done = op.done >= 0 ? &h_[op.done] : nullptr;
      CurrentHolds& cur = procs[inv.process];
      const std::string& f = inv.f;
      if (IsAcquire(f)) {
        auto& list = acquires_[inv.key];  // registers the lock
        if (auto it = cur.find(inv.key); it != cur.end()) {
          EndHold(cur, it, op, "acquire");
        }
        if (op.outcome == EventType::kOk) {
          ++r_.acquires_ok;
          Hold hold;
          hold.lock = inv.key;
          hold.acquire = RefOf(h_, op, IntOf(done->value));
          hold.start = op.t_done;
          cur[inv.key] = r_.holds.size();
          r_.holds.push_back(std::move(hold));
          list.push_back(r_.holds.back().acquire);
        } else if (op.outcome == EventType::kFail) {
          ++r_.acquires_fail;
        } else {
          ++r_.acquires_info;
        }
      } else if (IsRelease(f)) {
        if (auto it = cur.find(inv.key); it != cur.end()) {
          EndHold(cur, it, op, "release");
        }
      } else if (f == "renew") {
        if (op.outcome == EventType::kFail) {
          if (auto it = cur.find(inv.key); it != cur.end()) {
            EndHold(cur, it, op, "renew-fail");
          }
        }
      } else if (f == "resource-write") {
        RecordWrite(op, inv, done, cur);
      }
      if (op.outcome == EventType::kInfo) {
        while (!cur.empty()) EndHold(cur, cur.begin(), op, "info");
      }
    }
    for (Hold& hold : r_.holds) {
      if (hold.end_index < 0) {
        hold.open = true;
        hold.end = std::max(r_.end, hold.start);
        hold.ended_by = "end";
      }
    }
    // Writes whose lock is unknown belong to the only lock, if there is one.
    if (acquires_.size() == 1) {
      for (Write& w : writes_) {
        if (!w.has_lock) {
          w.has_lock = true;
          w.lock = acquires_.begin()->first;
        }
      }
    }
  }

  void RecordWrite(const Op& op, const Event& inv, const Event* done,
                   const CurrentHolds& cur) {
    Write w;
    w.resource = inv.key;
    std::optional<std::int64_t> token;
    if (inv.value.is_list() && !inv.value.as_list().empty()) {
      token = IntOf(inv.value.as_list()[0]);
    }
    w.ref = RefOf(h_, op, token);
    w.outcome = op.outcome;
    w.rejected = op.outcome == EventType::kFail && done->error == "fenced";
    const Value* fenced = inv.FindExtra("fenced");
    w.fenced = fenced && fenced->kind() == Value::Kind::kBool
                   ? fenced->as_bool()
                   : token.has_value();
    if (const Value* lock = inv.FindExtra("lock")) {
      w.has_lock = true;
      w.lock = *lock;
      if (auto it = cur.find(*lock); it != cur.end()) w.hold = it->second;
    } else if (!cur.empty()) {
      // The most recently acquired of the process's current holds.
      std::size_t best = cur.begin()->second;
      for (const auto& [name, idx] : cur) {
        (void)name;
        if (r_.holds[idx].start > r_.holds[best].start) best = idx;
      }
      w.has_lock = true;
      w.lock = r_.holds[best].lock;
      w.hold = best;
    }
    switch (op.outcome) {
      case EventType::kOk:
        ++r_.writes_ok;
        break;
      case EventType::kFail:
        ++(w.rejected ? r_.writes_rejected : r_.writes_failed);
        break;
      default:
        ++r_.writes_info;
    }
    writes_.push_back(std::move(w));
  }

  void CheckOverlaps() {
    std::map<Value, std::vector<std::size_t>> by_lock;
    for (std::size_t i = 0; i < r_.holds.size(); ++i) {
      by_lock[r_.holds[i].lock].push_back(i);
    }
    for (auto& [lock, idx] : by_lock) {
      std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        const Hold& x = r_.holds[a];
        const Hold& y = r_.holds[b];
        return std::tie(x.start, x.end, a) < std::tie(y.start, y.end, b);
      });
      // Active holds by end. A process's own holds of one lock never
      // overlap (the next acquire's invoke ends the previous hold), so every
      // active hold belongs to another process.
      std::multimap<std::int64_t, std::size_t> active;
      for (std::size_t i : idx) {
        const Hold& h = r_.holds[i];
        while (!active.empty() && active.begin()->first <= h.start) {
          active.erase(active.begin());
        }
        if (h.end <= h.start) continue;  // empty: overlaps nothing
        r_.overlap_count += static_cast<std::int64_t>(active.size());
        for (auto it = active.begin();
             it != active.end() &&
             r_.overlaps.size() < static_cast<std::size_t>(max_examples_);
             ++it) {
          r_.overlaps.push_back({lock, it->second, i, h.start,
                                 std::min(it->first, h.end), false, ""});
        }
        if (!active.empty()) {
          auto last = std::prev(active.end());
          HoldOverlap o{lock,
                        last->second,
                        i,
                        h.start,
                        std::min(last->first, h.end),
                        false,
                        ""};
          if (!r_.longest_overlap ||
              o.end - o.start >
                  r_.longest_overlap->end - r_.longest_overlap->start) {
            r_.longest_overlap = o;
          }
        }
        active.emplace(h.end, i);
      }
      // Time with two or more holders: ends sort before starts at a tie.
      std::vector<std::pair<std::int64_t, int>> edges;
      for (std::size_t i : idx) {
        const Hold& h = r_.holds[i];
        if (h.end <= h.start) continue;
        edges.emplace_back(h.start, +1);
        edges.emplace_back(h.end, -1);
      }
      std::sort(edges.begin(), edges.end());
      int holders = 0;
      std::int64_t prev = 0;
      for (const auto& [t, d] : edges) {
        if (holders >= 2) r_.overlap_time += t - prev;
        holders += d;
        prev = t;
      }
    }
  }

  void CheckTokens() {
    for (auto& [lock, list] : acquires_) {
      std::vector<LockOpRef> tokened;
      for (const LockOpRef& a : list) {
        if (a.token) tokened.push_back(a);
      }
      std::map<std::int64_t, LockOpRef> first;  // token -> first acquire
      for (const LockOpRef& a : tokened) {
        auto [it, fresh] = first.emplace(*a.token, a);
        if (!fresh) {
          ++r_.token_duplicates;
          AddTokenAnomaly({lock, true, it->second, a});
        }
      }
      // Regressions: a token lower than one granted before this acquire
      // was invoked (equal ones are duplicates, counted above).
      std::vector<LockOpRef> by_done = tokened;
      std::sort(by_done.begin(), by_done.end(),
                [](const LockOpRef& a, const LockOpRef& b) {
                  return std::tie(a.complete, a.index) <
                         std::tie(b.complete, b.index);
                });
      std::vector<LockOpRef> by_inv = std::move(tokened);
      std::sort(by_inv.begin(), by_inv.end(),
                [](const LockOpRef& a, const LockOpRef& b) {
                  return std::tie(a.invoke, a.index) <
                         std::tie(b.invoke, b.index);
                });
      std::size_t j = 0;
      const LockOpRef* best = nullptr;
      for (const LockOpRef& b : by_inv) {
        for (; j < by_done.size() && by_done[j].complete < b.invoke; ++j) {
          if (!best || *by_done[j].token > *best->token) best = &by_done[j];
        }
        if (best && *best->token > *b.token) {
          ++r_.token_regressions;
          AddTokenAnomaly({lock, false, *best, b});
        }
      }
    }
  }

  void AddTokenAnomaly(TokenAnomaly a) {
    if (r_.token_anomalies.size() < static_cast<std::size_t>(max_examples_)) {
      r_.token_anomalies.push_back(std::move(a));
    }
  }

  // Highest token granted (acquire ok) for `lock` strictly before `t`.
  std::optional<std::int64_t> GrantedBefore(const Value& lock, std::int64_t t) {
    auto it = granted_.find(lock);
    if (it == granted_.end()) return std::nullopt;
    const auto& v = it->second;  // (complete, prefix max token), sorted
    auto pos =
        std::lower_bound(v.begin(), v.end(), t,
                         [](const std::pair<std::int64_t, std::int64_t>& e,
                            std::int64_t x) { return e.first < x; });
    if (pos == v.begin()) return std::nullopt;
    return std::prev(pos)->second;
  }

  void CheckWrites() {
    for (const auto& [lock, list] : acquires_) {
      std::vector<std::pair<std::int64_t, std::int64_t>> g;
      for (const LockOpRef& a : list) {
        if (a.token) g.emplace_back(a.complete, *a.token);
      }
      std::sort(g.begin(), g.end());
      for (std::size_t i = 1; i < g.size(); ++i) {
        g[i].second = std::max(g[i].second, g[i - 1].second);
      }
      if (!g.empty()) granted_[lock] = std::move(g);
    }
    std::map<Value, std::vector<std::size_t>> fenced;  // resource -> writes
    std::map<std::pair<Value, Value>, std::vector<std::size_t>> unfenced;
    std::map<Value, bool> resources;
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      Write& w = writes_[i];
      resources[w.resource] = true;
      if (w.fenced) {
        if (w.ref.token && w.has_lock &&
            (w.outcome == EventType::kOk || w.rejected)) {
          auto g = GrantedBefore(w.lock, w.ref.invoke);
          if (g && *g > *w.ref.token) {
            w.stale = true;
            ++r_.stale_writes;
            if (w.outcome == EventType::kOk) ++r_.stale_accepted;
            if (w.rejected) ++r_.stale_rejected;
          }
        }
        if (w.outcome == EventType::kOk && w.ref.token) {
          fenced[w.resource].push_back(i);
        }
      } else if (w.outcome == EventType::kOk) {
        ++r_.writes_unfenced_ok;
        if (w.hold) {
          unfenced[{w.resource, w.lock}].push_back(i);
        } else {
          ++r_.writes_unattributed;
        }
      }
    }
    r_.resources = static_cast<std::int64_t>(resources.size());
    for (auto& [resource, idx] : fenced) CheckFenced(resource, idx);
    for (auto& [key, idx] : unfenced) CheckUnfenced(key.first, key.second, idx);
  }

  void CheckFenced(const Value& resource, std::vector<std::size_t> by_inv) {
    std::vector<std::size_t> by_done = by_inv;
    std::sort(by_done.begin(), by_done.end(),
              [&](std::size_t a, std::size_t b) {
                return std::tie(writes_[a].ref.complete, a) <
                       std::tie(writes_[b].ref.complete, b);
              });
    std::sort(by_inv.begin(), by_inv.end(), [&](std::size_t a, std::size_t b) {
      return std::tie(writes_[a].ref.invoke, a) <
             std::tie(writes_[b].ref.invoke, b);
    });
    std::size_t j = 0;
    const Write* best = nullptr;
    for (std::size_t i : by_inv) {
      const Write& w = writes_[i];
      for (; j < by_done.size() &&
             writes_[by_done[j]].ref.complete < w.ref.invoke;
           ++j) {
        const Write& d = writes_[by_done[j]];
        if (!best || *d.ref.token > *best->ref.token) best = &d;
      }
      if (best && *best->ref.token > *w.ref.token) {
        writes_[i].stale_accept = true;
        ++r_.stale_accepts;
        if (r_.stale_accept_examples.size() <
            static_cast<std::size_t>(max_examples_)) {
          r_.stale_accept_examples.push_back({resource, best->ref, w.ref});
        }
      }
    }
  }

  // Accepted unfenced writes of one resource, attributed to holds of one
  // lock: the older hold's write invoked after a newer hold began, when the
  // newer hold wrote too.
  void CheckUnfenced(const Value& resource, const Value& lock,
                     const std::vector<std::size_t>& idx) {
    std::map<std::size_t, std::size_t> first_write;  // hold -> write
    for (std::size_t i : idx) {
      std::size_t hold = *writes_[i].hold;
      auto [it, fresh] = first_write.emplace(hold, i);
      if (!fresh && writes_[i].ref.invoke < writes_[it->second].ref.invoke) {
        it->second = i;
      }
    }
    std::vector<std::pair<std::int64_t, std::size_t>> starts;  // (start, hold)
    for (const auto& [hold, w] : first_write) {
      starts.emplace_back(r_.holds[hold].start, hold);
    }
    std::sort(starts.begin(), starts.end());
    for (std::size_t i : idx) {
      const Write& w = writes_[i];
      const Hold& mine = r_.holds[*w.hold];
      auto it =
          std::lower_bound(starts.begin(), starts.end(),
                           std::pair<std::int64_t, std::size_t>{mine.start, 0});
      for (; it != starts.end() && it->first < w.ref.invoke; ++it) {
        if (it->second == *w.hold ||
            r_.holds[it->second].acquire.process == w.ref.process) {
          continue;
        }
        ++r_.corruptions;
        writes_[i].corrupt = true;
        if (r_.corruption_examples.size() <
            static_cast<std::size_t>(max_examples_)) {
          r_.corruption_examples.push_back(
              {resource, lock, *w.hold, it->second, w.ref,
               writes_[first_write[it->second]].ref});
        }
        break;
      }
    }
  }

  // Unsafe or harmless, for each kept overlap (HoldOverlap).
  void JudgeOverlaps() {
    std::vector<std::vector<std::size_t>> by_hold(r_.holds.size());
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      if (writes_[i].hold) by_hold[*writes_[i].hold].push_back(i);
    }
    for (HoldOverlap& o : r_.overlaps) Judge(o, by_hold);
    if (r_.longest_overlap) Judge(*r_.longest_overlap, by_hold);
  }

  void Judge(HoldOverlap& o,
             const std::vector<std::vector<std::size_t>>& by_hold) const {
    const Hold& a = r_.holds[o.first];
    const Hold& b = r_.holds[o.second];
    std::string pa = "p" + std::to_string(a.acquire.process);
    std::string pb = "p" + std::to_string(b.acquire.process);
    auto tok = [](const std::optional<std::int64_t>& t) {
      return t ? std::to_string(*t) : std::string("none");
    };
    o.unsafe = false;
    if (a.acquire.token && b.acquire.token) {
      if (*a.acquire.token == *b.acquire.token) {
        o.unsafe = true;
        o.why = "both were granted token " + tok(a.acquire.token);
        return;
      }
      if (a.acquire.complete < b.acquire.invoke &&
          *b.acquire.token < *a.acquire.token) {
        o.unsafe = true;
        o.why = pb + " got token " + tok(b.acquire.token) + ", lower than " +
                pa + "'s " + tok(a.acquire.token);
        return;
      }
    }
    // The older holder's writes count from the newer hold's start to the
    // end of its own hold (they are attributed to it), the newer's during
    // the overlap.
    auto during = [&](const Write& w, std::size_t hold) {
      return w.ref.invoke >= o.start &&
             (hold == o.first || w.ref.invoke <= o.end);
    };
    for (std::size_t hold : {o.first, o.second}) {
      for (std::size_t i : by_hold[hold]) {
        const Write& w = writes_[i];
        if (!during(w, hold)) continue;
        std::string p = "p" + std::to_string(w.ref.process);
        if (w.stale_accept) {
          o.unsafe = true;
          o.why =
              "the store accepted " + p + "'s stale token " + tok(w.ref.token);
          return;
        }
        if (w.corrupt) {
          o.unsafe = true;
          o.why = p + "'s unfenced write interleaved with the other holder's";
          return;
        }
      }
    }
    bool rejected = false, fenced_ok = false, unfenced_ok = false;
    bool a_wrote = false;
    for (std::size_t i : by_hold[o.first]) {
      const Write& w = writes_[i];
      if (!during(w, o.first)) continue;
      a_wrote = true;
      if (w.rejected) rejected = true;
      if (w.outcome == EventType::kOk)
        (w.fenced ? fenced_ok : unfenced_ok) = true;
    }
    if (rejected) {
      o.why =
          "the store rejected " + pa + "'s stale token " + tok(a.acquire.token);
    } else if (fenced_ok) {
      o.why = pa + "'s writes with token " + tok(a.acquire.token) +
              " were accepted before the store saw " + pb + "'s newer token";
    } else if (unfenced_ok) {
      o.why = pa + "'s unfenced writes interleaved with no write of " + pb;
    } else if (!a_wrote) {
      o.why = pa + " wrote nothing after " + pb + " acquired it";
    } else {
      o.why =
          "no write of " + pa + " after " + pb + " acquired it was accepted";
    }
  }

  const History& h_;
  int max_examples_;
  bool campaigns_ = true;
  MutexFencingResult r_;
  std::map<Value, std::vector<LockOpRef>> acquires_;  // lock -> ok acquires
  std::vector<Write> writes_;
  // lock -> (acquire complete, max token granted up to then), sorted
  std::map<Value, std::vector<std::pair<std::int64_t, std::int64_t>>> granted_;
};

}  // namespace

MutexFencingResult AnalyzeMutexFencing(const History& history,
                                       const MutexFencingOptions& options) {
  return Analyzer(history, options).Run();
}

Verdict CheckMutexFencing(const History& history,
                          const MutexFencingOptions& options) {
  return MutexFencingVerdict(AnalyzeMutexFencing(history, options));
}

}  // namespace faultline::checkers

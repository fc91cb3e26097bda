// The fast path for registers whose values are unique: an exact decision in
// O(n log n), after Gibbons and Korach ("Testing shared memories", SIAM J.
// Comput. 1997), extended to cas and to crashed operations. Proofs in
// docs/checker.md ("The unique-value fast path"); checked against the
// brute-force reference by differential_test.cpp.
//
// Applies when the model describes every op by a ValueFlow (register,
// cas-register) and no two ops produce the same value, nor any op the
// initial one. Then every observation names its producer, and:
//
//  1. Closure. A crashed producer of v that a mandatory op observes must
//     take effect before that op returns: it becomes mandatory with the
//     earliest such return as its deadline (a crashed cas so closed
//     observes its own expected value in turn). Crashed reads, and crashed
//     ops left optional, are dropped: an optional op's value is observed by
//     optional ops only, so removing all of them from a linearization
//     leaves one (the next block after them starts with a blind write).
//  2. Chains. With only mandatory ops left, a linearization is a sequence
//     of blocks, one per value: its producer, its reads, and, when a cas
//     expects it, that cas, which is also the next block's producer. So a
//     chain of blocks linked by cas starts at the initial value or at a
//     blind write and is contiguous. Its ops come in layers (producer,
//     reads, cas, reads, ...); points inside the ops' intervals in layer
//     order exist iff every op is called before every op of a later layer
//     returns.
//  3. Zones. A chain has begun by F (its earliest return) and is still
//     going at S (its latest call). When F < S it must cover [F, S] (a
//     forward zone) and can be squeezed into it; when S < F all its ops
//     overlap in (S, F) and it can sit at any instant there (backward).
//     Blocks never interleave, so the history is linearizable iff no two
//     forward zones overlap and no backward window lies inside a forward
//     zone.
//
// Everything else (an observation with no producer, two mandatory cas that
// expect one value, a chain that the initial value and the blind writes do
// not reach) is a violation too. Violations are explained by the search
// (linear_search.cpp) on the closed partition, so explanations do not
// depend on the path.
#include <algorithm>
#include <limits>

#include "checkers/linear_internal.h"
#include "checkers/value_ids.h"

namespace faultline::checkers::linear {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::int64_t kMinusInf = std::numeric_limits<std::int64_t>::min();

struct Flat {
  std::uint32_t observes = kNone;  // value id
  std::uint32_t produces = kNone;  // value id
  bool is_read = false;
};

struct Zone {
  std::int64_t f;      // earliest return
  std::int64_t s;      // latest call
  std::size_t chain;   // index of the chain's ops in the witness order
  std::uint32_t f_op;  // the op returning at f (kNone: the initial value)
  std::uint32_t s_op;  // the op called at s
};

// What one decision needs of the partition: per op its value ids, per
// value its producer.
struct Prepared {
  std::vector<Flat> flat;
  std::vector<std::uint32_t> producer;  // op index per value id, or kNone
  // Value ids in use by ops [0, i]: ids are given in op order.
  std::vector<std::uint32_t> ids_after;
};

// Value ids of every op, or false when the fast path does not apply.
bool Prepare(const Partition& p, const Model& model, Prepared& out) {
  const std::size_t n = p.ops.size();
  ValueIds ids;
  ids.Add(model.Init());  // id 0
  out.flat.assign(n, Flat{});
  out.ids_after.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<ValueFlow> fl = model.Flow(p.ops[i].Make());
    if (!fl) return false;
    Flat& f = out.flat[i];
    f.is_read = fl->kind == ValueFlow::Kind::kRead;
    if (fl->observes) f.observes = ids.Add(*fl->observes);
    if (fl->produces) f.produces = ids.Add(*fl->produces);
    out.ids_after[i] = static_cast<std::uint32_t>(ids.size());
  }
  out.producer.assign(ids.size(), kNone);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t v = out.flat[i].produces;
    if (v == kNone) continue;
    if (v == 0 || out.producer[v] != kNone) return false;  // not unique
    out.producer[v] = static_cast<std::uint32_t>(i);
  }
  return true;
}

struct Decision {
  bool valid = false;
  std::vector<std::uint32_t> order;  // valid + witness: a linearization
  std::vector<std::int64_t> ret;     // deadlines after the closure
  std::vector<bool> keep;            // false: dropped
  std::size_t closed = 0;            // crashed ops given a deadline
  // Invalid: ops whose presence makes it so (kNone for the initial value).
  std::vector<std::uint32_t> culprits;
};

// Which ops a decision covers: those called before `call_bound`; of them,
// those whose return ranks below `rank_limit` (in the order of return
// position, then op index: the order of the search's return entries) are
// mandatory, the others optional (they may take effect, or never). With
// no ranks, every op with a return is mandatory.
struct Horizon {
  const std::vector<std::uint32_t>* rank = nullptr;
  std::uint32_t rank_limit = 0;
  std::int64_t call_bound = kNever;
};

// Buffers of Decide, kept from one decision to the next (a violation takes
// a few): fresh ones would be zeroed by the kernel page by page each time.
struct Scratch {
  Decision d;
  std::vector<bool> mandatory, placed;
  std::vector<std::int64_t> need;
  std::vector<std::uint32_t> work, read_start, next_cas, reads, fill, heads,
      order;
  std::vector<Zone> forward, backward;
  std::vector<std::size_t> order_start;
  std::vector<std::pair<std::int64_t, std::size_t>> at;
};

// Decides the key as it stands at horizon `hz`. With the ops of the first
// k return entries mandatory and the ops called before the k-th return
// present, this is what the search must have linearized to get past the
// k-th return entry. Costs O(m log m) for the m ops called before the
// horizon (ops are in call order).
Decision& Decide(const Partition& p, const Prepared& pr, const Horizon& hz,
                 bool witness, Scratch& sc) {
  Decision& d = sc.d;
  d.valid = false;
  d.order.clear();
  d.closed = 0;
  d.culprits.clear();
  auto by_call = std::lower_bound(
      p.ops.begin(), p.ops.end(), hz.call_bound,
      [](const Op& op, std::int64_t bound) { return op.call < bound; });
  const auto n = static_cast<std::size_t>(by_call - p.ops.begin());
  const std::size_t nv = n == 0 ? 1 : pr.ids_after[n - 1];
  const std::vector<Flat>& flat = pr.flat;
  // The producer of v among the ops called before the horizon, or kNone.
  auto producer = [&](std::uint32_t v) {
    std::uint32_t op = pr.producer[v];
    return op != kNone && op < n ? op : kNone;
  };
  auto fail = [&](std::initializer_list<std::uint32_t> culprits) -> Decision& {
    d.culprits.assign(culprits.begin(), culprits.end());
    return d;
  };
  // 1. Closure: deadlines of producers from their mandatory observers.
  std::vector<std::int64_t>& ret = d.ret;
  std::vector<bool>& keep = d.keep;
  ret.resize(n);
  keep.assign(n, true);
  std::vector<bool>& mandatory = sc.mandatory;
  mandatory.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = p.ops[i];
    mandatory[i] =
        hz.rank == nullptr ? op.mandatory() : (*hz.rank)[i] < hz.rank_limit;
    ret[i] = mandatory[i] ? op.ret : kNever;
    // An optional read has no effect; its observation binds nothing.
    if (flat[i].is_read && ret[i] == kNever) keep[i] = false;
  }
  std::vector<std::int64_t>& need = sc.need;  // earliest observer return
  need.assign(nv, kNever);
  std::vector<std::uint32_t>& work = sc.work;
  work.clear();
  auto observe = [&](std::uint32_t v, std::int64_t by) {
    if (v == 0 || by >= need[v]) return;
    need[v] = by;
    work.push_back(v);
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i] && ret[i] != kNever && flat[i].observes != kNone) {
      observe(flat[i].observes, ret[i]);
    }
  }
  while (!work.empty()) {
    std::uint32_t v = work.back();
    work.pop_back();
    std::uint32_t prod = producer(v);
    // Only optional producers move; a mandatory one returns in time or the
    // layers of its chain say it does not.
    if (prod == kNone || !keep[prod] || mandatory[prod] ||
        need[v] >= ret[prod]) {
      continue;
    }
    if (ret[prod] == kNever) ++d.closed;
    ret[prod] = need[v];
    if (flat[prod].observes != kNone) observe(flat[prod].observes, ret[prod]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i] && ret[i] == kNever) keep[i] = false;
  }

  // 2. Chains. Reads grouped by value (counting sort); the cas that expects
  // each value.
  std::vector<std::uint32_t>& read_start = sc.read_start;
  read_start.assign(nv + 1, 0);
  std::vector<std::uint32_t>& next_cas = sc.next_cas;
  next_cas.assign(nv, kNone);
  for (std::size_t i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    auto op = static_cast<std::uint32_t>(i);
    std::uint32_t v = flat[i].observes;
    if (v == kNone) continue;
    if (v != 0 && (producer(v) == kNone || !keep[producer(v)])) {
      return fail({op});  // observes a value nothing (kept) produced
    }
    if (flat[i].is_read) {
      ++read_start[v + 1];
    } else if (next_cas[v] != kNone) {
      return fail({next_cas[v], op});  // two cas take the same value
    } else {
      next_cas[v] = op;
    }
  }
  for (std::size_t v = 0; v < nv; ++v) read_start[v + 1] += read_start[v];
  std::vector<std::uint32_t>& reads = sc.reads;
  reads.resize(read_start[nv]);
  {
    std::vector<std::uint32_t>& fill = sc.fill;
    fill.assign(read_start.begin(), read_start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      if (keep[i] && flat[i].is_read) {
        reads[fill[flat[i].observes]++] = static_cast<std::uint32_t>(i);
      }
    }
  }
  std::vector<bool>& placed = sc.placed;
  placed.assign(n, false);
  std::vector<std::uint32_t>& heads = sc.heads;  // first value of each chain
  heads.assign(1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i] && flat[i].produces != kNone && flat[i].observes == kNone) {
      heads.push_back(flat[i].produces);
    }
  }
  std::vector<Zone>& forward = sc.forward;
  std::vector<Zone>& backward = sc.backward;
  forward.clear();
  backward.clear();
  std::vector<std::uint32_t>& order = sc.order;  // witness: chains' ops
  order.clear();
  std::vector<std::size_t>& order_start = sc.order_start;  // per chain kept
  order_start.assign(1, 0);
  bool bad = false;
  for (std::size_t c = 0; c < heads.size() && !bad; ++c) {
    Zone z{kNever, kMinusInf, order_start.size() - 1, kNone, kNone};
    std::int64_t before = kMinusInf;  // latest call of earlier layers
    std::uint32_t before_op = kNone;
    // One layer: every op returns after every earlier layer's call.
    auto layer = [&](const std::uint32_t* b, const std::uint32_t* e) {
      std::int64_t min_ret = kNever, max_call = kMinusInf;
      std::uint32_t min_op = kNone, max_op = kNone;
      for (const std::uint32_t* k = b; k != e; ++k) {
        if (ret[*k] < min_ret) {
          min_ret = ret[*k];
          min_op = *k;
        }
        if (p.ops[*k].call > max_call) {
          max_call = p.ops[*k].call;
          max_op = *k;
        }
        placed[*k] = true;
        if (witness) order.push_back(*k);
      }
      if (min_op == kNone) return;
      if (min_ret <= before) {
        bad = true;
        d.culprits = {before_op, min_op};
      }
      if (max_call > before) {
        before = max_call;
        before_op = max_op;
      }
      if (min_ret < z.f) {
        z.f = min_ret;
        z.f_op = min_op;
      }
      if (max_call > z.s) {
        z.s = max_call;
        z.s_op = max_op;
      }
    };
    std::uint32_t v = heads[c];
    if (v == 0) {
      z.f = kMinusInf;  // the initial value is there from the start
    } else {
      std::uint32_t prod = producer(v);
      layer(&prod, &prod + 1);
    }
    while (!bad) {
      if (witness) {
        std::sort(reads.begin() + read_start[v],
                  reads.begin() + read_start[v + 1],
                  [&](std::uint32_t a, std::uint32_t b) {
                    return p.ops[a].call < p.ops[b].call;
                  });
      }
      layer(reads.data() + read_start[v], reads.data() + read_start[v + 1]);
      std::uint32_t cas = next_cas[v];
      if (cas == kNone || bad) break;
      layer(&cas, &cas + 1);
      v = flat[cas].produces;
    }
    if (bad) return d;
    if (z.s == kMinusInf) continue;  // the initial value, unobserved
    (z.f < z.s ? forward : backward).push_back(z);
    order_start.push_back(order.size());
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i] && !placed[i]) {
      return fail({static_cast<std::uint32_t>(i)});  // a cas nothing reaches
    }
  }
  // 3. Zones.
  auto by_f = [](const Zone& a, const Zone& b) { return a.f < b.f; };
  std::sort(forward.begin(), forward.end(), by_f);
  for (std::size_t k = 1; k < forward.size(); ++k) {
    const Zone& a = forward[k - 1];
    const Zone& b = forward[k];
    if (b.f < a.s) return fail({a.f_op, a.s_op, b.f_op, b.s_op});
  }
  // Where each chain sits, in quarter positions: a forward chain just
  // before its zone, a backward one just after its latest call or after
  // the forward zone that call lies in (so backward ones sort first on a
  // tie, and never share a place with a forward one).
  std::vector<std::pair<std::int64_t, std::size_t>>& at = sc.at;
  at.clear();
  for (const Zone& z : forward) {
    at.emplace_back(z.f == kMinusInf ? kMinusInf : 4 * z.f - 2, z.chain);
  }
  for (const Zone& z : backward) {
    // The last forward zone that begins before this chain's latest call.
    Zone probe = z;
    probe.f = z.s;
    auto it = std::upper_bound(forward.begin(), forward.end(), probe, by_f);
    std::int64_t t = 4 * z.s + 1;
    if (it != forward.begin() && z.s < std::prev(it)->s) {
      const Zone& fw = *std::prev(it);
      if (z.f < fw.s) return fail({fw.f_op, fw.s_op, z.f_op, z.s_op});
      t = 4 * fw.s + 1;
    }
    at.emplace_back(t, z.chain);
  }
  d.valid = true;
  if (witness) {
    std::sort(at.begin(), at.end());
    for (const auto& [t, c] : at) {
      d.order.insert(
          d.order.end(),
          order.begin() + static_cast<std::ptrdiff_t>(order_start[c]),
          order.begin() + static_cast<std::ptrdiff_t>(order_start[c + 1]));
    }
  }
  return d;
}

// Why `limits` says to stop now, or empty.
std::string Stop(const Limits* limits) {
  if (limits == nullptr) return "";
  if (limits->cancel != nullptr && limits->cancel->load()) return "cancelled";
  if (limits->deadline &&
      std::chrono::steady_clock::now() >= *limits->deadline) {
    return "deadline reached";
  }
  if (limits->budget != nullptr && limits->budget->MeterOver()) {
    return "memory limit reached";
  }
  return "";
}

}  // namespace

UniqueResult CheckUnique(Partition& p, const Model& model, bool witness,
                         const Limits* limits) {
  UniqueResult out;
  // A small key is decided in well under a millisecond: like the search,
  // which polls its limits every 1,024 steps, it finishes once begun.
  constexpr std::size_t kPollFrom = 4096;
  auto give_up = [&] {
    if (p.ops.size() < kPollFrom) return false;
    out.reason = Stop(limits);
    out.gave_up = !out.reason.empty();
    return out.gave_up;
  };
  Prepared pr;
  if (!Prepare(p, model, pr)) return out;  // p unchanged
  out.applies = true;
  if (give_up()) return out;
  Scratch sc;
  Decision d = Decide(p, pr, Horizon{}, witness, sc);  // a copy: sc is reused

  // Apply the closure to the partition, and to the prepared ids, so that
  // the counts say what the fast path did and the explanation sees the ops
  // it decided on.
  const std::size_t n = p.ops.size();
  std::size_t kept = 0;
  std::vector<std::uint32_t> new_index(n, kNone);
  for (std::size_t i = 0; i < n; ++i) {
    if (!d.keep[i]) continue;
    Op& op = p.ops[i];
    if (d.ret[i] != op.ret) {
      op.ret = d.ret[i];
      op.closed = true;
    }
    new_index[i] = static_cast<std::uint32_t>(kept);
    if (kept != i) {
      p.ops[kept] = std::move(op);
      pr.flat[kept] = pr.flat[i];
      pr.ids_after[kept] = pr.ids_after[i];
    }
    ++kept;
  }
  p.ops.resize(kept);
  pr.flat.resize(kept);
  pr.ids_after.resize(kept);
  p.pruned += n - kept;
  p.closed += d.closed;
  for (std::uint32_t& op : pr.producer) {
    if (op != kNone) op = new_index[op];
  }
  if (d.valid) {  // decided: no limit can take it back
    out.valid = true;
    for (std::uint32_t i : d.order) out.order.push_back(new_index[i]);
    return out;
  }

  // The earliest violation: the first return entry no linearizable prefix
  // gets past. gets_to(k): a linearization covers the ops of the first k
  // entries using ops called before the k-th return (all of them for
  // k = m). It is monotone (cut a linearization that gets to a later entry
  // at the earlier entry's return), true for k = 0 and false for k = m, so
  // the blocker is the entry of the largest k that holds, and the order
  // that decision finds is the prefix.
  const std::size_t m = p.ops.size();  // every op is mandatory now
  std::vector<std::uint32_t> by_ret(m), rank(m);
  {
    // Sorted as (return, op) pairs: contiguous, unlike the ops.
    std::vector<std::pair<std::int64_t, std::uint32_t>> entries(m);
    for (std::size_t i = 0; i < m; ++i) {
      entries[i] = {p.ops[i].ret, static_cast<std::uint32_t>(i)};
    }
    std::sort(entries.begin(), entries.end());
    for (std::size_t k = 0; k < m; ++k) {
      by_ret[k] = entries[k].second;
      rank[by_ret[k]] = static_cast<std::uint32_t>(k);
    }
  }
  std::size_t lo = 0, hi = m;        // gets_to(lo) holds, gets_to(hi) does not
  std::size_t prefix_of = SIZE_MAX;  // the k whose order out.prefix holds
  if (give_up()) return out;
  auto gets_to = [&](std::size_t k, bool with_order) {
    if (out.gave_up || give_up()) return false;  // ends the search below
    Horizon hz{&rank, static_cast<std::uint32_t>(k),
               k < m ? p.ops[by_ret[k]].ret : kNever};
    const Decision& at = Decide(p, pr, hz, with_order, sc);
    if (at.valid && with_order && (prefix_of == SIZE_MAX || k > prefix_of)) {
      out.prefix.assign(at.order.begin(), at.order.end());
      prefix_of = k;
    }
    return at.valid;
  };
  // The ops that broke the whole key usually break it as soon as they
  // have all returned: look there first (expecting a failure, so without a
  // witness), then gallop back to an entry that is reached, then bisect.
  std::size_t guess = 0;
  for (std::uint32_t op : d.culprits) {
    if (op != kNone && new_index[op] != kNone) {
      guess = std::max<std::size_t>(guess, rank[new_index[op]] + 1);
    }
  }
  if (guess > 0 && guess < hi) {
    (gets_to(guess, false) ? lo : hi) = guess;
  }
  for (std::size_t step = 1; hi - lo > 1 && step < hi - lo; step *= 2) {
    std::size_t k = hi - step;
    if (gets_to(k, true)) {
      lo = k;
      break;
    }
    hi = k;
  }
  while (hi - lo > 1) {
    std::size_t mid = lo + (hi - lo) / 2;
    (gets_to(mid, true) ? lo : hi) = mid;
  }
  if (out.gave_up) return out;
  out.blocker_ret = p.ops[by_ret[lo]].ret;
  out.prefix_found = prefix_of == lo || gets_to(lo, true);
  return out;
}

}  // namespace faultline::checkers::linear

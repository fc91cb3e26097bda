// Tests of the brute-force transactional reference (txn_reference.h) on
// hand-written histories, of the generator (txn_gen.h), and the
// differential test: CheckListAppend / CheckRwRegister against the
// reference on thousands of small seeded histories, with and without each
// injected anomaly, under strict-serializable and serializable.
//
// Asserted: soundness (the checker never says invalid where the reference
// finds a serial order), list-append completeness (invalid whenever the
// reference finds none; reads return whole lists, so nothing is hidden),
// and no unknown verdict. rw-register completeness is not expected (version
// orders are not recoverable from unique writes alone): counted, printed.
// A disagreement prints a shrunk history as JSONL with both verdicts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "checkers/txn/txn.h"
#include "checkers/txn/txn_gen.h"
#include "checkers/txn/txn_reference.h"

namespace faultline::checkers::txn {
namespace {

// ---- Hand-written histories ----

Value Mop(const char* f, std::int64_t k, Value v) {
  return Value::MakeList({Value::String(f), Value::Int(k), std::move(v)});
}
Value Append(std::int64_t k, std::int64_t v) {
  return Mop("append", k, Value::Int(v));
}
Value W(std::int64_t k, std::int64_t v) { return Mop("w", k, Value::Int(v)); }
Value RList(std::int64_t k, std::vector<std::int64_t> l) {
  Value::List out;
  for (std::int64_t x : l) out.push_back(Value::Int(x));
  return Mop("r", k, Value::MakeList(std::move(out)));
}
Value RReg(std::int64_t k, std::int64_t v) {
  return Mop("r", k, Value::Int(v));
}
Value RNull(std::int64_t k) { return Mop("r", k, Value()); }

// Builds a history event by event; indices and times follow the order.
class Builder {
 public:
  // The invocation's value is `mops` with every read's result nulled.
  Builder& Invoke(std::int64_t p, const Value::List& mops) {
    Value::List inv;
    for (const Value& m : mops) {
      const Value::List& l = m.as_list();
      inv.push_back(l[0].as_string() == "r" ? Mop("r", l[1].as_int(), Value())
                                            : m);
    }
    return Add(p, EventType::kInvoke, Value::MakeList(std::move(inv)));
  }
  Builder& Ok(std::int64_t p, const Value::List& mops) {
    return Add(p, EventType::kOk, Value::MakeList(mops));
  }
  // fail / info carry the invocation's value.
  Builder& Fail(std::int64_t p) { return Add(p, EventType::kFail, Last(p)); }
  Builder& Info(std::int64_t p) { return Add(p, EventType::kInfo, Last(p)); }
  // An ok transaction invoked and completed at once.
  Builder& Txn(std::int64_t p, const Value::List& mops) {
    return Invoke(p, mops).Ok(p, mops);
  }
  const History& history() const { return h_; }

 private:
  Builder& Add(std::int64_t p, EventType type, Value v) {
    Event e;
    e.index = static_cast<std::int64_t>(h_.size());
    e.time = e.index * 1000;
    e.process = p;
    e.type = type;
    e.f = "txn";
    e.value = std::move(v);
    h_.push_back(std::move(e));
    return *this;
  }
  Value Last(std::int64_t p) const {
    for (auto it = h_.rbegin(); it != h_.rend(); ++it) {
      if (it->process == p && it->is_invoke()) return it->value;
    }
    return Value();
  }
  History h_;
};

constexpr Workload kList = Workload::kListAppend;
constexpr Workload kReg = Workload::kRwRegister;

void Expect(const History& h, Workload w, bool strict, bool serializable) {
  ReferenceResult r = CheckTxnReference(h, w);
  INFO(r.error);
  REQUIRE(r.error.empty());
  REQUIRE_FALSE(r.gave_up);
  CHECK(r.strict_serializable == strict);
  CHECK(r.serializable == serializable);
}

TEST_CASE("reference: sequential list-append is both", "[txn][reference]") {
  Builder b;
  b.Txn(0, {Append(1, 1), RList(1, {1})})
      .Txn(1, {Append(1, 2), RList(2, {})})
      .Txn(0, {RList(1, {1, 2}), Mop("r", 2, Value())});  // null means []
  Expect(b.history(), kList, true, true);
}

TEST_CASE("reference: stale read is serializable, not strict",
          "[txn][reference]") {
  Builder b;
  b.Txn(0, {Append(1, 1)}).Txn(1, {RList(1, {})});
  Expect(b.history(), kList, false, true);
  Builder c;
  c.Txn(0, {W(1, 1)}).Txn(1, {RNull(1)});
  Expect(c.history(), kReg, false, true);
}

TEST_CASE("reference: concurrent txns may take either order",
          "[txn][reference]") {
  Builder b;
  b.Invoke(0, {Append(1, 1)})
      .Invoke(1, {RList(1, {1})})
      .Ok(1, {RList(1, {1})})
      .Ok(0, {Append(1, 1)});
  Expect(b.history(), kList, true, true);
}

TEST_CASE("reference: write skew is neither", "[txn][reference]") {
  Builder b;
  b.Invoke(0, {RList(1, {}), Append(2, 2)})
      .Invoke(1, {RList(2, {}), Append(1, 1)})
      .Ok(0, {RList(1, {}), Append(2, 2)})
      .Ok(1, {RList(2, {}), Append(1, 1)})
      .Txn(2, {RList(1, {1}), RList(2, {2})});
  Expect(b.history(), kList, false, false);
  Builder c;
  c.Invoke(0, {RNull(1), W(2, 2)})
      .Invoke(1, {RNull(2), W(1, 1)})
      .Ok(0, {RNull(1), W(2, 2)})
      .Ok(1, {RNull(2), W(1, 1)});
  Expect(c.history(), kReg, false, false);
}

TEST_CASE("reference: garbage, incompatible order, internal are neither",
          "[txn][reference]") {
  Builder g;
  g.Txn(0, {RList(1, {7})});
  Expect(g.history(), kList, false, false);
  Builder o;
  o.Txn(0, {Append(1, 1)})
      .Txn(1, {Append(1, 2)})
      .Txn(2, {RList(1, {1, 2})})
      .Txn(3, {RList(1, {2, 1})});
  Expect(o.history(), kList, false, false);
  Builder i;
  i.Txn(0, {Append(1, 1), RList(1, {})});
  Expect(i.history(), kList, false, false);
  Builder ri;
  ri.Txn(0, {W(1, 1)}).Txn(1, {RReg(1, 1), W(1, 2), RReg(1, 1)});
  Expect(ri.history(), kReg, false, false);
}

TEST_CASE("reference: an info txn that must have committed",
          "[txn][reference]") {
  Builder b;
  b.Invoke(0, {Append(1, 1)}).Info(0).Txn(1, {RList(1, {1})});
  Expect(b.history(), kList, true, true);
  // Never completed: the same.
  Builder c;
  c.Invoke(0, {W(1, 5)}).Txn(1, {RReg(1, 5)});
  Expect(c.history(), kReg, true, true);
  // An info txn may take effect after its info event, so a read after it
  // may miss it and a later one see it.
  Builder d;
  d.Invoke(0, {Append(1, 1)})
      .Info(0)
      .Txn(1, {RList(1, {})})
      .Txn(1, {RList(1, {1})});
  Expect(d.history(), kList, true, true);
  // Once one of an info txn's writes is seen, all of it committed: a read
  // that misses its other write, while ordered after it, is a G-single.
  Builder f;
  f.Invoke(0, {Append(1, 1), Append(0, 2)})
      .Info(0)
      .Txn(1, {RList(0, {}), Append(1, 3), RList(1, {1, 3})});
  Expect(f.history(), kList, false, false);
  // Reads of an info txn are not checked.
  Builder e;
  e.Invoke(0, {Append(1, 1), RList(2, {9})}).Info(0).Txn(1, {RList(1, {1})});
  Expect(e.history(), kList, true, true);
}

TEST_CASE("reference: a fail txn is ignored, and never seen",
          "[txn][reference]") {
  Builder b;
  b.Invoke(0, {Append(1, 1)}).Fail(0).Txn(1, {RList(1, {})});
  Expect(b.history(), kList, true, true);
  Builder c;
  c.Invoke(0, {Append(1, 1)}).Fail(0).Txn(1, {RList(1, {1})});
  Expect(c.history(), kList, false, false);
  Builder d;
  d.Invoke(0, {W(1, 1), W(1, 2)}).Fail(0).Txn(1, {RReg(1, 2)});
  Expect(d.history(), kReg, false, false);
}

TEST_CASE("reference: intermediate read is neither", "[txn][reference]") {
  Builder b;
  b.Txn(0, {Append(1, 1), Append(1, 2)}).Txn(1, {RList(1, {1})});
  Expect(b.history(), kList, false, false);
  Builder c;
  c.Invoke(0, {W(1, 1), W(1, 2)})
      .Invoke(1, {RReg(1, 1)})
      .Ok(1, {RReg(1, 1)})
      .Ok(0, {W(1, 1), W(1, 2)});
  Expect(c.history(), kReg, false, false);
}

TEST_CASE("reference: malformed history is an error", "[txn][reference]") {
  Builder b;
  b.Txn(0, {Mop("w", 1, Value::Int(1))});
  CHECK_FALSE(CheckTxnReference(b.history(), kList).error.empty());
  CHECK(CheckTxnReference(b.history(), kReg).error.empty());
}

// ---- The generator ----

GenOptions RandomOptions(std::uint64_t seed, Workload w, Injection inj) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 17);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto real = [&](double hi) {
    return std::uniform_real_distribution<double>(0, hi)(rng);
  };
  GenOptions o;
  o.workload = w;
  o.seed = seed;
  o.txns = uni(2, 7);
  o.processes = uni(1, 4);
  o.keys = uni(1, 3);
  o.max_mops = uni(1, 4);
  o.info_rate = uni(0, 2) == 0 ? 0.0 : real(0.3);
  o.fail_rate = uni(0, 2) == 0 ? 0.0 : real(0.3);
  o.injection = inj;
  return o;
}

std::string Jsonl(const History& h) {
  std::string s;
  for (const Event& e : h) s += ToJsonLine(e) + "\n";
  return s;
}

TEST_CASE("generator: deterministic, strict-serializable without injection",
          "[txn][reference]") {
  for (Workload w : {kList, kReg}) {
    for (std::uint64_t seed = 1; seed <= 500; ++seed) {
      GenOptions o = RandomOptions(seed, w, Injection::kNone);
      History h = GenerateTxnHistory(o).history;
      REQUIRE(Jsonl(h) == Jsonl(GenerateTxnHistory(o).history));
      ReferenceResult r = CheckTxnReference(h, w);
      INFO(Jsonl(h));
      REQUIRE(r.error.empty());
      REQUIRE(r.strict_serializable);
    }
  }
}

TEST_CASE("generator: injections make most histories non-serializable",
          "[txn][reference]") {
  for (Workload w : {kList, kReg}) {
    for (int i = 1; i < kInjectionCount; ++i) {
      const auto inj = static_cast<Injection>(i);
      int injected = 0, not_strict = 0, not_ser = 0;
      for (std::uint64_t seed = 1; seed <= 300; ++seed) {
        GenResult g = GenerateTxnHistory(RandomOptions(seed, w, inj));
        if (!g.injected) continue;
        ++injected;
        ReferenceResult r = CheckTxnReference(g.history, w);
        REQUIRE(r.error.empty());
        not_strict += r.strict_serializable ? 0 : 1;
        not_ser += r.serializable ? 0 : 1;
        // list-append: lists only grow, so a read-only txn reading an old
        // prefix is serializable there and nowhere after the write it
        // misses. (rw-register: the old value's writer may reorder.)
        if (inj == Injection::kRealtime && w == kList) {
          INFO(Jsonl(g.history) << g.note);
          CHECK(r.serializable);
          CHECK_FALSE(r.strict_serializable);
        }
      }
      std::printf("%-12s %-18s injected %3d/300, not strict %3d, not ser %3d\n",
                  w == kList ? "list-append" : "rw-register",
                  std::string(ToString(inj)).c_str(), injected, not_strict,
                  not_ser);
      CHECK(injected >= 100);
      CHECK(not_strict * 2 >= injected);
    }
  }
}

// ---- The differential test ----

constexpr const char* kModels[] = {"strict-serializable", "serializable"};

Verdict RunChecker(const History& h, Workload w, const char* model) {
  TxnOptions o;
  o.consistency_model = model;
  return w == kList ? CheckListAppend(h, o) : CheckRwRegister(h, o);
}

enum class Problem { kNone, kUnsound, kIncomplete, kUnknown };

const char* ToText(Problem p) {
  switch (p) {
    case Problem::kUnsound:
      return "unsound (checker invalid, model holds)";
    case Problem::kIncomplete:
      return "incomplete (checker valid, model fails)";
    case Problem::kUnknown:
      return "unknown";
    case Problem::kNone:
      break;
  }
  return "none";
}

bool HasOk(const History& h) {
  return std::any_of(h.begin(), h.end(),
                     [](const Event& e) { return e.type == EventType::kOk; });
}

// What is wrong with the checker's verdict on `h` under `model`; rw-
// register incompleteness counts as a problem only when `rw_incomplete`.
Problem Judge(const History& h, Workload w, int model, bool rw_incomplete,
              Verdict* verdict = nullptr, ReferenceResult* ref = nullptr) {
  ReferenceResult r = CheckTxnReference(h, w);
  if (!r.error.empty() || r.gave_up || !HasOk(h)) return Problem::kNone;
  Verdict v = RunChecker(h, w, kModels[model]);
  if (verdict != nullptr) *verdict = v;
  if (ref != nullptr) *ref = r;
  const bool holds = model == 0 ? r.strict_serializable : r.serializable;
  if (v.validity == Validity::kUnknown) return Problem::kUnknown;
  if (holds && v.validity == Validity::kInvalid) return Problem::kUnsound;
  if (!holds && v.validity == Validity::kValid &&
      (w == kList || rw_incomplete)) {
    return Problem::kIncomplete;
  }
  return Problem::kNone;
}

// Transactions of `h`: the index of each invoke and of its completion
// (-1 when none).
std::vector<std::pair<std::size_t, std::ptrdiff_t>> TxnsOf(const History& h) {
  std::vector<std::pair<std::size_t, std::ptrdiff_t>> out;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (!h[i].is_invoke()) continue;
    std::ptrdiff_t done = -1;
    for (std::size_t k = i + 1; k < h.size(); ++k) {
      if (h[k].process != h[i].process) continue;
      if (!h[k].is_invoke()) done = static_cast<std::ptrdiff_t>(k);
      break;
    }
    out.push_back({i, done});
  }
  return out;
}

History Reindexed(History h) {
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i].index = static_cast<std::int64_t>(i);
  }
  return h;
}

Value WithoutMop(const Value& v, std::size_t m) {
  if (!v.is_list() || m >= v.as_list().size()) return v;
  Value::List l = v.as_list();
  l.erase(l.begin() + static_cast<std::ptrdiff_t>(m));
  return Value::MakeList(std::move(l));
}

// Greedy shrinking: drops whole transactions, then single micro-ops, while
// the same problem under the same model persists.
History Shrink(History h, Workload w, int model, Problem p) {
  bool progress = true;
  while (progress) {
    progress = false;
    auto txns = TxnsOf(h);
    for (std::size_t t = 0; t < txns.size() && !progress; ++t) {
      History smaller;
      for (std::size_t i = 0; i < h.size(); ++i) {
        if (i == txns[t].first ||
            static_cast<std::ptrdiff_t>(i) == txns[t].second) {
          continue;
        }
        smaller.push_back(h[i]);
      }
      smaller = Reindexed(std::move(smaller));
      if (Judge(smaller, w, model, true) == p) {
        h = std::move(smaller);
        progress = true;
      }
    }
    for (std::size_t t = 0; t < txns.size() && !progress; ++t) {
      const std::size_t mops = h[txns[t].first].value.as_list().size();
      for (std::size_t m = 0; m < mops && mops > 1 && !progress; ++m) {
        History smaller = h;
        smaller[txns[t].first].value = WithoutMop(h[txns[t].first].value, m);
        if (txns[t].second >= 0) {
          auto& done = smaller[static_cast<std::size_t>(txns[t].second)];
          done.value = WithoutMop(done.value, m);
        }
        if (Judge(smaller, w, model, true) == p) {
          h = std::move(smaller);
          progress = true;
        }
      }
    }
  }
  return h;
}

struct Failure {
  History history;
  Workload workload;
  int model;
  Problem problem;
  std::string origin;
};

void Report(const Failure& f) {
  Verdict v;
  ReferenceResult r;
  Judge(f.history, f.workload, f.model, true, &v, &r);
  std::printf(
      "\n=== %s, %s, model %s (from %s)\n"
      "reference: strict-serializable %s, serializable %s\n"
      "checker: %s — %s\n%s\nhistory (%zu events):\n%s",
      ToText(f.problem), f.workload == kList ? "list-append" : "rw-register",
      kModels[f.model], f.origin.c_str(), r.strict_serializable ? "yes" : "no",
      r.serializable ? "yes" : "no", std::string(ToString(v.validity)).c_str(),
      v.summary.c_str(), v.explanation.c_str(), f.history.size(),
      Jsonl(f.history).c_str());
}

TEST_CASE("differential: txn checkers against the reference",
          "[txn][reference][differential]") {
  constexpr std::uint64_t kSeeds = 2000;  // x 2 workloads x 9 classes
  int histories = 0, unknown = 0, unsound = 0, incomplete_la = 0;
  int rw_incomplete = 0, rw_ref_invalid = 0;
  // By (problem, model, workload).
  std::map<std::tuple<int, int, int>, Failure> smallest;
  std::map<std::tuple<int, int, int>, int> counts;
  for (Workload w : {kList, kReg}) {
    for (int inj = 0; inj < kInjectionCount; ++inj) {
      for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
        GenResult g = GenerateTxnHistory(
            RandomOptions(seed, w, static_cast<Injection>(inj)));
        ++histories;
        {
          ReferenceResult r = CheckTxnReference(g.history, w);
          INFO(Jsonl(g.history) << r.error);
          REQUIRE(r.error.empty());
          REQUIRE_FALSE(r.gave_up);
        }
        for (int model = 0; model < 2; ++model) {
          Verdict v;
          ReferenceResult r;
          Problem p = Judge(g.history, w, model, false, &v, &r);
          const bool holds =
              model == 0 ? r.strict_serializable : r.serializable;
          if (w == kReg && !holds) {
            ++rw_ref_invalid;
            if (v.validity == Validity::kValid) ++rw_incomplete;
          }
          if (p == Problem::kNone) continue;
          if (p == Problem::kUnknown) ++unknown;
          if (p == Problem::kUnsound) ++unsound;
          if (p == Problem::kIncomplete) ++incomplete_la;
          auto key =
              std::make_tuple(static_cast<int>(p), model, static_cast<int>(w));
          ++counts[key];
          if (p == Problem::kUnknown) {
            std::printf("unknown (seed %llu, %s): %s\n",
                        static_cast<unsigned long long>(seed), kModels[model],
                        v.summary.c_str());
          }
          auto it = smallest.find(key);
          if (it != smallest.end() &&
              it->second.history.size() <= g.history.size()) {
            continue;
          }
          smallest[key] =
              Failure{g.history, w, model, p,
                      "seed " + std::to_string(seed) + ", injection " +
                          std::string(ToString(static_cast<Injection>(inj))) +
                          " " + g.note};
        }
      }
    }
  }
  for (auto& [key, f] : smallest) {
    std::printf("\n%d case(s) %s under %s", counts[key], ToText(f.problem),
                kModels[f.model]);
    f.history = Shrink(f.history, f.workload, f.model, f.problem);
    Report(f);
  }
  std::printf(
      "\ndifferential: %d histories x 2 models; unsound %d, list-append "
      "incomplete %d, unknown %d; rw-register: checker valid where the "
      "reference says invalid %d of %d\n",
      histories, unsound, incomplete_la, unknown, rw_incomplete,
      rw_ref_invalid);
  CHECK(unsound == 0);
  CHECK(incomplete_la == 0);
  CHECK(unknown == 0);
}

}  // namespace
}  // namespace faultline::checkers::txn

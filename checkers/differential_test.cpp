// Randomized differential test: CheckLinearizable (with and without its
// pre-passes) against the brute-force reference (checkers/reference.h) on
// 100,000 small seeded histories with concurrency, crashes, failed ops,
// reused values and injected anomalies. A disagreement prints the seed and a
// delta-debugged minimal history in JSONL.
#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

#include "checkers/linear_internal.h"
#include "checkers/linearizable.h"
#include "checkers/reference.h"
#include "checkers/sim.h"

namespace faultline::checkers {
namespace {

constexpr std::uint64_t kBaseSeed = 0x5eed2024;
constexpr int kHistories = 100000;

SimOptions RandomOptions(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto real = [&](double hi) {
    return std::uniform_real_distribution<double>(0, hi)(rng);
  };
  SimOptions s;
  s.seed = rng();
  s.model = uni(0, 2) == 0 ? "register" : "cas-register";
  s.processes = uni(1, 4);
  s.ops = uni(1, 9);
  s.keys = uni(0, 4) == 0 ? 2 : 1;
  s.read_ratio = 0.2 + real(0.4);
  s.cas_ratio = real(0.4);
  s.info_rate = uni(0, 3) == 0 ? 0.0 : real(0.5);
  s.pending_share = real(1.0);
  s.fail_rate = uni(0, 3) == 0 ? real(0.3) : 0.0;
  s.unique_values = uni(0, 2) != 0;
  s.value_range = uni(2, 4);
  s.with_time = uni(0, 4) != 0;
  s.max_latency = uni(1, 6);
  s.max_gap = uni(1, 3);
  s.nemesis_rate = uni(0, 9) == 0 ? 0.3 : 0.0;
  if (uni(0, 4) < 3) {
    s.stale_read_rate = real(0.6);
    s.lost_write_rate = real(0.4);
    s.reorder_rate = real(0.6);
  }
  return s;
}

// The three checker configurations compared with the reference: default
// (the unique-value fast path, then the search), and the search alone
// without pruning or without quiescent splitting.
Verdict FastVerdict(const History& h, const std::string& model, int variant) {
  LinearizableOptions o;
  o.model = model;
  o.prune = variant != 1;
  o.split_quiescent = variant != 2;
  o.unique_fast_path = variant == 0;
  return CheckLinearizable(h, o);
}
Validity Fast(const History& h, const std::string& model, int variant) {
  return FastVerdict(h, model, variant).validity;
}

// A counter from details_json, e.g. Counter(json, "pruned").
long Counter(const std::string& json, const std::string& name) {
  std::size_t at = json.find("\"" + name + "\":");
  if (at == std::string::npos) return -1;
  return std::stol(json.substr(at + name.size() + 3));
}

// The failure's "at" object ({"index":N,"s":...}) from details_json.
std::string At(const std::string& json) {
  std::size_t at = json.find("\"at\":{");
  if (at == std::string::npos) return "-";
  return json.substr(at, json.find('}', at) - at);
}

// The checker's verdict matches the reference's. A history with no ok
// completion is unknown by policy (nothing was observed) where the
// reference calls it valid; both are right.
bool Agree(const History& h, Validity fast, Validity ref) {
  if (fast == ref) return true;
  bool nothing_observed = std::none_of(h.begin(), h.end(), [](const Event& e) {
    return e.type == EventType::kOk;
  });
  return nothing_observed && fast == Validity::kUnknown &&
         ref == Validity::kValid;
}

bool Disagrees(const History& h, const std::string& model, int variant) {
  ReferenceResult ref = CheckReference(h, model);
  if (!ref.error.empty()) return false;
  return !Agree(h, Fast(h, model, variant), ref.validity);
}

// Removes whole operations (an invoke and its completion) while the
// disagreement persists: chunks of decreasing size, ddmin style.
History Minimize(History h, const std::string& model, int variant) {
  auto ops_of = [](const History& hist) {
    std::vector<std::int64_t> invokes;
    for (const Event& e : hist) {
      if (e.is_invoke() && !e.is_nemesis()) invokes.push_back(e.index);
    }
    return invokes;
  };
  auto without = [](const History& hist,
                    const std::vector<std::int64_t>& drop) {
    // Drop the invokes in `drop` and each one's completion.
    std::vector<bool> gone(hist.size(), false);
    for (std::int64_t inv : drop) {
      gone[static_cast<std::size_t>(inv)] = true;
      std::int64_t p = hist[static_cast<std::size_t>(inv)].process;
      for (std::size_t k = static_cast<std::size_t>(inv) + 1; k < hist.size();
           ++k) {
        if (hist[k].process == p && !hist[k].is_invoke()) {
          gone[k] = true;
          break;
        }
        if (hist[k].process == p) break;
      }
    }
    History out;
    for (std::size_t k = 0; k < hist.size(); ++k) {
      if (gone[k]) continue;
      out.push_back(hist[k]);
      out.back().index = static_cast<std::int64_t>(out.size() - 1);
    }
    return out;
  };
  std::size_t chunk = ops_of(h).size() / 2;
  while (chunk >= 1) {
    bool progress = false;
    std::vector<std::int64_t> invokes = ops_of(h);
    for (std::size_t at = 0; at < invokes.size(); at += chunk) {
      std::vector<std::int64_t> drop(
          invokes.begin() + static_cast<std::ptrdiff_t>(at),
          invokes.begin() + static_cast<std::ptrdiff_t>(
                                std::min(invokes.size(), at + chunk)));
      History smaller = without(h, drop);
      if (Disagrees(smaller, model, variant)) {
        h = std::move(smaller);
        progress = true;
        break;
      }
    }
    if (!progress) chunk /= 2;
  }
  return h;
}

TEST_CASE("differential: checker agrees with brute force on 100k histories",
          "[linearizable][differential]") {
  int disagreements = 0;
  int invalid = 0;
  int crashed = 0;
  int pruned = 0;
  int closed = 0;
  int split = 0;
  int summary_differs = 0, both_invalid = 0;
  for (int n = 0; n < kHistories; ++n) {
    std::uint64_t seed = kBaseSeed + static_cast<std::uint64_t>(n);
    SimOptions s = RandomOptions(seed);
    History h = Simulate(s);
    ReferenceResult ref = CheckReference(h, s.model);
    REQUIRE(ref.error.empty());
    if (ref.validity == Validity::kInvalid) ++invalid;
    for (const Event& e : h) {
      if (e.type == EventType::kInfo) {
        ++crashed;
        break;
      }
    }
    // Default configuration always; the ablations on a share of histories.
    for (int variant : {0, 1, 2}) {
      if (variant != 0 && n % 4 != variant) continue;
      Verdict v = FastVerdict(h, s.model, variant);
      Validity got = v.validity;
      if (variant == 0) {
        if (Counter(v.details_json, "pruned") > 0) ++pruned;
        if (Counter(v.details_json, "closed") > 0) ++closed;
        if (Counter(v.details_json, "segments") >
            Counter(v.details_json, "keys")) {
          ++split;
        }
      }
      // The fast path's violations are confirmed by the search: an order
      // the search finds where the fast path saw none is a disagreement.
      if (Counter(v.details_json, "fast_path_overruled") > 0) {
        FAIL_CHECK("fast path overruled by the search: history seed "
                   << seed << ", model " << s.model);
        ++disagreements;
      }
      // Both paths report the same earliest violation.
      if (variant == 0 && got == Validity::kInvalid) {
        LinearizableOptions search;
        search.model = s.model;
        search.unique_fast_path = false;
        Verdict sv = CheckLinearizable(h, search);
        // The prefixes may differ where several reach the blocker, and
        // with them the state the summary names.
        if (sv.summary != v.summary) ++summary_differs;
        ++both_invalid;
        if (At(sv.details_json) != At(v.details_json)) {
          FAIL_CHECK(
              "fast path and search place the violation differently: "
              "history seed "
              << seed << ", model " << s.model << ": fast "
              << At(v.details_json) << ", search " << At(sv.details_json));
          ++disagreements;
        }
      }
      if (Agree(h, got, ref.validity)) continue;
      ++disagreements;
      History small = Minimize(h, s.model, variant);
      std::ostringstream text;
      for (const Event& e : small) text << ToJsonLine(e) << "\n";
      FAIL_CHECK("disagreement: history seed "
                 << seed << " (sim seed " << s.seed << "), model " << s.model
                 << ", variant " << variant << ": reference "
                 << ToString(CheckReference(small, s.model).validity)
                 << ", checker " << ToString(Fast(small, s.model, variant))
                 << "\nminimized history:\n"
                 << text.str());
      if (disagreements > 3) return;
    }
  }
  CHECK(disagreements == 0);
  // The generator must exercise both outcomes and crashes substantially.
  CHECK(invalid > kHistories / 10);
  CHECK(invalid < kHistories * 9 / 10);
  CHECK(crashed > kHistories / 4);
  // ... and the pre-passes must actually fire on a good share of them.
  CHECK(pruned > kHistories / 10);
  CHECK(closed > kHistories / 50);
  CHECK(split > kHistories / 10);
  WARN("fast path and search summaries differ (the state reached) on "
       << summary_differs << " of " << both_invalid << " violations");
  WARN("invalid " << invalid << ", crashed " << crashed << ", pruned " << pruned
                  << ", closed " << closed << ", split " << split);
}

// Whether `order` (indices into p.ops) is a linearization of p: every
// mandatory op appears once, each step is legal in the model, and no op
// comes after one that was called after it returned.
bool IsLinearization(const linear::Partition& p, const Model& model,
                     const std::vector<std::size_t>& order) {
  std::vector<int> seen(p.ops.size(), 0);
  Value state = model.Init();
  std::int64_t latest_call = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i : order) {
    if (i >= p.ops.size() || seen[i]++ != 0) return false;
    const linear::Op& op = p.ops[i];
    if (op.ret < latest_call)
      return false;  // returned before one placed
                     // earlier was called
    latest_call = std::max(latest_call, op.call);
    StepResult r = model.Step(state, op.Make());
    if (!r.ok) return false;
    state = r.next;
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].mandatory() && seen[i] == 0) return false;
  }
  return true;
}

TEST_CASE("differential: the unique-value fast path decides exactly",
          "[linearizable][differential]") {
  // Its own decision, before the search sees anything, against the brute
  // force; and its witness order checked op by op.
  int compared = 0, valid = 0, invalid = 0, crashed = 0;
  for (int n = 0; n < kHistories / 2; ++n) {
    std::uint64_t seed = kBaseSeed + 7777777 + static_cast<std::uint64_t>(n);
    SimOptions s = RandomOptions(seed);
    s.unique_values = true;
    if (n % 3 == 0) s.ops = 2 * s.ops;  // longer ones, still under 62
    History h = Simulate(s);
    ReferenceResult ref = CheckReference(h, s.model);
    if (!ref.error.empty()) continue;
    std::unique_ptr<Model> model = MakeModel(s.model);
    linear::BuildResult built = linear::BuildPartitions(h, *model);
    REQUIRE(built.error.empty());
    bool applies = true, all_valid = true;
    for (linear::Partition& p : built.partitions) {
      linear::Partition before = p;
      linear::UniqueResult u = linear::CheckUnique(p, *model, true);
      if (!u.applies) {
        applies = false;
        CHECK(p.ops.size() == before.ops.size());
        break;
      }
      if (u.valid) {
        if (!IsLinearization(p, *model, u.order)) {
          FAIL_CHECK("fast path witness is not a linearization: seed "
                     << seed << ", model " << s.model);
        }
      } else {
        all_valid = false;
      }
    }
    if (!applies) continue;
    ++compared;
    if (std::any_of(h.begin(), h.end(), [](const Event& e) {
          return e.type == EventType::kInfo;
        })) {
      ++crashed;
    }
    Validity fast = all_valid ? Validity::kValid : Validity::kInvalid;
    (fast == Validity::kValid ? valid : invalid)++;
    if (fast != ref.validity) {
      std::ostringstream text;
      for (const Event& e : h) text << ToJsonLine(e) << "\n";
      FAIL_CHECK("fast path: history seed "
                 << seed << ", model " << s.model << ": reference "
                 << ToString(ref.validity) << ", fast path " << ToString(fast)
                 << "\nhistory:\n"
                 << text.str());
      return;
    }
  }
  CHECK(compared > kHistories / 4);
  CHECK(valid > compared / 10);
  CHECK(invalid > compared / 10);
  CHECK(crashed > compared / 5);
  WARN("fast path compared " << compared << ": valid " << valid << ", invalid "
                             << invalid << ", crashed " << crashed);
}

}  // namespace
}  // namespace faultline::checkers

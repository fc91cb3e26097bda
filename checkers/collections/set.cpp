// The set checker: per-element outcomes over the reads that began after
// each element was known. See set.h for the definitions.
#include "checkers/collections/set.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "checkers/collections/common.h"
#include "checkers/json_parser.h"
#include "checkers/op_pairs.h"

namespace faultline::checkers::collections {
namespace {

using namespace detail;  // NOLINT(google-build-using-namespace): our helpers

enum class Outcome {
  kNone,  // not judged (ignored failed add)
  kStable,
  kLost,
  kStale,
  kNeverRead,
  kIndeterminate,  // info add never seen
  kUnexpected,
};

struct Read {
  std::size_t inv = 0;   // position of the invoke
  std::size_t done = 0;  // position of the ok
};

struct Elem {
  Value v;
  bool has_add = false;
  std::size_t add_inv = 0;
  std::ptrdiff_t add_done = -1;
  EventType add_outcome = EventType::kInfo;
  // Pass 1, over reads in completion order (read ids).
  std::ptrdiff_t first_read = -1, last_read = -1;
  std::int64_t listed = 0;  // reads listing it
  std::ptrdiff_t stamp = -1;
  std::ptrdiff_t dup_stamp = -1;
  std::ptrdiff_t dup_read = -1;  // first read listing it twice
  std::int64_t dup_reads = 0;
  // Pass 2, over reads in invoke order (ranks).
  std::size_t known = 0;  // position of K
  std::size_t s = 0;      // rank of the first read invoked after K
  std::ptrdiff_t stamp2 = -1;
  std::ptrdiff_t last_rank = -1;
  std::ptrdiff_t last_omitted = -1;  // rank of the latest omitting read
  std::int64_t present_after = 0;
  // Results.
  Outcome outcome = Outcome::kNone;
  std::int64_t reads_after = 0;
  std::int64_t omitted = 0;
  std::int64_t after_last_seen = 0;
  std::int64_t stale_for = 0;
};

bool IsElement(const Value& v) { return v.is_int() || v.is_string(); }

std::string ShapeProblem(const Event& e) {
  if (e.f == "add" && e.is_invoke()) {
    if (IsElement(e.value)) return {};
    return LineText(e) +
           ": a set add's invoke value must be the element added, an "
           "integer or a string, not " +
           std::string(KindName(e.value));
  }
  if (e.f == "read" && e.type == EventType::kOk) {
    if (e.value.is_list() && std::all_of(e.value.as_list().begin(),
                                         e.value.as_list().end(), IsElement)) {
      return {};
    }
    return LineText(e) +
           ": a set read that completes ok must carry the list of every "
           "element in the set (integers or strings), not " +
           (e.value.is_list() ? e.value.ToJson()
                              : std::string(KindName(e.value)));
  }
  return {};
}

class Checker {
 public:
  Checker(const History& h, const SetOptions& o)
      : h_(h),
        o_(o),
        max_(static_cast<std::size_t>(std::max(1, o.max_examples))) {}

  Verdict Run() {
    if (auto bad = StructureProblem(h_)) return Malformed(kSetChecker, *bad);
    for (const Event& e : h_) {
      if (e.is_nemesis()) continue;
      if (std::string bad = ShapeProblem(e); !bad.empty()) {
        return Malformed(kSetChecker, bad);
      }
    }
    if (std::string bad = Collect(); !bad.empty()) {
      return Malformed(kSetChecker, bad);
    }
    ListedPass();
    Judge();
    return MakeVerdict();
  }

 private:
  Elem& Find(const Value& v) {
    auto [it, fresh] = index_.emplace(v, elems_.size());
    if (fresh) {
      elems_.emplace_back();
      elems_.back().v = v;
    }
    return elems_[it->second];
  }

  // Adds and ok reads; empty or the problem.
  std::string Collect() {
    for (const PairedOp& op : PairOps(h_, false)) {
      const Event& inv = h_[op.inv];
      if (inv.f == "add") {
        Elem& e = Find(inv.value);
        if (e.has_add) {
          return LineText(inv) + ": element " + Show(inv.value) +
                 " is added a second time (first at " +
                 LineText(h_[e.add_inv]) +
                 "); set elements must be unique per history";
        }
        e.has_add = true;
        e.add_inv = op.inv;
        e.add_done = op.done;
        e.add_outcome = op.outcome;
        ++adds_[op.outcome == EventType::kOk     ? 0
                : op.outcome == EventType::kFail ? 1
                                                 : 2];
      } else if (inv.f == "read" && op.outcome == EventType::kOk) {
        reads_.push_back({op.inv, static_cast<std::size_t>(op.done)});
      }
    }
    // Read ids in completion order; ranks in invoke order (PairOps gives
    // invoke order).
    by_inv_.resize(reads_.size());
    std::vector<std::size_t> order(reads_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return reads_[a].done < reads_[b].done;
    });
    std::vector<Read> sorted(reads_.size());
    for (std::size_t id = 0; id < order.size(); ++id) {
      sorted[id] = reads_[order[id]];
      by_inv_[order[id]] = id;  // rank order[id] (invoke order) -> id
    }
    reads_ = std::move(sorted);
    inv_sorted_.resize(reads_.size());
    for (std::size_t q = 0; q < by_inv_.size(); ++q) {
      inv_sorted_[q] = reads_[by_inv_[q]].inv;
    }
    return {};
  }

  // Number of reads invoked after position `pos`, and the first such rank.
  std::size_t FirstRankAfter(std::size_t pos) const {
    return static_cast<std::size_t>(
        std::upper_bound(inv_sorted_.begin(), inv_sorted_.end(), pos) -
        inv_sorted_.begin());
  }

  void ListedPass() {
    for (std::size_t id = 0; id < reads_.size(); ++id) {
      const auto r = static_cast<std::ptrdiff_t>(id);
      for (const Value& x : h_[reads_[id].done].value.as_list()) {
        Elem& e = Find(x);
        if (e.stamp == r) {
          if (e.dup_stamp != r) {
            e.dup_stamp = r;
            ++e.dup_reads;
            if (e.dup_read < 0) e.dup_read = r;
          }
          continue;
        }
        e.stamp = r;
        ++e.listed;
        if (e.first_read < 0) e.first_read = r;
        e.last_read = r;
      }
    }
  }

  static bool Judged(const Elem& e) {
    return e.outcome == Outcome::kStable;  // provisional mark in Judge
  }

  void Judge() {
    const std::size_t n_reads = reads_.size();
    for (Elem& e : elems_) {
      bool seen = e.listed > 0;
      if (!e.has_add || e.add_outcome == EventType::kFail) {
        e.outcome = seen ? Outcome::kUnexpected : Outcome::kNone;
        continue;
      }
      if (e.add_outcome != EventType::kOk && !seen) {
        e.outcome = Outcome::kIndeterminate;
        continue;
      }
      std::size_t k = h_.size();
      if (e.add_outcome == EventType::kOk) {
        k = static_cast<std::size_t>(e.add_done);
      }
      if (seen) k = std::min(k, reads_[e.first_read].done);
      e.known = k;
      e.s = FirstRankAfter(k);
      e.last_rank = static_cast<std::ptrdiff_t>(e.s) - 1;
      e.outcome = Outcome::kStable;  // provisional: judged below
    }
    for (std::size_t q = 0; q < n_reads; ++q) {
      const auto rank = static_cast<std::ptrdiff_t>(q);
      for (const Value& x : h_[reads_[by_inv_[q]].done].value.as_list()) {
        Elem& e = elems_[index_.find(x)->second];
        if (e.stamp2 == rank) continue;
        e.stamp2 = rank;
        if (!Judged(e) || q < e.s) continue;
        if (rank > e.last_rank + 1) e.last_omitted = rank - 1;
        e.last_rank = rank;
        ++e.present_after;
      }
    }
    const auto last = static_cast<std::ptrdiff_t>(n_reads) - 1;
    for (Elem& e : elems_) {
      if (!Judged(e)) continue;
      if (e.last_rank < last) e.last_omitted = last;
      e.reads_after = static_cast<std::int64_t>(n_reads - e.s);
      e.omitted = e.reads_after - e.present_after;
      bool seen = e.listed > 0;
      if (e.omitted == 0) {
        e.outcome =
            e.reads_after > 0 || seen ? Outcome::kStable : Outcome::kNeverRead;
        continue;
      }
      e.after_last_seen =
          seen ? static_cast<std::int64_t>(
                     n_reads - FirstRankAfter(reads_[e.last_read].done))
               : e.reads_after;
      if (e.after_last_seen > 0) {
        e.outcome = Outcome::kLost;
      } else {
        e.outcome = Outcome::kStale;
        e.stale_for = BetweenRaw(h_[e.known], OmittedBy(e));
      }
    }
  }

  // The invoke of the latest-invoked read that omitted `e` after K.
  const Event& OmittedBy(const Elem& e) const {
    return h_[reads_[by_inv_[static_cast<std::size_t>(e.last_omitted)]].inv];
  }
  const Event& ReadDone(std::ptrdiff_t id) const {
    return h_[reads_[static_cast<std::size_t>(id)].done];
  }

  // --- Text ---------------------------------------------------------------

  std::string AddText(const Elem& e) const {
    if (e.add_outcome == EventType::kOk) {
      return "added ok at " + Where(h_[static_cast<std::size_t>(e.add_done)]);
    }
    return "added by an add of unknown outcome invoked at " +
           Where(h_[e.add_inv]);
  }

  std::string KnownText(const Elem& e) const {
    if (e.add_outcome == EventType::kOk &&
        e.known == static_cast<std::size_t>(e.add_done)) {
      return "known present from " + Where(h_[e.known]) +
             ", when its add completed ok";
    }
    return "known present from " + Where(h_[e.known]) + ", when " +
           OpAt(h_[e.known]) + " listed it";
  }

  std::string Reads(std::int64_t n) const {
    return n == 1 ? "the 1 read" : "the " + std::to_string(n) + " reads";
  }

  std::string LostClause(const Elem& e) const {
    std::string out = Show(e.v) + ", " + AddText(e);
    if (e.listed > 0) {
      out += ", last seen at " + Where(ReadDone(e.last_read)) +
             ", missing from " + Reads(e.after_last_seen) +
             " invoked after that";
    } else {
      out += ", never seen, missing from " + Reads(e.after_last_seen) +
             " invoked after that";
    }
    return out;
  }

  std::string LostLine(const Elem& e) const {
    std::string out = "lost: element " + Show(e.v) + ", " + AddText(e) + "; ";
    if (e.listed > 0) {
      out += "last seen in " + OpAt(ReadDone(e.last_read)) + ", but ";
    } else {
      out += "never listed by any read, and ";
    }
    out += Reads(e.after_last_seen) + " invoked after " +
           (e.listed > 0 ? "that" : "its add completed") +
           " all omit it, up to the final read, " +
           OpAt(h_[reads_.back().done]);
    return out;
  }

  std::string StaleClause(const Elem& e) const {
    return Show(e.v) + ", missing for at least " +
           Between(h_[e.known], OmittedBy(e)) + ": " + KnownText(e) +
           ", still omitted by " + OpAt(OmittedBy(e));
  }

  std::string StaleLine(const Elem& e) const {
    return "stale: element " + Show(e.v) + ", " + KnownText(e) +
           ", was omitted by " + std::to_string(e.omitted) + " of " +
           Reads(e.reads_after) + " invoked after that, the latest " +
           OpAt(OmittedBy(e)) + " (missing for at least " +
           Between(h_[e.known], OmittedBy(e)) + "), and listed again by " +
           OpAt(ReadDone(e.last_read));
  }

  std::string UnexpectedClause(const Elem& e) const {
    std::string why = e.has_add
                          ? "whose add failed (" + OpAt(h_[e.add_inv]) + ")"
                          : "never added";
    return Show(e.v) + ", " + why + ", listed by " +
           OpAt(ReadDone(e.first_read)) +
           (e.listed > 1
                ? " and " + std::to_string(e.listed - 1) + " later reads"
                : "");
  }

  std::string DuplicateClause(const Elem& e) const {
    return Show(e.v) + ", listed more than once by " +
           OpAt(ReadDone(e.dup_read)) +
           (e.dup_reads > 1 ? " (and by " + std::to_string(e.dup_reads - 1) +
                                  " other reads)"
                            : "");
  }

  // --- JSON ---------------------------------------------------------------

  void RefOrNull(std::string& d, std::string_view name,
                 std::ptrdiff_t read) const {
    if (read < 0) {
      Key(d, name);
      d += "null";
    } else {
      EventRef(d, name, ReadDone(read));
    }
  }

  void ElemJson(std::string& d, const Elem& e) const {
    d += "{\"element\":";
    e.v.AppendJson(d);
    d += ",";
    EventRef(d, "add", h_[e.add_inv]);
    d += ",";
    Str(d, "add_outcome", e.add_outcome == EventType::kOk ? "ok" : "info");
    d += ",";
    EventRef(d, "known", h_[e.known]);
    d += ",";
    RefOrNull(d, "first_seen", e.first_read);
    d += ",";
    RefOrNull(d, "last_seen", e.last_read);
    d += ",";
    Int(d, "reads_after_known", e.reads_after);
    d += ",";
    Int(d, "omitted_by", e.omitted);
    d += ",";
    Int(d, "missing_after_last_seen",
        e.outcome == Outcome::kLost ? e.after_last_seen : 0);
    d += ",";
    Key(d, "stale_for");
    d += e.outcome == Outcome::kStale ? std::to_string(e.stale_for) : "null";
    d += ",";
    if (e.omitted > 0) {
      EventRef(d, "last_omitted_by", OmittedBy(e));
    } else {
      d += "\"last_omitted_by\":null";
    }
    d += "}";
  }

  // --- Verdict ------------------------------------------------------------

  Verdict MakeVerdict() {
    std::vector<const Elem*> by[7];  // indexed by Outcome
    std::vector<const Elem*> dups;
    for (const Elem& e : elems_) {
      by[static_cast<int>(e.outcome)].push_back(&e);
      if (e.dup_reads > 0) dups.push_back(&e);
    }
    auto by_known = [](const Elem* a, const Elem* b) {
      return std::tie(a->known, a->add_inv) < std::tie(b->known, b->add_inv);
    };
    auto by_first = [](const Elem* a, const Elem* b) {
      return a->first_read < b->first_read;
    };
    for (Outcome o : {Outcome::kStable, Outcome::kLost, Outcome::kStale,
                      Outcome::kNeverRead}) {
      auto& list = by[static_cast<int>(o)];
      std::sort(list.begin(), list.end(), by_known);
    }
    auto& unexpected = by[static_cast<int>(Outcome::kUnexpected)];
    std::sort(unexpected.begin(), unexpected.end(), by_first);
    std::sort(dups.begin(), dups.end(), [](const Elem* a, const Elem* b) {
      return a->dup_read < b->dup_read;
    });
    const auto& stable = by[static_cast<int>(Outcome::kStable)];
    const auto& lost = by[static_cast<int>(Outcome::kLost)];
    const auto& stale = by[static_cast<int>(Outcome::kStale)];
    const auto& never = by[static_cast<int>(Outcome::kNeverRead)];
    const auto& indeterminate = by[static_cast<int>(Outcome::kIndeterminate)];
    const Elem* longest = nullptr;
    for (const Elem* e : stale) {
      if (!longest || e->stale_for > longest->stale_for) longest = e;
    }
    const std::size_t added =
        stable.size() + lost.size() + stale.size() + never.size();

    Verdict v;
    v.checker = kSetChecker;
    std::string& d = v.details_json;
    d = "{";
    Int(d, "reads", static_cast<std::int64_t>(reads_.size()));
    d += ",\"adds\":{";
    Int(d, "ok", adds_[0]);
    d += ",";
    Int(d, "fail", adds_[1]);
    d += ",";
    Int(d, "info", adds_[2]);
    d += "},";
    Int(d, "added", static_cast<std::int64_t>(added));
    d += ",\"counts\":{";
    auto count = [&](const char* name, std::size_t n, bool comma = true) {
      Int(d, name, static_cast<std::int64_t>(n));
      if (comma) d += ",";
    };
    count("stable", stable.size());
    count("lost", lost.size());
    count("stale", stale.size());
    count("never-read", never.size());
    count("indeterminate", indeterminate.size());
    count("unexpected", unexpected.size());
    count("duplicate", dups.size(), false);
    d += "},";
    Key(d, "longest_stale");
    d += longest ? std::to_string(longest->stale_for) : "null";
    d += ",\"examples\":{";
    auto elems = [&](const char* name, const std::vector<const Elem*>& list) {
      Key(d, name);
      d += "[";
      for (std::size_t i = 0; i < list.size() && i < max_; ++i) {
        if (i > 0) d += ",";
        ElemJson(d, *list[i]);
      }
      d += "],";
    };
    elems("lost", lost);
    elems("stale", stale);
    elems("never-read", never);
    elems("stable", stable);
    Key(d, "unexpected");
    d += "[";
    for (std::size_t i = 0; i < unexpected.size() && i < max_; ++i) {
      const Elem& e = *unexpected[i];
      if (i > 0) d += ",";
      d += "{\"element\":";
      e.v.AppendJson(d);
      d += ",";
      Str(d, "why", e.has_add ? "add failed" : "never added");
      d += ",";
      RefOrNull(d, "first_seen", e.first_read);
      d += ",";
      Int(d, "reads", e.listed);
      d += "}";
    }
    d += "],";
    Key(d, "duplicate");
    d += "[";
    for (std::size_t i = 0; i < dups.size() && i < max_; ++i) {
      const Elem& e = *dups[i];
      if (i > 0) d += ",";
      d += "{\"element\":";
      e.v.AppendJson(d);
      d += ",";
      RefOrNull(d, "read", e.dup_read);
      d += ",";
      Int(d, "reads", e.dup_reads);
      d += "}";
    }
    d += "]}}";

    std::string counts =
        std::to_string(reads_.size()) + " ok reads; " + std::to_string(added) +
        " elements added (" + std::to_string(adds_[0]) + " adds ok, " +
        std::to_string(adds_[1]) + " failed, " + std::to_string(adds_[2]) +
        " indeterminate): " + std::to_string(stable.size()) + " stable, " +
        std::to_string(lost.size()) + " lost, " + std::to_string(stale.size()) +
        " stale, " + std::to_string(never.size()) + " never read; " +
        std::to_string(indeterminate.size()) +
        " indeterminate adds never seen; " + std::to_string(unexpected.size()) +
        " unexpected, " + std::to_string(dups.size()) + " duplicated";

    if (reads_.empty()) {
      v.validity = Validity::kUnknown;
      v.summary = "unknown: no read completed ok, so nothing was checked (" +
                  std::to_string(adds_[0] + adds_[1] + adds_[2]) + " adds)";
      v.explanation = v.summary;
      return v;
    }

    const bool stale_bad = !o_.allow_stale && !stale.empty();
    std::vector<std::string> clauses;
    auto of = [&](std::size_t n) {
      return std::to_string(n) + " of " + std::to_string(added) +
             " added elements";
    };
    if (!lost.empty()) {
      clauses.push_back(of(lost.size()) +
                        " lost (first: " + LostClause(*lost.front()) + ")");
    }
    if (!unexpected.empty()) {
      clauses.push_back(
          std::to_string(unexpected.size()) + " unexpected element" +
          (unexpected.size() == 1 ? "" : "s") +
          " (first: " + UnexpectedClause(*unexpected.front()) + ")");
    }
    if (!dups.empty()) {
      clauses.push_back(std::to_string(dups.size()) + " element" +
                        (dups.size() == 1 ? "" : "s") +
                        " listed twice in one read (first: " +
                        DuplicateClause(*dups.front()) + ")");
    }
    std::string stale_clause;
    if (longest) {
      stale_clause = of(stale.size()) + " stale" +
                     (stale_bad ? "" : ", allowed") +
                     " (longest: " + StaleClause(*longest) + ")";
      if (stale_bad) clauses.push_back(stale_clause);
    }

    for (std::size_t i = 0; i < lost.size() && i < max_; ++i) {
      v.explanation += LostLine(*lost[i]) + "\n";
    }
    for (std::size_t i = 0; i < unexpected.size() && i < max_; ++i) {
      v.explanation +=
          "unexpected: element " + UnexpectedClause(*unexpected[i]) + "\n";
    }
    for (std::size_t i = 0; i < dups.size() && i < max_; ++i) {
      v.explanation += "duplicate: element " + DuplicateClause(*dups[i]) + "\n";
    }
    for (std::size_t i = 0; i < stale.size() && i < max_; ++i) {
      v.explanation += StaleLine(*stale[i]) +
                       (stale_bad ? " (not allowed)" : " (allowed)") + "\n";
    }
    if (!never.empty()) {
      v.explanation += "never read: " + std::to_string(never.size()) +
                       " elements had no read begin after they were added "
                       "(first: " +
                       Show(never.front()->v) + ", " + AddText(*never.front()) +
                       "); nothing is known of them\n";
    }
    v.explanation += counts;

    if (!clauses.empty()) {
      v.validity = Validity::kInvalid;
      v.summary = "invalid: ";
      for (std::size_t i = 0; i < clauses.size(); ++i) {
        v.summary += (i > 0 ? "; " : "") + clauses[i];
      }
      if (!stale_bad && !stale_clause.empty()) v.summary += "; " + stale_clause;
      return v;
    }
    if (stable.empty() && stale.empty()) {
      v.validity = Validity::kUnknown;
      v.summary =
          added == 0
              ? "unknown: no element was added, so nothing was checked (" +
                    std::to_string(reads_.size()) + " ok reads)"
              : "unknown: no read began after any of the " +
                    std::to_string(added) +
                    " added elements was known present, so nothing was "
                    "checked";
      return v;
    }
    v.validity = Validity::kValid;
    if (stale.empty()) {
      v.summary = "valid: all " + std::to_string(stable.size()) +
                  " elements read after they were added stayed present in "
                  "every later read (" +
                  std::to_string(reads_.size()) + " ok reads)";
    } else {
      v.summary = "valid: " + std::to_string(stable.size()) + " of " +
                  std::to_string(added) + " added elements stable, " +
                  stale_clause;
    }
    if (!never.empty()) {
      v.summary += "; " + std::to_string(never.size()) + " never read";
    }
    return v;
  }

  const History& h_;
  const SetOptions& o_;
  std::size_t max_;
  std::vector<Elem> elems_;
  std::unordered_map<Value, std::size_t, ValueHash> index_;
  std::vector<Read> reads_;              // ok reads by completion (read ids)
  std::vector<std::size_t> by_inv_;      // rank (invoke order) -> read id
  std::vector<std::size_t> inv_sorted_;  // rank -> invoke position
  std::int64_t adds_[3] = {0, 0, 0};     // ok, fail, info
};

}  // namespace

Verdict CheckSet(const History& history, const SetOptions& options) {
  return Checker(history, options).Run();
}

}  // namespace faultline::checkers::collections

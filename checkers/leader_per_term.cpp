// Single leader per term: claims from observations and campaigns, belief
// intervals and their overlaps. See leader_per_term.h for the definitions
// and docs/history-locks.md for the vocabulary.
#include "checkers/leader_per_term.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "checkers/history_io.h"
#include "checkers/op_pairs.h"

namespace faultline::checkers {
namespace {

using Op = PairedOp;

std::string Domain(const char* kind, const Value& key) {
  std::string d = kind;
  if (!key.is_null()) d += " " + key.ToJson();
  return d;
}

// A node name from a JSON value: strings as they are, ints as decimal.
std::string NodeName(const Value* v) {
  if (!v) return "";
  if (v->is_string()) return v->as_string();
  if (v->is_int()) return std::to_string(v->as_int());
  return "";
}

struct Observation {
  bool leader = false;
  std::optional<std::int64_t> term;
  std::int64_t time = 0;
  std::int64_t index = 0;
};

class Analyzer {
 public:
  Analyzer(const History& h, const LeaderPerTermOptions& o)
      : h_(h), o_(o), max_examples_(std::max(1, o.max_examples)) {}

  LeaderPerTermResult Run() {
    if (auto bad = CheckWellFormed(h_, "")) {
      r_.malformed = ToString(*bad);
      return std::move(r_);
    }
    r_.timed = OrderedByTime(h_);
    for (const Event& e : h_) {
      if (!e.is_nemesis()) end_ = std::max(end_, TimeOf(e, r_.timed));
    }
    Walk();
    BuildObservationIntervals();
    FindConflicts();
    FindDualLeadership();
    return std::move(r_);
  }

 private:
  void Claim(const std::string& domain, std::string node, std::string source,
             std::int64_t term, std::int64_t time, std::int64_t index) {
    claims_.emplace_back(domain, LeaderClaim{std::move(node), std::move(source),
                                             term, time, index});
  }

  void Walk() {
    // Per candidate process: its open campaign interval, if any.
    std::unordered_map<std::int64_t, LeaderInterval> campaigning;
    auto end_campaign = [&](std::int64_t process, std::int64_t t) {
      auto it = campaigning.find(process);
      if (it == campaigning.end()) return;
      it->second.end = std::max(t, it->second.start);
      r_.intervals.push_back(std::move(it->second));
      campaigning.erase(it);
    };
    for (const Op& op : PairOps(h_, r_.timed)) {
      const Event& inv = h_[op.inv];
      const Event* done = op.done >= 0 ? &h_[op.done] : nullptr;
      if (inv.f == "observe") {
        ++r_.observations;
        if (op.outcome == EventType::kOk) Observe(inv, *done, op);
      } else if (o_.campaigns && inv.f == "campaign") {
        end_campaign(inv.process, op.t_inv);
        if (op.outcome == EventType::kOk) {
          ++r_.campaigns_ok;
          LeaderInterval li;
          li.domain = Domain("campaign", inv.key);
          li.node = "p" + std::to_string(inv.process);
          if (done->value.is_int()) li.term = done->value.as_int();
          li.start = op.t_done;
          nodes_.insert(li.node);
          if (li.term) {
            Claim(li.domain, li.node, "campaign", *li.term, op.t_done,
                  done->index);
          }
          campaigning[inv.process] = std::move(li);
        }
      } else if (o_.campaigns && inv.f == "resign") {
        end_campaign(inv.process, op.t_inv);
      }
      if (op.outcome == EventType::kInfo) end_campaign(inv.process, op.t_inv);
    }
    for (auto& [process, li] : campaigning) {
      (void)process;
      li.end = std::max(end_, li.start);
      r_.intervals.push_back(std::move(li));
    }
  }

  void Observe(const Event& inv, const Event& done, const Op& op) {
    ++r_.observations_ok;
    const Value& v = done.value;
    std::string node = !inv.node.empty()    ? inv.node
                       : !done.node.empty() ? done.node
                                            : NodeName(v.Find("node"));
    const Value* role = v.Find("role");
    const Value* term_v = v.Find("term");
    Observation ob;
    ob.leader = role && role->is_string() && role->as_string() == "leader";
    if (term_v && term_v->is_int()) ob.term = term_v->as_int();
    ob.time = op.t_done;
    ob.index = done.index;
    if (ob.leader) ++r_.leader_observations;
    if (node.empty()) {
      ++r_.unattributed;
      return;
    }
    std::string domain = Domain("observe", inv.key);
    nodes_.insert(node);
    if (ob.leader && ob.term) {
      Claim(domain, node, node, *ob.term, ob.time, ob.index);
    }
    std::string named = NodeName(v.Find("leader"));
    if (o_.named_leaders && ob.term && !named.empty() &&
        !(ob.leader && named == node)) {
      Claim(domain, named, node, *ob.term, ob.time, ob.index);
    }
    observed_[{domain, node}].push_back(ob);
  }

  void BuildObservationIntervals() {
    for (auto& [key, obs] : observed_) {
      std::sort(obs.begin(), obs.end(),
                [](const Observation& a, const Observation& b) {
                  return std::tie(a.time, a.index) < std::tie(b.time, b.index);
                });
      std::optional<LeaderInterval> cur;
      std::int64_t last_leader = 0;  // last observation confirming `cur`
      auto close = [&](std::int64_t t) {
        cur->end = t;
        r_.intervals.push_back(std::move(*cur));
        cur.reset();
      };
      for (const Observation& ob : obs) {
        if (cur && (!ob.leader || ob.term != cur->term)) close(ob.time);
        if (!ob.leader) continue;
        if (!cur) {
          cur = LeaderInterval{key.first, key.second, ob.term, ob.time, 0};
        }
        last_leader = ob.time;
      }
      if (cur) close(last_leader);
    }
    std::sort(r_.intervals.begin(), r_.intervals.end(),
              [](const LeaderInterval& a, const LeaderInterval& b) {
                return std::tie(a.domain, a.start, a.end, a.node) <
                       std::tie(b.domain, b.start, b.end, b.node);
              });
    r_.nodes = static_cast<std::int64_t>(nodes_.size());
  }

  void FindConflicts() {
    std::stable_sort(claims_.begin(), claims_.end(),
                     [](const auto& a, const auto& b) {
                       return std::tie(a.second.time, a.second.index) <
                              std::tie(b.second.time, b.second.index);
                     });
    // (domain, term) -> first claim of each node claimed, in time order.
    std::map<std::pair<std::string, std::int64_t>, std::vector<LeaderClaim>>
        by_term;
    for (auto& [domain, c] : claims_) {
      auto& list = by_term[{domain, c.term}];
      bool seen =
          std::any_of(list.begin(), list.end(),
                      [&](const LeaderClaim& x) { return x.node == c.node; });
      if (!seen) list.push_back(c);
    }
    r_.terms = static_cast<std::int64_t>(by_term.size());
    for (auto& [key, list] : by_term) {
      if (list.size() < 2) continue;
      ++r_.conflicting_terms;
      if (r_.conflicts.size() < static_cast<std::size_t>(max_examples_)) {
        r_.conflicts.push_back({key.first, key.second, std::move(list)});
      }
    }
  }

  void FindDualLeadership() {
    // Intervals are sorted by domain, then start. A node's own intervals
    // never overlap (the next starts where the previous ended).
    std::size_t i = 0;
    const auto& iv = r_.intervals;
    while (i < iv.size()) {
      std::size_t j = i;
      while (j < iv.size() && iv[j].domain == iv[i].domain) ++j;
      std::multimap<std::int64_t, std::size_t> active;  // end -> interval
      std::vector<std::pair<std::int64_t, int>> edges;
      for (std::size_t k = i; k < j; ++k) {
        const LeaderInterval& x = iv[k];
        while (!active.empty() && active.begin()->first <= x.start) {
          active.erase(active.begin());
        }
        if (x.end <= x.start) continue;
        edges.emplace_back(x.start, +1);
        edges.emplace_back(x.end, -1);
        r_.dual_count += static_cast<std::int64_t>(active.size());
        if (!active.empty()) {
          auto last = std::prev(active.end());
          std::int64_t end = std::min(last->first, x.end);
          if (!r_.longest_dual ||
              end - x.start > r_.longest_dual->end - r_.longest_dual->start) {
            r_.longest_dual =
                DualLeadership{x.domain, iv[last->second], x, x.start, end};
          }
        }
        active.emplace(x.end, k);
      }
      std::sort(edges.begin(), edges.end());
      int leaders = 0;
      std::int64_t prev = 0;
      for (const auto& [t, d] : edges) {
        if (leaders >= 2) r_.dual_time += t - prev;
        leaders += d;
        prev = t;
      }
      i = j;
    }
  }

  const History& h_;
  LeaderPerTermOptions o_;
  int max_examples_;
  LeaderPerTermResult r_;
  std::int64_t end_ = 0;
  std::vector<std::pair<std::string, LeaderClaim>> claims_;
  std::map<std::pair<std::string, std::string>, std::vector<Observation>>
      observed_;  // (domain, node) -> ok observations
  std::set<std::string> nodes_;
};

// --- Verdict text ---------------------------------------------------------

std::string When(std::int64_t t, bool timed) {
  if (!timed) return "event " + std::to_string(t);
  std::int64_t ms = t / 1000000;
  std::string frac = std::to_string(ms % 1000);
  while (frac.size() < 3) frac.insert(frac.begin(), '0');
  return std::to_string(ms / 1000) + "." + frac + " s";
}

std::string Duration(std::int64_t d, bool timed) {
  return timed ? When(d, true) : std::to_string(d) + " events";
}

std::string ClaimText(const LeaderClaim& c, bool timed) {
  std::string when = When(c.time, timed);
  if (c.source == "campaign")
    return c.node + " (won its campaign at " + when + ")";
  if (c.source == c.node) return c.node + " (said so at " + when + ")";
  return c.node + " (" + c.source + " said so at " + when + ")";
}

// "two leaders in term 5: n1 (said so at 4.200 s) and n3 (n2 said so at
// 4.310 s)".
std::string ConflictText(const TermConflict& c, bool timed) {
  static const char* const kCount[] = {"no", "one", "two", "three", "four"};
  std::size_t n = c.claims.size();
  std::string out = (n < 5 ? std::string(kCount[n]) : std::to_string(n)) +
                    " leaders in term " + std::to_string(c.term);
  if (c.domain != "observe") out += " of " + c.domain;
  out += ": ";
  for (std::size_t i = 0; i < c.claims.size(); ++i) {
    if (i) out += i + 1 == c.claims.size() ? " and " : ", ";
    out += ClaimText(c.claims[i], timed);
  }
  return out;
}

std::string TermOf(const LeaderInterval& x) {
  return x.term ? "term " + std::to_string(*x.term) : "an unknown term";
}

std::string DualText(const LeaderPerTermResult& r) {
  if (r.dual_count == 0) return "";
  const DualLeadership& d = *r.longest_dual;
  return "two nodes believed they led at once for " +
         Duration(r.dual_time, r.timed) + " in all (longest " +
         Duration(d.end - d.start, r.timed) + ": " + d.a.node + " in " +
         TermOf(d.a) + " and " + d.b.node + " in " + TermOf(d.b) + ", from " +
         When(d.start, r.timed) + " to " + When(d.end, r.timed) + ")";
}

void AppendInterval(std::string& out, const LeaderInterval& x) {
  out += "{\"node\":";
  AppendJsonString(out, x.node);
  out += ",\"term\":" + (x.term ? std::to_string(*x.term) : "null") +
         ",\"start\":" + std::to_string(x.start) +
         ",\"end\":" + std::to_string(x.end) + "}";
}

std::string DetailsJson(const LeaderPerTermResult& r) {
  std::string out = "{\"timed\":";
  out += r.timed ? "true" : "false";
  out += ",\"observations\":{\"total\":" + std::to_string(r.observations) +
         ",\"ok\":" + std::to_string(r.observations_ok) +
         ",\"leader\":" + std::to_string(r.leader_observations) +
         ",\"unattributed\":" + std::to_string(r.unattributed) +
         "},\"campaigns\":" + std::to_string(r.campaigns_ok) +
         ",\"nodes\":" + std::to_string(r.nodes) +
         ",\"terms\":" + std::to_string(r.terms) +
         ",\"conflicting_terms\":" + std::to_string(r.conflicting_terms) +
         ",\"conflicts\":[";
  for (std::size_t i = 0; i < r.conflicts.size(); ++i) {
    const TermConflict& c = r.conflicts[i];
    if (i) out += ',';
    out += "{\"domain\":";
    AppendJsonString(out, c.domain);
    out += ",\"term\":" + std::to_string(c.term) + ",\"claims\":[";
    for (std::size_t k = 0; k < c.claims.size(); ++k) {
      const LeaderClaim& cl = c.claims[k];
      if (k) out += ',';
      out += "{\"node\":";
      AppendJsonString(out, cl.node);
      out += ",\"source\":";
      AppendJsonString(out, cl.source);
      out += ",\"time\":" + std::to_string(cl.time) +
             ",\"index\":" + std::to_string(cl.index) + "}";
    }
    out += "]}";
  }
  out += "],\"dual\":{\"count\":" + std::to_string(r.dual_count) +
         ",\"time\":" + std::to_string(r.dual_time) + ",\"longest\":";
  if (r.longest_dual) {
    const DualLeadership& d = *r.longest_dual;
    out += "{\"domain\":";
    AppendJsonString(out, d.domain);
    out += ",\"a\":";
    AppendInterval(out, d.a);
    out += ",\"b\":";
    AppendInterval(out, d.b);
    out += ",\"start\":" + std::to_string(d.start) +
           ",\"end\":" + std::to_string(d.end) + "}";
  } else {
    out += "null";
  }
  out += "}";
  if (!r.malformed.empty()) {
    out += ",\"reason\":";
    AppendJsonString(out, "malformed history: " + r.malformed);
  }
  out += "}";
  return out;
}

std::string Explanation(const LeaderPerTermResult& r) {
  // What was unsafe first, then the counts.
  std::string x;
  for (const TermConflict& c : r.conflicts) {
    x += "unsafe: " + ConflictText(c, r.timed) + "\n";
  }
  x += std::to_string(r.observations) + " observations (" +
       std::to_string(r.observations_ok) + " ok, " +
       std::to_string(r.leader_observations) + " saying leader";
  if (r.unattributed > 0) {
    x += ", " + std::to_string(r.unattributed) + " without a node, ignored";
  }
  x += "), " + std::to_string(r.campaigns_ok) + " campaigns won; " +
       std::to_string(r.nodes) + " nodes or candidates, " +
       std::to_string(r.terms) + " terms claimed, " +
       std::to_string(r.intervals.size()) + " leadership intervals\n";
  if (r.conflicting_terms == 0) {
    x += "at most one leader in every term\n";
  } else {
    x += std::to_string(r.conflicting_terms) +
         " term(s) with more than one leader:\n";
    for (const TermConflict& c : r.conflicts) {
      x += "  " + ConflictText(c, r.timed) + "\n";
    }
  }
  if (r.dual_count == 0) {
    x += "never two leaders believing they led at once\n";
  } else {
    x += DualText(r) + "; " + std::to_string(r.dual_count) +
         " overlapping pair(s) of leadership intervals\n";
  }
  return x;
}

}  // namespace

LeaderPerTermResult AnalyzeLeaderPerTerm(const History& history,
                                         const LeaderPerTermOptions& options) {
  return Analyzer(history, options).Run();
}

Verdict LeaderPerTermVerdict(const LeaderPerTermResult& r) {
  Verdict v;
  v.checker = kLeaderPerTermChecker;
  v.details_json = DetailsJson(r);
  if (!r.malformed.empty()) {
    v.validity = Validity::kUnknown;
    v.summary = "malformed history: " + r.malformed;
    return v;
  }
  v.explanation = Explanation(r);
  if (r.observations_ok == 0 && r.campaigns_ok == 0) {
    v.validity = Validity::kUnknown;
    v.summary = "no observation or campaign completed ok (" +
                std::to_string(r.observations) +
                " observations), so nothing was tested";
    return v;
  }
  if (r.conflicting_terms > 0) {
    v.validity = Validity::kInvalid;
    v.summary = "unsafe: " + ConflictText(r.conflicts.front(), r.timed);
    if (r.conflicting_terms > 1) {
      v.summary += "; " + std::to_string(r.conflicting_terms) +
                   " terms with more than one leader";
    }
    return v;
  }
  v.validity = Validity::kValid;
  v.summary = "one leader per term (" + std::to_string(r.terms) + " terms, " +
              std::to_string(r.observations_ok) + " of " +
              std::to_string(r.observations) + " observations ok";
  if (r.campaigns_ok > 0) {
    v.summary += ", " + std::to_string(r.campaigns_ok) + " campaigns won";
  }
  v.summary += ")";
  if (r.dual_count > 0) v.summary += "; " + DualText(r);
  return v;
}

Verdict CheckLeaderPerTerm(const History& history,
                           const LeaderPerTermOptions& options) {
  return LeaderPerTermVerdict(AnalyzeLeaderPerTerm(history, options));
}

}  // namespace faultline::checkers

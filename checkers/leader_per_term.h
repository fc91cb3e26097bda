// The single-leader-per-term checker (checker name "leader-per-term").
//
// Reads the observation vocabulary of docs/history-locks.md:
// - `observe` by any client process, `node` = the node asked, invoke value
//   null, ok value {"role": "leader"|"follower"|..., "term": int|null,
//   "leader": "n3"|null}; fail/info = no answer (ignored, counted). The
//   time of an observation is its ok's time.
// - `campaign` (ok value = term or token, an int) .. `resign` by election
//   candidates: candidate "p<process>" leads from the campaign's ok to the
//   invoke of its resign, of its next campaign, of any of its operations
//   that ended info (or never completed), or the end of the history.
//
// Claims: an ok observation with role "leader" and an int term is node N
// claiming term T; with options.named_leaders, an ok observation naming
// "leader": L with an int term is also a claim that L leads T (as seen by
// N). A campaign ok with an int value claims that term for its candidate.
// Observations and campaigns are separate domains (a node's term and a
// lock token are different numbers): observations of key K form domain
// "observe K", campaigns of election K domain "campaign K".
//
// Violation (invalid): two distinct nodes claim the same term of one
// domain. Reported with the term, both nodes, and the time each claimed it
// first.
//
// Reported, allowed: how long two nodes believed they led at the same time
// (necessarily in different terms, or it is a violation). From
// observations, node N believes it leads from an observation saying
// "leader" until its next ok observation saying otherwise (another role, or
// leader of another term: a new belief); with no such observation, until
// its last observation saying "leader". Campaign intervals as above.
//
// Times: ns when every client event has `time`, else event indices.
// Verdict: unknown on a malformed history or when not a single observation
// or campaign completed ok; invalid on a violation; valid otherwise.
// O(n log n). Pure; thread-safe on a const history.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers {

inline constexpr char kLeaderPerTermChecker[] = "leader-per-term";

struct LeaderPerTermOptions {
  // Count "leader": L in observations as claims that L leads the term.
  bool named_leaders = true;
  // Read campaign/resign of election candidates.
  bool campaigns = true;
  int max_examples = 10;  // conflicts kept (all are counted); >= 1
};

struct LeaderClaim {
  std::string node;    // the leader claimed ("n1", or "p7" for candidates)
  std::string source;  // who said so: the node itself, another node, or
                       // "campaign"
  std::int64_t term = 0;
  std::int64_t time = 0;
  std::int64_t index = -1;  // the completion event
};

struct TermConflict {
  std::string domain;  // "observe" (null key), "observe \"k\"", "campaign.."
  std::int64_t term = 0;
  std::vector<LeaderClaim> claims;  // first claim of each node, by time
};

struct LeaderInterval {
  std::string domain;
  std::string node;
  std::optional<std::int64_t> term;
  std::int64_t start = 0;
  std::int64_t end = 0;
};

struct DualLeadership {
  std::string domain;
  LeaderInterval a, b;  // a started first
  std::int64_t start = 0;
  std::int64_t end = 0;
};

struct LeaderPerTermResult {
  bool timed = false;
  std::int64_t observations = 0;  // completed or not
  std::int64_t observations_ok = 0;
  std::int64_t leader_observations = 0;  // ok, role "leader"
  std::int64_t unattributed = 0;         // ok but no node to attribute it to
  std::int64_t campaigns_ok = 0;
  std::int64_t nodes = 0;  // distinct nodes (and candidates) observed
  std::int64_t terms = 0;  // distinct (domain, term) claimed
  std::int64_t conflicting_terms = 0;
  std::vector<TermConflict> conflicts;    // first max_examples, by term
  std::vector<LeaderInterval> intervals;  // by domain, then start
  std::int64_t dual_time = 0;   // time with >= 2 believed leaders, summed
  std::int64_t dual_count = 0;  // overlapping pairs of intervals
  std::optional<DualLeadership> longest_dual;
  std::string malformed;  // non-empty: the history broke the spec's rules
};

LeaderPerTermResult AnalyzeLeaderPerTerm(const History& history,
                                         const LeaderPerTermOptions& options);

// Summary e.g. "unsafe: two leaders in term 7: n1 (said so at 12.301 s) and
// n3 (n2 said so at 14.020 s)" or "one leader per term (42 terms, 1180 of
// 1200 observations ok); two nodes believed they led at once for 2.300 s in
// all (longest 1.100 s: n1 in term 3 and n2 in term 4)". details_json:
//   {"timed":B, "observations":{"total":N,"ok":N,"leader":N,
//    "unattributed":N}, "campaigns":N, "nodes":N, "terms":N,
//    "conflicting_terms":N, "conflicts":[{"domain","term","claims":[{"node",
//    "source","time","index"}]}], "dual":{"count":N,"time":T,"longest":
//    {"domain","a":{"node","term","start","end"},"b":{...},"start","end"}|
//    null}, "reason":"..."}
// The explanation leads with one "unsafe: ..." line per kept conflict.
Verdict LeaderPerTermVerdict(const LeaderPerTermResult& result);

Verdict CheckLeaderPerTerm(const History& history,
                           const LeaderPerTermOptions& options = {});

}  // namespace faultline::checkers

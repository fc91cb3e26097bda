// The verdict text of the mutex-fencing checker: summary, explanation and
// details_json of a MutexFencingResult (see mutex_fencing.h).
#include <string>

#include "checkers/mutex_fencing.h"

namespace faultline::checkers {
namespace {

// --- Verdict text ---------------------------------------------------------

std::string When(std::int64_t t, bool timed) {
  if (!timed) return "event " + std::to_string(t);
  // Seconds with 3 decimals, without locale or printf.
  std::int64_t ms = t / 1000000;
  std::string frac = std::to_string(ms % 1000);
  while (frac.size() < 3) frac.insert(frac.begin(), '0');
  return std::to_string(ms / 1000) + "." + frac + " s";
}

std::string Duration(std::int64_t d, bool timed) {
  if (!timed) return std::to_string(d) + " events";
  return When(d, true);
}

std::string Proc(std::int64_t p) { return "p" + std::to_string(p); }

std::string Name(const Value& v) {
  return v.is_null() ? "(no key)" : v.ToJson();
}

std::string Token(const std::optional<std::int64_t>& t) {
  return t ? std::to_string(*t) : "none";
}

std::string OverlapText(const MutexFencingResult& r, const HoldOverlap& o) {
  const Hold& a = r.holds[o.first];
  const Hold& b = r.holds[o.second];
  return Proc(a.acquire.process) + " and " + Proc(b.acquire.process) +
         " both held " + Name(o.lock) + " from " + When(o.start, r.timed) +
         " to " + When(o.end, r.timed) + (b.open && a.open ? " (end)" : "");
}

std::string TokenText(const MutexFencingResult& r, const TokenAnomaly& a) {
  if (a.duplicate) {
    return "fencing token " + Token(a.later.token) + " of " + Name(a.lock) +
           " was granted twice: to " + Proc(a.earlier.process) + " at " +
           When(a.earlier.complete, r.timed) + " and to " +
           Proc(a.later.process) + " at " + When(a.later.complete, r.timed);
  }
  return "fencing tokens of " + Name(a.lock) +
         " not monotonic: " + Proc(a.later.process) + " got token " +
         Token(a.later.token) + " (acquire invoked at " +
         When(a.later.invoke, r.timed) + ") after " + Proc(a.earlier.process) +
         " got " + Token(a.earlier.token) + " (at " +
         When(a.earlier.complete, r.timed) + ")";
}

// "overlap of p2 and p4 on \"lock\" from 3.100 s to 3.400 s was harmless:
// the store rejected p2's stale token 3".
std::string JudgedOverlapText(const MutexFencingResult& r,
                              const HoldOverlap& o) {
  const Hold& a = r.holds[o.first];
  const Hold& b = r.holds[o.second];
  return "overlap of " + Proc(a.acquire.process) + " and " +
         Proc(b.acquire.process) + " on " + Name(o.lock) + " from " +
         When(o.start, r.timed) + " to " + When(o.end, r.timed) + " was " +
         (o.unsafe ? "unsafe: " : "harmless: ") + o.why;
}

std::string StaleText(const MutexFencingResult& r, const StaleAccept& s) {
  return "fenced resource " + Name(s.resource) + " accepted token " +
         Token(s.stale.token) + " after token " + Token(s.newer.token) + " (" +
         Proc(s.stale.process) + " wrote at " + When(s.stale.invoke, r.timed) +
         ", " + Proc(s.newer.process) + "'s write was accepted at " +
         When(s.newer.complete, r.timed) + ")";
}

std::string CorruptionText(const MutexFencingResult& r, const Corruption& c) {
  const Hold& old_hold = r.holds[c.old_hold];
  const Hold& new_hold = r.holds[c.new_hold];
  return "unfenced resource " + Name(c.resource) +
         " corrupted: " + Proc(c.old_write.process) + ", holding " +
         Name(c.lock) + " since " + When(old_hold.start, r.timed) +
         ", wrote at " + When(c.old_write.invoke, r.timed) + " after " +
         Proc(new_hold.acquire.process) + " acquired it at " +
         When(new_hold.start, r.timed) + " (" + Proc(c.new_write.process) +
         " wrote at " + When(c.new_write.invoke, r.timed) + ")";
}

std::string Plural(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Times(std::int64_t n) {
  return n == 1 ? "once" : n == 2 ? "twice" : std::to_string(n) + " times";
}

// What happened to the writes: stale fenced writes and their fate, and the
// number of accepted unfenced writes ("none interleaved" only when
// `clean`, i.e. no corruption was found).
std::string FencingClause(const MutexFencingResult& r, bool clean) {
  std::string out;
  std::int64_t fenced_ok = r.writes_ok - r.writes_unfenced_ok;
  if (r.stale_writes > 0) {
    if (r.stale_rejected == r.stale_writes) {
      out = r.stale_writes == 1 ? "the stale write was rejected by fencing"
                                : "all " + std::to_string(r.stale_writes) +
                                      " stale writes rejected by fencing";
    } else {
      out = Plural(r.stale_writes, "stale write", "stale writes") + ": " +
            std::to_string(r.stale_rejected) + " rejected by fencing, " +
            std::to_string(r.stale_accepted) +
            " accepted before the resource saw a newer token";
    }
  } else if (fenced_ok > 0 || r.writes_rejected > 0) {
    out = Plural(fenced_ok, "fenced write", "fenced writes") +
          " accepted, none stale";
  }
  if (r.writes_unfenced_ok > 0) {
    if (!out.empty()) out += ", ";
    out += Plural(r.writes_unfenced_ok, "unfenced write", "unfenced writes") +
           " accepted";
    if (clean) out += ", none interleaved";
  }
  if (out.empty()) out = "no resource writes accepted";
  return out;
}

void AppendOp(std::string& out, const LockOpRef& o) {
  out += "{\"index\":" + std::to_string(o.index) +
         ",\"process\":" + std::to_string(o.process) +
         ",\"invoke\":" + std::to_string(o.invoke) +
         ",\"complete\":" + std::to_string(o.complete) + ",\"token\":" +
         (o.token ? std::to_string(*o.token) : std::string("null")) + "}";
}

void AppendHold(std::string& out, const Hold& h) {
  out += "{\"process\":" + std::to_string(h.acquire.process) + ",\"token\":" +
         (h.acquire.token ? std::to_string(*h.acquire.token)
                          : std::string("null")) +
         ",\"start\":" + std::to_string(h.start) +
         ",\"end\":" + std::to_string(h.end) +
         ",\"open\":" + (h.open ? "true" : "false") +
         ",\"acquire_index\":" + std::to_string(h.acquire.index) +
         ",\"end_index\":" +
         (h.end_index >= 0 ? std::to_string(h.end_index) : "null") +
         ",\"ended_by\":";
  AppendJsonString(out, h.ended_by);
  out += '}';
}

void AppendCount(std::string& out, const char* name, std::int64_t n,
                 bool comma = true) {
  if (comma) out += ',';
  AppendJsonString(out, name);
  out += ':' + std::to_string(n);
}

std::string DetailsJson(const MutexFencingResult& r) {
  std::string out = "{\"timed\":";
  out += r.timed ? "true" : "false";
  AppendCount(out, "locks", r.locks);
  out += ",\"acquires\":{";
  AppendCount(out, "ok", r.acquires_ok, false);
  AppendCount(out, "fail", r.acquires_fail);
  AppendCount(out, "info", r.acquires_info);
  out += '}';
  AppendCount(out, "holds", static_cast<std::int64_t>(r.holds.size()));
  out += ",\"overlaps\":{";
  AppendCount(out, "count", r.overlap_count, false);
  AppendCount(out, "time", r.overlap_time);
  out += ",\"examples\":[";
  for (std::size_t i = 0; i < r.overlaps.size(); ++i) {
    const HoldOverlap& o = r.overlaps[i];
    if (i) out += ',';
    out += "{\"lock\":" + o.lock.ToJson() + ",\"first\":";
    AppendHold(out, r.holds[o.first]);
    out += ",\"second\":";
    AppendHold(out, r.holds[o.second]);
    out += ",\"start\":" + std::to_string(o.start) +
           ",\"end\":" + std::to_string(o.end) +
           ",\"unsafe\":" + (o.unsafe ? "true" : "false") + ",\"why\":";
    AppendJsonString(out, o.why);
    out += '}';
  }
  out += "]},\"tokens\":{";
  AppendCount(out, "duplicates", r.token_duplicates, false);
  AppendCount(out, "regressions", r.token_regressions);
  out += ",\"examples\":[";
  for (std::size_t i = 0; i < r.token_anomalies.size(); ++i) {
    const TokenAnomaly& a = r.token_anomalies[i];
    if (i) out += ',';
    out += "{\"lock\":" + a.lock.ToJson() +
           ",\"kind\":" + (a.duplicate ? "\"duplicate\"" : "\"regression\"") +
           ",\"earlier\":";
    AppendOp(out, a.earlier);
    out += ",\"later\":";
    AppendOp(out, a.later);
    out += '}';
  }
  out += "]},\"writes\":{";
  AppendCount(out, "resources", r.resources, false);
  AppendCount(out, "ok", r.writes_ok);
  AppendCount(out, "rejected", r.writes_rejected);
  AppendCount(out, "failed", r.writes_failed);
  AppendCount(out, "info", r.writes_info);
  AppendCount(out, "unfenced_ok", r.writes_unfenced_ok);
  AppendCount(out, "unattributed", r.writes_unattributed);
  AppendCount(out, "stale", r.stale_writes);
  AppendCount(out, "stale_rejected", r.stale_rejected);
  AppendCount(out, "stale_accepted", r.stale_accepted);
  out += "},\"stale_accepts\":{";
  AppendCount(out, "count", r.stale_accepts, false);
  out += ",\"examples\":[";
  for (std::size_t i = 0; i < r.stale_accept_examples.size(); ++i) {
    const StaleAccept& s = r.stale_accept_examples[i];
    if (i) out += ',';
    out += "{\"resource\":" + s.resource.ToJson() + ",\"newer\":";
    AppendOp(out, s.newer);
    out += ",\"stale\":";
    AppendOp(out, s.stale);
    out += '}';
  }
  out += "]},\"corruptions\":{";
  AppendCount(out, "count", r.corruptions, false);
  out += ",\"examples\":[";
  for (std::size_t i = 0; i < r.corruption_examples.size(); ++i) {
    const Corruption& c = r.corruption_examples[i];
    if (i) out += ',';
    out += "{\"resource\":" + c.resource.ToJson() +
           ",\"lock\":" + c.lock.ToJson() + ",\"old_hold\":";
    AppendHold(out, r.holds[c.old_hold]);
    out += ",\"new_hold\":";
    AppendHold(out, r.holds[c.new_hold]);
    out += ",\"old_write\":";
    AppendOp(out, c.old_write);
    out += ",\"new_write\":";
    AppendOp(out, c.new_write);
    out += '}';
  }
  out += "]}";
  if (!r.malformed.empty()) {
    out += ",\"reason\":";
    AppendJsonString(out, "malformed history: " + r.malformed);
  }
  out += '}';
  return out;
}

std::string Explanation(const MutexFencingResult& r) {
  std::string x;
  // What was unsafe first, then each kept overlap, judged; then the counts.
  for (const TokenAnomaly& a : r.token_anomalies) {
    x += "unsafe: " + TokenText(r, a) + "\n";
  }
  for (const StaleAccept& s : r.stale_accept_examples) {
    x += "unsafe: " + StaleText(r, s) + "\n";
  }
  for (const Corruption& c : r.corruption_examples) {
    x += "unsafe: " + CorruptionText(r, c) + "\n";
  }
  for (const HoldOverlap& o : r.overlaps) {
    x += std::string(o.unsafe ? "unsafe: " : "safe: ") +
         JudgedOverlapText(r, o) + "\n";
  }
  x += Plural(r.locks, "lock", "locks") +
       "; acquires: " + std::to_string(r.acquires_ok) + " ok, " +
       std::to_string(r.acquires_fail) + " fail, " +
       std::to_string(r.acquires_info) + " info; " +
       Plural(static_cast<std::int64_t>(r.holds.size()), "hold", "holds") +
       "\n";
  if (r.overlap_count == 0) {
    x += "mutual exclusion: no two processes held a lock at once\n";
  } else {
    x += "mutual exclusion broken " + Times(r.overlap_count) +
         " (overlapping holds of different processes), " +
         Duration(r.overlap_time, r.timed) +
         " in all with two or more holders\n";
    for (const HoldOverlap& o : r.overlaps) {
      x += "  " + OverlapText(r, o) + " (tokens " +
           Token(r.holds[o.first].acquire.token) + " and " +
           Token(r.holds[o.second].acquire.token) + ")\n";
    }
  }
  if (r.token_duplicates + r.token_regressions == 0) {
    x += "fencing tokens: unique and increasing with acquisition order\n";
  } else {
    x += "fencing tokens: " + std::to_string(r.token_duplicates) +
         " duplicate(s), " + std::to_string(r.token_regressions) +
         " regression(s)\n";
    for (const TokenAnomaly& a : r.token_anomalies) {
      x += "  " + TokenText(r, a) + "\n";
    }
  }
  x += "resource writes: " + std::to_string(r.writes_ok) + " accepted, " +
       std::to_string(r.writes_rejected) + " rejected by fencing, " +
       std::to_string(r.writes_failed) + " failed, " +
       std::to_string(r.writes_info) + " unknown (info); " +
       FencingClause(r, r.corruptions == 0) + "\n";
  if (r.writes_unattributed > 0) {
    x += Plural(r.writes_unattributed, "accepted unfenced write",
                "accepted unfenced writes") +
         " came from a process holding no lock (not checked)\n";
  }
  if (r.stale_accepts > 0) {
    x += "fenced resources accepted " +
         Plural(r.stale_accepts, "stale write", "stale writes") +
         " after a newer token:\n";
    for (const StaleAccept& s : r.stale_accept_examples) {
      x += "  " + StaleText(r, s) + "\n";
    }
  }
  if (r.corruptions > 0) {
    x += "unfenced resources corrupted by " +
         Plural(r.corruptions, "interleaved write", "interleaved writes") +
         ":\n";
    for (const Corruption& c : r.corruption_examples) {
      x += "  " + CorruptionText(r, c) + "\n";
    }
  }
  return x;
}

}  // namespace

Verdict MutexFencingVerdict(const MutexFencingResult& r) {
  Verdict v;
  v.checker = kMutexFencingChecker;
  v.details_json = DetailsJson(r);
  if (!r.malformed.empty()) {
    v.validity = Validity::kUnknown;
    v.summary = "malformed history: " + r.malformed;
    return v;
  }
  v.explanation = Explanation(r);
  if (r.acquires_ok == 0) {
    v.validity = Validity::kUnknown;
    v.summary = "no acquire completed ok (" + std::to_string(r.acquires_fail) +
                " fail, " + std::to_string(r.acquires_info) +
                " info), so nothing was tested";
    return v;
  }
  std::string overlaps;
  if (r.overlap_count > 0) {
    // The checker found nothing unsafe: every overlap was harmless.
    overlaps =
        Plural(r.overlap_count, "overlap", "overlaps") + " of holds, harmless";
    if (r.longest_overlap) {
      overlaps += " (" + OverlapText(r, *r.longest_overlap) + ": " +
                  r.longest_overlap->why + ")";
    }
  }
  std::int64_t violations = r.token_duplicates + r.token_regressions +
                            r.stale_accepts + r.corruptions;
  if (violations > 0) {
    v.validity = Validity::kInvalid;
    std::string what;
    if (!r.stale_accept_examples.empty()) {
      what = StaleText(r, r.stale_accept_examples.front());
    } else if (!r.corruption_examples.empty()) {
      what = CorruptionText(r, r.corruption_examples.front());
    } else {
      what = TokenText(r, r.token_anomalies.front());
    }
    v.summary = "unsafe: " + what;
    if (violations > 1) {
      v.summary += "; " + std::to_string(violations) + " violations in all";
    }
    if (r.overlap_count > 0) {
      v.summary +=
          "; " + Plural(r.overlap_count, "overlap", "overlaps") + " of holds";
    }
    return v;
  }
  v.validity = Validity::kValid;
  if (overlaps.empty()) {
    overlaps =
        "mutual exclusion held (" +
        Plural(static_cast<std::int64_t>(r.holds.size()), "hold", "holds") +
        " of " + Plural(r.locks, "lock", "locks") + ")";
  }
  v.summary = overlaps + ", " + FencingClause(r, true) + ": safe";
  return v;
}

}  // namespace faultline::checkers

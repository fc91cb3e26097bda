// Tests for checkers/mutex_fencing.h: hand-built lock histories that provoke
// each anomaly (overlap, token duplicate and regression, stale write accepted
// by a fenced resource, unfenced corruption) and clean controls.
#include "checkers/mutex_fencing.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

constexpr EventType kInv = EventType::kInvoke;
constexpr EventType kOk = EventType::kOk;
constexpr EventType kFail = EventType::kFail;
constexpr EventType kInfo = EventType::kInfo;

const Value kLock = Value::String("lock");
const Value kRes = Value::String("r");

// Times are given in ms and stored in ns.
Event Ev(std::int64_t ms, std::int64_t p, EventType type, const char* f,
         Value key, Value value = {}) {
  Event e;
  e.time = ms * 1000000;
  e.process = p;
  e.type = type;
  e.f = f;
  e.key = std::move(key);
  e.value = std::move(value);
  return e;
}

Value Tok(std::optional<std::int64_t> t) {
  return t ? Value::Int(*t) : Value::Null();
}

using Events = std::vector<Event>;

// acquire invoked at `a`, completed (`type`) at `b` with `token` when ok.
Events Acquire(std::int64_t p, std::int64_t a, std::int64_t b,
               std::optional<std::int64_t> token, EventType type = kOk,
               const char* f = "acquire", const Value& lock = kLock) {
  Event done = Ev(b, p, type, f, lock, type == kOk ? Tok(token) : Value());
  if (type == kInfo) done.error = "timeout";
  return {Ev(a, p, kInv, f, lock), done};
}

Events Release(std::int64_t p, std::int64_t a, std::int64_t b,
               std::optional<std::int64_t> token, const char* f = "release") {
  return {Ev(a, p, kInv, f, kLock, Tok(token)),
          Ev(b, p, kOk, f, kLock, Tok(token))};
}

Events Write(std::int64_t p, std::int64_t a, std::int64_t b,
             std::optional<std::int64_t> token, std::int64_t value,
             EventType type, bool fenced) {
  Value v = Value::MakeList({Tok(token), Value::Int(value)});
  Event inv = Ev(a, p, kInv, "resource-write", kRes, v);
  inv.extra.emplace_back("fenced", Value::Bool(fenced));
  Event done = Ev(b, p, type, "resource-write", kRes, v);
  if (type == kFail) done.error = "fenced";
  if (type == kInfo) done.error = "timeout";
  return {inv, done};
}

// Concatenates the pieces, orders them by time (stable: ties keep the
// order given) and numbers them.
History H(std::vector<Events> parts) {
  History h;
  for (Events& p : parts) {
    for (Event& e : p) h.push_back(std::move(e));
  }
  std::stable_sort(h.begin(), h.end(), [](const Event& a, const Event& b) {
    return *a.time < *b.time;
  });
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i].index = static_cast<std::int64_t>(i);
  }
  return h;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void RequireJson(const Verdict& v) {
  Value parsed;
  std::string error;
  INFO(v.details_json);
  REQUIRE(ParseJson(v.details_json, parsed, &error));
  CHECK(parsed.is_object());
}

// p0 acquires (token 1) and stalls; p1 acquires (token 2), writes and
// releases; p0 wakes up and writes with token 1 (outcome `stale`), then
// releases.
History PausedHolder(bool fenced, EventType stale) {
  return H({Acquire(0, 0, 1000, 1), Acquire(1, 5000, 5100, 2),
            Write(1, 5200, 5300, 2, 20, kOk, fenced), Release(1, 5400, 5500, 2),
            Write(0, 6000, 6100, 1, 10, stale, fenced),
            Release(0, 6200, 6300, 1)});
}

TEST_CASE("mutex-fencing: sequential holds are safe", "[mutex_fencing]") {
  History h = H({Acquire(0, 0, 10, 1), Write(0, 20, 30, 1, 10, kOk, true),
                 Release(0, 40, 50, 1), Acquire(1, 45, 60, 2),
                 Write(1, 70, 80, 2, 20, kOk, true), Release(1, 90, 100, 2)});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK(r.timed);
  CHECK(r.locks == 1);
  CHECK(r.acquires_ok == 2);
  REQUIRE(r.holds.size() == 2);
  CHECK(r.holds[0].start == 10000000);
  CHECK(r.holds[0].end == 40000000);
  CHECK(r.holds[0].ended_by == "release");
  CHECK(r.overlap_count == 0);
  CHECK(r.writes_ok == 2);
  CHECK(r.stale_writes == 0);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.checker == "mutex-fencing");
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "mutual exclusion held (2 holds of 1 lock), 2 fenced writes accepted, "
        "none stale: safe");
  RequireJson(v);
}

TEST_CASE("mutex-fencing: overlap with fencing intact is valid with a note",
          "[mutex_fencing]") {
  MutexFencingResult r = AnalyzeMutexFencing(PausedHolder(true, kFail), {});
  CHECK(r.overlap_count == 1);
  REQUIRE(r.longest_overlap);
  CHECK(r.longest_overlap->start == 5100000000);
  CHECK(r.longest_overlap->end == 5400000000);
  CHECK(r.overlap_time == 300000000);
  CHECK(r.stale_writes == 1);
  CHECK(r.stale_rejected == 1);
  CHECK(r.writes_rejected == 1);
  CHECK(r.stale_accepts == 0);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "1 overlap of holds, harmless (p0 and p1 both held \"lock\" from "
        "5.100 s to 5.400 s: the store rejected p0's stale token 1), the stale "
        "write was rejected by fencing: safe");
  CHECK(Contains(v.explanation, "tokens 1 and 2"));
  // The overlap is worded as safe, with what made it harmless.
  REQUIRE(r.overlaps.size() == 1);
  CHECK_FALSE(r.overlaps[0].unsafe);
  CHECK(r.overlaps[0].why == "the store rejected p0's stale token 1");
  CHECK(v.explanation.rfind(
            "safe: overlap of p0 and p1 on \"lock\" from 5.100 s to 5.400 s "
            "was harmless: the store rejected p0's stale token 1\n",
            0) == 0);
  CHECK_FALSE(Contains(v.explanation, "unsafe"));
  CHECK(Contains(v.details_json, "\"unsafe\":false"));
  RequireJson(v);
}

TEST_CASE("mutex-fencing: fenced resource accepting a stale token is invalid",
          "[mutex_fencing]") {
  Verdict v = CheckMutexFencing(PausedHolder(true, kOk));
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: fenced resource \"r\" accepted token 1 after token 2 (p0 "
        "wrote at 6.000 s, p1's write was accepted at 5.300 s); 1 overlap of "
        "holds");
  // The explanation leads with what was unsafe; the overlap is unsafe too.
  CHECK(v.explanation.rfind("unsafe: fenced resource \"r\" accepted token 1",
                            0) == 0);
  CHECK(Contains(v.explanation,
                 "unsafe: overlap of p0 and p1 on \"lock\" from 5.100 s to "
                 "5.400 s was unsafe: the store accepted p0's stale token 1"));
  MutexFencingResult r = AnalyzeMutexFencing(PausedHolder(true, kOk), {});
  CHECK(r.stale_accepts == 1);
  REQUIRE(r.stale_accept_examples.size() == 1);
  CHECK(*r.stale_accept_examples[0].stale.token == 1);
  CHECK(*r.stale_accept_examples[0].newer.token == 2);
  CHECK(r.corruptions == 0);  // fenced writes are judged by tokens only
  RequireJson(v);
}

TEST_CASE(
    "mutex-fencing: stale write accepted before the newer token "
    "reached the resource is allowed",
    "[mutex_fencing]") {
  // p0 writes token 1 after p1 acquired token 2 but before p1 wrote.
  History h =
      H({Acquire(0, 0, 1000, 1), Acquire(1, 5000, 5100, 2),
         Write(0, 5150, 5160, 1, 10, kOk, true), Release(0, 5170, 5180, 1),
         Write(1, 5200, 5300, 2, 20, kOk, true), Release(1, 5400, 5500, 2)});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK(r.stale_writes == 1);
  CHECK(r.stale_accepted == 1);
  CHECK(r.stale_accepts == 0);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.validity == Validity::kValid);
  CHECK(Contains(v.summary,
                 "1 stale write: 0 rejected by fencing, 1 accepted "
                 "before the resource saw a newer token: safe"));
}

TEST_CASE("mutex-fencing: non-monotonic and duplicate tokens are invalid",
          "[mutex_fencing]") {
  History lower = H({Acquire(0, 0, 10, 5), Release(0, 20, 30, 5),
                     Acquire(1, 40, 50, 3), Release(1, 60, 70, 3)});
  Verdict v = CheckMutexFencing(lower);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: fencing tokens of \"lock\" not monotonic: p1 got token 3 "
        "(acquire invoked at 0.040 s) after p0 got 5 (at 0.010 s)");
  MutexFencingResult r = AnalyzeMutexFencing(lower, {});
  CHECK(r.token_regressions == 1);
  CHECK(r.token_duplicates == 0);

  History twice = H({Acquire(0, 0, 10, 5), Release(0, 20, 30, 5),
                     Acquire(1, 40, 50, 5), Release(1, 60, 70, 5)});
  v = CheckMutexFencing(twice);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: fencing token 5 of \"lock\" was granted twice: to p0 at "
        "0.010 s and to p1 at 0.050 s");
  CHECK(v.explanation.rfind("unsafe: fencing token 5 of \"lock\" was granted "
                            "twice: to p0 at 0.010 s and to p1 at 0.050 s\n",
                            0) == 0);
  r = AnalyzeMutexFencing(twice, {});
  CHECK(r.token_duplicates == 1);
  CHECK(r.token_regressions == 0);

  // Concurrent acquisitions may be granted in either order.
  History concurrent = H({Acquire(0, 0, 100, 5), Acquire(1, 10, 90, 4),
                          Release(1, 110, 120, 4), Release(0, 130, 140, 5)});
  r = AnalyzeMutexFencing(concurrent, {});
  CHECK(r.token_regressions == 0);
  CHECK(r.token_duplicates == 0);
  CHECK(r.overlap_count == 1);  // a broken lock, but tokens are in order
  CHECK(MutexFencingVerdict(r).validity == Validity::kValid);
}

TEST_CASE(
    "mutex-fencing: unfenced resource written after a newer holder is "
    "corrupted",
    "[mutex_fencing]") {
  MutexFencingResult r = AnalyzeMutexFencing(PausedHolder(false, kOk), {});
  CHECK(r.overlap_count == 1);
  CHECK(r.corruptions == 1);
  CHECK(r.stale_writes == 0);  // staleness is counted for fenced writes
  REQUIRE(r.corruption_examples.size() == 1);
  CHECK(r.corruption_examples[0].old_write.process == 0);
  CHECK(r.corruption_examples[0].new_write.process == 1);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "unsafe: unfenced resource \"r\" corrupted: p0, holding \"lock\" "
        "since 1.000 s, wrote at 6.000 s after p1 acquired it at 5.100 s (p1 "
        "wrote at 5.200 s); 1 overlap of holds");
  REQUIRE(r.overlaps.size() == 1);
  CHECK(r.overlaps[0].unsafe);
  RequireJson(v);
}

TEST_CASE("mutex-fencing: unfenced writes of both holders inside the overlap",
          "[mutex_fencing]") {
  // p1 acquires while p0 holds; p0 writes, then p1 writes: both wrote while
  // the other held the lock.
  History h =
      H({Acquire(0, 0, 10, std::nullopt), Acquire(1, 20, 30, std::nullopt),
         Write(0, 40, 50, std::nullopt, 1, kOk, false),
         Write(1, 60, 70, std::nullopt, 2, kOk, false),
         Release(0, 80, 90, std::nullopt), Release(1, 100, 110, std::nullopt)});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK(r.overlap_count == 1);
  CHECK(r.corruptions == 1);
  CHECK(MutexFencingVerdict(r).validity == Validity::kInvalid);

  // The same overlap, but p0 wrote before p1 acquired: not corrupted.
  History early =
      H({Acquire(0, 0, 10, std::nullopt),
         Write(0, 12, 15, std::nullopt, 1, kOk, false),
         Acquire(1, 20, 30, std::nullopt),
         Write(1, 60, 70, std::nullopt, 2, kOk, false),
         Release(0, 80, 90, std::nullopt), Release(1, 100, 110, std::nullopt)});
  r = AnalyzeMutexFencing(early, {});
  CHECK(r.overlap_count == 1);
  CHECK(r.corruptions == 0);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "1 overlap of holds, harmless (p0 and p1 both held \"lock\" from "
        "0.030 s to 0.080 s: p0 wrote nothing after p1 acquired it), 2 "
        "unfenced writes accepted, none interleaved: safe");

  // And only p0 wrote inside the overlap: one writer, not corrupted.
  History one =
      H({Acquire(0, 0, 10, std::nullopt), Acquire(1, 20, 30, std::nullopt),
         Write(0, 40, 50, std::nullopt, 1, kOk, false),
         Release(0, 80, 90, std::nullopt), Release(1, 100, 110, std::nullopt)});
  r = AnalyzeMutexFencing(one, {});
  CHECK(r.corruptions == 0);
}

TEST_CASE("mutex-fencing: timeouts and crashes are not violations",
          "[mutex_fencing]") {
  // p0 acquires token 1; its renew times out (p0 is gone; its hold ends at
  // the renew's invoke). p2 times out acquiring (no hold). p1 acquires
  // token 2 and writes. A write of p3 with token 1 times out (it may land
  // any time, even after token 2: info proves nothing). p4's acquire never
  // completes.
  History h = H({Acquire(0, 0, 10, 1),
                 {Ev(20, 0, kInv, "renew", kLock, Value::Int(1)),
                  Ev(900, 0, kInfo, "renew", kLock, Value::Int(1))},
                 Acquire(2, 30, 800, std::nullopt, kInfo),
                 Acquire(1, 1000, 1010, 2),
                 Write(1, 1020, 1030, 2, 20, kOk, true),
                 Write(3, 1100, 3000, 1, 30, kInfo, true),
                 {Ev(3100, 4, kInv, "acquire", kLock)}});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  REQUIRE(r.holds.size() == 2);
  CHECK(r.holds[0].ended_by == "info");
  CHECK(r.holds[0].end == 20000000);
  CHECK(r.holds[1].open);
  CHECK(r.holds[1].end == 3100000000);  // the end of the history
  CHECK(r.acquires_info == 2);
  CHECK(r.overlap_count == 0);
  CHECK(r.writes_info == 1);
  CHECK(r.stale_writes == 0);
  CHECK(r.stale_accepts == 0);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.validity == Validity::kValid);
  RequireJson(v);
}

TEST_CASE("mutex-fencing: a failed renew ends the hold", "[mutex_fencing]") {
  History h = H({Acquire(0, 0, 10, 1),
                 {Ev(50, 0, kInv, "renew", kLock, Value::Int(1)),
                  Ev(60, 0, kFail, "renew", kLock, Value::Int(1))},
                 Acquire(1, 55, 70, 2),
                 Release(1, 80, 90, 2)});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  REQUIRE(r.holds.size() == 2);
  CHECK(r.holds[0].ended_by == "renew-fail");
  CHECK(r.holds[0].end == 50000000);
  CHECK(r.overlap_count == 0);
}

TEST_CASE("mutex-fencing: renew keeps the hold, a new acquire ends it",
          "[mutex_fencing]") {
  // p0 renews (ok) and keeps the lock; then it acquires again without a
  // release (its own view: it did not hold it any more).
  History h = H({Acquire(0, 0, 10, 1),
                 {Ev(20, 0, kInv, "renew", kLock, Value::Int(1)),
                  Ev(30, 0, kOk, "renew", kLock, Value::Int(1))},
                 Acquire(0, 40, 50, 2),
                 Release(0, 60, 70, 2),
                 Acquire(1, 65, 80, 3),
                 Release(1, 90, 100, 3)});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  REQUIRE(r.holds.size() == 3);
  CHECK(r.holds[0].ended_by == "acquire");
  CHECK(r.holds[0].end == 40000000);
  CHECK(r.holds[0].end_index == 4);
  CHECK(r.holds[1].ended_by == "release");
  CHECK(r.holds[2].ended_by == "release");
  CHECK(r.overlap_count == 0);
  CHECK(MutexFencingVerdict(r).validity == Validity::kValid);
}

TEST_CASE("mutex-fencing: without \"fenced\", a write with a token is fenced",
          "[mutex_fencing]") {
  History h = PausedHolder(true, kOk);
  for (Event& e : h) e.extra.clear();
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK(r.stale_accepts == 1);  // judged as fenced: token 1 after token 2
  CHECK(r.corruptions == 0);

  History untokened = PausedHolder(false, kOk);
  for (Event& e : untokened) {
    e.extra.clear();
    if (e.f == "resource-write") {
      e.value = Value::MakeList({Value(), e.value.as_list()[1]});
    }
  }
  r = AnalyzeMutexFencing(untokened, {});
  CHECK(r.stale_accepts == 0);
  CHECK(r.corruptions == 1);  // judged as unfenced
}

TEST_CASE("mutex-fencing: nothing tested or malformed is unknown",
          "[mutex_fencing]") {
  History none = H({Acquire(0, 0, 10, std::nullopt, kFail),
                    Acquire(1, 20, 30, std::nullopt, kInfo)});
  Verdict v = CheckMutexFencing(none);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary ==
        "no acquire completed ok (1 fail, 1 info), so nothing was tested");
  CHECK(CheckMutexFencing({}).validity == Validity::kUnknown);

  History bad = H({Acquire(0, 0, 10, 1)});
  bad[1].f = "release";  // completion of a different f
  v = CheckMutexFencing(bad);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(Contains(v.summary, "malformed history"));
  RequireJson(v);
}

TEST_CASE("mutex-fencing: election campaigns count as holds",
          "[mutex_fencing]") {
  // Two candidates believe they lead at once; the unfenced resource is
  // written by the deposed one after the new leader wrote.
  auto campaign = [](std::int64_t p, std::int64_t a, std::int64_t b,
                     std::int64_t term) {
    return Acquire(p, a, b, term, kOk, "campaign");
  };
  History h = H({campaign(0, 0, 10, 1), campaign(1, 100, 110, 2),
                 Write(1, 120, 130, 2, 20, kOk, false),
                 Write(0, 140, 150, 1, 10, kOk, false),
                 Release(0, 160, 170, 1, "resign")});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK(r.acquires_ok == 2);
  CHECK(r.holds[0].ended_by == "release");
  CHECK(r.corruptions == 1);
  CHECK(MutexFencingVerdict(r).validity == Validity::kInvalid);

  MutexFencingOptions off;
  off.campaigns_as_holds = false;
  CHECK(CheckMutexFencing(h, off).validity == Validity::kUnknown);
}

TEST_CASE("mutex-fencing: histories without time use event indices",
          "[mutex_fencing]") {
  History h = PausedHolder(true, kFail);
  for (Event& e : h) e.time.reset();
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK_FALSE(r.timed);
  CHECK(r.overlap_count == 1);
  Verdict v = MutexFencingVerdict(r);
  CHECK(v.validity == Validity::kValid);
  CHECK(Contains(v.summary, "from event 3 to event 6"));
}

TEST_CASE("mutex-fencing: locks and resources are independent",
          "[mutex_fencing]") {
  // Holds of two different locks overlap freely; writes name their lock.
  const Value other = Value::String("other");
  Events w0 = Write(0, 20, 30, 1, 10, kOk, false);
  w0[0].extra.emplace_back("lock", kLock);
  Events w1 = Write(1, 40, 50, 1, 20, kOk, false);
  w1[0].extra.emplace_back("lock", other);
  History h =
      H({Acquire(0, 0, 10, 1), Acquire(1, 5, 15, 1, kOk, "acquire", other), w0,
         w1, Release(0, 60, 70, 1)});
  MutexFencingResult r = AnalyzeMutexFencing(h, {});
  CHECK(r.locks == 2);
  CHECK(r.overlap_count == 0);
  CHECK(r.token_duplicates == 0);
  CHECK(r.corruptions == 0);
  CHECK(MutexFencingVerdict(r).validity == Validity::kValid);
}

TEST_CASE("mutex-fencing: many overlaps are counted, examples bounded",
          "[mutex_fencing]") {
  // 50 processes all hold the lock at once (tokens in order).
  std::vector<Events> parts;
  for (int p = 0; p < 50; ++p) parts.push_back(Acquire(p, p * 2, p * 2 + 1, p));
  // A later event, so that the last hold is not empty.
  parts.push_back({Ev(1000, 99, kInv, "acquire", kLock)});
  MutexFencingOptions o;
  o.max_examples = 3;
  MutexFencingResult r = AnalyzeMutexFencing(H(std::move(parts)), o);
  CHECK(r.overlap_count == 50 * 49 / 2);
  CHECK(r.overlaps.size() == 3);
  CHECK(MutexFencingVerdict(r).validity == Validity::kValid);
}

// The examples of docs/history-locks.md, verbatim.
History ParseDoc(const char* text) {
  ReadResult r = ParseJsonl(text);
  INFO(ToString(r.error));
  REQUIRE(r.ok);
  return r.history;
}

TEST_CASE("mutex-fencing: the documented examples", "[mutex_fencing]") {
  History lock = ParseDoc(
      R"({"index":0,"time":0,"process":0,"type":"invoke","f":"acquire","key":"lock","value":null}
{"index":1,"time":1000000000,"process":0,"type":"ok","f":"acquire","key":"lock","value":1}
{"index":2,"time":5000000000,"process":1,"type":"invoke","f":"acquire","key":"lock","value":null}
{"index":3,"time":5100000000,"process":1,"type":"ok","f":"acquire","key":"lock","value":2}
{"index":4,"time":5200000000,"process":1,"type":"invoke","f":"resource-write","key":"r","value":[2,20],"fenced":true}
{"index":5,"time":5300000000,"process":1,"type":"ok","f":"resource-write","key":"r","value":[2,20]}
{"index":6,"time":5400000000,"process":1,"type":"invoke","f":"release","key":"lock","value":2}
{"index":7,"time":5500000000,"process":1,"type":"ok","f":"release","key":"lock","value":2}
{"index":8,"time":6000000000,"process":0,"type":"invoke","f":"resource-write","key":"r","value":[1,10],"fenced":true}
{"index":9,"time":6100000000,"process":0,"type":"fail","f":"resource-write","key":"r","value":[1,10],"error":"fenced"}
{"index":10,"time":6200000000,"process":0,"type":"invoke","f":"release","key":"lock","value":1}
{"index":11,"time":6300000000,"process":0,"type":"fail","f":"release","key":"lock","value":1,"error":"not-held"}
)");
  Verdict v = CheckMutexFencing(lock);
  CHECK(v.validity == Validity::kValid);
  CHECK(v.summary ==
        "1 overlap of holds, harmless (p0 and p1 both held \"lock\" from "
        "5.100 s to 5.400 s: the store rejected p0's stale token 1), the stale "
        "write was rejected by fencing: safe");

  History election = ParseDoc(
      R"({"index":0,"time":0,"process":3,"type":"invoke","f":"campaign","key":"election","value":null}
{"index":1,"time":9000000,"process":3,"type":"ok","f":"campaign","key":"election","value":7}
{"index":2,"time":20000000,"process":3,"type":"invoke","f":"resource-write","key":"r","value":[7,31],"fenced":true}
{"index":3,"time":25000000,"process":3,"type":"ok","f":"resource-write","key":"r","value":[7,31]}
{"index":4,"time":3000000000,"process":4,"type":"invoke","f":"campaign","key":"election","value":null}
{"index":5,"time":3010000000,"process":4,"type":"ok","f":"campaign","key":"election","value":8}
{"index":6,"time":3500000000,"process":3,"type":"invoke","f":"resign","key":"election","value":7}
{"index":7,"time":3510000000,"process":3,"type":"ok","f":"resign","key":"election","value":7}
)");
  MutexFencingResult r = AnalyzeMutexFencing(election, {});
  CHECK(r.overlap_count == 1);
  CHECK(r.stale_writes == 0);
  CHECK(MutexFencingVerdict(r).validity == Validity::kValid);
}

}  // namespace
}  // namespace faultline::checkers

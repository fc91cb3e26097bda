// The violation the linearizability checker reports: the earliest in time
// over all keys whatever the thread scheduling (and exactly the earliest,
// against the brute-force reference), its kind (stale read, lost write,
// value never written, no consistent order) and its context from the
// history: nodes, fault spans from the nemesis events, times in seconds.
#include "checkers/violation_context.h"

#include <catch2/catch.hpp>
#include <limits>
#include <random>
#include <string>

#include "checkers/linearizable.h"
#include "checkers/reference.h"
#include "checkers/sim.h"

namespace faultline::checkers {
namespace {

constexpr EventType kInv = EventType::kInvoke;
constexpr EventType kOk = EventType::kOk;
constexpr EventType kInfo = EventType::kInfo;
constexpr std::int64_t kMs = 1000000;  // ns

Value I(std::int64_t i) { return Value::Int(i); }
Value S(const char* s) { return Value::String(s); }
Value Names(std::initializer_list<const char*> names) {
  Value::List l;
  for (const char* n : names) l.push_back(S(n));
  return Value::MakeList(std::move(l));
}

// A client event at `ms` milliseconds, through `node`.
Event Op(std::int64_t ms, std::int64_t p, EventType type, const char* f,
         Value v, const char* node, Value key = {}) {
  Event e;
  e.time = ms * kMs;
  e.process = p;
  e.type = type;
  e.f = f;
  e.value = std::move(v);
  e.node = node;
  e.key = std::move(key);
  return e;
}

Event Nemesis(std::int64_t ms, EventType type, const char* f, Value v = {},
              const char* error = "") {
  Event e;
  e.error = error;
  e.time = ms * kMs;
  e.process = kNemesisProcess;
  e.type = type;
  e.f = f;
  e.value = std::move(v);
  return e;
}

// n3 alone on one side, n1 and n2 on the other.
Value IsolateN3() {
  return Value::MakeObject(
      {{"kind", S("partition")},
       {"shape", S("one")},
       {"components", Value::MakeList({Names({"n3"}), Names({"n1", "n2"})})},
       {"grudge", Value::MakeObject({{"n1", Names({"n3"})},
                                     {"n2", Names({"n3"})},
                                     {"n3", Names({"n1", "n2"})}})},
       {"direction", S("both")}});
}

History H(std::vector<Event> events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].index = static_cast<std::int64_t>(i);
  }
  return events;
}

Verdict Check(const History& h, int threads = 1,
              const char* model = "cas-register") {
  LinearizableOptions o;
  o.model = model;
  o.threads = threads;
  return CheckLinearizable(h, o);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The event index in details_json's "at", or -1.
std::int64_t AtIndex(const Verdict& v) {
  std::size_t at = v.details_json.find("\"at\":{\"index\":");
  if (at == std::string::npos) return -1;
  return std::stoll(v.details_json.substr(at + 14));
}

// A stale read during a partition, as in the sentence the issue asks for.
History StaleRead() {
  return H({
      Op(1000, 0, kInv, "write", I(235), "n3"),
      Op(1010, 0, kOk, "write", I(235), "n3"),
      Nemesis(5000, kInv, "start-partition",
              Value::MakeObject({{"selector", S("one")}})),
      Nemesis(5010, kInfo, "start-partition", IsolateN3()),
      Op(6000, 1, kInv, "write", I(236), "n1"),
      Op(6020, 1, kOk, "write", I(236), "n1"),
      Op(7280, 1, kInv, "write", I(238), "n1"),
      Op(7290, 1, kOk, "write", I(238), "n1"),
      Op(7300, 2, kInv, "read", Value(), "n3"),
      Op(7310, 2, kOk, "read", I(235), "n3"),
      Op(7400, 1, kInv, "read", Value(), "n1"),
      Op(7410, 1, kOk, "read", I(238), "n1"),
      Nemesis(9000, kInv, "stop-partition"),
      Nemesis(9020, kInfo, "stop-partition",
              Value::MakeObject({{"kind", S("partition")},
                                 {"healed", Names({"n1", "n2", "n3"})}})),
  });
}

TEST_CASE("a stale read names the node, its fault and the newer write",
          "[linearizable][context]") {
  Verdict v = Check(StaleRead());
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "stale read: n3 returned 235 at 7.31 s, after 238 was acknowledged "
        "at 7.29 s");
  // The context comes first, then the search's explanation.
  CHECK(v.explanation.rfind("Stale read at 7.31 s.\n", 0) == 0);
  CHECK(Has(v.explanation,
            "\nn3, cut off from the majority since 5.01 s, served 235 at "
            "7.31 s; 238 had been acknowledged by n1 at 7.29 s. 235 was "
            "written by p0 through n3, acknowledged at 1.01 s, first "
            "overwritten by p1 write 236, acknowledged by n1 at 6.02 s. A "
            "later read saw a newer value: n1 served 238 at 7.41 s.\n"));
  CHECK(Has(v.explanation,
            "Faults in force then:\n  partition: n1 cut off from n3, n2 cut "
            "off from n3 and n3 cut off from the majority; started "
            "5.01 s (invoked 5.00 s, events 2, 3), ended 9.02 s (invoked "
            "9.00 s, events 12, 13)\n"));
  CHECK(v.explanation.find("Stale read") <
        v.explanation.find("Longest linearizable prefix"));
  CHECK(Has(v.explanation, "p2 read -> 235 on n3  [7.30..7.31 s, event 8..9"));
  const std::string& j = v.details_json;
  CHECK(
      Has(j, "\"kind\":\"stale-read\",\"at\":{\"index\":9,\"s\":7.310000000}"));
  CHECK(Has(j, "\"value\":235,\"read\":{\"index\":8,"));
  CHECK(Has(j,
            "\"node\":\"n3\",\"call_s\":7.300000000,\"return_s\":7.310000000"));
  CHECK(Has(j, "\"written_by\":{\"index\":0,"));
  CHECK(Has(j, "\"overwritten_by\":{\"index\":4,"));
  CHECK(Has(j, "\"latest_write\":{\"index\":6,"));
  CHECK(Has(j, "\"later_read\":{\"index\":10,"));
  CHECK(Has(j, "{\"role\":\"read\",\"op\":{\"index\":8,"));
  CHECK(Has(j, "\"faults\":[0]}"));
  CHECK(Has(j,
            "\"faults\":[{\"id\":0,\"kind\":\"partition\",\"nodes\":[\"n1\","
            "\"n2\",\"n3\"],\"effect\":{\"n1\":\"cut off from n3\",\"n2\":"
            "\"cut off from n3\",\"n3\":\"cut off from the majority\"},"
            "\"start\":{\"invoke_index\":2,\"invoke_s\":5.000000000,\"index\":"
            "3,\"s\":5.010000000},\"end\":{\"invoke_index\":12,\"invoke_s\":"
            "9.000000000,\"index\":13,\"s\":9.020000000},\"heal_failed\":"
            "false,"));
}

TEST_CASE("a fault that ended before the read returned is given its span",
          "[linearizable][context]") {
  History h = H({
      Op(1000, 0, kInv, "write", I(1), "n1"),
      Op(1010, 0, kOk, "write", I(1), "n1"),
      Nemesis(2000, kInv, "start-pause",
              Value::MakeObject({{"selector", S("one")}})),
      Nemesis(2000, kInfo, "start-pause",
              Value::MakeObject({{"kind", S("pause")},
                                 {"selector", S("one")},
                                 {"nodes", Names({"n2"})}})),
      Op(3000, 0, kInv, "write", I(2), "n1"),
      Op(3000, 0, kOk, "write", I(2), "n1"),
      Op(5000, 1, kInv, "read", Value(), "n2"),
      Nemesis(6000, kInv, "stop-pause"),
      Nemesis(6000, kInfo, "stop-pause",
              Value::MakeObject(
                  {{"kind", S("pause")}, {"resumed", Names({"n2"})}})),
      Op(6010, 1, kOk, "read", I(1), "n2"),
      Op(7000, 0, kInv, "read", Value(), "n1"),
      Op(7010, 0, kOk, "read", I(2), "n1"),
  });
  Verdict v = Check(h);
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(Has(v.explanation,
            "n2, paused from 2.00 s to 6.00 s, served 1 at 6.01 s; 2 had been "
            "acknowledged by n1 at 3.00 s."));
}

TEST_CASE("an acknowledged write that is never read is a lost write",
          "[linearizable][context]") {
  Value n1_alone = Value::MakeObject(
      {{"kind", S("partition")},
       {"components", Value::MakeList({Names({"n1"}), Names({"n2", "n3"})})},
       {"grudge", Value::MakeObject({{"n1", Names({"n2", "n3"})},
                                     {"n2", Names({"n1"})},
                                     {"n3", Names({"n1"})}})}});
  History h = H({
      Op(100, 0, kInv, "write", I(3), "n2"),
      Op(110, 0, kOk, "write", I(3), "n2"),
      Nemesis(1000, kInv, "start-partition"),
      Nemesis(1010, kInfo, "start-partition", n1_alone),
      Op(2000, 1, kInv, "write", I(5), "n1"),
      Op(2010, 1, kOk, "write", I(5), "n1"),
      Op(2500, 1, kInv, "write", I(6), "n1"),
      Op(2510, 1, kOk, "write", I(6), "n1"),
      Op(3000, 2, kInv, "read", Value(), "n2"),
      Op(3010, 2, kOk, "read", I(3), "n2"),
      Op(3500, 2, kInv, "read", Value(), "n3"),
      Op(3510, 2, kOk, "read", I(3), "n3"),
      Op(4000, 3, kInv, "write", I(7), "n2"),
      Op(4010, 3, kOk, "write", I(7), "n2"),
      Op(4500, 2, kInv, "read", Value(), "n2"),
      Op(4510, 2, kOk, "read", I(7), "n2"),
  });
  Verdict v = Check(h);
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "lost write: write 5, acknowledged at 2.01 s, was never read; n2 "
        "returned the older 3 at 3.01 s");
  CHECK(Has(v.explanation,
            "Lost write at 3.01 s.\np1 write 5 was "
            "acknowledged by n1 (cut off from the majority since 1.01 s) at "
            "2.01 s, but neither its value nor any later one was ever read: "
            "n2 served 3, an older value, at 3.01 s. Acknowledged after it "
            "and never read either: write 6 at 2.51 s. 3 was written by p0 "
            "through n2, acknowledged at 0.11 s.\n"));
  CHECK(Has(v.details_json, "\"kind\":\"lost-write\""));
  CHECK(Has(v.details_json, "\"lost\":[{\"index\":4,"));
  CHECK(Has(v.details_json, "{\"role\":\"lost\",\"op\":{\"index\":6,"));
  CHECK(Has(v.details_json, "\"later_read\":null"));
}

TEST_CASE("other kinds: never written, no consistent order",
          "[linearizable][context]") {
  History never = H({Op(0, 0, kInv, "write", I(1), "n1"),
                     Op(10, 0, kOk, "write", I(1), "n1"),
                     Op(20, 1, kInv, "read", Value(), "n2"),
                     Op(30, 1, kOk, "read", I(9), "n2")});
  Verdict v = Check(never);
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(v.summary == "read of a value never written: n2 returned 9 at 0.03 s");
  CHECK(Has(v.details_json, "\"kind\":\"never-written\""));
  CHECK(
      Has(v.explanation, "n2 served 9 at 0.03 s, a value no operation wrote."));

  // Two concurrent writes, then reads of 1 and 2: both writes took effect
  // before the first read, so it sees the last of them, and so must the
  // second. No write overwrote 2 after it was certainly in place.
  History flip = H({Op(0, 0, kInv, "write", I(1), "n1"),
                    Op(0, 1, kInv, "write", I(2), "n2"),
                    Op(1000, 0, kOk, "write", I(1), "n1"),
                    Op(1000, 1, kOk, "write", I(2), "n2"),
                    Op(1100, 2, kInv, "read", Value(), "n3"),
                    Op(1200, 2, kOk, "read", I(1), "n3"),
                    Op(1300, 2, kInv, "read", Value(), "n3"),
                    Op(1400, 2, kOk, "read", I(2), "n3")});
  Verdict f = Check(flip);
  REQUIRE(f.validity == Validity::kInvalid);
  CHECK(f.summary ==
        "no consistent order at 1.40 s: read returned 2 but the register "
        "held 1");
  CHECK(Has(f.details_json, "\"kind\":\"no-consistent-order\""));
  CHECK(Has(f.explanation,
            "n3 completed p2 read -> 2 at 1.40 s: read returned 2 but the "
            "register held 1."));

  // Models without value flow are never classified further.
  History kv = H({Op(0, 0, kInv, "put", S("x"), "n1", S("a")),
                  Op(10, 0, kOk, "put", S("x"), "n1", S("a")),
                  Op(20, 1, kInv, "get", Value(), "n2", S("a")),
                  Op(30, 1, kOk, "get", S("y"), "n2", S("a"))});
  Verdict k = Check(kv, 1, "kv");
  REQUIRE(k.validity == Validity::kInvalid);
  CHECK(Has(k.summary, "key \"a\": no consistent order at 0.03 s: get"));
  CHECK(Has(k.details_json, "\"kind\":\"no-consistent-order\""));
}

TEST_CASE("fault spans and their wording per kind", "[linearizable][context]") {
  auto start = [](const char* kind, Value::Object fields) {
    fields.insert(fields.begin(), {"kind", S(kind)});
    return Value::MakeObject(std::move(fields));
  };
  History h = H({
      Nemesis(0, kInv, "start-delay"),
      Nemesis(1, kInfo, "start-delay",
              start("delay", {{"nodes", Names({"n1"})}, {"delay_ms", I(600)}})),
      Nemesis(2, kInv, "start-loss"),
      Nemesis(3, kInfo, "start-loss",
              start("loss", {{"nodes", Names({"n2"})},
                             {"probability", Value::Double(0.3)}})),
      Nemesis(4, kInv, "start-clock"),
      Nemesis(5, kInfo, "start-clock",
              start("clock", {{"nodes", Names({"n3"})},
                              {"offset_ms", I(3000)},
                              {"rate", Value::Double(1.0)}})),
      Nemesis(6, kInv, "start-kill"),
      Nemesis(7, kInfo, "start-kill", Value(), "n1: no such process"),
      Nemesis(8, kInv, "start-partition"),
      Nemesis(9, kInfo, "start-partition",
              start("partition",
                    {{"components",
                      Value::MakeList({Names({"n1"}), Names({"n2", "n3"})})},
                     {"grudge", Value::MakeObject({{"n2", Names({"n1"})}})},
                     {"direction", S("one-way")},
                     {"blocked", Names({"n1->n2"})}})),
      Nemesis(10, kInv, "stop-delay"),
      Nemesis(11, kInfo, "stop-delay", Value(), "nemesis: healing delay: x"),
      Nemesis(12, kInv, "stop-loss"),
      Nemesis(13, kInfo, "stop-loss"),
      Nemesis(14, kInv, "start-strobe"),
      Nemesis(15, kInfo, "start-strobe",
              start("strobe", {{"delta_ms", I(200)}, {"period_ms", I(10)}})),
      Nemesis(16, kInv, "start-power-loss"),
      Nemesis(17, kInfo, "start-power-loss",
              start("power-loss", {{"nodes", Names({"n1", "n2"})}})),
  });
  std::vector<linear::FaultSpan> f = linear::FaultSpans(h);
  REQUIRE(f.size() == 6);  // the failed kill never was in force
  CHECK(linear::DescribeFault(f[0], "n1") ==
        "with messages from its peers delayed by 600 ms");
  CHECK(f[0].heal_failed);
  CHECK(f[0].last_index() == std::numeric_limits<std::int64_t>::max());
  CHECK(linear::DescribeFault(f[1], "n2") ==
        "losing 30% of its peers' packets");
  CHECK(f[1].first_index() == 2);
  CHECK(f[1].last_index() == 13);
  CHECK_FALSE(f[1].ActsOn("n1"));
  CHECK(linear::DescribeFault(f[2], "n3") ==
        "with its clock moved by +3000 ms");
  CHECK(f[3].kind == "partition");
  CHECK(f[3].nodes == std::vector<std::string>{"n2"});
  CHECK(linear::DescribeFault(f[3], "n2") == "with messages from n1 blocked");
  CHECK(linear::DescribeFault(f[3], "n1") == "with its messages to n2 blocked");
  CHECK(f[4].nodes.empty());  // no nodes named: every node
  CHECK(f[4].ActsOn("n7"));
  CHECK(linear::DescribeFault(f[4], "n7") ==
        "with its clock jumping by 200 ms every 10 ms");
  CHECK(f[5].ActsOn("n2"));
  CHECK_FALSE(f[5].ActsOn("n3"));
  CHECK(linear::DescribeFault(f[5], "n2") ==
        "powered off (its unsynced writes lost)");
}

// Key "big" is checked first (largest first) and fails late; key "small"
// fails early.
History TwoKeys() {
  std::vector<Event> e;
  std::int64_t t = 0;
  auto add = [&](std::int64_t p, EventType type, const char* f, Value v,
                 const char* key) {
    e.push_back(Op(t, p, type, f, std::move(v), "n1", S(key)));
    t += 10;
  };
  for (int i = 1; i <= 60; ++i) {
    add(0, kInv, "write", I(i), "big");
    add(0, kOk, "write", I(i), "big");
    if (i == 20) {
      add(1, kInv, "write", I(1000), "small");
      add(1, kOk, "write", I(1000), "small");
      add(1, kInv, "read", Value(), "small");
      add(1, kOk, "read", Value(), "small");  // stale: initial value
      add(1, kInv, "read", Value(), "small");
      add(1, kOk, "read", I(1000), "small");
    }
    add(0, kInv, "read", Value(), "big");
    add(0, kOk, "read", I(i == 60 ? 3 : i), "big");  // stale at the end
  }
  return H(std::move(e));
}

TEST_CASE("the earliest violation over all keys is reported, on any schedule",
          "[linearizable][context]") {
  History h = TwoKeys();
  for (int rep = 0; rep < 200; ++rep) {
    int threads = rep % 4 == 0 ? 1 : 2;
    Verdict v = Check(h, threads);
    REQUIRE(v.validity == Validity::kInvalid);
    INFO("repetition " << rep << ", threads " << threads);
    REQUIRE(v.summary.rfind("key \"small\": stale read: n1 returned null", 0) ==
            0);
    REQUIRE(AtIndex(v) == 81);
    REQUIRE(Has(v.explanation,
                "This is the earliest violation in time over all 2 keys."));
    REQUIRE(Has(v.details_json, "\"unfinished\":[]"));
  }
}

TEST_CASE("a key that did not finish is named, the verdict stays invalid",
          "[linearizable][context]") {
  // A hard key (reused values, many crashed writes) that the cancel flag
  // stops, and a small one whose violation needs no search step.
  SimOptions s;
  s.seed = 7;
  s.model = "register";
  s.processes = 40;
  s.ops = 400;
  s.info_rate = 0.4;
  s.pending_share = 0.5;
  s.unique_values = false;
  s.value_range = 4;
  s.max_latency = 200;
  s.max_gap = 1;
  History h = Simulate(s);
  for (Event& e : h) e.key = S("hard");
  std::int64_t end = h.back().time.value_or(0);
  for (Event e : {Op(0, 1000, kInv, "write", I(1), "n1", S("small")),
                  Op(0, 1000, kOk, "write", I(1), "n1", S("small")),
                  Op(0, 1001, kInv, "read", Value(), "n2", S("small")),
                  Op(0, 1001, kOk, "read", I(5), "n2", S("small"))}) {
    e.time = ++end;
    h.push_back(e);
  }
  h = H(std::move(h));
  std::atomic<bool> cancel{true};
  LinearizableOptions o;
  o.model = "register";
  o.cancel = &cancel;
  Verdict v = CheckLinearizable(h, o);
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "key \"small\": read of a value never written"));
  CHECK(Has(v.explanation,
            "This is the earliest violation among the keys that finished; 1 "
            "key(s) did not, and may hold an earlier one:\n  key \"hard\": "
            "cancelled; no violation before "));
  CHECK(Has(v.details_json,
            "\"unfinished\":[{\"key\":\"hard\",\"reason\":\"cancelled\","
            "\"clear_before\":{\"s\":"));
}

// Exactness of "earliest", against the brute-force reference: with T the
// reported violation's position, the events before T are linearizable and
// those up to T are not. Histories as in differential_test.cpp, with up to
// 3 keys.
TEST_CASE("the reported violation is exactly the earliest (reference)",
          "[linearizable][context][differential]") {
  std::mt19937_64 rng(0x5eed2025);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto real = [&](double hi) {
    return std::uniform_real_distribution<double>(0, hi)(rng);
  };
  int invalid = 0, failures = 0;
  for (int n = 0; n < 20000 && failures < 3; ++n) {
    SimOptions s;
    s.seed = rng();
    s.model = uni(0, 2) == 0 ? "register" : "cas-register";
    s.processes = uni(1, 4);
    s.ops = uni(2, 9);
    s.keys = uni(1, 3);
    s.info_rate = uni(0, 2) == 0 ? 0.0 : real(0.4);
    s.unique_values = uni(0, 2) != 0;
    s.value_range = uni(2, 4);
    s.with_time = uni(0, 3) != 0;
    s.max_latency = uni(1, 6);
    s.max_gap = uni(1, 3);
    s.stale_read_rate = real(0.5);
    s.lost_write_rate = real(0.4);
    s.reorder_rate = real(0.5);
    History h = Simulate(s);
    for (int variant : {0, 1, 2}) {
      LinearizableOptions o;
      o.model = s.model;
      o.threads = 2;
      o.prune = variant != 1;
      o.split_quiescent = variant != 2;
      Verdict v = CheckLinearizable(h, o);
      if (v.validity != Validity::kInvalid) continue;
      if (variant == 0) ++invalid;
      std::int64_t at = AtIndex(v);
      REQUIRE(at >= 0);
      const Event& blocker = h[static_cast<std::size_t>(at)];
      REQUIRE(blocker.type == EventType::kOk);
      auto pos = [&](const Event& e) {
        std::int64_t base = s.with_time ? *e.time : e.index;
        return 2 * base + (e.is_invoke() ? 0 : 1);
      };
      std::int64_t limit = pos(blocker);
      History before, through;
      for (const Event& e : h) {
        if (e.is_nemesis()) continue;
        if (pos(e) < limit) before.push_back(e);
        if (pos(e) <= limit) through.push_back(e);
      }
      before = H(std::move(before));
      through = H(std::move(through));
      Validity b = CheckReference(before, s.model).validity;
      Validity t = CheckReference(through, s.model).validity;
      if (b != Validity::kValid || t != Validity::kInvalid) {
        ++failures;
        FAIL_CHECK("sim seed "
                   << s.seed << ", variant " << variant << ": reported event "
                   << at << "; before it the reference says " << ToString(b)
                   << ", through it " << ToString(t));
      }
    }
  }
  CHECK(failures == 0);
  CHECK(invalid > 2000);
}

}  // namespace
}  // namespace faultline::checkers

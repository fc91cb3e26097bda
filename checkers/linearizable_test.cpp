// Hand-written cases for CheckLinearizable: semantics edge cases, the
// explanation, witnesses, bounds (deadline, memory, cancel) and threads.
#include "checkers/linearizable.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>

#include "checkers/model.h"
#include "checkers/sim.h"

namespace faultline::checkers {
namespace {

Value I(std::int64_t i) { return Value::Int(i); }
Value S(const char* s) { return Value::String(s); }
Value L(Value a, Value b) {
  return Value::MakeList({std::move(a), std::move(b)});
}

Event Ev(std::int64_t t, std::int64_t p, EventType type, const char* f,
         Value v = {}, Value key = {}) {
  Event e;
  e.time = t;
  e.process = p;
  e.type = type;
  e.f = f;
  e.value = std::move(v);
  e.key = std::move(key);
  return e;
}
constexpr EventType kInv = EventType::kInvoke;
constexpr EventType kOk = EventType::kOk;
constexpr EventType kFail = EventType::kFail;
constexpr EventType kInfo = EventType::kInfo;

History H(std::vector<Event> events) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    events[i].index = static_cast<std::int64_t>(i);
  }
  return events;
}

Verdict Check(const History& h, const char* model = "cas-register") {
  LinearizableOptions o;
  o.model = model;
  return CheckLinearizable(h, o);
}

TEST_CASE("a history without client operations is unknown, never valid",
          "[linearizable]") {
  // An empty file (or one of blank lines) reads as an empty history.
  Verdict v = Check({});
  CHECK(v.checker == "linearizable");
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary ==
        "no client operation in the history (0 event(s)), so nothing was "
        "checked");
  CHECK(v.details_json.find("\"ops\":0") != std::string::npos);
  CHECK(v.details_json.find("\"reason\":\"no client operation") !=
        std::string::npos);
  // Nemesis events alone test nothing either, for every model.
  History faults_only = H({Ev(0, kNemesisProcess, kInv, "start-partition"),
                           Ev(1, kNemesisProcess, kInfo, "start-partition"),
                           Ev(2, kNemesisProcess, kInv, "stop-partition"),
                           Ev(3, kNemesisProcess, kInfo, "stop-partition")});
  for (const std::string& model : LinearizableModelNames()) {
    INFO(model);
    Verdict m = Check(faults_only, model.c_str());
    CHECK(m.validity == Validity::kUnknown);
    CHECK(m.summary.find("(4 event(s)), so nothing was checked") !=
          std::string::npos);
  }
  // One client operation is enough to be checked.
  History one =
      H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 0, kOk, "write", I(1))});
  CHECK(Check(one).validity == Validity::kValid);
}

TEST_CASE("sequential read of the latest write", "[linearizable]") {
  History ok = H({Ev(0, 0, kInv, "write", I(7)), Ev(1, 0, kOk, "write", I(7)),
                  Ev(2, 1, kInv, "read"), Ev(3, 1, kOk, "read", I(7))});
  CHECK(Check(ok).validity == Validity::kValid);
  History bad = H({Ev(0, 0, kInv, "write", I(7)), Ev(1, 0, kOk, "write", I(7)),
                   Ev(2, 1, kInv, "read"), Ev(3, 1, kOk, "read", I(4))});
  Verdict v = Check(bad);
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(v.summary == "read of a value never written: p1 returned 4 at 0.00 s");
  CHECK(v.explanation.find("Longest linearizable prefix") != std::string::npos);
  CHECK(v.explanation.find("Could not place next") != std::string::npos);
  CHECK(v.explanation.find("Concurrent window") != std::string::npos);
  CHECK(v.details_json.find("\"failure\":{") != std::string::npos);
  CHECK(v.details_json.find("\"prefix_length\":1,\"prefix\":[{\"index\":0") !=
        std::string::npos);
}

TEST_CASE("details_json keeps a long prefix's length and last 20 ops",
          "[linearizable]") {
  // 200 writes and reads in sequence, then a read of a value overwritten
  // long ago: a prefix of 400 ops.
  std::vector<Event> events;
  std::int64_t t = 0;
  for (int i = 1; i <= 200; ++i) {
    events.push_back(Ev(t++, 0, kInv, "write", I(i)));
    events.push_back(Ev(t++, 0, kOk, "write", I(i)));
    events.push_back(Ev(t++, 1, kInv, "read"));
    events.push_back(Ev(t++, 1, kOk, "read", I(i)));
  }
  events.push_back(Ev(t++, 1, kInv, "read"));
  events.push_back(Ev(t++, 1, kOk, "read", I(3)));
  Verdict v = Check(H(std::move(events)));
  REQUIRE(v.validity == Validity::kInvalid);
  CHECK(v.details_json.find("\"prefix_length\":400,") != std::string::npos);
  std::size_t from = v.details_json.find("\"prefix\":[");
  std::size_t to = v.details_json.find("],\"stuck\"");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  std::string prefix = v.details_json.substr(from, to - from);
  std::size_t ops = 0;
  for (std::size_t at = prefix.find("{\"index\":"); at != std::string::npos;
       at = prefix.find("{\"index\":", at + 1)) {
    ++ops;
  }
  CHECK(ops == 20);
  // The last op of the prefix is the last read of 200 (event 799).
  CHECK(prefix.find("\"index\":798") != std::string::npos);
  CHECK(prefix.find("\"index\":0,") == std::string::npos);
  // The text still says how long it was and shows its end.
  CHECK(v.explanation.find("Longest linearizable prefix found (400 ops)") !=
        std::string::npos);
}

TEST_CASE("equal timestamps are concurrent", "[linearizable]") {
  // The write completes at t=5 and the read is invoked at t=5: the read may
  // be ordered first and see the initial null.
  History tie =
      H({Ev(0, 0, kInv, "write", I(1)), Ev(5, 1, kInv, "read"),
         Ev(5, 0, kOk, "write", I(1)), Ev(6, 1, kOk, "read", Value())});
  CHECK(Check(tie).validity == Validity::kValid);
  History later =
      H({Ev(0, 0, kInv, "write", I(1)), Ev(5, 0, kOk, "write", I(1)),
         Ev(6, 1, kInv, "read"), Ev(7, 1, kOk, "read", Value())});
  CHECK(Check(later).validity == Validity::kInvalid);
}

TEST_CASE("reads of absent values", "[linearizable]") {
  History ok = H({Ev(0, 0, kInv, "read"), Ev(1, 0, kOk, "read", Value())});
  CHECK(Check(ok, "register").validity == Validity::kValid);
  History bad = H({Ev(0, 0, kInv, "read"), Ev(1, 0, kOk, "read", I(3))});
  Verdict v = Check(bad, "register");
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary == "read of a value never written: p0 returned 3 at 0.00 s");
}

TEST_CASE("an invoke that never completes may take effect late or never",
          "[linearizable]") {
  History seen = H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 1, kInv, "read"),
                    Ev(9, 1, kOk, "read", I(1))});
  CHECK(Check(seen).validity == Validity::kValid);
  History unseen = H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 1, kInv, "read"),
                      Ev(9, 1, kOk, "read", Value())});
  CHECK(Check(unseen).validity == Validity::kValid);
  // Once seen, it cannot be undone.
  History back = H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 1, kInv, "read"),
                    Ev(2, 1, kOk, "read", I(1)), Ev(3, 2, kInv, "read"),
                    Ev(4, 2, kOk, "read", Value())});
  CHECK(Check(back).validity == Validity::kInvalid);
}

TEST_CASE("failed cas never took effect; its observation is ignored",
          "[linearizable]") {
  History read_new = H({Ev(0, 0, kInv, "cas", L(Value(), I(2))),
                        Ev(1, 0, kFail, "cas", L(Value(), I(2))),
                        Ev(2, 1, kInv, "read"), Ev(3, 1, kOk, "read", I(2))});
  CHECK(Check(read_new).validity == Validity::kInvalid);
  // The compare "did not match" although the register held 1: a checker
  // using fail observations would say invalid; this one ignores them.
  History ignored =
      H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 0, kOk, "write", I(1)),
         Ev(2, 1, kInv, "cas", L(I(1), I(2))),
         Ev(3, 1, kFail, "cas", L(I(1), I(2))), Ev(4, 2, kInv, "read"),
         Ev(5, 2, kOk, "read", I(1))});
  CHECK(Check(ignored).validity == Validity::kValid);
  History ok_cas =
      H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 0, kOk, "write", I(1)),
         Ev(2, 1, kInv, "cas", L(I(3), I(2))),
         Ev(3, 1, kOk, "cas", L(I(3), I(2)))});
  Verdict v = Check(ok_cas);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "no consistent order at 0.00 s: cas expected 3 but the register held "
        "1");
}

TEST_CASE("crashed processes: info ops and their observers", "[linearizable]") {
  // A crashed write, a crashed cas building on it, and a read of the cas's
  // new value: both crashed ops must have happened (the pruning must not
  // drop the write just because no read returns 1).
  History chain =
      H({Ev(0, 0, kInv, "write", I(1)), Ev(1, 0, kInfo, "write", I(1)),
         Ev(2, 1, kInv, "cas", L(I(1), I(2))),
         Ev(3, 1, kInfo, "cas", L(I(1), I(2))), Ev(4, 2, kInv, "read"),
         Ev(5, 2, kOk, "read", I(2))});
  CHECK(Check(chain).validity == Validity::kValid);
  // The crashed write is invoked after the read returned its value.
  History late =
      H({Ev(0, 2, kInv, "read"), Ev(1, 2, kOk, "read", I(5)),
         Ev(2, 0, kInv, "write", I(5)), Ev(3, 0, kInfo, "write", I(5))});
  CHECK(Check(late).validity == Validity::kInvalid);
  // A crashed write observed, then overwritten, then read again: invalid.
  History again =
      H({Ev(0, 0, kInv, "write", I(5)), Ev(1, 0, kInfo, "write", I(5)),
         Ev(2, 1, kInv, "read"), Ev(3, 1, kOk, "read", I(5)),
         Ev(4, 1, kInv, "write", I(6)), Ev(5, 1, kOk, "write", I(6)),
         Ev(6, 1, kInv, "read"), Ev(7, 1, kOk, "read", I(5))});
  CHECK(Check(again).validity == Validity::kInvalid);
}

TEST_CASE("one key valid while another is not", "[linearizable]") {
  History h = H({Ev(0, 0, kInv, "write", I(1), S("k1")),
                 Ev(1, 0, kOk, "write", I(1), S("k1")),
                 Ev(2, 1, kInv, "write", I(2), S("k2")),
                 Ev(3, 1, kOk, "write", I(2), S("k2")),
                 Ev(4, 0, kInv, "read", Value(), S("k1")),
                 Ev(5, 0, kOk, "read", I(1), S("k1")),
                 Ev(6, 1, kInv, "read", Value(), S("k2")),
                 Ev(7, 1, kOk, "read", I(1), S("k2"))});
  for (int threads : {1, 2}) {
    LinearizableOptions o;
    o.threads = threads;
    Verdict v = CheckLinearizable(h, o);
    REQUIRE(v.validity == Validity::kInvalid);
    CHECK(v.summary ==
          "key \"k2\": read of a value never written: p1 returned 1 at 0.00 "
          "s");
    CHECK(v.details_json.find("\"keys\":2") != std::string::npos);
  }
}

TEST_CASE("kv append, put and missing keys", "[linearizable]") {
  History ok = H({Ev(0, 0, kInv, "get", Value(), S("a")),
                  Ev(1, 0, kOk, "get", S(""), S("a")),
                  Ev(2, 0, kInv, "put", S("x"), S("a")),
                  Ev(3, 0, kOk, "put", S("x"), S("a")),
                  Ev(4, 1, kInv, "append", S("y"), S("a")),
                  Ev(5, 2, kInv, "append", S("z"), S("a")),
                  Ev(6, 1, kOk, "append", S("y"), S("a")),
                  Ev(7, 2, kOk, "append", S("z"), S("a")),
                  Ev(8, 0, kInv, "get", Value(), S("a")),
                  Ev(9, 0, kOk, "get", S("xzy"), S("a"))});
  CHECK(Check(ok, "kv").validity == Validity::kValid);
  History bad = ok;
  bad[9].value = S("xy");
  Verdict v = Check(bad, "kv");
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary.find("get returned \"xy\"") != std::string::npos);
}

TEST_CASE("mutex double acquire is invalid", "[linearizable]") {
  History ok = H({Ev(0, 0, kInv, "acquire"), Ev(1, 0, kOk, "acquire"),
                  Ev(2, 0, kInv, "release"), Ev(3, 0, kOk, "release"),
                  Ev(4, 1, kInv, "acquire"), Ev(5, 1, kOk, "acquire")});
  CHECK(Check(ok, "mutex").validity == Validity::kValid);
  History bad = H({Ev(0, 0, kInv, "acquire"), Ev(1, 0, kOk, "acquire"),
                   Ev(2, 1, kInv, "acquire"), Ev(3, 1, kOk, "acquire")});
  Verdict v = Check(bad, "mutex");
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary ==
        "no consistent order at 0.00 s: acquire succeeded but the lock was "
        "held");
  // A crashed release may have freed it.
  History crashed = H({Ev(0, 0, kInv, "acquire"), Ev(1, 0, kOk, "acquire"),
                       Ev(2, 0, kInv, "release"), Ev(3, 0, kInfo, "release"),
                       Ev(4, 1, kInv, "acquire"), Ev(5, 1, kOk, "acquire")});
  CHECK(Check(crashed, "mutex").validity == Validity::kValid);
}

TEST_CASE("nemesis events are skipped", "[linearizable]") {
  Event n = Ev(1, kNemesisProcess, kInv, "start-partition");
  History h = H({Ev(0, 0, kInv, "write", I(1)), n, Ev(2, 0, kOk, "write", I(1)),
                 Ev(3, 0, kInv, "read"), Ev(4, 0, kOk, "read", I(1))});
  CHECK(Check(h).validity == Validity::kValid);
}

TEST_CASE("malformed input and unknown model give unknown", "[linearizable]") {
  History h = H({Ev(0, 0, kOk, "read", I(1))});
  Verdict v = Check(h);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary.find("malformed history") != std::string::npos);
  Verdict m = Check({}, "queue");
  CHECK(m.validity == Validity::kUnknown);
  CHECK(m.summary == "unknown model 'queue'");
  History bad_shape =
      H({Ev(0, 0, kInv, "cas", I(1)), Ev(1, 0, kOk, "cas", I(1))});
  CHECK(Check(bad_shape).validity == Validity::kUnknown);
}

// A hard, valid history: many concurrent crashed writes of reused values.
History Hard() {
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
  return Simulate(s);
}

TEST_CASE("bounds turn into unknown, never valid", "[linearizable]") {
  History h = Hard();
  LinearizableOptions o;
  o.model = "register";
  o.deadline = std::chrono::steady_clock::now();
  Verdict v = CheckLinearizable(h, o);
  CHECK(v.validity == Validity::kUnknown);
  CHECK(v.summary.find("deadline reached") != std::string::npos);

  LinearizableOptions m;
  m.model = "register";
  m.memory_limit_bytes = 1 << 20;
  Verdict vm = CheckLinearizable(h, m);
  CHECK(vm.validity == Validity::kUnknown);
  CHECK(vm.summary.find("memory limit") != std::string::npos);

  std::atomic<bool> cancel{true};
  LinearizableOptions c;
  c.model = "register";
  c.cancel = &cancel;
  Verdict vc = CheckLinearizable(h, c);
  CHECK(vc.validity == Validity::kUnknown);
  CHECK(vc.summary.find("cancelled") != std::string::npos);
}

// Replays a witness order through the model: every op must be accepted.
bool ReplayWitness(const History& h, const Verdict& v, const char* model_name) {
  std::unique_ptr<Model> model = MakeModel(model_name);
  std::map<std::int64_t, Operation> ops;  // by invoke index
  std::map<std::int64_t, std::int64_t> open;
  for (const Event& e : h) {
    if (e.is_invoke()) {
      ops[e.index] = Operation{e.f, e.value, {}, false};
      open[e.process] = e.index;
    } else if (e.type == EventType::kOk) {
      ops[open[e.process]].completed = true;
      ops[open[e.process]].output = e.value;
    }
  }
  std::size_t at = v.details_json.find("\"order\":[");
  if (at == std::string::npos) return false;
  at += 9;
  Value state = model->Init();
  std::size_t count = 0;
  while (v.details_json[at] != ']') {
    std::size_t end = at;
    while (std::isdigit(static_cast<unsigned char>(v.details_json[end]))) ++end;
    std::int64_t idx = std::stoll(v.details_json.substr(at, end - at));
    StepResult r = model->Step(state, ops[idx]);
    if (!r.ok) return false;
    state = r.next;
    ++count;
    at = v.details_json[end] == ',' ? end + 1 : end;
  }
  return count > 0;
}

TEST_CASE("witness order replays through the model", "[linearizable]") {
  SimOptions s;
  s.seed = 11;
  s.processes = 6;
  s.ops = 300;
  s.info_rate = 0.05;
  History h = Simulate(s);
  LinearizableOptions o;
  o.witness = true;
  Verdict v = CheckLinearizable(h, o);
  REQUIRE(v.validity == Validity::kValid);
  CHECK(v.explanation.find("Witness order") != std::string::npos);
  CHECK(ReplayWitness(h, v, "cas-register"));
}

TEST_CASE("simulated histories without anomalies are valid", "[linearizable]") {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SimOptions s;
    s.seed = seed;
    s.processes = 10;
    s.ops = 2000;
    s.keys = seed % 3 == 0 ? 20 : 1;
    s.info_rate = 0.02;
    s.fail_rate = 0.02;
    s.nemesis_rate = 0.01;
    s.with_time = seed % 2 == 0;
    LinearizableOptions o;
    o.threads = 2;
    Verdict v = CheckLinearizable(Simulate(s), o);
    INFO("seed " << seed << ": " << v.summary);
    CHECK(v.validity == Validity::kValid);
  }
}

TEST_CASE("injected anomalies are found in long histories", "[linearizable]") {
  SimOptions s;
  s.seed = 3;
  s.processes = 10;
  s.ops = 5000;
  s.keys = 50;
  s.info_rate = 0.01;
  s.stale_read_rate = 0.01;
  LinearizableOptions o;
  o.threads = 2;
  Verdict v = CheckLinearizable(Simulate(s), o);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(v.summary.rfind("key \"k", 0) == 0);
}

}  // namespace
}  // namespace faultline::checkers

namespace faultline::checkers {
namespace {

// The fast path's decision on `h` (it must apply) against the search's.
void FastAgreesWithSearch(const History& h, Validity want) {
  Verdict fast = Check(h);
  LinearizableOptions o;
  o.unique_fast_path = false;
  Verdict search = CheckLinearizable(h, o);
  CHECK(fast.details_json.find("\"fast_path_keys\":1") != std::string::npos);
  CHECK(fast.validity == want);
  CHECK(search.validity == want);
  CHECK(fast.details_json.find("fast_path_overruled") == std::string::npos);
}

TEST_CASE("fast path: a deadline or a cancel gives unknown, never valid",
          "[linearizable][fast]") {
  SimOptions sim;
  sim.seed = 5;
  sim.ops = 10000;  // large enough that the fast path polls its limits
  sim.info_rate = 0.05;
  History h = Simulate(sim);
  LinearizableOptions o;
  REQUIRE(CheckLinearizable(h, o).validity == Validity::kValid);
  o.deadline = std::chrono::steady_clock::now();
  Verdict late = CheckLinearizable(h, o);
  CHECK(late.validity == Validity::kUnknown);
  CHECK(late.summary.find("deadline reached") != std::string::npos);
  std::atomic<bool> cancel{true};
  LinearizableOptions c;
  c.cancel = &cancel;
  Verdict cancelled = CheckLinearizable(h, c);
  CHECK(cancelled.validity == Validity::kUnknown);
  CHECK(cancelled.summary.find("cancelled") != std::string::npos);
}

TEST_CASE("fast path: cas ops that only produce each other's values",
          "[linearizable][fast]") {
  // cas 5->6 and cas 6->5 both ok, nothing writes 5 or 6 from null: no
  // chain from the initial value or a blind write reaches them.
  FastAgreesWithSearch(H({Ev(1, 0, kInv, "cas", L(I(5), I(6))),
                          Ev(2, 0, kOk, "cas", L(I(5), I(6))),
                          Ev(3, 1, kInv, "cas", L(I(6), I(5))),
                          Ev(4, 1, kOk, "cas", L(I(6), I(5)))}),
                       Validity::kInvalid);
}

TEST_CASE("fast path: a read that returns before its write is called",
          "[linearizable][fast]") {
  FastAgreesWithSearch(
      H({Ev(1, 0, kInv, "read"), Ev(2, 0, kOk, "read", I(1)),
         Ev(3, 1, kInv, "write", I(1)), Ev(4, 1, kOk, "write", I(1))}),
      Validity::kInvalid);
}

TEST_CASE("fast path: a crashed write closed through a crashed cas",
          "[linearizable][fast]") {
  // write 1 and cas 1->2 both crash; a read of 2 makes the cas take effect
  // before it returns, and the cas needs the write before it.
  FastAgreesWithSearch(
      H({Ev(1, 0, kInv, "write", I(1)), Ev(2, 1, kInv, "cas", L(I(1), I(2))),
         Ev(3, 0, kInfo, "write", I(1)), Ev(4, 1, kInfo, "cas", L(I(1), I(2))),
         Ev(5, 2, kInv, "read"), Ev(6, 2, kOk, "read", I(2)),
         Ev(7, 3, kInv, "read"), Ev(8, 3, kOk, "read", I(2))}),
      Validity::kValid);
  // The same read of 2 before either was called cannot be placed.
  FastAgreesWithSearch(
      H({Ev(1, 2, kInv, "read"), Ev(2, 2, kOk, "read", I(2)),
         Ev(3, 0, kInv, "write", I(1)), Ev(4, 1, kInv, "cas", L(I(1), I(2))),
         Ev(5, 0, kInfo, "write", I(1)),
         Ev(6, 1, kInfo, "cas", L(I(1), I(2)))}),
      Validity::kInvalid);
}

}  // namespace
}  // namespace faultline::checkers

// The streaming path (StreamJsonl → WellFormedChecker → TxnHistoryBuilder)
// against the materialising one (ParseJsonl → CheckWellFormed →
// CheckListAppend / CheckRwRegister) on generated histories, well-formed
// and malformed: the same events, errors, warnings and verdicts, byte for
// byte.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "checkers/history_io.h"
#include "checkers/txn/txn.h"
#include "checkers/txn/txn_gen.h"

namespace faultline::checkers::txn {
namespace {

std::string Jsonl(const History& h) {
  std::string s;
  for (const Event& e : h) s += ToJsonLine(e) + "\n";
  return s;
}

std::string Model(Workload w) {
  return w == Workload::kListAppend ? kListAppendChecker : kRwRegisterChecker;
}

Verdict CheckMaterialised(const History& h, Workload w,
                          const TxnOptions& opts) {
  return w == Workload::kListAppend ? CheckListAppend(h, opts)
                                    : CheckRwRegister(h, opts);
}

void SameVerdict(const Verdict& a, const Verdict& b) {
  CHECK(a.checker == b.checker);
  CHECK(a.validity == b.validity);
  CHECK(a.summary == b.summary);
  CHECK(a.explanation == b.explanation);
  CHECK(a.details_json == b.details_json);
}

// Both paths over `text`: reader results, well-formedness and (when both
// read it) verdicts, with and without the size hint.
void Compare(const std::string& text, Workload w, const TxnOptions& opts) {
  INFO(text);
  ReadResult full = ParseJsonl(text);
  std::vector<std::string> streamed_lines;
  WellFormedChecker wf(Model(w));
  TxnHistoryBuilder hinted(w);
  TxnHistoryBuilder unhinted(w);
  hinted.Reserve(CountJsonlEvents(text));
  ReadResult streamed = StreamJsonl(text, [&](const Event& e, std::size_t) {
    streamed_lines.push_back(ToJsonLine(e));
    if (!wf.Add(e)) {
      hinted.Add(e);
      unhinted.Add(e);
    }
    return true;
  });
  REQUIRE(streamed.ok == full.ok);
  CHECK(streamed.warnings == full.warnings);
  CHECK(streamed.history.empty());
  if (!full.ok) {
    CHECK(streamed.error.line == full.error.line);
    CHECK(streamed.error.column == full.error.column);
    CHECK(streamed.error.message == full.error.message);
    CHECK(streamed_lines.size() >= full.history.size());
    return;
  }
  REQUIRE(streamed_lines.size() == full.history.size());
  for (std::size_t i = 0; i < full.history.size(); ++i) {
    CHECK(streamed_lines[i] == ToJsonLine(full.history[i]));
  }
  const auto bad = CheckWellFormed(full.history, Model(w));
  REQUIRE(bad.has_value() == wf.error().has_value());
  if (bad) {
    CHECK(bad->line == wf.error()->line);
    CHECK(bad->message == wf.error()->message);
    return;
  }
  const Verdict want = CheckMaterialised(full.history, w, opts);
  SameVerdict(hinted.Finish(opts), want);
  if (opts.memory_limit_bytes == 0) SameVerdict(unhinted.Finish(opts), want);
}

// The builder straight on a History (no well-formedness check first, so
// its own errors show).
void CompareBuilder(const History& h, Workload w, const TxnOptions& opts) {
  TxnHistoryBuilder b(w);
  b.Reserve(h.size());
  for (const Event& e : h) b.Add(e);
  SameVerdict(b.Finish(opts), CheckMaterialised(h, w, opts));
}

GenOptions Options(std::uint64_t seed, Workload w, Injection inj) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 5);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  GenOptions o;
  o.workload = w;
  o.seed = seed;
  o.txns = uni(2, 40);
  o.processes = uni(1, 5);
  o.keys = uni(1, 4);
  o.max_mops = uni(1, 4);
  o.info_rate = uni(0, 2) == 0 ? 0.0 : 0.2;
  o.fail_rate = uni(0, 2) == 0 ? 0.0 : 0.2;
  o.injection = inj;
  return o;
}

// One of several ways to break event `at` of `h` (a shape error, an
// unknown f, a lost invoke, a mop count that differs, a bad index).
History Break(History h, std::size_t at, int how) {
  Event& e = h[at];
  switch (how) {
    case 0:
      e.value = Value::Int(7);
      break;
    case 1:
      e.f = "read";
      break;
    case 2:
      h.erase(h.begin() + static_cast<std::ptrdiff_t>(at));
      for (std::size_t i = 0; i < h.size(); ++i) {
        h[i].index = static_cast<std::int64_t>(i);
      }
      break;
    case 3:
      e.value = Value::MakeList({Value::MakeList(
          {Value::String("x"), Value::Int(1), Value::Null()})});
      break;
    default:
      e.value = Value::MakeList({});
      break;
  }
  return h;
}

}  // namespace

TEST_CASE("stream: the same verdicts as the History path", "[txn][stream]") {
  for (Workload w : {Workload::kListAppend, Workload::kRwRegister}) {
    for (int inj = 0; inj < kInjectionCount; ++inj) {
      for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        GenResult g =
            GenerateTxnHistory(Options(seed, w, static_cast<Injection>(inj)));
        INFO("seed " << seed << " injection " << inj);
        TxnOptions opts;
        opts.consistency_model =
            ConsistencyModelNames()[seed % ConsistencyModelNames().size()];
        Compare(Jsonl(g.history), w, opts);
        CompareBuilder(g.history, w, opts);
      }
    }
  }
}

TEST_CASE("stream: malformed histories give the same errors", "[txn][stream]") {
  for (Workload w : {Workload::kListAppend, Workload::kRwRegister}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      GenResult g = GenerateTxnHistory(Options(seed, w, Injection::kNone));
      const History& h = g.history;
      for (int how = 0; how < 5; ++how) {
        const std::size_t at =
            static_cast<std::size_t>(seed * 7 + how) % h.size();
        INFO("seed " << seed << " how " << how << " at " << at);
        History broken = Break(h, at, how);
        Compare(Jsonl(broken), w, TxnOptions{});
        CompareBuilder(broken, w, TxnOptions{});
      }
      // The other workload's history: every write is an unknown micro-op.
      const Workload other = w == Workload::kListAppend ? Workload::kRwRegister
                                                        : Workload::kListAppend;
      Compare(Jsonl(h), other, TxnOptions{});
      CompareBuilder(h, other, TxnOptions{});
      // Text-level damage: a bad line in the middle, a truncated last
      // line, blank lines.
      std::string text = Jsonl(h);
      const std::size_t mid = text.find('\n', text.size() / 2);
      Compare(text.substr(0, mid + 1) + "{\"index\": oops}\n" +
                  text.substr(mid + 1),
              w, TxnOptions{});
      Compare(text + "{\"index\":" + std::to_string(h.size()), w, TxnOptions{});
      Compare("\n" + text.substr(0, mid + 1) + "  \n" + text.substr(mid + 1), w,
              TxnOptions{});
    }
  }
}

TEST_CASE("stream: limits give the same unknown verdicts", "[txn][stream]") {
  GenOptions o = Options(3, Workload::kListAppend, Injection::kNone);
  o.txns = 200;
  GenResult g = GenerateTxnHistory(o);
  TxnOptions opts;
  opts.memory_limit_bytes = 1000;
  Compare(Jsonl(g.history), Workload::kListAppend, opts);
  CompareBuilder(g.history, Workload::kListAppend, opts);
  Verdict v = CheckListAppend(g.history, opts);
  CHECK(v.validity == Validity::kUnknown);
}

TEST_CASE("stream: an empty history", "[txn][stream]") {
  Compare("", Workload::kListAppend, TxnOptions{});
  Compare("\n\n", Workload::kRwRegister, TxnOptions{});
  TxnHistoryBuilder b(Workload::kListAppend);
  CHECK(b.events() == 0);
  CHECK(b.Finish(TxnOptions{}).validity == Validity::kUnknown);
}

}  // namespace faultline::checkers::txn

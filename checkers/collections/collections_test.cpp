// Tests for checkers/collections/: hand-written set, bank and counter
// histories, one per rule and outcome, with clean controls.
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checkers/collections/bank.h"
#include "checkers/collections/counter.h"
#include "checkers/collections/set.h"
#include "checkers/json_parser.h"

namespace faultline::checkers::collections {
namespace {

constexpr EventType kInv = EventType::kInvoke;
constexpr EventType kOk = EventType::kOk;
constexpr EventType kFail = EventType::kFail;
constexpr EventType kInfo = EventType::kInfo;

// Builds a history event by event; times are given in ms and stored in ns.
class H {
 public:
  H& E(std::int64_t ms, std::int64_t p, EventType type, const char* f,
       Value value = {}) {
    Event e;
    e.index = static_cast<std::int64_t>(h_.size());
    e.time = ms * 1000000;
    e.process = p;
    e.type = type;
    e.f = f;
    e.value = std::move(value);
    h_.push_back(std::move(e));
    return *this;
  }
  H& Nemesis(std::int64_t ms) {
    Event e;
    e.index = static_cast<std::int64_t>(h_.size());
    e.time = ms * 1000000;
    e.process = kNemesisProcess;
    e.type = kInfo;
    e.f = "start-partition";
    h_.push_back(std::move(e));
    return *this;
  }
  const History& h() const { return h_; }

 private:
  History h_;
};

Value I(std::int64_t i) { return Value::Int(i); }
Value L(std::vector<std::int64_t> xs) {
  Value::List l;
  for (auto x : xs) l.push_back(I(x));
  return Value::MakeList(std::move(l));
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The details must be one JSON document.
void RequireJson(const Verdict& v) {
  JsonParser p(v.details_json);
  Value out;
  REQUIRE(p.ParseValue(out));
  REQUIRE(out.is_object());
}

// --- set ---------------------------------------------------------------

TEST_CASE("set: every element stable is valid", "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  h.E(20, 1, kInv, "add", I(2)).E(30, 1, kOk, "add", I(2));
  h.Nemesis(35);
  h.E(40, 2, kInv, "read").E(50, 2, kOk, "read", L({2, 1}));
  h.E(60, 2, kInv, "read").E(70, 2, kOk, "read", L({1, 2}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.checker == "set");
  CHECK(v.validity == Validity::kValid);
  CHECK(Has(v.summary, "all 2 elements"));
  CHECK(Has(v.details_json, "\"stable\":2"));
  RequireJson(v);
}

TEST_CASE("set: a lost element is invalid", "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(17)).E(4200, 0, kOk, "add", I(17));
  h.E(5000, 0, kInv, "add", I(18)).E(5100, 0, kOk, "add", I(18));
  h.E(9000, 1, kInv, "read").E(9100, 1, kOk, "read", L({17, 18}));
  h.E(9200, 1, kInv, "read").E(9300, 1, kOk, "read", L({18}));
  h.E(9400, 2, kInv, "read").E(9500, 2, kOk, "read", L({18}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary,
            "1 of 2 added elements lost (first: 17, added ok at "
            "4.200 s (event 1), last seen at 9.100 s (event 5), "
            "missing from the 2 reads invoked after that)"));
  CHECK(Has(v.explanation, "p2's read at 9.500 s"));
  CHECK(Has(v.details_json, "\"lost\":1"));
  RequireJson(v);
}

TEST_CASE("set: an acknowledged element never seen is lost",
          "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(5)).E(10, 0, kOk, "add", I(5));
  h.E(20, 1, kInv, "read").E(30, 1, kOk, "read", L({}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "first: 5, added ok at 0.010 s (event 1), never seen"));
}

TEST_CASE("set: a stale element is allowed unless allow_stale is false",
          "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(7)).E(1000, 0, kOk, "add", I(7));
  h.E(1100, 1, kInv, "read").E(1200, 1, kOk, "read", L({}));
  h.E(2200, 1, kInv, "read").E(2300, 1, kOk, "read", L({}));
  h.E(2400, 1, kInv, "read").E(2500, 1, kOk, "read", L({7}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.validity == Validity::kValid);
  CHECK(Has(v.summary, "1 of 1 added elements stale, allowed"));
  CHECK(Has(v.summary, "7, missing for at least 1.200 s"));
  CHECK(Has(v.details_json, "\"longest_stale\":1200000000"));
  RequireJson(v);

  SetOptions strict;
  strict.allow_stale = false;
  Verdict s = CheckSet(h.h(), strict);
  INFO(s.summary);
  CHECK(s.validity == Validity::kInvalid);
  CHECK(Has(s.summary, "stale (longest: 7"));
}

TEST_CASE("set: without times, events stand in for seconds",
          "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(7)).E(0, 0, kOk, "add", I(7));
  h.E(0, 1, kInv, "read").E(0, 1, kOk, "read", L({}));
  h.E(0, 1, kInv, "read").E(0, 1, kOk, "read", L({7}));
  History untimed = h.h();
  for (Event& e : untimed) e.time.reset();
  Verdict v = CheckSet(untimed);
  INFO(v.summary);
  CHECK(v.validity == Validity::kValid);
  CHECK(Has(v.summary,
            "missing for at least 1 event: known present from "
            "event 1, when its add completed ok, still omitted "
            "by p1's read at event 2"));
}

TEST_CASE("set: an element nobody added is unexpected", "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  h.E(20, 0, kInv, "add", I(2)).E(30, 0, kFail, "add", I(2));
  h.E(40, 1, kInv, "read").E(50, 1, kOk, "read", L({1, 99}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "1 unexpected element (first: 99, never added"));

  H f;  // listed although its add failed
  f.E(0, 0, kInv, "add", I(2)).E(30, 0, kFail, "add", I(2));
  f.E(40, 1, kInv, "read").E(50, 1, kOk, "read", L({2}));
  Verdict w = CheckSet(f.h());
  INFO(w.summary);
  CHECK(w.validity == Validity::kInvalid);
  CHECK(Has(w.summary, "first: 2, whose add failed"));
}

TEST_CASE("set: an element listed twice by one read is a duplicate",
          "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(3)).E(10, 0, kOk, "add", I(3));
  h.E(20, 1, kInv, "read").E(30, 1, kOk, "read", L({3, 3}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "listed twice in one read (first: 3"));
  CHECK(Has(v.details_json, "\"duplicate\":1"));
  CHECK(Has(v.details_json, "\"stable\":1"));
}

TEST_CASE("set: an info add later seen counts as added", "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", Value::String("x")).E(10, 0, kInfo, "add");
  h.E(20, 1, kInv, "read")
      .E(30, 1, kOk, "read", Value::MakeList({Value::String("x")}));
  h.E(40, 1, kInv, "read").E(50, 1, kOk, "read", Value::MakeList({}));
  Verdict v = CheckSet(h.h());
  INFO(v.summary << "\n" << v.explanation);
  // Seen at 30 ms, omitted by the read invoked at 40 ms: lost.
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary,
            "1 of 1 added elements lost (first: \"x\", added by "
            "an add of unknown outcome"));

  H ok;  // the same, and the last read lists it: stable
  ok.E(0, 0, kInv, "add", Value::String("x")).E(10, 0, kInfo, "add");
  ok.E(20, 1, kInv, "read")
      .E(30, 1, kOk, "read", Value::MakeList({Value::String("x")}));
  ok.E(40, 1, kInv, "read")
      .E(50, 1, kOk, "read", Value::MakeList({Value::String("x")}));
  Verdict w = CheckSet(ok.h());
  CHECK(w.validity == Validity::kValid);
  CHECK(Has(w.details_json, "\"added\":1"));

  H never;  // an info add never seen is indeterminate, not lost
  never.E(0, 0, kInv, "add", I(1)).E(10, 0, kInfo, "add");
  never.E(20, 1, kInv, "add", I(2)).E(25, 1, kOk, "add", I(2));
  never.E(30, 2, kInv, "read").E(40, 2, kOk, "read", L({2}));
  Verdict n = CheckSet(never.h());
  CHECK(n.validity == Validity::kValid);
  CHECK(Has(n.details_json, "\"indeterminate\":1"));
}

TEST_CASE("set: no read, or no read after any add, is unknown",
          "[collections][set]") {
  H h;
  h.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  h.E(20, 1, kInv, "read").E(30, 1, kFail, "read");
  Verdict v = CheckSet(h.h());
  CHECK(v.validity == Validity::kUnknown);
  CHECK(Has(v.summary, "no read completed ok"));

  H c;  // the only read is concurrent with the add and omits it
  c.E(0, 0, kInv, "add", I(1));
  c.E(1, 1, kInv, "read").E(2, 1, kOk, "read", L({}));
  c.E(3, 0, kOk, "add", I(1));
  Verdict w = CheckSet(c.h());
  INFO(w.summary);
  CHECK(w.validity == Validity::kUnknown);
  CHECK(Has(w.details_json, "\"never-read\":1"));
}

TEST_CASE("set: a malformed read names its line", "[collections][set]") {
  H h;
  h.E(0, 1, kInv, "read").E(30, 1, kOk, "read", I(4));
  Verdict v = CheckSet(h.h());
  CHECK(v.validity == Validity::kUnknown);
  CHECK(Has(v.summary, "line 2"));
  CHECK(Has(v.summary, "list of every element"));

  H d;
  d.E(0, 0, kInv, "add", I(1)).E(1, 0, kOk, "add", I(1));
  d.E(2, 0, kInv, "add", I(1)).E(3, 0, kOk, "add", I(1));
  Verdict w = CheckSet(d.h());
  CHECK(w.validity == Validity::kUnknown);
  CHECK(Has(w.summary, "line 3: element 1 is added a second time"));
}

// --- bank --------------------------------------------------------------

Value Balances(std::vector<std::pair<std::string, std::int64_t>> xs) {
  Value::Object o;
  for (auto& [k, b] : xs) o.emplace_back(k, I(b));
  return Value::MakeObject(std::move(o));
}

Value Transfer(const char* from, const char* to, std::int64_t amount) {
  return Value::MakeObject({{"from", Value::String(from)},
                            {"to", Value::String(to)},
                            {"amount", I(amount)}});
}

TEST_CASE("bank: reads that keep the total are valid", "[collections][bank]") {
  H h;
  h.E(0, 0, kInv, "transfer", Transfer("a", "b", 10));
  h.E(10, 0, kOk, "transfer");
  h.E(20, 1, kInv, "transfer", Transfer("b", "a", 500));
  h.E(30, 1, kFail, "transfer");
  h.E(40, 2, kInv, "read")
      .E(50, 2, kOk, "read", Balances({{"a", 50}, {"b", 50}}));
  h.E(60, 2, kInv, "read")
      .E(70, 2, kOk, "read", Balances({{"a", 40}, {"b", 60}}));
  BankOptions o;
  o.total = 100;
  o.accounts = std::vector<std::string>{"a", "b"};
  Verdict v = CheckBank(h.h(), o);
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.checker == "bank");
  CHECK(v.validity == Validity::kValid);
  CHECK(Has(v.summary, "all 2 ok reads sum to 100"));
  CHECK(Has(v.details_json, "\"min_total\":100"));
  RequireJson(v);
}

TEST_CASE("bank: a wrong total is invalid", "[collections][bank]") {
  H h;
  h.E(3000, 2, kInv, "read")
      .E(3200, 2, kOk, "read", Balances({{"a", 47}, {"b", 50}}));
  BankOptions o;
  o.total = 100;
  Verdict v = CheckBank(h.h(), o);
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary,
            "wrong total: p2's read at 3.200 s (event 1) summed "
            "to 97, expected 100"));
  CHECK(Has(v.details_json, "\"wrong-total\":1"));
  RequireJson(v);
}

TEST_CASE("bank: a negative balance is invalid unless allowed",
          "[collections][bank]") {
  H h;
  h.E(0, 2, kInv, "read")
      .E(10, 2, kOk, "read", Balances({{"a", -5}, {"b", 105}}));
  BankOptions o;
  o.total = 100;
  Verdict v = CheckBank(h.h(), o);
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "negative balance"));
  CHECK(Has(v.summary, "account \"a\" at -5"));
  o.allow_negative = true;
  CHECK(CheckBank(h.h(), o).validity == Validity::kValid);
}

TEST_CASE("bank: a missing or unknown account is invalid",
          "[collections][bank]") {
  H h;
  h.E(0, 2, kInv, "read")
      .E(10, 2, kOk, "read", Balances({{"a", 50}, {"c", 50}}));
  BankOptions o;
  o.accounts = std::vector<std::string>{"a", "b"};
  Verdict v = CheckBank(h.h(), o);
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.explanation, "does not list account \"b\""));
  CHECK(Has(v.explanation, "lists account \"c\""));
  CHECK(Has(v.details_json, "\"missing-account\":1"));
  CHECK(Has(v.details_json, "\"unknown-account\":1"));
}

TEST_CASE("bank: without a total the first read's sum is used and said",
          "[collections][bank]") {
  H h;
  h.E(0, 2, kInv, "read")
      .E(10, 2, kOk, "read", Balances({{"a", 60}, {"b", 40}}));
  h.E(20, 2, kInv, "read")
      .E(30, 2, kOk, "read", Balances({{"a", 60}, {"b", 40}}));
  Verdict v = CheckBank(h.h());
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.validity == Validity::kValid);
  CHECK(Has(v.summary, "(total taken from the first read)"));
  CHECK(Has(v.explanation,
            "taken from the first ok read, p2's read at "
            "0.010 s (event 1)"));
  CHECK(Has(v.details_json, "\"total_source\":\"first-read\""));

  H bad = h;
  bad.E(40, 2, kInv, "read")
      .E(50, 2, kOk, "read", Balances({{"a", 61}, {"b", 40}}));
  Verdict w = CheckBank(bad.h());
  INFO(w.summary);
  CHECK(w.validity == Validity::kInvalid);
  CHECK(Has(w.summary, "summed to 101, expected 100"));
}

TEST_CASE("bank: no ok read is unknown; a bad shape names its line",
          "[collections][bank]") {
  H h;
  h.E(0, 0, kInv, "transfer", Transfer("a", "b", 1)).E(1, 0, kOk, "transfer");
  h.E(2, 1, kInv, "read").E(3, 1, kInfo, "read");
  Verdict v = CheckBank(h.h());
  CHECK(v.validity == Validity::kUnknown);
  CHECK(Has(v.summary, "no read completed ok"));

  H s;
  s.E(0, 0, kInv, "transfer", I(3));
  Verdict w = CheckBank(s.h());
  CHECK(w.validity == Validity::kUnknown);
  CHECK(Has(w.summary, "line 1: a bank transfer's invoke value must be"));
}

// --- counter -------------------------------------------------------------

TEST_CASE("counter: reads between the bounds are valid",
          "[collections][counter]") {
  H h;
  h.E(0, 0, kInv, "add", I(5)).E(10, 0, kOk, "add", I(5));
  // An info add of 3 and an ok add of 2 concurrent with the read.
  h.E(20, 1, kInv, "add", I(3)).E(25, 1, kInfo, "add");
  h.E(30, 2, kInv, "read");
  h.E(35, 3, kInv, "add", I(2));
  h.E(40, 2, kOk, "read", I(10));  // 5 <= 10 <= 5 + 3 + 2
  h.E(45, 3, kOk, "add", I(2));
  h.E(50, 2, kInv, "read").E(60, 2, kOk, "read", I(7));  // 7 <= 7 <= 10
  Verdict v = CheckCounter(h.h());
  INFO(v.summary << "\n" << v.explanation);
  CHECK(v.checker == "counter");
  CHECK(v.validity == Validity::kValid);
  CHECK(Has(v.summary, "all 2 ok reads"));
  RequireJson(v);
}

TEST_CASE("counter: a read below its lower bound is invalid",
          "[collections][counter]") {
  H h;
  h.E(0, 0, kInv, "add", I(15)).E(1000, 0, kOk, "add", I(15));
  h.E(2000, 1, kInv, "add", I(4));
  h.E(5100, 2, kInv, "read").E(5200, 2, kOk, "read", I(12));
  Verdict v = CheckCounter(h.h());
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary,
            "p2's read invoked at 5.100 s (event 3) returned 12, "
            "but 15 had been acknowledged before it began (lower "
            "bound 15, upper 19)"));
  CHECK(Has(v.details_json, "\"below\":1"));
  RequireJson(v);
}

TEST_CASE("counter: a read above its upper bound is invalid",
          "[collections][counter]") {
  H h;
  h.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  h.E(20, 1, kInv, "read").E(30, 1, kOk, "read", I(2));
  h.E(40, 0, kInv, "add", I(1)).E(50, 0, kOk, "add", I(1));  // after it
  Verdict v = CheckCounter(h.h());
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "returned 2, but at most 1 could have been added"));
}

TEST_CASE("counter: a failed add is not counted", "[collections][counter]") {
  H h;
  h.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  h.E(20, 1, kInv, "add", I(100));
  h.E(30, 2, kInv, "read").E(40, 2, kOk, "read", I(101));  // needs the 100
  h.E(50, 1, kFail, "add", I(100));
  Verdict v = CheckCounter(h.h());
  INFO(v.summary);
  CHECK(v.validity == Validity::kInvalid);
  CHECK(Has(v.summary, "returned 101, but at most 1"));

  H ok;
  ok.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  ok.E(20, 1, kInv, "add", I(100)).E(30, 1, kFail, "add", I(100));
  ok.E(40, 2, kInv, "read").E(50, 2, kOk, "read", I(1));
  CHECK(CheckCounter(ok.h()).validity == Validity::kValid);
}

TEST_CASE("counter: no ok read is unknown; the initial value counts",
          "[collections][counter]") {
  H h;
  h.E(0, 0, kInv, "add", I(1)).E(10, 0, kOk, "add", I(1));
  h.E(20, 1, kInv, "read");
  Verdict v = CheckCounter(h.h());
  CHECK(v.validity == Validity::kUnknown);
  CHECK(Has(v.summary, "no read completed ok (1 read attempted)"));

  H r;
  r.E(0, 1, kInv, "read").E(10, 1, kOk, "read", I(10));
  CounterOptions o;
  o.initial = 10;
  CHECK(CheckCounter(r.h(), o).validity == Validity::kValid);
  CHECK(CheckCounter(r.h()).validity == Validity::kInvalid);

  H bad;
  bad.E(0, 0, kInv, "add", I(-2));
  Verdict w = CheckCounter(bad.h());
  CHECK(w.validity == Validity::kUnknown);
  CHECK(Has(w.summary,
            "line 1: a counter add's invoke value must be the "
            "increment, a non-negative integer, not -2"));
}

}  // namespace
}  // namespace faultline::checkers::collections

// Unit tests of the models' sequential semantics and the model registry.
#include <catch2/catch.hpp>

#include "checkers/model.h"

namespace faultline::checkers {
namespace {

Operation Op(const char* f, Value in, Value out = {}, bool completed = true) {
  return Operation{f, std::move(in), std::move(out), completed};
}
Value I(std::int64_t i) { return Value::Int(i); }
Value S(const char* s) { return Value::String(s); }

TEST_CASE("registry lists and builds every model", "[models]") {
  std::vector<std::string> names = ModelNames();
  CHECK(names ==
        std::vector<std::string>{"cas-register", "kv", "mutex", "register"});
  for (const std::string& n : names) {
    auto m = MakeModel(n);
    REQUIRE(m != nullptr);
    CHECK(m->name() == n);
  }
  CHECK(MakeModel("queue") == nullptr);
}

TEST_CASE("register: read, write; no cas", "[models]") {
  auto m = MakeModel("register");
  Value s = m->Init();
  CHECK(s.is_null());
  CHECK(m->Step(s, Op("read", {}, {})).ok);
  CHECK_FALSE(m->Step(s, Op("read", {}, I(1))).ok);
  StepResult w = m->Step(s, Op("write", I(1)));
  REQUIRE(w.ok);
  CHECK(w.next == I(1));
  CHECK(m->Step(w.next, Op("read", {}, I(1))).ok);
  CHECK(m->Step(w.next, Op("read", {}, {}, false)).ok);  // crashed read
  CHECK(m->ReadOnly(Op("read", {})));
  CHECK_FALSE(m->ReadOnly(Op("write", I(1))));
  CHECK(m->Validate(Op("cas", Value::MakeList({I(1), I(2)}))).has_value());
  CHECK(m->WhyRejected(I(7), Op("read", {}, I(4))) ==
        "read returned 4 but the register held 7");
}

TEST_CASE("cas-register: cas swaps only on a match", "[models]") {
  auto m = MakeModel("cas-register");
  Value arg = Value::MakeList({I(1), I(2)});
  CHECK_FALSE(m->Step(Value(), Op("cas", arg)).ok);
  StepResult r = m->Step(I(1), Op("cas", arg));
  REQUIRE(r.ok);
  CHECK(r.next == I(2));
  CHECK(m->Validate(Op("cas", I(1))).has_value());
  CHECK_FALSE(m->Validate(Op("cas", arg)).has_value());
  auto flow = m->Flow(Op("cas", arg));
  REQUIRE(flow.has_value());
  CHECK(flow->kind == ValueFlow::Kind::kCas);
  CHECK(*flow->observes == I(1));
  CHECK(*flow->produces == I(2));
  CHECK(m->DescribeOp(Op("cas", arg, {}, false)) ==
        "cas 1 -> 2 (indeterminate)");
}

TEST_CASE("kv: missing key reads empty, append concatenates", "[models]") {
  auto m = MakeModel("kv");
  Value s = m->Init();
  CHECK(m->Step(s, Op("get", {}, S(""))).ok);
  StepResult p = m->Step(s, Op("put", S("ab")));
  StepResult a = m->Step(p.next, Op("append", S("c")));
  REQUIRE(a.ok);
  CHECK(a.next == S("abc"));
  CHECK_FALSE(m->Step(a.next, Op("get", {}, S("ab"))).ok);
  CHECK(m->Validate(Op("put", I(1))).has_value());
  CHECK_FALSE(m->Flow(Op("put", S("x"))).has_value());  // no value pruning
}

TEST_CASE("mutex: no double acquire, no release of a free lock", "[models]") {
  auto m = MakeModel("mutex");
  Value s = m->Init();
  CHECK_FALSE(m->Step(s, Op("release", {})).ok);
  StepResult a = m->Step(s, Op("acquire", {}));
  REQUIRE(a.ok);
  CHECK_FALSE(m->Step(a.next, Op("acquire", {})).ok);
  CHECK(m->Step(a.next, Op("release", {})).ok);
  CHECK(m->DescribeState(a.next) == "held");
  CHECK(m->Validate(Op("lock", {})).has_value());
}

}  // namespace
}  // namespace faultline::checkers

#include "targets/zookeeper/zk_txn_client.h"

#include <zookeeper/zookeeper.h>

#include <catch2/catch.hpp>

namespace faultline::targets::zookeeper {
namespace {

using checkers::Value;
using harness::Outcome;

Value Micro(const char* f, Value k, Value v) {
  return Value::MakeList({Value::String(f), std::move(k), std::move(v)});
}
Value Ints(std::initializer_list<std::int64_t> xs) {
  Value::List l;
  for (auto x : xs) l.push_back(Value::Int(x));
  return Value::MakeList(std::move(l));
}
ZkKeyState Found(std::string data, int version) {
  ZkKeyState s;
  s.found = true;
  s.data = std::move(data);
  s.version = version;
  return s;
}

TEST_CASE("txn keys map to znodes under the txn root", "[zookeeper][txn]") {
  CHECK(TxnPathFor(Value::Int(7)) == "/faultline/txn/7");
  CHECK(TxnPathFor(Value::Int(-3)) == "/faultline/txn/-3");
  CHECK(TxnPathFor(Value::String("a")) == "/faultline/txn/a");
  CHECK(TxnPathFor(Value::String("a/b")).empty());
  CHECK(TxnPathFor(Value::String("..")).empty());
  CHECK(TxnPathFor(Value::String("")).empty());
  CHECK(TxnPathFor(Value::Null()).empty());
  CHECK(TxnPathFor(Ints({1})).empty());
}

TEST_CASE("list data is a compact JSON array", "[zookeeper][txn]") {
  const auto la = ZkTxnWorkload::kListAppend;
  CHECK(EncodeTxnData(Ints({3, 7})) == "[3,7]");
  auto absent = DecodeTxnData(la, ZkKeyState{}, "/p");
  REQUIRE(absent.ok());
  CHECK(*absent == Value::MakeList({}));
  auto two = DecodeTxnData(la, Found("[3,7]", 1), "/p");
  REQUIRE(two.ok());
  CHECK(*two == Ints({3, 7}));
  auto strs = DecodeTxnData(la, Found("[\"x\",1]", 1), "/p");
  REQUIRE(strs.ok());
  CHECK(strs->as_list()[0] == Value::String("x"));
  // Not what faultline writes.
  CHECK_FALSE(DecodeTxnData(la, Found("", 0), "/p").ok());
  CHECK_FALSE(DecodeTxnData(la, Found("7", 0), "/p").ok());
  CHECK_FALSE(DecodeTxnData(la, Found("[1, 2]", 0), "/p").ok());
  CHECK_FALSE(DecodeTxnData(la, Found("[[1]]", 0), "/p").ok());
  auto bad = DecodeTxnData(la, Found("junk", 0), "/faultline/txn/4");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("/faultline/txn/4") != std::string::npos);
}

TEST_CASE("register data is the value's JSON", "[zookeeper][txn]") {
  const auto rw = ZkTxnWorkload::kRwRegister;
  CHECK(EncodeTxnData(Value::Int(5)) == "5");
  CHECK(EncodeTxnData(Value::String("s")) == "\"s\"");
  auto absent = DecodeTxnData(rw, ZkKeyState{}, "/p");
  REQUIRE(absent.ok());
  CHECK(absent->is_null());
  auto five = DecodeTxnData(rw, Found("5", 2), "/p");
  REQUIRE(five.ok());
  CHECK(*five == Value::Int(5));
  auto s = DecodeTxnData(rw, Found("\"s\"", 2), "/p");
  REQUIRE(s.ok());
  CHECK(*s == Value::String("s"));
  CHECK_FALSE(DecodeTxnData(rw, Found("not json", 2), "/p").ok());
}

TEST_CASE("plans dedupe keys and note what depends on old values",
          "[zookeeper][txn]") {
  const Value txn =
      Value::MakeList({Micro("r", Value::Int(1), Value::Null()),
                       Micro("append", Value::Int(2), Value::Int(10)),
                       Micro("r", Value::Int(2), Value::Null()),
                       Micro("append", Value::Int(1), Value::Int(11)),
                       Micro("r", Value::Int(3), Value::Null())});
  auto plan = PlanZkTxn(txn, ZkTxnWorkload::kListAppend);
  REQUIRE(plan.ok());
  CHECK(plan->paths == std::vector<std::string>{"/faultline/txn/1",
                                                "/faultline/txn/2",
                                                "/faultline/txn/3"});
  CHECK(plan->ops.size() == 5);
  CHECK(plan->depends == std::vector<bool>{true, true, true});
  CHECK(plan->written == std::vector<bool>{true, true, false});
  CHECK_FALSE(plan->read_only());

  // rw-register: a write before any read of the key is blind.
  const Value rw = Value::MakeList({Micro("w", Value::Int(1), Value::Int(4)),
                                    Micro("r", Value::Int(1), Value::Null()),
                                    Micro("r", Value::Int(2), Value::Null()),
                                    Micro("w", Value::Int(2), Value::Int(5))});
  auto p2 = PlanZkTxn(rw, ZkTxnWorkload::kRwRegister);
  REQUIRE(p2.ok());
  CHECK(p2->depends == std::vector<bool>{false, true});
  CHECK(p2->written == std::vector<bool>{true, true});

  auto ro =
      PlanZkTxn(Value::MakeList({Micro("r", Value::Int(9), Value::Null())}),
                ZkTxnWorkload::kRwRegister);
  REQUIRE(ro.ok());
  CHECK(ro->read_only());
}

TEST_CASE("malformed transactions are refused with the reason",
          "[zookeeper][txn]") {
  const auto la = ZkTxnWorkload::kListAppend;
  CHECK_FALSE(PlanZkTxn(Value::Int(1), la).ok());
  CHECK_FALSE(PlanZkTxn(Value::MakeList({}), la).ok());
  auto w = PlanZkTxn(
      Value::MakeList({Micro("w", Value::Int(1), Value::Int(2))}), la);
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().find("\"append\"") != std::string::npos);
  CHECK_FALSE(PlanZkTxn(Value::MakeList({Micro("append", Value::String("a/b"),
                                               Value::Int(2))}),
                        la)
                  .ok());
  CHECK_FALSE(
      PlanZkTxn(
          Value::MakeList({Micro("append", Value::Int(1), Value::Null())}), la)
          .ok());
  CHECK_FALSE(
      PlanZkTxn(Value::MakeList({Value::MakeList({Value::String("r")})}), la)
          .ok());
}

TEST_CASE("evaluation fills reads, own writes included", "[zookeeper][txn]") {
  const Value txn =
      Value::MakeList({Micro("r", Value::Int(1), Value::Null()),
                       Micro("append", Value::Int(1), Value::Int(9)),
                       Micro("r", Value::Int(1), Value::Null()),
                       Micro("r", Value::Int(2), Value::Null())});
  auto plan = PlanZkTxn(txn, ZkTxnWorkload::kListAppend);
  REQUIRE(plan.ok());
  auto eval = EvaluateZkTxn(*plan, ZkTxnWorkload::kListAppend,
                            {Found("[3,7]", 2), ZkKeyState{}});
  REQUIRE(eval.ok());
  const Value want =
      Value::MakeList({Micro("r", Value::Int(1), Ints({3, 7})),
                       Micro("append", Value::Int(1), Value::Int(9)),
                       Micro("r", Value::Int(1), Ints({3, 7, 9})),
                       Micro("r", Value::Int(2), Value::MakeList({}))});
  CHECK(eval->completed == want);
  CHECK(eval->data == std::vector<std::string>{"[3,7,9]", ""});

  // rw-register: a read after the own write sees it; absent reads null.
  const Value rw = Value::MakeList({Micro("r", Value::Int(1), Value::Null()),
                                    Micro("w", Value::Int(1), Value::Int(4)),
                                    Micro("r", Value::Int(1), Value::Null())});
  auto p2 = PlanZkTxn(rw, ZkTxnWorkload::kRwRegister);
  REQUIRE(p2.ok());
  auto e2 = EvaluateZkTxn(*p2, ZkTxnWorkload::kRwRegister, {ZkKeyState{}});
  REQUIRE(e2.ok());
  CHECK(e2->completed ==
        Value::MakeList({Micro("r", Value::Int(1), Value::Null()),
                         Micro("w", Value::Int(1), Value::Int(4)),
                         Micro("r", Value::Int(1), Value::Int(4))}));
  CHECK(e2->data == std::vector<std::string>{"4"});

  // Foreign data: an error, nothing to commit.
  CHECK_FALSE(EvaluateZkTxn(*plan, ZkTxnWorkload::kListAppend,
                            {Found("oops", 1), ZkKeyState{}})
                  .ok());
}

TEST_CASE("the multi checks what was read and writes with versions",
          "[zookeeper][txn]") {
  using K = ZkOp::Kind;
  // append to existing 1 and absent 2; read existing 3 and absent 4.
  const Value txn =
      Value::MakeList({Micro("append", Value::Int(1), Value::Int(5)),
                       Micro("append", Value::Int(2), Value::Int(6)),
                       Micro("r", Value::Int(3), Value::Null()),
                       Micro("r", Value::Int(4), Value::Null())});
  auto plan = PlanZkTxn(txn, ZkTxnWorkload::kListAppend);
  REQUIRE(plan.ok());
  const std::vector<ZkKeyState> states = {Found("[1]", 4), ZkKeyState{},
                                          Found("[2]", 7), ZkKeyState{}};
  auto eval = EvaluateZkTxn(*plan, ZkTxnWorkload::kListAppend, states);
  REQUIRE(eval.ok());
  const std::vector<ZkOp> want = {
      {K::kSet, "/faultline/txn/1", "[1,5]", 4},
      {K::kCreate, "/faultline/txn/2", "[6]", -1},
      {K::kCheck, "/faultline/txn/3", "", 7},
      {K::kCreate, "/faultline/txn/4", "", -1},
      {K::kDelete, "/faultline/txn/4", "", 0},
  };
  CHECK(TxnMulti(*plan, states, *eval) == want);

  // A blind rw-register write of an existing key: any version.
  auto blind =
      PlanZkTxn(Value::MakeList({Micro("w", Value::Int(1), Value::Int(8))}),
                ZkTxnWorkload::kRwRegister);
  REQUIRE(blind.ok());
  const std::vector<ZkKeyState> s1 = {Found("3", 2)};
  auto e1 = EvaluateZkTxn(*blind, ZkTxnWorkload::kRwRegister, s1);
  REQUIRE(e1.ok());
  CHECK(TxnMulti(*blind, s1, *e1) ==
        std::vector<ZkOp>{{K::kSet, "/faultline/txn/1", "8", -1}});

  // Read-only: checks only.
  auto ro =
      PlanZkTxn(Value::MakeList({Micro("r", Value::Int(1), Value::Null()),
                                 Micro("r", Value::Int(1), Value::Null())}),
                ZkTxnWorkload::kListAppend);
  REQUIRE(ro.ok());
  const std::vector<ZkKeyState> s3 = {Found("[3]", 1)};
  auto e3 = EvaluateZkTxn(*ro, ZkTxnWorkload::kListAppend, s3);
  REQUIRE(e3.ok());
  CHECK(TxnMulti(*ro, s3, *e3) ==
        std::vector<ZkOp>{{K::kCheck, "/faultline/txn/1", "", 1}});
}

TEST_CASE("errors map to fail only when nothing can have been applied",
          "[zookeeper][txn]") {
  const Value v =
      Value::MakeList({Micro("append", Value::Int(1), Value::Int(2))});
  auto outcome = [&](int rc, ZkTxnStep step, bool ro) {
    return TxnError(rc, step, ro, v).type;
  };
  const auto read = ZkTxnStep::kRead;
  const auto multi = ZkTxnStep::kMulti;
  // Reading: nothing written yet.
  CHECK(outcome(kTimedOut, read, false) == Outcome::kFail);
  CHECK(outcome(ZCONNECTIONLOSS, read, false) == Outcome::kFail);
  CHECK(outcome(kNotConnected, read, true) == Outcome::kFail);
  CHECK(outcome(kTimedOut, read, true) == Outcome::kInfo);
  // The multi: conflicts and refusals apply nothing.
  CHECK(outcome(ZBADVERSION, multi, false) == Outcome::kFail);
  CHECK(outcome(ZNODEEXISTS, multi, false) == Outcome::kFail);
  CHECK(outcome(ZNONODE, multi, false) == Outcome::kFail);
  CHECK(outcome(kNotConnected, multi, false) == Outcome::kFail);
  CHECK(outcome(ZINVALIDSTATE, multi, false) == Outcome::kFail);
  CHECK(TxnError(ZBADVERSION, multi, false, v).error ==
        "conflict: ZBADVERSION");
  CHECK(TxnError(ZBADVERSION, multi, false, v).value == v);
  // Sent, outcome unknown.
  CHECK(outcome(kTimedOut, multi, false) == Outcome::kInfo);
  CHECK(outcome(ZCONNECTIONLOSS, multi, false) == Outcome::kInfo);
  CHECK(outcome(ZOPERATIONTIMEOUT, multi, false) == Outcome::kInfo);
  CHECK(outcome(ZSESSIONEXPIRED, multi, false) == Outcome::kInfo);
  CHECK(outcome(ZMARSHALLINGERROR, multi, false) == Outcome::kInfo);
  // A read-only validation changes nothing: fail, but a timeout stays info.
  CHECK(outcome(ZCONNECTIONLOSS, multi, true) == Outcome::kFail);
  CHECK(outcome(kTimedOut, multi, true) == Outcome::kInfo);
  CHECK(outcome(ZOPERATIONTIMEOUT, multi, true) == Outcome::kInfo);
}

}  // namespace
}  // namespace faultline::targets::zookeeper

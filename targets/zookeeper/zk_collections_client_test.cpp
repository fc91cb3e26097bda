// Unit tests of the pure parts of the ZooKeeper set, bank and counter
// client: paths, the decoding of children and amounts, the multis it
// commits, and which return codes are fail or info.
#include "targets/zookeeper/zk_collections_client.h"

#include <zookeeper/zookeeper.h>

#include <catch2/catch.hpp>

namespace faultline::targets::zookeeper {
namespace {

using checkers::Value;
using harness::Outcome;
using K = ZkOp::Kind;

Value TransferValue(Value from, Value to, Value amount) {
  return Value::MakeObject({{"from", std::move(from)},
                            {"to", std::move(to)},
                            {"amount", std::move(amount)}});
}

TEST_CASE("set elements are znodes under the set root",
          "[zookeeper][collections]") {
  CHECK(SetPathFor(Value::Int(17)) == "/faultline/set/17");
  CHECK(SetPathFor(Value::Int(-2)) == "/faultline/set/-2");
  CHECK(SetPathFor(Value::String("x")) == "/faultline/set/x");
  CHECK(SetPathFor(Value::String("a/b")).empty());
  CHECK(SetPathFor(Value::String(".")).empty());
  CHECK(SetPathFor(Value::String("")).empty());
  CHECK(SetPathFor(Value::Null()).empty());
  CHECK(SetPathFor(Value::MakeList({Value::Int(1)})).empty());

  // Canonical decimals come back as integers, anything else as strings.
  const Value got = SetElements({"3", "-4", "x", "007", "+5", "12a"});
  CHECK(got == Value::MakeList({Value::Int(3), Value::Int(-4),
                                Value::String("x"), Value::String("007"),
                                Value::String("+5"), Value::String("12a")}));
  CHECK(SetElements({}) == Value::MakeList({}));
}

TEST_CASE("amounts are plain decimals", "[zookeeper][collections]") {
  CHECK(ParseAmount("0") == 0);
  CHECK(ParseAmount("42") == 42);
  CHECK(ParseAmount("-3") == -3);
  CHECK_FALSE(ParseAmount(""));
  CHECK_FALSE(ParseAmount("4 "));
  CHECK_FALSE(ParseAmount("x"));
  CHECK_FALSE(ParseAmount("99999999999999999999"));
}

TEST_CASE("the accounts are created by one multi of creates",
          "[zookeeper][collections]") {
  CHECK(AccountPath(3) == "/faultline/bank/3");
  CHECK(InitialBalances(5, 100) ==
        std::vector<std::int64_t>{20, 20, 20, 20, 20});
  // The remainder goes to account 0, so the sum is the total.
  CHECK(InitialBalances(3, 100) == std::vector<std::int64_t>{34, 33, 33});
  CHECK(InitialBalances(4, 2) == std::vector<std::int64_t>{2, 0, 0, 0});
  const std::vector<ZkOp> want = {{K::kCreate, "/faultline/bank/0", "34", -1},
                                  {K::kCreate, "/faultline/bank/1", "33", -1},
                                  {K::kCreate, "/faultline/bank/2", "33", -1}};
  CHECK(BankCreateMulti(3, 100) == want);
}

TEST_CASE("transfers parse and commit both balances with their versions",
          "[zookeeper][collections]") {
  auto t = ParseTransfer(
      TransferValue(Value::Int(1), Value::String("3"), Value::Int(7)), 5);
  REQUIRE(t.ok());
  CHECK(t->from == 1);
  CHECK(t->to == 3);
  CHECK(t->amount == 7);
  const std::vector<ZkOp> want = {{K::kSet, "/faultline/bank/1", "13", 4},
                                  {K::kSet, "/faultline/bank/3", "27", 9}};
  CHECK(TransferMulti(*t, {20, 4}, {20, 9}) == want);

  // Malformed: nothing is sent.
  CHECK_FALSE(ParseTransfer(
                  TransferValue(Value::Int(1), Value::Int(1), Value::Int(2)), 5)
                  .ok());
  CHECK_FALSE(ParseTransfer(
                  TransferValue(Value::Int(0), Value::Int(5), Value::Int(2)), 5)
                  .ok());
  CHECK_FALSE(
      ParseTransfer(TransferValue(Value::Int(-1), Value::Int(2), Value::Int(2)),
                    5)
          .ok());
  CHECK_FALSE(
      ParseTransfer(TransferValue(Value::Int(0), Value::Int(2), Value::Int(-2)),
                    5)
          .ok());
  CHECK_FALSE(
      ParseTransfer(
          TransferValue(Value::Int(0), Value::Int(2), Value::String("2")), 5)
          .ok());
  CHECK_FALSE(ParseTransfer(Value::Null(), 5).ok());
  CHECK_FALSE(ParseTransfer(Value::MakeObject({{"from", Value::Int(0)},
                                               {"to", Value::Int(1)}}),
                            5)
                  .ok());
}

TEST_CASE("a bank read checks every version it read",
          "[zookeeper][collections]") {
  const std::vector<ZkBalance> balances = {{60, 3}, {0, 0}, {40, 12}};
  const std::vector<ZkOp> want = {{K::kCheck, "/faultline/bank/0", "", 3},
                                  {K::kCheck, "/faultline/bank/1", "", 0},
                                  {K::kCheck, "/faultline/bank/2", "", 12}};
  CHECK(BankCheckMulti(balances) == want);
  CHECK(BankReadValue(balances) == Value::MakeObject({{"0", Value::Int(60)},
                                                      {"1", Value::Int(0)},
                                                      {"2", Value::Int(40)}}));
}

TEST_CASE("collection errors are fail only when nothing was applied",
          "[zookeeper][collections]") {
  const Value v = Value::Int(3);
  auto update = [&](int rc) { return ZkUpdateOutcome(rc, v).type; };
  // Refused or rolled back by the server, or never sent.
  CHECK(update(ZBADVERSION) == Outcome::kFail);
  CHECK(update(ZNODEEXISTS) == Outcome::kFail);
  CHECK(update(ZNONODE) == Outcome::kFail);
  CHECK(update(kNotConnected) == Outcome::kFail);
  CHECK(update(ZINVALIDSTATE) == Outcome::kFail);
  CHECK(ZkUpdateOutcome(ZBADVERSION, v).error == "conflict: ZBADVERSION");
  CHECK(ZkUpdateOutcome(ZBADVERSION, v).value == v);
  // Sent, and no answer says it was not applied.
  CHECK(update(kTimedOut) == Outcome::kInfo);
  CHECK(update(ZCONNECTIONLOSS) == Outcome::kInfo);
  CHECK(update(ZOPERATIONTIMEOUT) == Outcome::kInfo);
  CHECK(update(ZSESSIONEXPIRED) == Outcome::kInfo);
  CHECK(update(ZMARSHALLINGERROR) == Outcome::kInfo);

  // Reads have no effect: fail, except a read's timeout.
  CHECK(ZkReadOutcome(ZCONNECTIONLOSS, true, v).type == Outcome::kFail);
  CHECK(ZkReadOutcome(kNotConnected, true, v).type == Outcome::kFail);
  CHECK(ZkReadOutcome(kTimedOut, true, v).type == Outcome::kInfo);
  CHECK(ZkReadOutcome(ZOPERATIONTIMEOUT, true, v).type == Outcome::kInfo);
  // The reads before an update: nothing written yet, fail even on timeout.
  CHECK(ZkReadOutcome(kTimedOut, false, v).type == Outcome::kFail);
  CHECK(ZkReadOutcome(kTimedOut, false, v).error == "read: timeout");
}

}  // namespace
}  // namespace faultline::targets::zookeeper

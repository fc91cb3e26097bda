// Unit tests of the pure parts of the Redis transaction client: the EVAL
// command (script, keys, arguments), reply parsing, and which errors are
// fail or info. (The scripts themselves run in tests/e2e_txn_redis.sh.)
#include "targets/redis/redis_txn_client.h"

#include <catch2/catch.hpp>

namespace {

namespace redis = faultline::targets::redis;
using faultline::checkers::Value;
using faultline::harness::Outcome;
using faultline::targets::raftkv::CallError;
using faultline::targets::raftkv::CallResult;
using redis::TxnKind;
using RV = faultline::raftkv::resp::Value;

RV Bulk(std::string s) {
  RV v;
  v.kind = RV::Kind::kBulk;
  v.str = std::move(s);
  return v;
}
RV Int(long long i) {
  RV v;
  v.kind = RV::Kind::kInteger;
  v.integer = i;
  return v;
}
RV Array(std::vector<RV> a) {
  RV v;
  v.kind = RV::Kind::kArray;
  v.array = std::move(a);
  return v;
}
Value Micro(const char* f, std::int64_t k, Value v) {
  return Value::MakeList({Value::String(f), Value::Int(k), std::move(v)});
}

}  // namespace

TEST_CASE("redis txn: workload kinds and keys", "[redis][txn]") {
  CHECK(redis::TxnKindOf("list-append") == TxnKind::kListAppend);
  CHECK(redis::TxnKindOf("rw-register") == TxnKind::kRwRegister);
  CHECK_FALSE(redis::TxnKindOf("register"));
  CHECK(redis::TxnKey(TxnKind::kListAppend, Value::Int(7)) == "la:7");
  CHECK(redis::TxnKey(TxnKind::kRwRegister, Value::Int(-2)) == "rw:-2");
  CHECK(redis::TxnKey(TxnKind::kListAppend, Value::String("x")) == "la:x");
  CHECK(redis::TxnKey(TxnKind::kListAppend, Value::Null()).empty());
}

TEST_CASE("redis txn: EVAL command of a list-append txn", "[redis][txn]") {
  Value txn = Value::MakeList(
      {Micro("r", 3, Value::Null()), Micro("append", 3, Value::Int(12)),
       Micro("append", 5, Value::Int(-9)), Micro("r", 5, Value::Null())});
  std::string error;
  auto cmd = redis::TxnEval(TxnKind::kListAppend, txn, &error);
  REQUIRE(cmd);
  std::vector<std::string> want = {"EVAL", redis::kListAppendTxnScript,
                                   "4",    "la:3",
                                   "la:3", "la:5",
                                   "la:5", "r",
                                   "",     "a",
                                   "12",   "a",
                                   "-9",   "r",
                                   ""};
  CHECK(*cmd == want);
  CHECK_FALSE(redis::TxnReadOnly(txn));
  CHECK(redis::TxnReadOnly(Value::MakeList({Micro("r", 1, Value::Null())})));
  CHECK(std::string(redis::kListAppendTxnScript).rfind("#!lua\n", 0) == 0);
  CHECK(std::string(redis::kRwRegisterTxnScript).rfind("#!lua\n", 0) == 0);
}

TEST_CASE("redis txn: EVAL command of an rw-register txn", "[redis][txn]") {
  Value txn = Value::MakeList(
      {Micro("w", 1, Value::Int(4)), Micro("r", 1, Value::Null())});
  std::string error;
  auto cmd = redis::TxnEval(TxnKind::kRwRegister, txn, &error);
  REQUIRE(cmd);
  std::vector<std::string> want = {
      "EVAL", redis::kRwRegisterTxnScript, "2", "rw:1", "rw:1", "w", "4", "r",
      ""};
  CHECK(*cmd == want);
}

TEST_CASE("redis txn: malformed transactions are refused", "[redis][txn]") {
  std::string error;
  CHECK_FALSE(
      redis::TxnEval(TxnKind::kListAppend, Value::MakeList({}), &error));
  CHECK_FALSE(redis::TxnEval(TxnKind::kListAppend, Value::Int(1), &error));
  // The other workload's write.
  CHECK_FALSE(redis::TxnEval(TxnKind::kListAppend,
                             Value::MakeList({Micro("w", 1, Value::Int(1))}),
                             &error));
  CHECK(error.find("unsupported txn micro-op") != std::string::npos);
  CHECK_FALSE(redis::TxnEval(
      TxnKind::kRwRegister,
      Value::MakeList({Micro("append", 1, Value::Int(1))}), &error));
  CHECK_FALSE(redis::TxnEval(
      TxnKind::kListAppend,
      Value::MakeList({Micro("append", 1, Value::Null())}), &error));
  CHECK_FALSE(redis::TxnEval(
      TxnKind::kListAppend,
      Value::MakeList({Value::MakeList({Value::String("r"), Value::Int(1)})}),
      &error));
}

TEST_CASE("redis txn: list-append replies fill the reads", "[redis][txn]") {
  Value txn = Value::MakeList({Micro("r", 3, Value::Null()),
                               Micro("append", 3, Value::Int(12)),
                               Micro("r", 3, Value::Null())});
  auto filled =
      redis::TxnFill(TxnKind::kListAppend, txn,
                     Array({Array({}), Int(1),
                            Array({Bulk("9223372036854775807"), Bulk("12")})}));
  REQUIRE(filled);
  CHECK(filled->ToJson() ==
        R"([["r",3,[]],["append",3,12],["r",3,[9223372036854775807,12]]])");
  // Wrong length, a write that did not answer 1, a read that is no list.
  CHECK_FALSE(redis::TxnFill(TxnKind::kListAppend, txn, Array({Array({})})));
  CHECK_FALSE(redis::TxnFill(TxnKind::kListAppend, txn,
                             Array({Array({}), Int(0), Array({})})));
  CHECK_FALSE(redis::TxnFill(TxnKind::kListAppend, txn,
                             Array({Bulk("1"), Int(1), Array({})})));
  CHECK_FALSE(redis::TxnFill(TxnKind::kListAppend, txn, Int(1)));
}

TEST_CASE("redis txn: rw-register replies fill the reads", "[redis][txn]") {
  Value txn = Value::MakeList({Micro("r", 1, Value::Null()),
                               Micro("w", 2, Value::Int(5)),
                               Micro("r", 2, Value::Null())});
  auto filled = redis::TxnFill(TxnKind::kRwRegister, txn,
                               Array({Array({}), Int(1), Array({Bulk("5")})}));
  REQUIRE(filled);
  CHECK(filled->ToJson() == R"([["r",1,null],["w",2,5],["r",2,5]])");
  CHECK_FALSE(redis::TxnFill(
      TxnKind::kRwRegister, txn,
      Array({Array({Bulk("1"), Bulk("2")}), Int(1), Array({})})));
}

TEST_CASE("redis txn: error replies and lost calls -> fail or info",
          "[redis][txn]") {
  // Redis refuses these before the script changed anything.
  for (const char* e :
       {"READONLY You can't write against a read only replica.",
        "NOREPLICAS Not enough good replicas to write.",
        "BUSY Redis is busy running a script.",
        "LOADING Redis is loading the dataset in memory",
        "MASTERDOWN Link with MASTER is down", "NOSCRIPT No matching script.",
        "OOM command not allowed"}) {
    CHECK(redis::TxnErrorOutcome(e, false) == Outcome::kFail);
  }
  // A call inside the script failed: an earlier write may have stayed.
  CHECK(redis::TxnErrorOutcome("WRONGTYPE Operation against a key script: x",
                               false) == Outcome::kInfo);
  CHECK(redis::TxnErrorOutcome("ERR Error running script", false) ==
        Outcome::kInfo);
  // Reads only: no effect whatever the error.
  CHECK(redis::TxnErrorOutcome("ERR Error running script", true) ==
        Outcome::kFail);

  CallResult r;
  r.error = CallError::kConnect;
  r.sent = false;
  CHECK(redis::TxnUnansweredOutcome(r, false) == Outcome::kFail);
  r.error = CallError::kTimeout;
  r.sent = true;
  CHECK(redis::TxnUnansweredOutcome(r, false) == Outcome::kInfo);
  CHECK(redis::TxnUnansweredOutcome(r, true) == Outcome::kInfo);
  r.error = CallError::kClosed;
  CHECK(redis::TxnUnansweredOutcome(r, false) == Outcome::kInfo);
  CHECK(redis::TxnUnansweredOutcome(r, true) == Outcome::kFail);
  r.error = CallError::kIo;
  r.sent = false;
  CHECK(redis::TxnUnansweredOutcome(r, false) == Outcome::kFail);
}

// Unit tests of the pure parts of the Redis set, bank and counter client:
// the commands and scripts it sends, reply parsing, and which error
// replies are fail or info. (The scripts run against Redis in the
// configs/redis-{set,bank,counter}.yaml campaigns.)
#include "targets/redis/redis_collections_client.h"

#include <catch2/catch.hpp>

#include "targets/redis/redis_proto.h"

namespace {

namespace redis = faultline::targets::redis;
using faultline::checkers::Value;
using faultline::harness::Outcome;
using Command = redis::RedisClient::Command;
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
RV Null() { return RV{}; }
RV Array(std::vector<RV> a) {
  RV v;
  v.kind = RV::Kind::kArray;
  v.array = std::move(a);
  return v;
}
Value TransferValue(Value from, Value to, Value amount) {
  return Value::MakeObject({{"from", std::move(from)},
                            {"to", std::move(to)},
                            {"amount", std::move(amount)}});
}

}  // namespace

TEST_CASE("redis collections: workload kinds", "[redis][collections]") {
  CHECK(redis::CollectionOf("set") == redis::Collection::kSet);
  CHECK(redis::CollectionOf("bank") == redis::Collection::kBank);
  CHECK(redis::CollectionOf("counter") == redis::Collection::kCounter);
  CHECK_FALSE(redis::CollectionOf("register"));
  CHECK_FALSE(redis::CollectionOf("list-append"));
}

TEST_CASE("redis collections: set add and read", "[redis][collections]") {
  std::string error;
  auto add = redis::SetAddCommand(Value::Int(42), &error);
  REQUIRE(add);
  CHECK(*add == Command{"SADD", "faultline:set", "42"});
  auto s = redis::SetAddCommand(Value::String("x y"), &error);
  REQUIRE(s);
  CHECK(*s == Command{"SADD", "faultline:set", "x y"});
  CHECK_FALSE(redis::SetAddCommand(Value::String(""), &error));
  CHECK_FALSE(redis::SetAddCommand(Value::Null(), &error));
  CHECK(error.find("integer") != std::string::npos);

  CHECK(redis::SetReadCommand() ==
        Command{"EVAL", redis::kSetReadScript, "1", "faultline:set"});
  CHECK(std::string(redis::kSetReadScript).find("SMEMBERS") !=
        std::string::npos);
  auto got = redis::ParseSetRead(
      Array({Bulk("3"), Bulk("-1"), Bulk("x"), Bulk("07")}));
  REQUIRE(got);
  CHECK(*got == Value::MakeList({Value::Int(3), Value::Int(-1),
                                 Value::String("x"), Value::String("07")}));
  auto empty = redis::ParseSetRead(Array({}));
  REQUIRE(empty);
  CHECK(*empty == Value::MakeList({}));
  CHECK_FALSE(redis::ParseSetRead(Null()));
  CHECK_FALSE(redis::ParseSetRead(Array({Int(3)})));
}

TEST_CASE("redis collections: counter add and read", "[redis][collections]") {
  std::string error;
  auto add = redis::CounterAddCommand(Value::Int(5), &error);
  REQUIRE(add);
  CHECK(*add == Command{"INCRBY", "faultline:counter", "5"});
  CHECK_FALSE(redis::CounterAddCommand(Value::Int(-1), &error));
  CHECK_FALSE(redis::CounterAddCommand(Value::String("5"), &error));

  CHECK(redis::CounterReadCommand() ==
        Command{"EVAL", redis::kReadScript, "1", "faultline:counter"});
  CHECK(redis::ParseCounterRead(Null()) == 0);  // absent
  CHECK(redis::ParseCounterRead(Bulk("17")) == 17);
  CHECK_FALSE(redis::ParseCounterRead(Bulk("x")));
  CHECK_FALSE(redis::ParseCounterRead(Bulk("")));
  CHECK_FALSE(redis::ParseCounterRead(Int(17)));
}

TEST_CASE("redis collections: bank init, transfer and read commands",
          "[redis][collections]") {
  CHECK(redis::AccountKey(4) == "faultline:bank:4");
  CHECK(redis::InitialBalances(3, 100) ==
        std::vector<std::int64_t>{34, 33, 33});
  CHECK(redis::BankInitCommand(3, 100) ==
        Command{"EVAL", redis::kBankInitScript, "3", "faultline:bank:0",
                "faultline:bank:1", "faultline:bank:2", "34", "33", "33"});

  std::string error;
  auto t = redis::TransferCommand(
      TransferValue(Value::Int(2), Value::String("0"), Value::Int(5)), 3,
      &error);
  REQUIRE(t);
  CHECK(*t == Command{"EVAL", redis::kTransferScript, "2", "faultline:bank:2",
                      "faultline:bank:0", "5"});
  CHECK_FALSE(redis::TransferCommand(
      TransferValue(Value::Int(1), Value::Int(1), Value::Int(5)), 3, &error));
  CHECK_FALSE(redis::TransferCommand(
      TransferValue(Value::Int(1), Value::Int(3), Value::Int(5)), 3, &error));
  CHECK_FALSE(redis::TransferCommand(
      TransferValue(Value::Int(1), Value::Int(2), Value::Int(-5)), 3, &error));
  CHECK_FALSE(redis::TransferCommand(Value::Null(), 3, &error));
  CHECK(error.find("0..2") != std::string::npos);

  CHECK(redis::BankReadCommand(2) == Command{"EVAL", redis::kBankReadScript,
                                             "2", "faultline:bank:0",
                                             "faultline:bank:1"});
  auto read = redis::ParseBankRead(Array({Bulk("60"), Bulk("40")}), 2);
  REQUIRE(read);
  CHECK(*read ==
        Value::MakeObject({{"0", Value::Int(60)}, {"1", Value::Int(40)}}));
  // A missing account is left out, for the checker to report.
  auto lost = redis::ParseBankRead(Array({Null(), Bulk("40")}), 2);
  REQUIRE(lost);
  CHECK(*lost == Value::MakeObject({{"1", Value::Int(40)}}));
  CHECK_FALSE(redis::ParseBankRead(Array({Bulk("60")}), 2));
  CHECK_FALSE(redis::ParseBankRead(Array({Bulk("60"), Bulk("4x")}), 2));
  CHECK_FALSE(redis::ParseBankRead(Int(1), 2));
}

TEST_CASE("redis collections: scripts write only after their checks",
          "[redis][collections]") {
  // Every script is a writing script for Redis 7 (no flags), so replicas
  // refuse it before it runs.
  for (const char* s : {redis::kSetReadScript, redis::kBankInitScript,
                        redis::kTransferScript, redis::kBankReadScript}) {
    CHECK(std::string(s).rfind("#!lua\n", 0) == 0);
  }
  const std::string t = redis::kTransferScript;
  const auto first_set = t.find("redis.call('SET'");
  REQUIRE(first_set != std::string::npos);
  CHECK(t.find("return -1") < first_set);
  CHECK(t.find("return 0") < first_set);
  const std::string init = redis::kBankInitScript;
  CHECK(init.find("return 0") < init.find("redis.call('SET'"));
}

TEST_CASE("redis collections: error replies are fail only without effect",
          "[redis][collections]") {
  // A plain command either ran or was refused.
  CHECK(redis::UpdateErrorOutcome("READONLY You can't write", false) ==
        Outcome::kFail);
  CHECK(redis::UpdateErrorOutcome("WRONGTYPE Operation", false) ==
        Outcome::kFail);
  CHECK(redis::UpdateErrorOutcome("ERR value is not an integer", false) ==
        Outcome::kFail);
  CHECK(redis::UpdateErrorOutcome("SOMETHING else", false) == Outcome::kInfo);
  // A script may fail after a write: only refusals before it ran are fail.
  CHECK(redis::UpdateErrorOutcome("NOREPLICAS Not enough", true) ==
        Outcome::kFail);
  CHECK(redis::UpdateErrorOutcome("READONLY You can't write", true) ==
        Outcome::kFail);
  CHECK(redis::UpdateErrorOutcome("ERR Error running script", true) ==
        Outcome::kInfo);
  CHECK(redis::UpdateErrorOutcome("WRONGTYPE Operation", true) ==
        Outcome::kInfo);
}

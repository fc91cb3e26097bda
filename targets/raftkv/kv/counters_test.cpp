// The collection workloads' commands: INCRBY, XFER (kTransfer) and MSETNX.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>

#include "targets/raftkv/kv/state_machine.h"

namespace kv = faultline::raftkv::kv;

TEST_CASE("kv: incrby adds to an integer, absent reads as 0", "[kv][counter]") {
  kv::StateMachine sm;
  auto r = sm.Apply(1, kv::MakeIncrBy("c", 3));
  CHECK(r.ok);
  CHECK(r.number == 3);
  r = sm.Apply(2, kv::MakeIncrBy("c", 4));
  CHECK(r.number == 7);
  CHECK(sm.Get("c") == std::optional<std::string>("7"));
  r = sm.Apply(3, kv::MakeIncrBy("c", -10));
  CHECK(r.ok);
  CHECK(sm.Get("c") == std::optional<std::string>("-3"));
}

TEST_CASE("kv: incrby refuses non-integers and overflow without effect",
          "[kv][counter]") {
  kv::StateMachine sm;
  sm.Apply(1, kv::MakePut("s", "x"));
  CHECK_FALSE(sm.Apply(2, kv::MakeIncrBy("s", 1)).ok);
  CHECK(sm.Get("s") == std::optional<std::string>("x"));
  sm.Apply(3, kv::MakePut("z", "007"));
  CHECK_FALSE(sm.Apply(4, kv::MakeIncrBy("z", 1)).ok);
  sm.Apply(5, kv::MakeTxn({{kv::TxnKind::kAppend, "l", "1"}}));
  CHECK_FALSE(sm.Apply(6, kv::MakeIncrBy("l", 1)).ok);
  CHECK(sm.Lookup("l").type == kv::Datum::Type::kList);
  sm.Apply(7, kv::MakeIncrBy("m", std::numeric_limits<std::int64_t>::max()));
  CHECK_FALSE(sm.Apply(8, kv::MakeIncrBy("m", 1)).ok);
  CHECK(sm.Get("m") ==
        std::to_string(std::numeric_limits<std::int64_t>::max()));
}

TEST_CASE("kv: msetnx sets all keys iff none exists", "[kv][bank]") {
  kv::StateMachine sm;
  auto r = sm.Apply(1, kv::MakeMsetNx({{"a", "60"}, {"b", "40"}}));
  CHECK(r.ok);
  CHECK(sm.Get("a") == std::optional<std::string>("60"));
  CHECK(sm.Get("b") == std::optional<std::string>("40"));
  // Again (a retried init): no effect, not even on a changed balance.
  sm.Apply(2, kv::MakeTransfer("a", "b", 10));
  r = sm.Apply(3, kv::MakeMsetNx({{"a", "60"}, {"b", "40"}}));
  CHECK_FALSE(r.ok);
  CHECK(sm.Get("a") == std::optional<std::string>("50"));
  // One key present is enough to refuse all.
  r = sm.Apply(4, kv::MakeMsetNx({{"c", "1"}, {"b", "0"}}));
  CHECK_FALSE(r.ok);
  CHECK_FALSE(sm.Get("c"));
}

TEST_CASE("kv: transfer moves money only when funds suffice", "[kv][bank]") {
  kv::StateMachine sm;
  sm.Apply(1, kv::MakeMsetNx({{"a", "5"}, {"b", "0"}}));
  auto r = sm.Apply(2, kv::MakeTransfer("a", "b", 5));
  CHECK(r.ok);
  CHECK(sm.Get("a") == std::optional<std::string>("0"));
  CHECK(sm.Get("b") == std::optional<std::string>("5"));
  r = sm.Apply(3, kv::MakeTransfer("a", "b", 1));
  CHECK_FALSE(r.ok);
  CHECK(r.reason == kv::kInsufficientFunds);
  CHECK(sm.Get("b") == std::optional<std::string>("5"));
  // No account is created by a transfer, and bad amounts are refused.
  r = sm.Apply(4, kv::MakeTransfer("b", "nope", 1));
  CHECK_FALSE(r.ok);
  CHECK(r.reason != kv::kInsufficientFunds);
  CHECK_FALSE(sm.Get("nope"));
  CHECK_FALSE(sm.Apply(5, kv::MakeTransfer("b", "a", 0)).ok);
  CHECK_FALSE(sm.Apply(6, kv::MakeTransfer("b", "b", 1)).ok);
  CHECK(sm.Get("b") == std::optional<std::string>("5"));
}

TEST_CASE("kv: the new commands round-trip and survive a snapshot",
          "[kv][bank][counter]") {
  for (const kv::Command& c :
       {kv::MakeIncrBy("c", -42), kv::MakeTransfer("a", "b", 7),
        kv::MakeMsetNx({{"a", "1"}, {"b", "2"}})}) {
    auto d = kv::Decode(kv::Encode(c));
    REQUIRE(d);
    CHECK(*d == c);
    std::string bytes = kv::Encode(c);
    bytes.pop_back();
    CHECK_FALSE(kv::Decode(bytes));
  }
  // MSETNX holding a read micro-op does not decode.
  kv::Command bad = kv::MakeMsetNx({{"a", "1"}});
  bad.txn[0].kind = kv::TxnKind::kAppend;
  CHECK_FALSE(kv::Decode(kv::Encode(bad)));

  kv::StateMachine sm;
  sm.Apply(1, kv::MakeMsetNx({{"a", "3"}, {"b", "2"}}));
  sm.Apply(2, kv::MakeTransfer("a", "b", 2));
  sm.Apply(3, kv::MakeIncrBy("c", 9));
  kv::StateMachine copy;
  REQUIRE(copy.Restore(sm.Serialize(), 3));
  CHECK(copy.Get("a") == std::optional<std::string>("1"));
  CHECK(copy.Get("b") == std::optional<std::string>("4"));
  CHECK(copy.Get("c") == std::optional<std::string>("9"));
  CHECK(copy.Apply(4, kv::MakeTransfer("b", "a", 4)).ok);
}

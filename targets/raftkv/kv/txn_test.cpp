// Transactions (kTxn) and list values in the kv state machine: atomic
// application, typing rules, the codec, and snapshots that carry lists.
#include <catch2/catch.hpp>
#include <random>

#include "targets/raftkv/kv/bytes.h"
#include "targets/raftkv/kv/state_machine.h"

namespace kv = faultline::raftkv::kv;

namespace {

kv::TxnOp Append(std::string k, std::string v) {
  return {kv::TxnKind::kAppend, std::move(k), std::move(v)};
}
kv::TxnOp W(std::string k, std::string v) {
  return {kv::TxnKind::kWrite, std::move(k), std::move(v)};
}
kv::TxnOp R(std::string k) { return {kv::TxnKind::kRead, std::move(k), ""}; }

kv::Datum List(std::vector<std::string> l) {
  kv::Datum d;
  d.type = kv::Datum::Type::kList;
  d.list = std::move(l);
  return d;
}
kv::Datum Str(std::string s) {
  kv::Datum d;
  d.type = kv::Datum::Type::kString;
  d.str = std::move(s);
  return d;
}
const kv::Datum kAbsent{};

}  // namespace

TEST_CASE("kv txn: applied atomically; reads see earlier micro-ops",
          "[kv][txn]") {
  kv::StateMachine sm;
  auto r =
      sm.Apply(1, kv::MakeTxn({R("x"), Append("x", "1"), R("x"),
                               Append("x", "2"), W("y", "a"), R("y"), R("z")}));
  REQUIRE(r.ok);
  REQUIRE(r.txn.size() == 7);
  CHECK(r.txn[0] == kAbsent);
  CHECK(r.txn[1] == kAbsent);  // writes leave theirs absent
  CHECK(r.txn[2] == List({"1"}));
  CHECK(r.txn[5] == Str("a"));
  CHECK(r.txn[6] == kAbsent);
  CHECK(sm.applied() == 1);
  CHECK(sm.Lookup("x") == List({"1", "2"}));
  CHECK(sm.Get("y") == std::optional<std::string>("a"));
  CHECK_FALSE(sm.Get("x"));  // a list is not a string

  // A later transaction sees the whole earlier one.
  r = sm.Apply(2, kv::MakeTxn({Append("x", "3"), R("x"), R("y")}));
  REQUIRE(r.ok);
  CHECK(r.txn[1] == List({"1", "2", "3"}));
  CHECK(r.txn[2] == Str("a"));
}

TEST_CASE("kv txn: APPEND to a string refuses the whole transaction",
          "[kv][txn]") {
  kv::StateMachine sm;
  sm.Apply(1, kv::MakePut("s", "v"));
  const std::string before = sm.Serialize();
  auto r = sm.Apply(
      2, kv::MakeTxn({Append("x", "1"), W("y", "2"), Append("s", "3")}));
  CHECK_FALSE(r.ok);
  CHECK(r.reason.find("holds a string") != std::string::npos);
  CHECK(r.txn.empty());
  CHECK(sm.applied() == 2);
  CHECK(sm.Lookup("x") == kAbsent);
  CHECK(sm.Lookup("y") == kAbsent);
  // Only the applied index moved.
  kv::StateMachine same;
  REQUIRE(same.Restore(before, 1));
  same.set_applied(2);
  CHECK(same.Serialize() == sm.Serialize());

  // The type as earlier micro-ops leave it counts: W then APPEND refuses,
  // APPEND after W of another key is fine, W over a list replaces it.
  CHECK_FALSE(sm.Apply(3, kv::MakeTxn({W("n", "1"), Append("n", "2")})).ok);
  CHECK(sm.Lookup("n") == kAbsent);
  sm.Apply(4, kv::MakeTxn({Append("l", "1")}));
  r = sm.Apply(5, kv::MakeTxn({W("l", "s"), R("l")}));
  REQUIRE(r.ok);
  CHECK(r.txn[1] == Str("s"));
  CHECK(sm.lists().count("l") == 0);
}

TEST_CASE("kv txn: SET, DEL and CAS on list keys", "[kv][txn]") {
  kv::StateMachine sm;
  sm.Apply(1, kv::MakeTxn({Append("a", "1"), Append("b", "1"), Append("c", "1"),
                           Append("d", "1")}));
  CHECK(sm.Apply(2, kv::MakePut("a", "s")).ok);  // replaces the list
  CHECK(sm.Lookup("a") == Str("s"));
  auto del = sm.Apply(3, kv::MakeDelete("b"));
  CHECK(del.value.has_value());  // DEL -> :1
  CHECK(sm.Lookup("b") == kAbsent);
  CHECK_FALSE(sm.Apply(4, kv::MakeCas("c", "1", "x")).ok);
  CHECK(sm.Lookup("c") == List({"1"}));
  CHECK(sm.Apply(5, kv::MakeFencedPut("d", 1, "f")).ok);
  CHECK(sm.Lookup("d") == Str("f"));
  CHECK(sm.lists().size() == 1);  // only "c"
}

TEST_CASE("kv txn: codec round trip and malformed transactions",
          "[kv][txn][codec]") {
  kv::Command c = kv::MakeTxn({Append("k", "1"), R("k"), W("j", "")});
  auto d = kv::Decode(kv::Encode(c));
  REQUIRE(d);
  CHECK(*d == c);
  // The value of a read is not encoded: MakeTxn clears it.
  CHECK(kv::MakeTxn({{kv::TxnKind::kRead, "k", "ignored"}}) ==
        kv::MakeTxn({R("k")}));

  std::string good = kv::Encode(kv::MakeTxn({R("k")}));
  // [version][op=9][key ""][n=1][kind=3][key "k"]
  CHECK(good == std::string("\x01\x09\x00\x01\x03\x01k", 7));
  CHECK_FALSE(kv::Decode(std::string("\x01\x09\x00\x00", 4)));  // n = 0
  CHECK_FALSE(kv::Decode(std::string("\x01\x09\x00\x01\x04\x01k", 7)));
  CHECK_FALSE(kv::Decode(std::string("\x01\x09\x00\x02\x03\x01k", 7)));
  CHECK_FALSE(kv::Decode(good + "x"));
  for (std::size_t n = 0; n < good.size(); ++n)
    CHECK_FALSE(kv::Decode(good.substr(0, n)));
}

TEST_CASE("kv txn: snapshots carry lists; version 1 still restores",
          "[kv][txn][snapshot]") {
  kv::StateMachine sm;
  sm.Apply(1, kv::MakePut("s", "v"));
  sm.Apply(2,
           kv::MakeTxn({Append("l", "1"), Append("l", ""), Append("m", "x")}));
  const std::string snap = sm.Serialize();
  kv::StateMachine copy;
  REQUIRE(copy.Restore(snap, 2));
  CHECK(copy.lists() == sm.lists());
  CHECK(copy.Lookup("l") == List({"1", ""}));
  CHECK(copy.data() == sm.data());
  CHECK(copy.Serialize() == snap);
  // Truncations and bit flips are refused.
  for (std::size_t n = 0; n < snap.size(); ++n)
    CHECK_FALSE(kv::StateMachine().Restore(snap.substr(0, n), 2));
  for (std::size_t i = 0; i < snap.size(); ++i) {
    std::string bad = snap;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    CHECK_FALSE(kv::StateMachine().Restore(bad, 2));
  }

  // A version-1 snapshot (written before lists existed) is the version-2
  // body without the trailing list count.
  kv::StateMachine old;
  old.Apply(1, kv::MakePut("s", "v"));
  std::string v2 = old.Serialize();
  REQUIRE(v2.back() == '\0');  // n_lists = 0
  std::string body = v2.substr(13, v2.size() - 14);
  std::string v1 = "RKVS";
  v1.push_back('\x01');
  std::uint64_t sum = kv::bytes::Fnv1a64(body);
  for (int i = 0; i < 8; ++i)
    v1.push_back(static_cast<char>((sum >> (8 * i)) & 0xff));
  v1 += body;
  kv::StateMachine restored;
  REQUIRE(restored.Restore(v1, 1));
  CHECK(restored.Serialize() == v2);
  // Version 1 with a list table appended is trailing garbage.
  CHECK_FALSE(kv::StateMachine().Restore(v1 + std::string(1, '\0'), 1));
}

TEST_CASE("kv txn: randomized transactions; snapshot replicas agree",
          "[kv][txn][random]") {
  std::mt19937_64 rng(7);
  const std::vector<std::string> keys = {"a", "b", "c", "d"};
  for (int run = 0; run < 30; ++run) {
    std::vector<std::string> log;
    kv::StateMachine leader;
    for (std::uint64_t i = 1; i <= 200; ++i) {
      kv::Command c;
      if (rng() % 5 == 0) {
        c = kv::MakePut(keys[rng() % keys.size()], std::to_string(i));
      } else {
        std::vector<kv::TxnOp> ops(1 + rng() % 4);
        for (kv::TxnOp& t : ops) {
          t.key = keys[rng() % keys.size()];
          t.kind = static_cast<kv::TxnKind>(1 + rng() % 3);
          if (t.kind != kv::TxnKind::kRead) t.value = std::to_string(i);
        }
        c = kv::MakeTxn(std::move(ops));
      }
      log.push_back(kv::Encode(c));
      auto d = kv::Decode(log.back());
      REQUIRE(d);
      auto r = leader.Apply(i, *d);
      if (c.op == kv::Op::kTxn && r.ok) CHECK(r.txn.size() == c.txn.size());
      for (const auto& [k, l] : leader.lists())
        CHECK(leader.data().count(k) == 0);
    }
    std::uint64_t cut = rng() % log.size();
    kv::StateMachine early;
    for (std::uint64_t i = 1; i <= cut; ++i)
      early.Apply(i, *kv::Decode(log[i - 1]));
    kv::StateMachine replica;
    REQUIRE(replica.Restore(early.Serialize(), cut));
    for (std::uint64_t i = cut + 1; i <= log.size(); ++i)
      replica.Apply(i, *kv::Decode(log[i - 1]));
    CHECK(replica.Serialize() == leader.Serialize());
  }
}

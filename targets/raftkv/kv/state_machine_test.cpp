#include "targets/raftkv/kv/state_machine.h"

#include <catch2/catch.hpp>
#include <random>

namespace kv = faultline::raftkv::kv;

TEST_CASE("kv: put, get, delete report the previous value", "[kv]") {
  kv::StateMachine sm;
  CHECK_FALSE(sm.Get("a"));
  auto r = sm.Apply(1, kv::MakePut("a", "1"));
  CHECK(r.ok);
  CHECK_FALSE(r.value);
  r = sm.Apply(2, kv::MakePut("a", "2"));
  CHECK(r.ok);
  CHECK(r.value == std::optional<std::string>("1"));
  CHECK(sm.Get("a") == std::optional<std::string>("2"));
  r = sm.Apply(3, kv::MakeDelete("a"));
  CHECK(r.ok);
  CHECK(r.value == std::optional<std::string>("2"));  // DEL -> :1
  CHECK_FALSE(sm.Get("a"));
  r = sm.Apply(4, kv::MakeDelete("a"));
  CHECK(r.ok);
  CHECK_FALSE(r.value);  // DEL -> :0
  CHECK(sm.applied() == 4);
}

TEST_CASE("kv: cas swaps only a present, equal value", "[kv]") {
  kv::StateMachine sm;
  auto r = sm.Apply(1, kv::MakeCas("k", "", "x"));
  CHECK_FALSE(r.ok);  // absent key never matches, even ""
  CHECK_FALSE(sm.Get("k"));
  sm.Apply(2, kv::MakePut("k", "a"));
  r = sm.Apply(3, kv::MakeCas("k", "b", "c"));
  CHECK_FALSE(r.ok);
  CHECK(r.value == std::optional<std::string>("a"));
  CHECK(sm.Get("k") == std::optional<std::string>("a"));
  r = sm.Apply(4, kv::MakeCas("k", "a", "c"));
  CHECK(r.ok);
  CHECK(sm.Get("k") == std::optional<std::string>("c"));
}

TEST_CASE("kv: acquire grants the entry index as token", "[kv][lock]") {
  kv::StateMachine sm;
  auto r = sm.Apply(7, kv::MakeAcquire("L", "alice", 1000));
  REQUIRE(r.ok);
  CHECK(r.token == 7);
  REQUIRE(sm.locks().count("L") == 1);
  CHECK(sm.locks().at("L") == kv::LockState{"alice", 7, 1000, 7});

  // Another owner is refused and told who holds it.
  r = sm.Apply(8, kv::MakeAcquire("L", "bob", 1000));
  CHECK_FALSE(r.ok);
  CHECK(r.holder == "alice");
  CHECK(sm.locks().at("L").token == 7);

  // The same owner gets its token back and a refreshed lease.
  r = sm.Apply(9, kv::MakeAcquire("L", "alice", 3000));
  CHECK(r.ok);
  CHECK(r.token == 7);
  CHECK(sm.locks().at("L") == kv::LockState{"alice", 7, 3000, 9});

  // After release, a new acquire gets a larger token.
  CHECK(sm.Apply(10, kv::MakeRelease("L", "alice", 7)).ok);
  CHECK(sm.locks().empty());
  r = sm.Apply(11, kv::MakeAcquire("L", "bob", 1000));
  CHECK(r.ok);
  CHECK(r.token == 11);
}

TEST_CASE("kv: acquire uses a nonzero token hint as is (unsafe)",
          "[kv][lock]") {
  kv::StateMachine sm;
  auto r = sm.Apply(20, kv::MakeAcquire("L", "a", 100, /*token_hint=*/3));
  CHECK(r.ok);
  CHECK(r.token == 3);
  CHECK(sm.locks().at("L").generation == 20);
}

TEST_CASE("kv: bad ttl is refused", "[kv][lock]") {
  kv::StateMachine sm;
  CHECK_FALSE(sm.Apply(1, kv::MakeAcquire("L", "a", 0)).ok);
  CHECK_FALSE(sm.Apply(2, kv::MakeAcquire("L", "a", -5)).ok);
  CHECK(sm.locks().empty());
  REQUIRE(sm.Apply(3, kv::MakeAcquire("L", "a", 10)).ok);
  CHECK_FALSE(sm.Apply(4, kv::MakeRenew("L", "a", 3, 0)).ok);
  CHECK(sm.locks().at("L").ttl_ms == 10);
}

TEST_CASE("kv: renew and release only by the owner with its token",
          "[kv][lock]") {
  kv::StateMachine sm;
  REQUIRE(sm.Apply(1, kv::MakeAcquire("L", "a", 100)).ok);
  auto r = sm.Apply(2, kv::MakeRenew("L", "b", 1, 500));
  CHECK_FALSE(r.ok);
  CHECK(r.holder == "a");
  CHECK_FALSE(sm.Apply(3, kv::MakeRenew("L", "a", 99, 500)).ok);
  CHECK(sm.locks().at("L") == kv::LockState{"a", 1, 100, 1});
  r = sm.Apply(4, kv::MakeRenew("L", "a", 1, 500));
  CHECK(r.ok);
  CHECK(r.token == 1);
  CHECK(sm.locks().at("L") == kv::LockState{"a", 1, 500, 4});

  CHECK_FALSE(sm.Apply(5, kv::MakeRelease("L", "b", 1)).ok);
  CHECK_FALSE(sm.Apply(6, kv::MakeRelease("L", "a", 2)).ok);
  CHECK(sm.locks().count("L") == 1);
  CHECK(sm.Apply(7, kv::MakeRelease("L", "a", 1)).ok);
  CHECK(sm.locks().empty());
  CHECK_FALSE(sm.Apply(8, kv::MakeRelease("L", "a", 1)).ok);
  CHECK_FALSE(sm.Apply(9, kv::MakeRenew("L", "a", 1, 100)).ok);
}

TEST_CASE("kv: expire releases only the lease generation it names",
          "[kv][lock]") {
  kv::StateMachine sm;
  REQUIRE(sm.Apply(1, kv::MakeAcquire("L", "a", 100)).ok);
  // The leader's timer fired for (token 1, generation 1) and proposed an
  // expire; meanwhile the owner's renew was ordered first.
  kv::Command stale = kv::MakeExpire("L", 1, 1);
  REQUIRE(sm.Apply(2, kv::MakeRenew("L", "a", 1, 100)).ok);
  auto r = sm.Apply(3, stale);
  CHECK_FALSE(r.ok);
  CHECK(sm.locks().count("L") == 1);  // the renewal wins
  // Same with a re-acquire by the owner.
  REQUIRE(sm.Apply(4, kv::MakeAcquire("L", "a", 100)).ok);
  CHECK_FALSE(sm.Apply(5, kv::MakeExpire("L", 1, 2)).ok);
  CHECK(sm.locks().count("L") == 1);
  // The current generation expires it.
  r = sm.Apply(6, kv::MakeExpire("L", 1, 4));
  CHECK(r.ok);
  CHECK(r.holder == "a");
  CHECK(sm.locks().empty());
  // A duplicate expire (a retried proposal) is a no-op.
  CHECK_FALSE(sm.Apply(7, kv::MakeExpire("L", 1, 4)).ok);
}

TEST_CASE("kv: expire of an old holder cannot free a new holder's lock",
          "[kv][lock]") {
  kv::StateMachine sm;
  // Unsafe hints can repeat a token; the generation still tells apart.
  REQUIRE(sm.Apply(1, kv::MakeAcquire("L", "a", 100, 5)).ok);
  REQUIRE(sm.Apply(2, kv::MakeRelease("L", "a", 5)).ok);
  REQUIRE(sm.Apply(3, kv::MakeAcquire("L", "b", 100, 5)).ok);
  CHECK_FALSE(sm.Apply(4, kv::MakeExpire("L", 5, 1)).ok);
  CHECK(sm.locks().at("L").owner == "b");
}

TEST_CASE("kv: fenced put applies iff token >= highest seen", "[kv][fence]") {
  kv::StateMachine sm;
  CHECK(sm.fence("r") == 0);
  auto r = sm.Apply(1, kv::MakeFencedPut("r", 5, "v5"));
  CHECK(r.ok);
  CHECK(sm.fence("r") == 5);
  r = sm.Apply(2, kv::MakeFencedPut("r", 5, "v5b"));  // equal: applies
  CHECK(r.ok);
  CHECK(sm.Get("r") == std::optional<std::string>("v5b"));
  r = sm.Apply(3, kv::MakeFencedPut("r", 4, "v4"));
  CHECK_FALSE(r.ok);
  CHECK(r.highest_token == 5);
  CHECK(sm.Get("r") == std::optional<std::string>("v5b"));
  r = sm.Apply(4, kv::MakeFencedPut("r", 9, "v9"));
  CHECK(r.ok);
  CHECK(sm.fence("r") == 9);
  // Delete does not reset the fence.
  sm.Apply(5, kv::MakeDelete("r"));
  CHECK_FALSE(sm.Apply(6, kv::MakeFencedPut("r", 8, "v8")).ok);
  CHECK_FALSE(sm.Get("r"));
  // Fences are per key.
  CHECK(sm.Apply(7, kv::MakeFencedPut("other", 1, "x")).ok);
}

TEST_CASE("kv: set_applied advances for no-op entries", "[kv]") {
  kv::StateMachine sm;
  sm.set_applied(3);
  CHECK(sm.Apply(4, kv::MakeAcquire("L", "a", 1)).token == 4);
}

namespace {

kv::StateMachine Populated() {
  kv::StateMachine sm;
  std::uint64_t i = 0;
  sm.Apply(++i, kv::MakePut("a", "1"));
  sm.Apply(++i, kv::MakePut(std::string("bin\0key", 7), std::string(300, 'x')));
  sm.Apply(++i, kv::MakePut("empty", ""));
  sm.Apply(++i, kv::MakeAcquire("L1", "alice", 1000));
  sm.Apply(++i, kv::MakeAcquire("L2", "bob", 123456789));
  sm.Apply(++i, kv::MakeRenew("L1", "alice", 4, 2000));
  sm.Apply(++i, kv::MakeFencedPut("res", 4, "protected"));
  sm.Apply(++i, kv::MakeFencedPut("res2", 1ull << 62, "big"));
  sm.set_applied(10);
  return sm;
}

void ExpectSame(const kv::StateMachine& a, const kv::StateMachine& b) {
  CHECK(a.data() == b.data());
  CHECK(a.locks() == b.locks());
  CHECK(a.fence("res") == b.fence("res"));
  CHECK(a.fence("res2") == b.fence("res2"));
  CHECK(a.applied() == b.applied());
  CHECK(a.Serialize() == b.Serialize());
}

}  // namespace

TEST_CASE("kv: serialize/restore round trip", "[kv][snapshot]") {
  kv::StateMachine sm = Populated();
  std::string snap = sm.Serialize();
  kv::StateMachine copy;
  REQUIRE(copy.Restore(snap, 10));
  ExpectSame(sm, copy);
  CHECK(copy.fence("res") == 4);
  // The restored machine continues identically.
  auto r1 = sm.Apply(11, kv::MakeFencedPut("res", 3, "x"));
  auto r2 = copy.Apply(11, kv::MakeFencedPut("res", 3, "x"));
  CHECK_FALSE(r1.ok);
  CHECK_FALSE(r2.ok);
  CHECK(sm.Apply(12, kv::MakeExpire("L1", 4, 6)).ok);
  CHECK(copy.Apply(12, kv::MakeExpire("L1", 4, 6)).ok);
  ExpectSame(sm, copy);

  kv::StateMachine empty;
  kv::StateMachine empty2;
  REQUIRE(empty2.Restore(empty.Serialize(), 0));
  ExpectSame(empty, empty2);
}

TEST_CASE("kv: restore refuses a mismatched index or a rollback",
          "[kv][snapshot]") {
  kv::StateMachine sm = Populated();
  std::string snap = sm.Serialize();
  kv::StateMachine other;
  CHECK_FALSE(other.Restore(snap, 9));
  CHECK_FALSE(other.Restore(snap, 11));
  other.set_applied(20);
  CHECK_FALSE(other.Restore(snap, 10));
  CHECK(other.applied() == 20);
}

TEST_CASE("kv: restore rejects garbage and leaves the state untouched",
          "[kv][snapshot]") {
  kv::StateMachine sm = Populated();
  const std::string snap = sm.Serialize();
  kv::StateMachine target;
  target.Apply(1, kv::MakePut("keep", "me"));
  const std::string before = target.Serialize();

  // Every truncation.
  for (std::size_t n = 0; n < snap.size(); ++n) {
    CHECK_FALSE(target.Restore(snap.substr(0, n), 10));
  }
  // Trailing bytes.
  CHECK_FALSE(target.Restore(snap + "x", 10));
  // Every single-byte corruption (bit flips) is refused.
  for (std::size_t i = 0; i < snap.size(); ++i) {
    std::string bad = snap;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    CHECK_FALSE(target.Restore(bad, 10));
  }
  // Random garbage, with and without a valid header.
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; ++i) {
    std::string g(rng() % 64, '\0');
    for (char& c : g) c = static_cast<char>(rng());
    if (i % 2 == 0) g = snap.substr(0, 13) + g;
    CHECK_FALSE(target.Restore(g, 10));
  }
  CHECK(target.Serialize() == before);
}

TEST_CASE("kv: randomized log: replicas agree, tokens and fences only grow",
          "[kv][random]") {
  std::mt19937_64 rng(12345);
  const std::vector<std::string> keys = {"a", "b", "c"};
  const std::vector<std::string> owners = {"o1", "o2", "o3"};
  for (int run = 0; run < 50; ++run) {
    std::vector<std::string> log;  // encoded commands, entry i+1
    kv::StateMachine leader;
    std::uint64_t last_fresh_token = 0;
    std::map<std::string, std::uint64_t> last_fence;
    auto pick = [&](const std::vector<std::string>& v) {
      return v[rng() % v.size()];
    };
    for (std::uint64_t i = 1; i <= 300; ++i) {
      kv::Command c;
      const auto& locks = leader.locks();
      switch (rng() % 8) {
        case 0:
          c = kv::MakePut(pick(keys), std::to_string(i));
          break;
        case 1:
          c = kv::MakeDelete(pick(keys));
          break;
        case 2:
          c = kv::MakeCas(pick(keys), std::to_string(rng() % i), "x");
          break;
        case 3:
          c = kv::MakeAcquire(pick(keys), pick(owners), 1 + rng() % 100);
          break;
        case 4:
        case 5:
        case 6: {
          // Renew/release/expire, mostly with the right token/generation.
          std::string name = pick(keys);
          auto it = locks.find(name);
          std::uint64_t tok =
              it != locks.end() && rng() % 4 ? it->second.token : rng() % i;
          std::uint64_t gen = it != locks.end() && rng() % 4
                                  ? it->second.generation
                                  : rng() % i;
          std::string owner =
              it != locks.end() && rng() % 4 ? it->second.owner : pick(owners);
          int op = static_cast<int>(rng() % 3);
          c = op == 0   ? kv::MakeRenew(name, owner, tok, 1 + rng() % 100)
              : op == 1 ? kv::MakeRelease(name, owner, tok)
                        : kv::MakeExpire(name, tok, gen);
          break;
        }
        default:
          c = kv::MakeFencedPut(pick(keys), rng() % (i + 1), "f");
          break;
      }
      bool held_before = locks.count(c.key) == 1;
      log.push_back(kv::Encode(c));
      auto r = leader.Apply(i, *kv::Decode(log.back()));
      if (c.op == kv::Op::kAcquire && r.ok && !held_before) {
        CHECK(r.token > last_fresh_token);
        last_fresh_token = r.token;
      }
      for (const auto& k : keys) {
        CHECK(leader.fence(k) >= last_fence[k]);
        last_fence[k] = leader.fence(k);
      }
    }
    // A replica that restores a snapshot taken at a random point and
    // applies the rest reaches the same state.
    std::uint64_t cut = rng() % log.size();
    kv::StateMachine early;
    for (std::uint64_t i = 1; i <= cut; ++i)
      early.Apply(i, *kv::Decode(log[i - 1]));
    kv::StateMachine replica;
    REQUIRE(replica.Restore(early.Serialize(), cut));
    for (std::uint64_t i = cut + 1; i <= log.size(); ++i) {
      replica.Apply(i, *kv::Decode(log[i - 1]));
    }
    CHECK(replica.Serialize() == leader.Serialize());
  }
}

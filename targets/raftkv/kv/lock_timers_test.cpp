#include "targets/raftkv/kv/lock_timers.h"

#include <catch2/catch.hpp>

namespace kv = faultline::raftkv::kv;

namespace {

constexpr kv::Nanos kMs = 1'000'000;

kv::LockState Lock(std::string owner, std::uint64_t token, std::int64_t ttl,
                   std::uint64_t gen) {
  return kv::LockState{std::move(owner), token, ttl, gen};
}

}  // namespace

TEST_CASE("lock timers: a new leader re-arms every lock in full",
          "[kv][timers]") {
  kv::StateMachine sm;
  sm.Apply(1, kv::MakeAcquire("A", "a", 1000));
  sm.Apply(2, kv::MakeAcquire("B", "b", 50));
  kv::LockTimers t;
  CHECK_FALSE(t.leading());
  // Whatever the old leader's timers said, the new leader starts from now:
  // the lock acquired long ago still gets its whole TTL.
  const kv::Nanos now = 777 * kMs;
  t.OnBecomeLeader(sm.locks(), now);
  CHECK(t.leading());
  CHECK(t.deadline("A") == now + 1000 * kMs);
  CHECK(t.deadline("B") == now + 50 * kMs);
  CHECK(t.NextWakeup() == now + 50 * kMs);
  CHECK(t.Due(now + 50 * kMs - 1).empty());
  CHECK(t.Due(now + 50 * kMs) == std::vector<kv::DueExpiry>{{"B", 2, 2}});
}

TEST_CASE("lock timers: one expire per lease, retried only after a timeout",
          "[kv][timers]") {
  kv::LockTimers::Options o;
  o.expire_retry = 200 * kMs;
  kv::LockTimers t(o);
  t.OnBecomeLeader({}, 0);
  t.OnApplied("L", Lock("a", 5, 100, 5), 10 * kMs);
  CHECK(t.deadline("L") == 110 * kMs);
  auto due = t.Due(110 * kMs);
  REQUIRE(due.size() == 1);
  CHECK(due[0] == kv::DueExpiry{"L", 5, 5});
  // In flight: no duplicate on every tick.
  for (kv::Nanos now = 111 * kMs; now < 310 * kMs; now += kMs) {
    CHECK(t.Due(now).empty());
  }
  CHECK(t.NextWakeup() == 310 * kMs);
  // The proposal was lost: proposed again once, then in flight again.
  CHECK(t.Due(310 * kMs).size() == 1);
  CHECK(t.Due(311 * kMs).empty());
  // The expire applied: the lock is free and forgotten.
  t.OnApplied("L", std::nullopt, 320 * kMs);
  CHECK(t.size() == 0);
  CHECK_FALSE(t.NextWakeup());
  CHECK(t.Due(10'000 * kMs).empty());
}

TEST_CASE("lock timers: renew re-arms in full and ends the in-flight expire",
          "[kv][timers]") {
  kv::LockTimers t;
  t.OnBecomeLeader({}, 0);
  t.OnApplied("L", Lock("a", 5, 100, 5), 0);
  REQUIRE(t.Due(100 * kMs).size() == 1);
  // The owner's renew (generation 9) applies before the expire: re-armed
  // from the apply time, not from the old deadline.
  t.OnApplied("L", Lock("a", 5, 300, 9), 150 * kMs);
  CHECK(t.deadline("L") == 450 * kMs);
  CHECK(t.Due(449 * kMs).empty());
  CHECK(t.Due(450 * kMs) == std::vector<kv::DueExpiry>{{"L", 5, 9}});
}

TEST_CASE("lock timers: refused commands do not extend a lease",
          "[kv][timers]") {
  kv::StateMachine sm;
  kv::LockTimers t;
  t.OnBecomeLeader(sm.locks(), 0);
  auto apply = [&](std::uint64_t i, const kv::Command& c, kv::Nanos now) {
    sm.Apply(i, c);
    auto it = sm.locks().find(c.key);
    t.OnApplied(c.key,
                it == sm.locks().end()
                    ? std::nullopt
                    : std::optional<kv::LockState>(it->second),
                now);
  };
  apply(1, kv::MakeAcquire("L", "a", 100), 0);
  CHECK(t.deadline("L") == 100 * kMs);
  // A competitor keeps trying: the holder's deadline does not move.
  for (std::uint64_t i = 2; i < 10; ++i) {
    apply(i, kv::MakeAcquire("L", "b", 100), static_cast<kv::Nanos>(i) * kMs);
  }
  apply(10, kv::MakeRenew("L", "b", 1, 100), 20 * kMs);
  CHECK(t.deadline("L") == 100 * kMs);
  // The expire the timer asks for is accepted by the state machine.
  auto due = t.Due(100 * kMs);
  REQUIRE(due.size() == 1);
  apply(11, kv::MakeExpire(due[0].name, due[0].token, due[0].generation),
        101 * kMs);
  CHECK(sm.locks().empty());
  CHECK(t.size() == 0);
}

TEST_CASE("lock timers: a stale expire loses to a renewal end to end",
          "[kv][timers]") {
  kv::StateMachine sm;
  kv::LockTimers t;
  t.OnBecomeLeader(sm.locks(), 0);
  sm.Apply(1, kv::MakeAcquire("L", "a", 100));
  t.OnApplied("L", sm.locks().at("L"), 0);
  auto due = t.Due(100 * kMs);
  REQUIRE(due.size() == 1);
  kv::Command expire =
      kv::MakeExpire(due[0].name, due[0].token, due[0].generation);
  // Log order: renew (index 2), then the expire (index 3).
  REQUIRE(sm.Apply(2, kv::MakeRenew("L", "a", 1, 100)).ok);
  t.OnApplied("L", sm.locks().at("L"), 101 * kMs);
  CHECK_FALSE(sm.Apply(3, expire).ok);
  t.OnApplied("L", sm.locks().at("L"), 102 * kMs);
  CHECK(sm.locks().count("L") == 1);
  CHECK(t.deadline("L") == 201 * kMs);
  CHECK(t.Due(200 * kMs).empty());
  CHECK(t.Due(201 * kMs) == std::vector<kv::DueExpiry>{{"L", 1, 2}});
}

TEST_CASE("lock timers: only the leader keeps timers", "[kv][timers]") {
  kv::LockTimers t;
  t.OnApplied("L", Lock("a", 1, 10, 1), 0);  // follower: ignored
  CHECK(t.size() == 0);
  t.OnBecomeLeader({{"L", Lock("a", 1, 10, 1)}}, 0);
  t.OnApplied("M", Lock("b", 2, 10, 2), 0);
  CHECK(t.size() == 2);
  t.OnLoseLeadership();
  CHECK_FALSE(t.leading());
  CHECK(t.size() == 0);
  CHECK(t.Due(1'000'000 * kMs).empty());
  // Leading again: re-armed in full from the new term's start, and an
  // expire in flight in the earlier term is forgotten.
  t.OnBecomeLeader({{"L", Lock("a", 1, 10, 1)}}, 500 * kMs);
  CHECK(t.deadline("L") == 510 * kMs);
}

TEST_CASE("lock timers: drift margin and saturation", "[kv][timers]") {
  kv::LockTimers::Options o;
  o.drift_epsilon = 0.001;
  o.guard = 5 * kMs;
  kv::LockTimers t(o);
  t.OnBecomeLeader({}, 0);
  t.OnApplied("L", Lock("a", 1, 1000, 1), 0);
  // 1000 * 1.001 + 5 ms, rounded up (never earlier).
  REQUIRE(t.deadline("L"));
  CHECK(*t.deadline("L") >= 1006 * kMs);
  CHECK(*t.deadline("L") <= 1006 * kMs + 1);
  t.OnApplied("H", Lock("a", 2, std::numeric_limits<std::int64_t>::max(), 2),
              10);
  CHECK(t.deadline("H") == std::numeric_limits<kv::Nanos>::max());
  CHECK(t.Due(std::numeric_limits<kv::Nanos>::max() - 1).size() == 1);
}

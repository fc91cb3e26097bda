// Lease timers for the lock service, kept by the leader only. Pure: the
// caller passes its monotonic time (`Nanos`, the same clock as
// raft::Nanos) and proposes the expiries this returns; nothing here reads a
// clock or touches the log.
//
// Rules:
//  - A lease is armed for (token, generation) with deadline = now + ttl
//    (+ Options margins) when the leader applies the entry that granted or
//    refreshed it (OnApplied). A client's own lease timer started when it
//    *sent* the request, before the leader applied it, so the leader's
//    deadline is never earlier than the client's.
//  - A new leader cannot know when the old leader armed its timers, so it
//    re-arms every held lock in full: now + ttl (OnBecomeLeader).
//  - Due(now) returns each lease whose deadline passed and that has no
//    expire in flight, and marks it in flight. The expire is retried (Due
//    returns it again) only after Options::expire_retry passed with no
//    news, in case that proposal was lost (dropped by a leader change,
//    never committed). So the log gets one kExpire per lease, not one per
//    tick.
//  - Applying the expire (lock released), a release, a renew or a
//    re-acquire is reported through OnApplied and replaces the entry.
//
// Usage in the driver: call OnApplied after applying every lock command
// (kAcquire, kRenew, kRelease, kExpire, granted or refused) and after
// restoring a snapshot call OnBecomeLeader again if leading; it is a no-op
// while not leading. Propose MakeExpire(d.name, d.token, d.generation) for
// each DueExpiry.
//
// Thread-safety: none; the server's single loop owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/kv/state_machine.h"

namespace faultline::raftkv::kv {

using Nanos = std::int64_t;  // node-local monotonic nanoseconds

struct DueExpiry {
  std::string name;
  std::uint64_t token = 0;
  std::uint64_t generation = 0;
  bool operator==(const DueExpiry&) const = default;
};

class LockTimers {
 public:
  struct Options {
    // An expire proposed this long ago with no outcome is proposed again.
    Nanos expire_retry = 1'000'000'000;
    // Safety margin against this node's clock running fast: deadline =
    // now + ttl * (1 + drift_epsilon) + guard. Defaults: none, so the
    // deadline is exactly now + ttl.
    double drift_epsilon = 0;
    Nanos guard = 0;
  };

  LockTimers() = default;
  explicit LockTimers(Options o) : opts_(o) {}

  // This node became leader at `now`: arms every lock in `locks` (the
  // state machine's table) in full, forgetting anything older.
  void OnBecomeLeader(const std::map<std::string, LockState>& locks, Nanos now);
  // This node is no longer leader: forgets every timer.
  void OnLoseLeadership();
  bool leading() const { return leading_; }

  // The state of lock `name` right after the leader applied a command on
  // it (nullopt: the lock is free). Re-arms deadline = now + ttl iff the
  // lease is new or was refreshed (its token or generation differs from
  // what is armed); a refused command on a held lock changes nothing, so
  // a competitor's failing acquires do not extend the holder's lease.
  // Ignored while not leading.
  void OnApplied(const std::string& name, const std::optional<LockState>& s,
                 Nanos now);

  // Leases to expire now (see the rules above). Marks them in flight.
  std::vector<DueExpiry> Due(Nanos now);

  // The earliest time Due may return something (a deadline or a retry);
  // nullopt if nothing is armed. For the driver's wait timeout.
  std::optional<Nanos> NextWakeup() const;

  // Armed deadline of `name` (tests, STATUS); nullopt if not armed.
  std::optional<Nanos> deadline(const std::string& name) const;
  std::size_t size() const { return timers_.size(); }

 private:
  struct Timer {
    std::uint64_t token = 0;
    std::uint64_t generation = 0;
    Nanos deadline = 0;
    std::optional<Nanos> retry_at;  // set while an expire is in flight
  };
  Nanos Deadline(std::int64_t ttl_ms, Nanos now) const;

  Options opts_;
  bool leading_ = false;
  std::map<std::string, Timer> timers_;
};

}  // namespace faultline::raftkv::kv

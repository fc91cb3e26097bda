// The lock workload (docs/history-locks.md): each worker repeatedly acquires
// one of `locks` named locks with a TTL lease, makes `writes_per_hold`
// writes to that lock's protected resource carrying its fencing token, and
// releases. Before one of the writes of a hold it may stall (probability
// stall_probability, stall_ms long): a stall longer than ttl_ms is the
// paused holder of the seeds, whose lease expires while it sleeps.
//
// The protected resource lives in the controller (ProtectedResource, one per
// lock, named "<lock>-resource"): fenced, it rejects a write whose token is
// lower than the highest it has accepted (`fail`, error "fenced"); unfenced,
// it accepts everything. Every write is in the history as `resource-write`
// with value [token, value] (token null when unfenced) and extra fields
// "fenced" and "lock".
//
// Split of duties: the generator is pure and seeded; it emits acquire, the
// writes (each with its delay) and release. The client wrapper
// (Workload::WrapClient) keeps the per-process state: the lock held and its
// token. It skips writes and the release of a hold it does not have (the
// acquire failed), fills in the token, serves resource writes itself and
// passes acquire/release to the target's client with this vocabulary:
//   acquire  key = lock name, value = ttl_ms (int)  -> ok value = token (int)
//                                                      or null
//   renew    key = lock name, value = token         -> ok / fail (lost)
//   release  key = lock name, value = token         -> ok / fail (not held)
// Checked by mutex-fencing (checkers/mutex_fencing.h) and stats.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/config/spec.h"
#include "harness/interfaces/workload.h"

namespace faultline::workloads {

// A register guarded by fencing tokens. Thread-safe.
class ProtectedResource {
 public:
  explicit ProtectedResource(bool fenced) : fenced_(fenced) {}

  struct WriteResult {
    bool accepted = false;
    std::optional<std::int64_t> highest;  // highest token accepted before
  };
  // Fenced: accepts iff `token` is present and >= every token accepted so
  // far. Unfenced: accepts everything. An accepted write replaces the value.
  WriteResult Write(std::optional<std::int64_t> token, std::int64_t value);

  bool fenced() const { return fenced_; }
  std::optional<std::int64_t> value() const;
  std::optional<std::int64_t> highest() const;
  std::int64_t accepted() const;
  std::int64_t rejected() const;

 private:
  const bool fenced_;
  mutable std::mutex mu_;
  std::optional<std::int64_t> value_;
  std::optional<std::int64_t> highest_;
  std::int64_t accepted_ = 0;
  std::int64_t rejected_ = 0;
};

// Lock names are "lock0".."lock<locks-1>"; resources "<lock>-resource".
std::string LockName(int i);
std::string ResourceName(const std::string& lock);

// ---- Pieces shared by the lock and election workloads ----

// Resources by name ("<lock>-resource"), shared by every client of a run.
// Fixed after construction; each resource is thread-safe.
using Resources = std::map<std::string, std::unique_ptr<ProtectedResource>>;
Resources MakeResources(const std::vector<std::string>& locks, bool fenced);

// How holds appear in the history: the lock workload records
// acquire/release, the election workload campaign/resign. The target's
// client always gets acquire/renew/release.
struct HoldWords {
  std::string take = "acquire";
  std::string give = "release";
};

// What one worker does, hold after hold: take one of `names` (chosen
// uniformly), make spec.writes_per_hold resource writes spread over
// spec.hold_ms, give it back. With `renew_before_writes` each write is
// preceded by a renew (a candidate checks that it still leads; a stall
// then falls between the renew and the write, where a paused leader does
// its damage); without it the stall delays the write itself.
struct HoldPlan {
  std::vector<std::string> names;
  HoldWords words;
  bool renew_before_writes = false;
};

// The generated (not yet recorded) operations: take (value null), renew and
// give (value {"delay_ms"}), resource-write (key "<name>-resource", value
// {"value", "delay_ms"}; values unique per run: n * concurrency + worker +
// 1). Pure and seeded.
std::unique_ptr<harness::WorkerGenerator> MakeHoldGenerator(
    const harness::WorkloadSpec& spec, HoldPlan plan, int worker,
    std::uint64_t seed);

// The stateful wrapper of a target client (see the top of this file): it
// keeps the hold (name, token), skips writes/renews/gives without a hold,
// fills in tokens, serves resource writes from `resources` and maps `words`
// onto the target's acquire (value = ttl_ms) and release. A renew or give
// that fails ends the hold (a deposed leader stops writing). `resources`
// must outlive the client.
std::unique_ptr<harness::StatefulClient> MakeHoldClient(
    std::unique_ptr<harness::Client> inner, const Resources* resources,
    int ttl_ms, HoldWords words);

std::unique_ptr<harness::Workload> MakeLockWorkload(
    const harness::WorkloadSpec& spec);

}  // namespace faultline::workloads

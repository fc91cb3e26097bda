#include "targets/raftkv/kv/lock_timers.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace faultline::raftkv::kv {
namespace {

Nanos SaturatingAdd(Nanos a, Nanos b) {
  Nanos out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<Nanos>::max()
                 : std::numeric_limits<Nanos>::min();
  }
  return out;
}

}  // namespace

Nanos LockTimers::Deadline(std::int64_t ttl_ms, Nanos now) const {
  // Saturating: a huge TTL means "practically never", not an overflow.
  constexpr Nanos kMax = std::numeric_limits<Nanos>::max();
  double ttl_ns = static_cast<double>(std::max<std::int64_t>(ttl_ms, 0)) * 1e6 *
                  (1.0 + opts_.drift_epsilon);
  double d = static_cast<double>(now) + ttl_ns +
             static_cast<double>(std::max<Nanos>(opts_.guard, 0));
  if (d >= static_cast<double>(kMax)) return kMax;
  Nanos exact = now + std::max<std::int64_t>(ttl_ms, 0) * 1'000'000;
  // Without margins keep integer precision (deadline == now + ttl exactly).
  if (opts_.drift_epsilon == 0 && opts_.guard <= 0) return exact;
  return static_cast<Nanos>(std::ceil(d));  // round the safe way: later
}

void LockTimers::OnBecomeLeader(const std::map<std::string, LockState>& locks,
                                Nanos now) {
  leading_ = true;
  timers_.clear();
  for (const auto& [name, l] : locks) {
    timers_[name] = Timer{l.token, l.generation, Deadline(l.ttl_ms, now), {}};
  }
}

void LockTimers::OnLoseLeadership() {
  leading_ = false;
  timers_.clear();
}

void LockTimers::OnApplied(const std::string& name,
                           const std::optional<LockState>& s, Nanos now) {
  if (!leading_) return;
  if (!s) {
    timers_.erase(name);
    return;
  }
  auto it = timers_.find(name);
  if (it != timers_.end() && it->second.token == s->token &&
      it->second.generation == s->generation) {
    return;  // refused command on a lease that is already armed
  }
  timers_[name] = Timer{s->token, s->generation, Deadline(s->ttl_ms, now), {}};
}

std::vector<DueExpiry> LockTimers::Due(Nanos now) {
  std::vector<DueExpiry> out;
  for (auto& [name, t] : timers_) {
    if (now < t.deadline) continue;
    if (t.retry_at && now < *t.retry_at) continue;
    t.retry_at = SaturatingAdd(now, opts_.expire_retry);
    out.push_back(DueExpiry{name, t.token, t.generation});
  }
  return out;
}

std::optional<Nanos> LockTimers::NextWakeup() const {
  std::optional<Nanos> best;
  for (const auto& [name, t] : timers_) {
    Nanos at = t.retry_at ? std::max(t.deadline, *t.retry_at) : t.deadline;
    if (!best || at < *best) best = at;
  }
  return best;
}

std::optional<Nanos> LockTimers::deadline(const std::string& name) const {
  auto it = timers_.find(name);
  if (it == timers_.end()) return std::nullopt;
  return it->second.deadline;
}

}  // namespace faultline::raftkv::kv

#include "workloads/lock.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "checkers/mutex_fencing.h"
#include "checkers/stats.h"

namespace faultline::workloads {

ProtectedResource::WriteResult ProtectedResource::Write(
    std::optional<std::int64_t> token, std::int64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  WriteResult r;
  r.highest = highest_;
  if (fenced_ && (!token || (highest_ && *token < *highest_))) {
    ++rejected_;
    return r;
  }
  r.accepted = true;
  ++accepted_;
  value_ = value;
  if (token && (!highest_ || *token > *highest_)) highest_ = token;
  return r;
}

std::optional<std::int64_t> ProtectedResource::value() const {
  std::lock_guard<std::mutex> lock(mu_);
  return value_;
}
std::optional<std::int64_t> ProtectedResource::highest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return highest_;
}
std::int64_t ProtectedResource::accepted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return accepted_;
}
std::int64_t ProtectedResource::rejected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rejected_;
}

std::string LockName(int i) { return "lock" + std::to_string(i); }
std::string ResourceName(const std::string& lock) { return lock + "-resource"; }

namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;
using harness::PreparedOp;

using harness::Done;

// Generated (not recorded) form of a write or release: the value to write
// (writes only) and the delay before the invocation.
Value Planned(std::optional<std::int64_t> value, std::int64_t delay_ms) {
  Value::Object o;
  if (value) o.emplace_back("value", Value::Int(*value));
  o.emplace_back("delay_ms", Value::Int(delay_ms));
  return Value::MakeObject(std::move(o));
}

std::int64_t IntField(const Value& v, std::string_view field,
                      std::int64_t fallback) {
  const Value* f = v.Find(field);
  return f != nullptr && f->is_int() ? f->as_int() : fallback;
}

class HoldGenerator : public harness::WorkerGenerator {
 public:
  HoldGenerator(const harness::WorkloadSpec& spec, HoldPlan plan, int worker,
                std::uint64_t seed)
      : spec_(spec),
        plan_(std::move(plan)),
        worker_(worker),
        rng_(seed),
        pick_(0, std::max<int>(0, static_cast<int>(plan_.names.size()) - 1)) {}

  Operation Next() override {
    if (next_ >= hold_.size()) StartHold();
    return hold_[next_++];
  }

 private:
  // Plans the next hold. The random draws come in a fixed order: name,
  // stall or not, where, then the gaps in order.
  void StartHold() {
    hold_.clear();
    next_ = 0;
    const std::string name =
        plan_.names.empty() ? LockName(0) : plan_.names[pick_(rng_)];
    const int writes = spec_.writes_per_hold;
    const std::int64_t gap_ms = spec_.hold_ms / (writes + 1);
    int stall_before = -1;
    if (spec_.stall_probability > 0 && spec_.stall_ms > 0 &&
        std::bernoulli_distribution(spec_.stall_probability)(rng_)) {
      // Before one of the writes (or the give when there is none).
      stall_before =
          std::uniform_int_distribution<int>(0, std::max(0, writes - 1))(rng_);
    }
    auto gap = [&] {
      if (gap_ms <= 0) return std::int64_t{0};
      return std::uniform_int_distribution<std::int64_t>(gap_ms / 2,
                                                         gap_ms * 3 / 2)(rng_);
    };
    const Value key = Value::String(name);
    hold_.push_back({plan_.words.take, key, Value::Null()});
    for (int i = 0; i < writes; ++i) {
      const std::int64_t stall = i == stall_before ? spec_.stall_ms : 0;
      std::int64_t before_write = gap();
      if (plan_.renew_before_writes) {
        hold_.push_back({"renew", key, Planned(std::nullopt, before_write)});
        before_write = 0;
      }
      hold_.push_back({"resource-write", Value::String(ResourceName(name)),
                       Planned(written_++ * spec_.concurrency + worker_ + 1,
                               before_write + stall)});
    }
    const std::int64_t stall =
        writes == 0 && stall_before == 0 ? spec_.stall_ms : 0;
    hold_.push_back(
        {plan_.words.give, key, Planned(std::nullopt, gap() + stall)});
  }

  harness::WorkloadSpec spec_;
  HoldPlan plan_;
  int worker_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int> pick_;
  std::vector<Operation> hold_;  // the current hold's operations
  std::size_t next_ = 0;
  std::int64_t written_ = 0;
};

class HoldClient : public harness::StatefulClient {
 public:
  HoldClient(std::unique_ptr<harness::Client> inner, const Resources* res,
             int ttl_ms, HoldWords words)
      : inner_(std::move(inner)),
        resources_(res),
        ttl_ms_(ttl_ms),
        words_(std::move(words)) {}

  PreparedOp Prepare(const Operation& g) noexcept override {
    PreparedOp p;
    p.op = g;
    // The rate's pacing goes before a take, not between the steps of a
    // hold: their delay_ms spread them over hold_ms.
    p.paced = g.f == words_.take;
    if (g.f == words_.take) {
      held_.reset();
      token_.reset();
      p.op.value = Value::Null();
      return p;
    }
    const std::int64_t delay = IntField(g.value, "delay_ms", 0);
    p.delay = std::chrono::milliseconds(std::max<std::int64_t>(0, delay));
    if (g.f == "resource-write") {
      const ProtectedResource* r = Find(g.key);
      if (!held_ || r == nullptr || ResourceName(*held_) != g.key.as_string()) {
        p.skip = true;  // no hold to write under
        return p;
      }
      const Value token =
          r->fenced() && token_ ? Value::Int(*token_) : Value::Null();
      p.op.value =
          Value::MakeList({token, Value::Int(IntField(g.value, "value", 0))});
      p.extra.emplace_back("fenced", Value::Bool(r->fenced()));
      p.extra.emplace_back("lock", Value::String(*held_));
      return p;
    }
    if (g.f == words_.give || g.f == "renew") {
      if (!held_ || !g.key.is_string() || *held_ != g.key.as_string()) {
        p.skip = true;
        return p;
      }
      p.op.value = token_ ? Value::Int(*token_) : Value::Null();
      return p;
    }
    return p;  // unknown: Invoke answers fail
  }

  Completion Invoke(const Operation& op) noexcept override {
    if (op.f == "resource-write") return Write(op);
    const bool take = op.f == words_.take;
    const bool give = op.f == words_.give;
    if (!take && !give && op.f != "renew") {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    if (inner_ == nullptr) return Done(Outcome::kFail, op.value, "no-client");
    if (take) {
      Completion c = inner_->Invoke({"acquire", op.key, Value::Int(ttl_ms_)});
      if (c.type == Outcome::kOk && op.key.is_string()) {
        held_ = op.key.as_string();
        if (c.value.is_int()) token_ = c.value.as_int();
      }
      if (c.type != Outcome::kOk) c.value = op.value;
      return c;
    }
    Completion c =
        inner_->Invoke({give ? "release" : "renew", op.key, op.value});
    if (give || c.type == Outcome::kFail) {
      held_.reset();  // given back, or not held any more (deposed)
      token_.reset();
    }
    if (c.type == Outcome::kOk) c.value = op.value;
    return c;
  }

 private:
  ProtectedResource* Find(const Value& key) const {
    if (!key.is_string()) return nullptr;
    auto it = resources_->find(key.as_string());
    return it == resources_->end() ? nullptr : it->second.get();
  }

  Completion Write(const Operation& op) {
    ProtectedResource* r = Find(op.key);
    if (r == nullptr || !op.value.is_list() || op.value.as_list().size() != 2 ||
        !op.value.as_list()[1].is_int()) {
      return Done(Outcome::kFail, op.value, "bad resource-write");
    }
    const Value& t = op.value.as_list()[0];
    std::optional<std::int64_t> token;
    if (t.is_int()) token = t.as_int();
    auto result = r->Write(token, op.value.as_list()[1].as_int());
    if (!result.accepted) return Done(Outcome::kFail, op.value, "fenced");
    return Done(Outcome::kOk, op.value);
  }

  std::unique_ptr<harness::Client> inner_;
  const Resources* resources_;
  int ttl_ms_;
  HoldWords words_;
  std::optional<std::string> held_;
  std::optional<std::int64_t> token_;
};

std::vector<std::string> LockNames(int n) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(std::max(0, n)));
  for (int i = 0; i < n; ++i) names.push_back(LockName(i));
  return names;
}

class LockWorkload : public harness::Workload {
 public:
  explicit LockWorkload(const harness::WorkloadSpec& spec)
      : spec_(spec),
        resources_(MakeResources(LockNames(spec.locks), spec.fenced)) {}

  std::string name() const override { return "lock"; }

  std::unique_ptr<harness::WorkerGenerator> ForWorker(
      int worker, std::uint64_t seed) override {
    return MakeHoldGenerator(spec_, {LockNames(spec_.locks), {}, false}, worker,
                             seed);
  }

  std::vector<Operation> FinalOps() override { return {}; }

  std::unique_ptr<harness::Client> WrapClient(
      std::unique_ptr<harness::Client> inner) override {
    return MakeHoldClient(std::move(inner), &resources_, spec_.ttl_ms, {});
  }

  std::vector<checkers::Verdict> Check(
      const checkers::History& history,
      const harness::CheckOptions& options) override {
    (void)options;
    return {checkers::CheckMutexFencing(history),
            checkers::StatsVerdict(history)};
  }

 private:
  harness::WorkloadSpec spec_;
  Resources resources_;
};

}  // namespace

Resources MakeResources(const std::vector<std::string>& locks, bool fenced) {
  Resources r;
  for (const auto& lock : locks) {
    r[ResourceName(lock)] = std::make_unique<ProtectedResource>(fenced);
  }
  return r;
}

std::unique_ptr<harness::WorkerGenerator> MakeHoldGenerator(
    const harness::WorkloadSpec& spec, HoldPlan plan, int worker,
    std::uint64_t seed) {
  return std::make_unique<HoldGenerator>(spec, std::move(plan), worker, seed);
}

std::unique_ptr<harness::StatefulClient> MakeHoldClient(
    std::unique_ptr<harness::Client> inner, const Resources* resources,
    int ttl_ms, HoldWords words) {
  return std::make_unique<HoldClient>(std::move(inner), resources, ttl_ms,
                                      std::move(words));
}

std::unique_ptr<harness::Workload> MakeLockWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<LockWorkload>(spec);
}

}  // namespace faultline::workloads

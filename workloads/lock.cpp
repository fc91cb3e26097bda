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

Completion Done(Outcome type, Value value, std::string error = "") {
  Completion c;
  c.type = type;
  c.value = std::move(value);
  c.error = std::move(error);
  return c;
}

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

class LockGenerator : public harness::WorkerGenerator {
 public:
  LockGenerator(const harness::WorkloadSpec& spec, int worker,
                std::uint64_t seed)
      : spec_(spec), worker_(worker), rng_(seed), lock_(0, spec.locks - 1) {}

  Operation Next() override {
    if (step_ == 0) StartHold();
    Operation op;
    op.key = Value::String(lock_name_);
    const int writes = spec_.writes_per_hold;
    if (step_ == 0) {
      op.f = "acquire";
    } else if (step_ <= writes) {
      op.f = "resource-write";
      op.key = Value::String(ResourceName(lock_name_));
      op.value = Planned(written_++ * spec_.concurrency + worker_ + 1,
                         DelayBefore(step_ - 1));
    } else {
      op.f = "release";
      op.value = Planned(std::nullopt, DelayBefore(writes));
    }
    step_ = step_ > writes ? 0 : step_ + 1;
    return op;
  }

 private:
  void StartHold() {
    lock_name_ = LockName(lock_(rng_));
    const int gaps = spec_.writes_per_hold + 1;
    gap_ms_ = spec_.hold_ms / gaps;
    stall_before_ = -1;
    if (spec_.stall_probability > 0 && spec_.stall_ms > 0 &&
        std::bernoulli_distribution(spec_.stall_probability)(rng_)) {
      // Before one of the writes (or the release when there is none).
      stall_before_ = std::uniform_int_distribution<int>(
          0, std::max(0, spec_.writes_per_hold - 1))(rng_);
    }
  }

  // Delay before the i-th step after the acquire (write i, or the release
  // when i == writes_per_hold): the hold time split evenly with jitter, or
  // the stall.
  std::int64_t DelayBefore(int i) {
    std::int64_t d = 0;
    if (gap_ms_ > 0) {
      d = std::uniform_int_distribution<std::int64_t>(gap_ms_ / 2,
                                                      gap_ms_ * 3 / 2)(rng_);
    }
    if (i == stall_before_) d += spec_.stall_ms;
    return d;
  }

  harness::WorkloadSpec spec_;
  int worker_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int> lock_;
  int step_ = 0;  // 0: acquire next; 1..k: write; k+1: release
  std::string lock_name_;
  std::int64_t gap_ms_ = 0;
  int stall_before_ = -1;
  std::int64_t written_ = 0;
};

// Resources by name, shared by every client of one run.
using Resources = std::map<std::string, std::unique_ptr<ProtectedResource>>;

class LockClient : public harness::StatefulClient {
 public:
  LockClient(std::unique_ptr<harness::Client> inner, const Resources* res,
             int ttl_ms)
      : inner_(std::move(inner)), resources_(res), ttl_ms_(ttl_ms) {}

  PreparedOp Prepare(const Operation& g) noexcept override {
    PreparedOp p;
    p.op = g;
    if (g.f == "acquire") {
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
    if (g.f == "release" || g.f == "renew") {
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
    if (op.f != "acquire" && op.f != "release" && op.f != "renew") {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    if (inner_ == nullptr) return Done(Outcome::kFail, op.value, "no-client");
    if (op.f == "acquire") {
      Completion c = inner_->Invoke({"acquire", op.key, Value::Int(ttl_ms_)});
      if (c.type == Outcome::kOk && op.key.is_string()) {
        held_ = op.key.as_string();
        if (c.value.is_int()) token_ = c.value.as_int();
      }
      if (c.type != Outcome::kOk) c.value = op.value;
      return c;
    }
    Completion c = inner_->Invoke(op);
    if (op.f == "release" || c.type == Outcome::kFail) {
      held_.reset();  // released, or not held any more
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
  std::optional<std::string> held_;
  std::optional<std::int64_t> token_;
};

class LockWorkload : public harness::Workload {
 public:
  explicit LockWorkload(const harness::WorkloadSpec& spec) : spec_(spec) {
    for (int i = 0; i < spec.locks; ++i) {
      resources_[ResourceName(LockName(i))] =
          std::make_unique<ProtectedResource>(spec.fenced);
    }
  }

  std::string name() const override { return "lock"; }

  std::unique_ptr<harness::WorkerGenerator> ForWorker(
      int worker, std::uint64_t seed) override {
    return std::make_unique<LockGenerator>(spec_, worker, seed);
  }

  std::vector<Operation> FinalOps() override { return {}; }

  std::unique_ptr<harness::Client> WrapClient(
      std::unique_ptr<harness::Client> inner) override {
    return std::make_unique<LockClient>(std::move(inner), &resources_,
                                        spec_.ttl_ms);
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
  Resources resources_;  // fixed after construction; each is thread-safe
};

}  // namespace

std::unique_ptr<harness::Workload> MakeLockWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<LockWorkload>(spec);
}

}  // namespace faultline::workloads

#include "workloads/register.h"

#include <algorithm>
#include <map>
#include <random>
#include <thread>

#include "checkers/linearizable.h"
#include "checkers/stats.h"

namespace faultline::workloads {
namespace {

using checkers::Value;
using harness::Operation;

std::string KeyName(int k) { return "k" + std::to_string(k); }

class RegisterGenerator : public harness::WorkerGenerator {
 public:
  RegisterGenerator(const harness::WorkloadSpec& spec, int worker,
                    std::uint64_t seed)
      : spec_(spec),
        worker_(worker),
        rng_(seed),
        key_(0, spec.keys - 1),
        mix_({spec.read, spec.write, spec.cas}) {}

  Operation Next() override {
    int k = key_(rng_);
    Operation op;
    op.key = Value::String(KeyName(k));
    int kind = mix_(rng_);
    auto last = last_written_.find(k);
    if (kind == 2 && last == last_written_.end()) kind = 1;  // nothing to cas
    switch (kind) {
      case 0:
        op.f = "read";
        break;
      case 1:
        op.f = "write";
        op.value = Value::Int(Fresh(k));
        break;
      default: {
        op.f = "cas";
        std::int64_t expected = last->second;
        op.value =
            Value::MakeList({Value::Int(expected), Value::Int(Fresh(k))});
        break;
      }
    }
    return op;
  }

 private:
  std::int64_t Fresh(int k) {
    std::int64_t v = written_++ * spec_.concurrency + worker_ + 1;
    last_written_[k] = v;
    return v;
  }

  harness::WorkloadSpec spec_;
  int worker_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int> key_;
  std::discrete_distribution<int> mix_;
  std::int64_t written_ = 0;
  std::map<int, std::int64_t> last_written_;
};

// The history as the cas-register checker reads it: client events of other
// operations (e.g. the leader observer's `observe`) are turned into nemesis
// events, which the checker skips. Indices and times are kept, so the
// checker's explanations still point at the right lines.
checkers::History RegisterOpsOnly(const checkers::History& history) {
  checkers::History out = history;
  for (checkers::Event& e : out) {
    if (!e.is_nemesis() && e.f != "read" && e.f != "write" && e.f != "cas") {
      e.process = checkers::kNemesisProcess;
    }
  }
  return out;
}

class RegisterWorkload : public harness::Workload {
 public:
  explicit RegisterWorkload(const harness::WorkloadSpec& spec) : spec_(spec) {}

  std::string name() const override { return "register"; }

  std::unique_ptr<harness::WorkerGenerator> ForWorker(
      int worker, std::uint64_t seed) override {
    return std::make_unique<RegisterGenerator>(spec_, worker, seed);
  }

  std::vector<Operation> FinalOps() override {
    std::vector<Operation> ops;
    ops.reserve(static_cast<std::size_t>(spec_.keys));
    for (int k = 0; k < spec_.keys; ++k) {
      ops.push_back({"read", Value::String(KeyName(k)), Value()});
    }
    return ops;
  }

  std::vector<checkers::Verdict> Check(
      const checkers::History& history,
      const harness::CheckOptions& options) override {
    checkers::LinearizableOptions lin;
    lin.model = "cas-register";
    lin.threads = options.threads > 0
                      ? options.threads
                      : static_cast<int>(
                            std::max(1u, std::thread::hardware_concurrency()));
    lin.deadline = options.deadline;
    lin.memory_limit_bytes = options.MemoryLimit();
    return {checkers::CheckLinearizable(RegisterOpsOnly(history), lin),
            checkers::StatsVerdict(history)};
  }

 private:
  harness::WorkloadSpec spec_;
};

}  // namespace

std::unique_ptr<harness::Workload> MakeRegisterWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<RegisterWorkload>(spec);
}

}  // namespace faultline::workloads

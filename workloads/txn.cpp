#include "workloads/txn.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "checkers/stats.h"
#include "checkers/txn/txn.h"

namespace faultline::workloads {
namespace {

using checkers::Value;
using harness::Operation;

// Weights of the key slots for a key_dist (see txn.h).
std::vector<double> SlotWeights(const std::string& dist, int keys) {
  std::vector<double> w(static_cast<std::size_t>(keys), 1.0);
  if (dist == "exponential") {
    for (int i = 0; i < keys; ++i)
      w[static_cast<std::size_t>(i)] =
          std::pow(100.0, -static_cast<double>(i) / keys);
  } else if (dist == "hot") {
    const int hot = std::max(1, keys / 10);
    if (hot < keys) {
      for (int i = 0; i < keys; ++i)
        w[static_cast<std::size_t>(i)] =
            i < hot ? 0.9 / hot : 0.1 / (keys - hot);
    }
  }
  return w;
}

class TxnGenerator : public harness::WorkerGenerator {
 public:
  TxnGenerator(const harness::WorkloadSpec& spec, bool append, int worker,
               std::uint64_t seed)
      : spec_(spec),
        append_(append),
        worker_(worker),
        rng_(seed),
        length_(spec.min_txn_length, spec.max_txn_length) {
    const std::vector<double> weights = SlotWeights(spec.key_dist, spec.keys);
    slot_ = std::discrete_distribution<int>(weights.begin(), weights.end());
    double total = 0;
    for (double x : weights) total += x;
    const double hottest =
        *std::max_element(weights.begin(), weights.end()) / total;
    const double reads = std::max(0.0, spec.read);
    const double writes = std::max(0.0, spec.write);
    write_share_ = reads + writes > 0 ? writes / (reads + writes) : 0.5;
    // Writes a worker's transaction makes to the hottest slot, on average;
    // the generation moves on once all workers together made
    // max_writes_per_key of them.
    const double per_txn = 0.5 * (spec.min_txn_length + spec.max_txn_length) *
                           write_share_ * hottest;
    const double period =
        per_txn > 0 ? spec.max_writes_per_key / (per_txn * spec.concurrency)
                    : 1e18;
    period_ = static_cast<std::int64_t>(std::max(1.0, std::min(period, 1e15)));
  }

  Operation Next() override {
    const std::int64_t generation = txns_++ / period_;
    const int n = length_(rng_);
    Value::List mops;
    mops.reserve(static_cast<std::size_t>(n));
    std::bernoulli_distribution write(write_share_);
    for (int i = 0; i < n; ++i) {
      const std::int64_t key = generation * spec_.keys + slot_(rng_);
      if (write(rng_)) {
        const std::int64_t v = written_++ * spec_.concurrency + worker_ + 1;
        mops.push_back(Value::MakeList({Value::String(append_ ? "append" : "w"),
                                        Value::Int(key), Value::Int(v)}));
      } else {
        mops.push_back(Value::MakeList(
            {Value::String("r"), Value::Int(key), Value::Null()}));
      }
    }
    Operation op;
    op.f = "txn";
    op.value = Value::MakeList(std::move(mops));
    return op;
  }

 private:
  harness::WorkloadSpec spec_;
  bool append_;
  int worker_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int> length_;
  std::discrete_distribution<int> slot_;
  double write_share_ = 0.5;
  std::int64_t period_ = 1;
  std::int64_t txns_ = 0;
  std::int64_t written_ = 0;
};

class TxnWorkload : public harness::Workload {
 public:
  TxnWorkload(const harness::WorkloadSpec& spec, bool append)
      : spec_(spec), append_(append) {}

  std::string name() const override {
    return append_ ? checkers::txn::kListAppendChecker
                   : checkers::txn::kRwRegisterChecker;
  }

  std::unique_ptr<harness::WorkerGenerator> ForWorker(
      int worker, std::uint64_t seed) override {
    return std::make_unique<TxnGenerator>(spec_, append_, worker, seed);
  }

  // No final reads: every read is a whole-key read inside a transaction,
  // and the checker orders acknowledged appends no read showed after every
  // read of their key.
  std::vector<Operation> FinalOps() override { return {}; }

  std::vector<checkers::Verdict> Check(
      const checkers::History& history,
      const harness::CheckOptions& options) override {
    checkers::txn::TxnOptions o;
    o.consistency_model = spec_.consistency_model;
    o.deadline = options.deadline;
    o.memory_limit_bytes = options.MemoryLimit();
    checkers::Verdict v = append_ ? checkers::txn::CheckListAppend(history, o)
                                  : checkers::txn::CheckRwRegister(history, o);
    return {std::move(v), checkers::StatsVerdict(history)};
  }

 private:
  harness::WorkloadSpec spec_;
  bool append_;
};

}  // namespace

std::unique_ptr<harness::Workload> MakeListAppendWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<TxnWorkload>(spec, true);
}

std::unique_ptr<harness::Workload> MakeRwRegisterWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<TxnWorkload>(spec, false);
}

}  // namespace faultline::workloads

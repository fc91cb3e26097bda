#include "workloads/collections.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "checkers/collections/bank.h"
#include "checkers/collections/counter.h"
#include "checkers/collections/set.h"
#include "checkers/stats.h"

namespace faultline::workloads {
namespace {

using checkers::Value;
using harness::Operation;

enum class Kind { kSet, kBank, kCounter };

// The largest increment of a counter add.
constexpr int kMaxIncrement = 5;

class CollectionGenerator : public harness::WorkerGenerator {
 public:
  CollectionGenerator(const harness::WorkloadSpec& spec, Kind kind, int worker,
                      std::uint64_t seed)
      : spec_(spec),
        kind_(kind),
        worker_(worker),
        rng_(seed),
        read_(ReadShare(spec)) {}

  Operation Next() override {
    Operation op;
    if (read_(rng_)) {
      op.f = "read";
      return op;
    }
    switch (kind_) {
      case Kind::kSet:
        op.f = "add";
        op.value = Value::Int(added_++ * spec_.concurrency + worker_ + 1);
        break;
      case Kind::kCounter:
        op.f = "add";
        op.value = Value::Int(
            std::uniform_int_distribution<int>(1, kMaxIncrement)(rng_));
        break;
      case Kind::kBank: {
        const int n = std::max(2, spec_.accounts);
        const int from = std::uniform_int_distribution<int>(0, n - 1)(rng_);
        // A different account: one of the other n - 1.
        int to = std::uniform_int_distribution<int>(0, n - 2)(rng_);
        if (to >= from) ++to;
        const int amount = std::uniform_int_distribution<int>(
            1, std::max(1, spec_.max_transfer))(rng_);
        op.f = "transfer";
        op.value = Value::MakeObject({{"from", Value::Int(from)},
                                      {"to", Value::Int(to)},
                                      {"amount", Value::Int(amount)}});
        break;
      }
    }
    return op;
  }

 private:
  static double ReadShare(const harness::WorkloadSpec& spec) {
    const double reads = std::max(0.0, spec.read);
    const double writes = std::max(0.0, spec.write);
    return reads + writes > 0 ? reads / (reads + writes) : 0.5;
  }

  harness::WorkloadSpec spec_;
  Kind kind_;
  int worker_;
  std::mt19937_64 rng_;
  std::bernoulli_distribution read_;
  std::int64_t added_ = 0;
};

class CollectionWorkload : public harness::Workload {
 public:
  CollectionWorkload(const harness::WorkloadSpec& spec, Kind kind)
      : spec_(spec), kind_(kind) {}

  std::string name() const override {
    switch (kind_) {
      case Kind::kSet:
        return checkers::collections::kSetChecker;
      case Kind::kBank:
        return checkers::collections::kBankChecker;
      case Kind::kCounter:
        break;
    }
    return checkers::collections::kCounterChecker;
  }

  std::unique_ptr<harness::WorkerGenerator> ForWorker(
      int worker, std::uint64_t seed) override {
    return std::make_unique<CollectionGenerator>(spec_, kind_, worker, seed);
  }

  std::vector<Operation> FinalOps() override {
    Operation read;
    read.f = "read";
    return {read};
  }

  std::vector<checkers::Verdict> Check(
      const checkers::History& history,
      const harness::CheckOptions& /*options*/) override {
    checkers::Verdict v;
    switch (kind_) {
      case Kind::kSet:
        v = checkers::collections::CheckSet(history);
        break;
      case Kind::kBank: {
        checkers::collections::BankOptions o;
        o.total = spec_.total;
        std::vector<std::string> accounts;
        for (int a = 0; a < std::max(2, spec_.accounts); ++a)
          accounts.push_back(std::to_string(a));
        o.accounts = std::move(accounts);
        v = checkers::collections::CheckBank(history, o);
        break;
      }
      case Kind::kCounter:
        v = checkers::collections::CheckCounter(history);
        break;
    }
    return {std::move(v), checkers::StatsVerdict(history)};
  }

 private:
  harness::WorkloadSpec spec_;
  Kind kind_;
};

}  // namespace

std::unique_ptr<harness::Workload> MakeSetWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<CollectionWorkload>(spec, Kind::kSet);
}

std::unique_ptr<harness::Workload> MakeBankWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<CollectionWorkload>(spec, Kind::kBank);
}

std::unique_ptr<harness::Workload> MakeCounterWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<CollectionWorkload>(spec, Kind::kCounter);
}

}  // namespace faultline::workloads

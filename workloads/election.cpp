#include "workloads/election.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "checkers/leader_per_term.h"
#include "checkers/mutex_fencing.h"
#include "checkers/stats.h"
#include "workloads/lock.h"

namespace faultline::workloads {

std::string ElectionName(int i) { return "election" + std::to_string(i); }

namespace {

std::vector<std::string> ElectionNames(int n) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(std::max(0, n)));
  for (int i = 0; i < n; ++i) names.push_back(ElectionName(i));
  return names;
}

HoldWords CampaignWords() { return {"campaign", "resign"}; }

bool HasObservations(const checkers::History& history) {
  for (const auto& e : history) {
    if (e.f == "observe" && !e.is_nemesis()) return true;
  }
  return false;
}

class ElectionWorkload : public harness::Workload {
 public:
  explicit ElectionWorkload(const harness::WorkloadSpec& spec)
      : spec_(spec),
        resources_(MakeResources(ElectionNames(spec.locks), spec.fenced)) {}

  std::string name() const override { return "election"; }
  // Campaigns and resignations are the lock client's acquire and release.
  std::string client_kind() const override { return "lock"; }

  std::unique_ptr<harness::WorkerGenerator> ForWorker(
      int worker, std::uint64_t seed) override {
    HoldPlan plan{ElectionNames(spec_.locks), CampaignWords(), true};
    return MakeHoldGenerator(spec_, std::move(plan), worker, seed);
  }

  std::vector<harness::Operation> FinalOps() override { return {}; }

  std::unique_ptr<harness::Client> WrapClient(
      std::unique_ptr<harness::Client> inner) override {
    return MakeHoldClient(std::move(inner), &resources_, spec_.ttl_ms,
                          CampaignWords());
  }

  std::vector<checkers::Verdict> Check(
      const checkers::History& history,
      const harness::CheckOptions& options) override {
    (void)options;
    std::vector<checkers::Verdict> v;
    v.push_back(checkers::CheckMutexFencing(history));
    // With observations the run adds leader-per-term itself (one verdict
    // over both domains, campaigns included).
    if (!HasObservations(history)) {
      v.push_back(checkers::CheckLeaderPerTerm(history));
    }
    v.push_back(checkers::StatsVerdict(history));
    return v;
  }

 private:
  harness::WorkloadSpec spec_;
  Resources resources_;
};

}  // namespace

std::unique_ptr<harness::Workload> MakeElectionWorkload(
    const harness::WorkloadSpec& spec) {
  return std::make_unique<ElectionWorkload>(spec);
}

}  // namespace faultline::workloads

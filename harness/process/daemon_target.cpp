#include "harness/process/daemon_target.h"

#include <thread>
#include <utility>

namespace faultline::harness {

DaemonTarget::DaemonTarget(std::string owner, std::string primary,
                           Ledger* ledger)
    : daemons_(owner, ledger),
      owner_(std::move(owner)),
      primary_(std::move(primary)) {}

Status DaemonTarget::Kill(const Node& node) {
  return daemons_.Kill(node, primary_);
}

Status DaemonTarget::Pause(const Node& node) {
  return daemons_.Pause(node, primary_);
}

Status DaemonTarget::Resume(const Node& node) {
  return daemons_.Resume(node, primary_);
}

bool DaemonTarget::Running(const Node& node) {
  return daemons_.Running(node, primary_);
}

pid_t DaemonTarget::Pid(const Node& node) {
  return daemons_.Pid(node, primary_);
}

Status DaemonTarget::PollUntilHealthy(std::chrono::milliseconds timeout,
                                      std::chrono::milliseconds interval,
                                      const HealthRound& round) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  return PollUntilHealthy(deadline, timeout, interval, round);
}

Status DaemonTarget::PollUntilHealthy(
    std::chrono::steady_clock::time_point deadline,
    std::chrono::milliseconds timeout, std::chrono::milliseconds interval,
    const HealthRound& round) const {
  while (true) {
    Result<std::string> problem = round();
    if (!problem) return Fail(problem.error());
    if (problem->empty()) return Ok();
    if (std::chrono::steady_clock::now() + interval >= deadline) {
      return Fail(owner_ + ": not healthy after " +
                  std::to_string(timeout.count()) + " ms (" + *problem + ")");
    }
    std::this_thread::sleep_for(interval);
  }
}

Status DaemonTarget::StopAndCollect(
    std::chrono::milliseconds grace, const std::function<Status()>& after_stop,
    const std::string& log_dir,
    const std::function<std::string(const Node&)>& dir_of,
    const std::vector<Daemons::DaemonFiles>& logs,
    const std::vector<std::string>& remove) {
  std::string problems;
  if (auto stopped = daemons_.StopAll(grace); !stopped) {
    problems += " " + stopped.error() + ";";
  } else if (after_stop) {
    if (auto after = after_stop(); !after) {
      problems += " " + after.error() + ";";
    }
  }
  problems += daemons_.CollectAndClean(log_dir, dir_of, logs, remove);
  if (!problems.empty()) return Fail(owner_ + " teardown:" + problems);
  return Ok();
}

}  // namespace faultline::harness

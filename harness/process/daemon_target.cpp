#include "harness/process/daemon_target.h"

#include <filesystem>
#include <system_error>
#include <thread>
#include <utility>

namespace faultline::harness {
namespace {

// The work dir as an absolute path (resolved on the controller, which shares
// its file system with local and netns nodes); "" stays "".
std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

DaemonTarget::DaemonTarget(std::string owner, std::string primary,
                           Ledger* ledger, const std::string& work_dir)
    : daemons_(owner, ledger),
      owner_(std::move(owner)),
      primary_(std::move(primary)),
      work_dir_(AbsolutePath(work_dir)) {}

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

std::string DaemonTarget::NodeDir(const Node& node) const {
  return work_dir_ + "/" + node.name;
}

Status DaemonTarget::ResetNodes(const std::vector<Node>& nodes,
                                std::size_t max_nodes) {
  if (work_dir_.empty() || work_dir_.front() != '/') {
    return Fail(owner_ + ": work dir must be an absolute path, got '" +
                work_dir_ + "'");
  }
  if (max_nodes > 0 && (nodes.empty() || nodes.size() > max_nodes)) {
    return Fail(owner_ + ": needs 1 to " + std::to_string(max_nodes) +
                " nodes, got " + std::to_string(nodes.size()));
  }
  return daemons_.Reset(nodes);
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
    const std::string& log_dir, const std::vector<Daemons::DaemonFiles>& logs,
    const std::vector<std::string>& remove) {
  std::string problems;
  if (auto stopped = daemons_.StopAll(grace); !stopped) {
    problems += " " + stopped.error() + ";";
  } else if (after_stop) {
    if (auto after = after_stop(); !after) {
      problems += " " + after.error() + ";";
    }
  }
  if (before_clean_) {
    if (auto hook = before_clean_(); !hook)
      problems += " " + hook.error() + ";";
  }
  problems += daemons_.CollectAndClean(
      log_dir, [this](const Node& n) { return NodeDir(n); }, logs, remove);
  if (!problems.empty()) return Fail(owner_ + " teardown:" + problems);
  return Ok();
}

}  // namespace faultline::harness

#include "harness/cluster/local_remote.h"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;

Status CopyFile(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::path dest(to);
  if (dest.has_parent_path()) {
    fs::create_directories(dest.parent_path(), ec);
    if (ec) {
      return Fail("cannot create " + dest.parent_path().string() + ": " +
                  ec.message());
    }
  }
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    return Fail("cannot copy " + from + " to " + to + ": " + ec.message());
  return Ok();
}

}  // namespace

LocalRemote::LocalRemote(std::string working_dir)
    : working_dir_(std::move(working_dir)) {}

CommandResult LocalRemote::Run(const std::vector<std::string>& argv,
                               const CommandOptions& options) {
  CommandOptions local = options;
  local.netns.clear();
  return RunCommand(argv, local);
}

Result<pid_t> LocalRemote::Start(const std::vector<std::string>& argv,
                                 const std::string& log_path,
                                 const std::vector<std::string>& env) {
  if (!log_path.empty()) {
    fs::path parent = fs::path(log_path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec)
      return Fail("cannot create " + parent.string() + ": " + ec.message());
  }
  SpawnOptions options;
  options.log_path = log_path;
  options.working_dir = working_dir_;
  options.env = env;
  return Spawn(argv, options);
}

Status LocalRemote::Signal(pid_t pid, int sig) {
  if (pid <= 0) return Fail("signal: invalid pid " + std::to_string(pid));
  if (kill(pid, sig) != 0) {
    return Fail("kill(" + std::to_string(pid) + ", " + std::to_string(sig) +
                "): " + std::strerror(errno));
  }
  return Ok();
}

Status LocalRemote::Upload(const std::string& local,
                           const std::string& remote) {
  return CopyFile(local, remote);
}

Status LocalRemote::Download(const std::string& remote,
                             const std::string& local) {
  return CopyFile(remote, local);
}

}  // namespace faultline::harness

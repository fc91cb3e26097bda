#include "harness/cluster/docker_remote.h"

#include <signal.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "harness/cluster/ssh_remote.h"  // BuildStartArgv

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

// How much longer than a command's timeout the controller waits for the
// container's timeout(1) to end it.
constexpr auto kTimeoutSlack = std::chrono::milliseconds(3000);

// What the docker client (20.10 .. 28) writes when it, the engine or the
// container runtime could not run the command at all.
constexpr std::string_view kDockerErrors[] = {
    "Error response from daemon",
    "Error: No such container",
    "Cannot connect to the Docker daemon",
    "error during connect",
    "OCI runtime exec failed",
    "failed to connect to the docker API",
    "permission denied while trying to connect to the Docker daemon",
};

std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.empty() ? s : line;
}

std::string Secs(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ms.count()) / 1e3);
  return buf;
}

}  // namespace

std::vector<std::string> DockerBase(const DockerOptions& options) {
  std::vector<std::string> base = {options.docker};
  if (!options.docker_host.empty()) {
    base.insert(base.end(), {"--host", options.docker_host});
  }
  return base;
}

bool IsDockerFailure(const CommandResult& r) {
  if (r.exit_code == -1 && !r.error.empty())
    return true;  // client did not
                  // finish
  if (r.exit_code == 0) return false;
  for (std::string_view prefix : kDockerErrors) {
    if (std::string_view(r.err).substr(0, prefix.size()) == prefix) {
      return true;
    }
  }
  return false;
}

DockerRemote::DockerRemote(DockerOptions options)
    : options_(std::move(options)) {}

RemoteDescriptor DockerRemote::Descriptor() const {
  RemoteDescriptor d;
  d.kind = "docker";
  d.container = options_.container;
  d.docker_host = options_.docker_host;
  if (d.docker_host.empty()) {
    if (const char* env = std::getenv("DOCKER_HOST")) d.docker_host = env;
  }
  return d;
}

Status DockerRemote::Check() {
  std::vector<std::string> argv = DockerBase(options_);
  argv.insert(argv.end(), {"inspect", "--type", "container", "--format",
                           "{{.State.Running}}", options_.container});
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(15000);
  CommandResult r = RunCommand(argv, o);
  if (!r.ok()) {
    return Fail("docker: container " + options_.container + ": " +
                DescribeFailure(r));
  }
  if (r.out.rfind("true", 0) != 0) {
    return Fail("docker: container " + options_.container +
                " is not running (start it, e.g. docker compose up -d)");
  }
  return Ok();
}

CommandResult DockerRemote::Exec(const std::vector<std::string>& argv,
                                 const CommandOptions& options,
                                 std::chrono::milliseconds node_timeout) {
  std::vector<std::string> full = DockerBase(options_);
  full.push_back("exec");
  if (!options.stdin_data.empty()) full.push_back("-i");
  full.push_back(options_.container);
  if (node_timeout.count() > 0) {
    full.insert(full.end(), {"timeout", "-s", "KILL", Secs(node_timeout)});
  }
  full.insert(full.end(), argv.begin(), argv.end());
  CommandOptions local;
  local.timeout = options.timeout + kTimeoutSlack;
  local.stdin_data = options.stdin_data;
  CommandResult r = RunCommand(full, local);
  if (IsDockerFailure(r)) {
    std::string why = r.error.empty() ? FirstLine(r.err) : r.error;
    r.exit_code = -1;
    r.error = "docker: " + options_.container + ": " + why;
  }
  return r;
}

CommandResult DockerRemote::Run(const std::vector<std::string>& argv,
                                const CommandOptions& options) {
  if (argv.empty()) {
    CommandResult r;
    r.error = "empty command";
    return r;
  }
  const auto t0 = Clock::now();
  CommandResult r = Exec(argv, options, options.timeout);
  // timeout(1) SIGKILLs its process group, itself included: exit 128+9.
  if (r.exit_code == 128 + SIGKILL && Clock::now() - t0 >= options.timeout) {
    r.exit_code = -1;
    r.error =
        "timed out after " + std::to_string(options.timeout.count()) + " ms";
  }
  return r;
}

Result<pid_t> DockerRemote::Start(const std::vector<std::string>& argv,
                                  const std::string& log_path,
                                  const std::vector<std::string>& env) {
  auto start = BuildStartArgv(argv, log_path, env, options_.working_dir);
  if (!start) return Fail(start.error());
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(15000);
  // Not under timeout(1), which would wait for (and later kill) the daemon.
  CommandResult r = Exec(*start, o, std::chrono::milliseconds(0));
  const std::string where = "start " + argv[0] + " in " + options_.container;
  if (!r.ok()) return Fail(where + ": " + DescribeFailure(r));
  return PidFromStartOutput(r.out, where);
}

std::string DockerRemote::NodeLabel() const { return options_.container; }

}  // namespace faultline::harness

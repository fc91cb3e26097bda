#include "harness/docker_remote.h"

#include <signal.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "harness/ssh_remote.h"  // BuildStartArgv, SignalName

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;

// How much longer than a command's timeout the controller waits for the
// container's timeout(1) to end it.
constexpr auto kTimeoutSlack = std::chrono::milliseconds(3000);

// Exit 0 while /proc/$1 is a live, non-zombie process, 1 otherwise.
constexpr const char* kAliveScript =
    "s=$(cat /proc/\"$1\"/stat 2>/dev/null) || exit 1; s=${s##*) }; "
    "case $s in Z*|X*) exit 1;; esac; exit 0";

constexpr const char* kUploadScript =
    "mkdir -p -- \"$(dirname -- \"$1\")\" && cat > \"$1\"";

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

std::string Why(const CommandResult& r) {
  if (!r.error.empty()) return r.error;
  std::string why = "exit " + std::to_string(r.exit_code);
  if (!r.err.empty()) why += ": " + FirstLine(r.err);
  return why;
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
    return Fail("docker: container " + options_.container + ": " + Why(r));
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
  if (!r.ok()) return Fail(where + ": " + Why(r));
  std::string first = r.out.substr(0, r.out.find('\n'));
  pid_t pid = 0;
  auto [ptr, ec] =
      std::from_chars(first.data(), first.data() + first.size(), pid);
  if (ec != std::errc() || ptr != first.data() + first.size() || pid <= 0) {
    return Fail(where + ": no pid in the output '" + r.out + "'");
  }
  return pid;
}

Status DockerRemote::Signal(pid_t pid, int sig) {
  std::string name = SignalName(sig);
  if (name.empty()) {
    return Fail("signal: unknown signal " + std::to_string(sig));
  }
  if (pid <= 0) return Fail("signal: bad pid " + std::to_string(pid));
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(10000);
  CommandResult r = Run({"kill", "-s", name, std::to_string(pid)}, o);
  if (!r.ok()) {
    return Fail("kill -s " + name + " " + std::to_string(pid) + " in " +
                options_.container + ": " + Why(r));
  }
  return Ok();
}

bool DockerRemote::Alive(pid_t pid) {
  if (pid <= 0) return false;
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(10000);
  CommandResult r =
      Run({"sh", "-c", kAliveScript, "sh", std::to_string(pid)}, o);
  if (r.exit_code == 0) return true;
  if (r.exit_code == 1) return false;
  return true;  // unknown (docker failure): never declare a process dead
}

Status DockerRemote::Upload(const std::string& local,
                            const std::string& remote) {
  std::ifstream in(local, std::ios::binary);
  if (!in) return Fail("upload: cannot read " + local);
  std::ostringstream data;
  data << in.rdbuf();
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(120000);
  o.stdin_data = data.str();
  // Without data there is no -i: the command reads end-of-file at once.
  CommandResult r = Run({"sh", "-c", kUploadScript, "sh", remote}, o);
  if (!r.ok()) {
    return Fail("upload " + local + " to " + options_.container + ":" + remote +
                ": " + Why(r));
  }
  return Ok();
}

Status DockerRemote::Download(const std::string& remote,
                              const std::string& local) {
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(120000);
  CommandResult r = Run({"cat", "--", remote}, o);
  if (!r.ok()) {
    return Fail("download " + options_.container + ":" + remote + ": " +
                Why(r));
  }
  std::error_code ec;
  auto parent = std::filesystem::path(local).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(local, std::ios::binary | std::ios::trunc);
  out.write(r.out.data(), static_cast<std::streamsize>(r.out.size()));
  if (!out) return Fail("download: cannot write " + local);
  return Ok();
}

}  // namespace faultline::harness

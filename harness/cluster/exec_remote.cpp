#include "harness/cluster/exec_remote.h"

#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "harness/cluster/ssh_remote.h"  // SignalName

namespace faultline::harness {
namespace {

// Exit 0 while /proc/$1 is a live, non-zombie process, 1 otherwise.
constexpr const char* kAliveScript =
    "s=$(cat /proc/\"$1\"/stat 2>/dev/null) || exit 1; s=${s##*) }; "
    "case $s in Z*|X*) exit 1;; esac; exit 0";

constexpr const char* kUploadScript =
    "mkdir -p -- \"$(dirname -- \"$1\")\" && cat > \"$1\"";

constexpr auto kSignalTimeout = std::chrono::milliseconds(10000);
constexpr auto kCopyTimeout = std::chrono::milliseconds(120000);

}  // namespace

std::string DescribeFailure(const CommandResult& r) {
  if (!r.error.empty()) return r.error;
  std::string why = "exit " + std::to_string(r.exit_code);
  if (!r.err.empty()) {
    std::string line = r.err.substr(0, r.err.find('\n'));
    why += ": " + (line.empty() ? r.err : line);
  }
  return why;
}

Result<pid_t> PidFromStartOutput(const std::string& out,
                                 const std::string& where) {
  std::string first = out.substr(0, out.find('\n'));
  pid_t pid = 0;
  auto [ptr, ec] =
      std::from_chars(first.data(), first.data() + first.size(), pid);
  if (ec != std::errc() || ptr != first.data() + first.size() || pid <= 0) {
    return Fail(where + ": no pid in the output '" + out + "'");
  }
  return pid;
}

Status ExecRemote::Signal(pid_t pid, int sig) {
  std::string name = SignalName(sig);
  if (name.empty()) {
    return Fail("signal: unknown signal " + std::to_string(sig));
  }
  if (pid <= 0) return Fail("signal: bad pid " + std::to_string(pid));
  CommandOptions o;
  o.timeout = kSignalTimeout;
  CommandResult r = Run({"kill", "-s", name, std::to_string(pid)}, o);
  if (!r.ok()) {
    return Fail("kill -s " + name + " " + std::to_string(pid) + " on " +
                NodeLabel() + ": " + DescribeFailure(r));
  }
  return Ok();
}

bool ExecRemote::Alive(pid_t pid) {
  if (pid <= 0) return false;
  CommandOptions o;
  o.timeout = kSignalTimeout;
  CommandResult r =
      Run({"sh", "-c", kAliveScript, "sh", std::to_string(pid)}, o);
  if (r.exit_code == 0) return true;
  if (r.exit_code == 1) return false;
  return true;  // unknown (the node did not answer): never declare it dead
}

Status ExecRemote::Upload(const std::string& local, const std::string& remote) {
  std::ifstream in(local, std::ios::binary);
  if (!in) return Fail("upload: cannot read " + local);
  std::ostringstream data;
  data << in.rdbuf();
  CommandOptions o;
  o.timeout = kCopyTimeout;
  o.stdin_data = data.str();
  CommandResult r = Run({"sh", "-c", kUploadScript, "sh", remote}, o);
  if (!r.ok()) {
    return Fail("upload " + local + " to " + NodeLabel() + ":" + remote + ": " +
                DescribeFailure(r));
  }
  return Ok();
}

Status ExecRemote::Download(const std::string& remote,
                            const std::string& local) {
  CommandOptions o;
  o.timeout = kCopyTimeout;
  CommandResult r = Run({"cat", "--", remote}, o);
  if (!r.ok()) {
    return Fail("download " + NodeLabel() + ":" + remote + ": " +
                DescribeFailure(r));
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

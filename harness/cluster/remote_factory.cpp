#include "harness/cluster/remote_factory.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <vector>

#include "harness/cluster/docker_remote.h"
#include "harness/cluster/ssh_remote.h"

namespace faultline::harness {
namespace {

using Json = nlohmann::json;

Result<HostKeyPolicy> ParsePolicy(const std::string& p) {
  if (p == "strict" || p.empty()) return HostKeyPolicy::kStrict;
  if (p == "accept-new") return HostKeyPolicy::kAcceptNew;
  if (p == "off") return HostKeyPolicy::kOff;
  return Fail("unknown host_key_policy '" + p +
              "' (expected strict, accept-new or off)");
}

Result<std::unique_ptr<Remote>> OpenSsh(const RemoteDescriptor& d) {
  if (d.host.empty()) return Fail("ssh remote without a host");
  auto policy = ParsePolicy(d.host_key_policy);
  if (!policy) return Fail(policy.error());
  SshOptions o;
  o.host = d.host;
  o.port = d.port;
  if (!d.user.empty()) o.user = d.user;
  o.key_path = d.key;
  o.known_hosts = d.known_hosts;
  o.host_key_policy = *policy;
  o.sudo = d.sudo;
  auto remote = std::make_unique<SshRemote>(std::move(o));
  Status connected = remote->Connect();
  if (!connected) return Fail(connected.error());
  return std::unique_ptr<Remote>(std::move(remote));
}

// kind "docker": the container must exist and run.
Result<std::unique_ptr<Remote>> OpenDocker(const RemoteDescriptor& d) {
  if (d.container.empty()) return Fail("docker remote without a container");
  DockerOptions o;
  o.container = d.container;
  o.docker_host = d.docker_host;
  auto remote = std::make_unique<DockerRemote>(std::move(o));
  Status running = remote->Check();
  if (!running) return Fail(running.error());
  return std::unique_ptr<Remote>(std::move(remote));
}

}  // namespace

Result<std::unique_ptr<Remote>> OpenRemote(const RemoteDescriptor& d) {
  if (d.kind == "ssh") return OpenSsh(d);
  if (d.kind == "docker") return OpenDocker(d);
  // Other transports add their kind here.
  if (d.kind.empty()) return Fail("remote descriptor without a kind");
  return Fail("unknown remote kind '" + d.kind + "'");
}

std::string RemoteDescriptorToJson(const RemoteDescriptor& d) {
  Json j = Json::object();
  j["kind"] = d.kind;
  if (d.kind == "ssh") {
    j["host"] = d.host;
    j["port"] = d.port;
    j["user"] = d.user;
    j["key"] = d.key;
    j["known_hosts"] = d.known_hosts;
    j["host_key_policy"] = d.host_key_policy;
    j["sudo"] = d.sudo;
  }
  if (d.kind == "docker") {
    j["container"] = d.container;
    j["docker_host"] = d.docker_host;
  }
  return j.dump();
}

Result<RemoteDescriptor> RemoteDescriptorFromJson(std::string_view json) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    return Fail("remote descriptor is not an object with a \"kind\"");
  RemoteDescriptor d;
  auto str = [&](const char* k, std::string* dst) {
    if (j.contains(k) && j[k].is_string()) *dst = j[k].get<std::string>();
  };
  str("kind", &d.kind);
  str("host", &d.host);
  str("user", &d.user);
  str("key", &d.key);
  str("known_hosts", &d.known_hosts);
  str("host_key_policy", &d.host_key_policy);
  str("container", &d.container);
  str("docker_host", &d.docker_host);
  if (j.contains("port") && j["port"].is_number_integer())
    d.port = j["port"].get<int>();
  if (j.contains("sudo") && j["sudo"].is_boolean())
    d.sudo = j["sudo"].get<bool>();
  return d;
}

Result<unsigned long long> ParseStatStartTime(std::string_view line) {
  // The command name (field 2) is in parentheses and may hold spaces or
  // parentheses itself: fields 3.. start after the last ')'.
  auto close = line.rfind(')');
  if (close == std::string_view::npos) return Fail("malformed stat line");
  std::string_view rest = line.substr(close + 1);
  int field = 2;
  std::size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
    if (i >= rest.size()) break;
    std::size_t j = i;
    while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') ++j;
    if (++field == 22) {
      unsigned long long v = 0;
      auto [p, ec] = std::from_chars(rest.data() + i, rest.data() + j, v);
      if (ec != std::errc() || p != rest.data() + j)
        return Fail("malformed stat line");
      return v;
    }
    i = j;
  }
  return Fail("malformed stat line");
}

Result<unsigned long long> RemoteProcessStartTime(Remote& remote, pid_t pid) {
  if (pid <= 0) return Fail("bad pid " + std::to_string(pid));
  CommandOptions options;
  options.timeout = std::chrono::milliseconds(10000);
  auto r =
      remote.Run({"cat", "/proc/" + std::to_string(pid) + "/stat"}, options);
  if (!r.error.empty()) return Fail(r.error);
  if (!r.ok()) return Fail("pid " + std::to_string(pid) + " not found");
  return ParseStatStartTime(r.out);
}

}  // namespace faultline::harness

#include "harness/docker_cluster.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace faultline::harness {
namespace {

class DockerCluster : public Cluster {
 public:
  DockerCluster(std::vector<std::unique_ptr<DockerRemote>> remotes,
                std::vector<Node> nodes, std::string controller_ip,
                std::string work_dir)
      : remotes_(std::move(remotes)),
        nodes_(std::move(nodes)),
        controller_ip_(std::move(controller_ip)),
        work_dir_(std::move(work_dir)) {}

  const std::vector<Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return controller_ip_; }
  // The containers are the user's: only the work directory goes.
  Status Destroy() override {
    std::string problems;
    for (auto& remote : remotes_) {
      CommandResult r = remote->Run({"rm", "-rf", "--", work_dir_});
      if (!r.ok()) {
        problems += " " + remote->options().container + ": " +
                    (r.error.empty() ? r.err : r.error) + ";";
      }
    }
    if (!problems.empty())
      return Fail("removing " + work_dir_ + ":" + problems);
    return Ok();
  }

 private:
  std::vector<std::unique_ptr<DockerRemote>> remotes_;
  std::vector<Node> nodes_;
  std::string controller_ip_;
  std::string work_dir_;
};

}  // namespace

std::string DockerContainerName(const ClusterSpec& spec, int index) {
  if (index >= 0 && index < static_cast<int>(spec.containers.size())) {
    return spec.containers[static_cast<std::size_t>(index)];
  }
  return "faultline-n" + std::to_string(index + 1);
}

Result<DockerAddress> PickDockerAddress(std::string_view networks_json,
                                        const std::string& network) {
  nlohmann::json j = nlohmann::json::parse(networks_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Fail("docker inspect gave no network list");
  }
  std::vector<std::pair<std::string, DockerAddress>> found;
  std::string names;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!names.empty()) names += ", ";
    names += it.key();
    if (!it.value().is_object()) continue;
    DockerAddress a;
    a.ip = it.value().value("IPAddress", "");
    a.gateway = it.value().value("Gateway", "");
    if (a.ip.empty()) continue;
    if (network.empty() || it.key() == network) {
      found.emplace_back(it.key(), std::move(a));
    }
  }
  if (names.empty()) names = "none";
  if (found.empty()) {
    return Fail(network.empty()
                    ? "no IPv4 address on any network (networks: " + names + ")"
                    : "no IPv4 address on network " + network +
                          " (networks: " + names + ")");
  }
  if (found.size() > 1) {
    return Fail("on several networks (" + names +
                "); set cluster.network to the one the nodes talk on");
  }
  return found.front().second;
}

Result<std::unique_ptr<Cluster>> OpenDockerCluster(
    const ClusterSpec& spec, const std::string& work_dir) {
  const std::string last = work_dir.substr(work_dir.find_last_of('/') + 1);
  if (work_dir.empty() || work_dir.front() != '/' ||
      !last.starts_with("faultline-")) {
    return Fail("docker: work directory '" + work_dir +
                "' must be absolute and named faultline-*");
  }
  std::vector<std::unique_ptr<DockerRemote>> remotes;
  std::vector<Node> nodes;
  std::string controller_ip;
  for (int i = 0; i < spec.nodes; ++i) {
    DockerOptions o;
    o.container = DockerContainerName(spec, i);
    o.docker_host = spec.docker_host;
    auto remote = std::make_unique<DockerRemote>(o);
    if (auto ok = remote->Check(); !ok) return Fail(ok.error());
    std::vector<std::string> argv = DockerBase(o);
    argv.insert(argv.end(),
                {"inspect", "--type", "container", "--format",
                 "{{json .NetworkSettings.Networks}}", o.container});
    CommandOptions co;
    co.timeout = std::chrono::milliseconds(15000);
    CommandResult r = RunCommand(argv, co);
    if (!r.ok()) {
      return Fail("docker: inspect " + o.container + ": " +
                  (r.error.empty() ? r.err : r.error));
    }
    auto address = PickDockerAddress(r.out, spec.network);
    if (!address) {
      return Fail("docker: container " + o.container + ": " + address.error());
    }
    if (controller_ip.empty()) controller_ip = address->gateway;
    CommandResult mk = remote->Run({"mkdir", "-p", "--", work_dir});
    if (!mk.ok()) {
      return Fail("docker: cannot create " + work_dir + " in " + o.container +
                  ": " + (mk.error.empty() ? mk.err : mk.error));
    }
    Node node;
    node.index = i;
    node.name = "n" + std::to_string(i + 1);
    node.ip = address->ip;
    node.remote = remote.get();
    nodes.push_back(std::move(node));
    remotes.push_back(std::move(remote));
  }
  return std::unique_ptr<Cluster>(
      std::make_unique<DockerCluster>(std::move(remotes), std::move(nodes),
                                      std::move(controller_ip), work_dir));
}

}  // namespace faultline::harness

#include "harness/cluster/docker_cluster.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace faultline::harness {
namespace {

class DockerCluster : public Cluster {
 public:
  DockerCluster(std::vector<std::unique_ptr<DockerRemote>> remotes,
                std::vector<Node> nodes, std::string controller_ip,
                std::string work_dir, Ledger& ledger, std::vector<long> seqs)
      : remotes_(std::move(remotes)),
        nodes_(std::move(nodes)),
        controller_ip_(std::move(controller_ip)),
        work_dir_(std::move(work_dir)),
        ledger_(ledger),
        dir_seqs_(std::move(seqs)) {}

  const std::vector<Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return controller_ip_; }
  // The containers are the user's: only the work directory goes.
  Status Destroy() override {
    std::string problems;
    for (std::size_t i = 0; i < remotes_.size(); ++i) {
      if (dir_seqs_[i] == 0) continue;
      CommandResult r = remotes_[i]->Run({"rm", "-rf", "--", work_dir_});
      if (!r.ok()) {
        problems += " " + remotes_[i]->options().container + ": " +
                    (r.error.empty() ? r.err : r.error) + ";";
        continue;
      }
      ledger_.MarkHealed(dir_seqs_[i]);
      dir_seqs_[i] = 0;
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
  Ledger& ledger_;
  std::vector<long> dir_seqs_;  // ledger seq of each node's dir, 0 = none
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

Result<std::unique_ptr<Cluster>> OpenDockerCluster(const ClusterSpec& spec,
                                                   const std::string& work_dir,
                                                   Ledger& ledger) {
  const std::string last = work_dir.substr(work_dir.find_last_of('/') + 1);
  if (work_dir.empty() || work_dir.front() != '/' ||
      !last.starts_with("faultline-")) {
    return Fail("docker: work directory '" + work_dir +
                "' must be absolute and named faultline-*");
  }
  std::vector<std::unique_ptr<DockerRemote>> remotes;
  std::vector<Node> nodes;
  std::string controller_ip;
  std::vector<long> seqs;
  // Removes what was made so far when a later container fails.
  auto undo = [&] {
    for (std::size_t k = 0; k < seqs.size(); ++k) {
      if (remotes[k]->Run({"rm", "-rf", "--", work_dir}).ok()) {
        ledger.MarkHealed(seqs[k]);
      }
    }
  };
  for (int i = 0; i < spec.nodes; ++i) {
    DockerOptions o;
    o.container = DockerContainerName(spec, i);
    o.docker_host = spec.docker_host;
    auto remote = std::make_unique<DockerRemote>(o);
    if (auto ok = remote->Check(); !ok) {
      undo();
      return Fail(ok.error());
    }
    std::vector<std::string> argv = DockerBase(o);
    argv.insert(argv.end(),
                {"inspect", "--type", "container", "--format",
                 "{{json .NetworkSettings.Networks}}", o.container});
    CommandOptions co;
    co.timeout = std::chrono::milliseconds(15000);
    CommandResult r = RunCommand(argv, co);
    if (!r.ok()) {
      undo();
      return Fail("docker: inspect " + o.container + ": " +
                  (r.error.empty() ? r.err : r.error));
    }
    auto address = PickDockerAddress(r.out, spec.network);
    if (!address) {
      undo();
      return Fail("docker: container " + o.container + ": " + address.error());
    }
    if (controller_ip.empty()) controller_ip = address->gateway;
    LedgerEntry entry;
    entry.kind = "dir";
    entry.name = work_dir;
    entry.node = "n" + std::to_string(i + 1);
    entry.remote = remote->Descriptor();
    const long seq = ledger.Record(entry);
    if (seq < 0) {
      undo();
      return Fail("cannot write the fault ledger " + ledger.path());
    }
    CommandResult mk = remote->Run({"mkdir", "-p", "--", work_dir});
    if (!mk.ok()) {
      ledger.MarkHealed(seq);
      undo();
      return Fail("docker: cannot create " + work_dir + " in " + o.container +
                  ": " + (mk.error.empty() ? mk.err : mk.error));
    }
    seqs.push_back(seq);
    Node node;
    node.index = i;
    node.name = "n" + std::to_string(i + 1);
    node.ip = address->ip;
    node.remote = remote.get();
    nodes.push_back(std::move(node));
    remotes.push_back(std::move(remote));
  }
  return std::unique_ptr<Cluster>(std::make_unique<DockerCluster>(
      std::move(remotes), std::move(nodes), std::move(controller_ip), work_dir,
      ledger, std::move(seqs)));
}

}  // namespace faultline::harness

#include "harness/cluster/ssh_cluster.h"

#include <future>
#include <mutex>
#include <vector>

#include "harness/cluster/ssh_remote.h"
#include "harness/ledger/ledger.h"

namespace faultline::harness {
namespace {

HostKeyPolicy PolicyOf(const std::string& p) {
  if (p == "accept-new") return HostKeyPolicy::kAcceptNew;
  if (p == "off") return HostKeyPolicy::kOff;
  return HostKeyPolicy::kStrict;
}

class SshClusterImpl : public SshCluster {
 public:
  SshClusterImpl(Ledger& ledger, std::string controller_ip,
                 std::string node_work_dir)
      : ledger_(ledger),
        controller_ip_(std::move(controller_ip)),
        node_work_dir_(std::move(node_work_dir)) {}

  const std::vector<Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return controller_ip_; }
  const std::string& node_work_dir() const override { return node_work_dir_; }

  Status Destroy() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string problems;
    for (std::size_t i = 0; i < remotes_.size(); ++i) {
      if (dir_seqs_[i] == 0) continue;
      auto rm = remotes_[i]->Run({"rm", "-rf", "--", node_work_dir_});
      if (!rm.ok()) {
        problems += " " + nodes_[i].name + ": rm -rf " + node_work_dir_ + ": " +
                    (rm.error.empty() ? rm.err : rm.error) + ";";
        continue;
      }
      ledger_.MarkHealed(dir_seqs_[i]);
      dir_seqs_[i] = 0;
    }
    if (!problems.empty()) return Fail("ssh cluster:" + problems);
    return Ok();
  }

  // Connects every node (in parallel); the first failure, by node order.
  Status Connect(const ClusterSpec& spec) {
    for (std::size_t i = 0; i < spec.hosts.size(); ++i) {
      SshOptions o;
      o.host = spec.hosts[i].address;
      o.port = spec.port;
      o.user = spec.user;
      o.key_path = spec.key;
      o.known_hosts = spec.known_hosts;
      o.host_key_policy = PolicyOf(spec.host_key_policy);
      o.sudo = spec.sudo;
      remotes_.push_back(std::make_unique<SshRemote>(std::move(o)));
      Node n;
      n.index = static_cast<int>(i);
      n.name = spec.hosts[i].name;
      n.ip = spec.hosts[i].address;
      n.remote = remotes_.back().get();
      nodes_.push_back(n);
      dir_seqs_.push_back(0);
    }
    std::vector<std::future<Status>> pending;
    for (auto& r : remotes_) {
      SshRemote* remote = r.get();
      pending.push_back(std::async(std::launch::async, [remote]() -> Status {
        Status s = remote->Connect();
        if (!s) return s;
        // One command proves the login shell and, with sudo, `sudo -n`.
        auto probe = remote->Run({"true"});
        if (!probe.ok()) {
          return Fail("a first command failed: " +
                      (probe.error.empty() ? probe.err : probe.error));
        }
        return Ok();
      }));
    }
    std::string problems;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      Status s = pending[i].get();
      if (!s) problems += " " + nodes_[i].name + ": " + s.error() + ";";
    }
    if (!problems.empty())
      return Fail("cannot reach the ssh nodes:" + problems);
    return Ok();
  }

  // Records and creates the node directory on every node.
  Status MakeDirs() {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t i = 0; i < remotes_.size(); ++i) {
      LedgerEntry e;
      e.kind = "dir";
      e.name = node_work_dir_;
      e.node = nodes_[i].name;
      e.remote = remotes_[i]->Descriptor();
      long seq = ledger_.Record(e);
      if (seq < 0)
        return Fail("cannot write the fault ledger " + ledger_.path());
      dir_seqs_[i] = seq;
      auto mk = remotes_[i]->Run({"mkdir", "-p", "--", node_work_dir_});
      if (!mk.ok()) {
        return Fail(nodes_[i].name + ": mkdir " + node_work_dir_ + ": " +
                    (mk.error.empty() ? mk.err : mk.error));
      }
    }
    return Ok();
  }

 private:
  Ledger& ledger_;
  const std::string controller_ip_;
  const std::string node_work_dir_;
  std::mutex mu_;
  std::vector<std::unique_ptr<SshRemote>> remotes_;
  std::vector<Node> nodes_;
  std::vector<long> dir_seqs_;  // ledger seq of each node's dir, 0 = none
};

}  // namespace

Result<std::unique_ptr<SshCluster>> CreateSshCluster(const ClusterSpec& spec,
                                                     const std::string& run_id,
                                                     Ledger& ledger) {
  if (spec.provider != "ssh") return Fail("not an ssh cluster spec");
  if (spec.hosts.empty()) return Fail("the ssh cluster lists no hosts");
  if (run_id.empty() || run_id.find('/') != std::string::npos)
    return Fail("bad run id '" + run_id + "'");
  std::string base = spec.work_dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  const std::string dir = (base == "/" ? "" : base) + "/faultline-" + run_id;
  auto cluster =
      std::make_unique<SshClusterImpl>(ledger, spec.controller_ip, dir);
  Status s = cluster->Connect(spec);
  if (!s) return Fail(s.error());
  s = cluster->MakeDirs();
  if (!s) {
    (void)cluster->Destroy();
    return Fail(s.error());
  }
  return std::unique_ptr<SshCluster>(std::move(cluster));
}

}  // namespace faultline::harness

// The ssh cluster provider (docs/remote.md): nodes are hosts the controller
// reaches over SSH, one SshRemote (harness/cluster/ssh_remote.h) per node,
// listed in the config (ClusterSpec::hosts). Node i keeps the configured name
// and address; Node::netns is empty.
//
// Create connects to every node before it returns (in parallel), so a bad
// address, key, host key or sudo setup fails the run before anything starts,
// naming the node. Then it records a `dir` ledger entry with the node's
// RemoteDescriptor and creates the run's node directory
// <work_dir>/faultline-<run id> (node_work_dir()) on every node: targets keep
// their data, logs and clock files there, and `faultline heal` removes it
// after a crash.
//
// Destroy removes the node directories (and marks their entries healed). It
// stops nothing: the provider started no process (targets stop theirs).
// Idempotent.
//
// Thread-safety: the Cluster and its Remotes may be used from any thread.
#pragma once

#include <memory>
#include <string>

#include "harness/cluster/cluster.h"
#include "harness/config/spec.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

class Ledger;

class SshCluster : public Cluster {
 public:
  // The run's directory on every node.
  virtual const std::string& node_work_dir() const = 0;
};

// Creates the cluster for `spec` (provider "ssh", hosts non-empty). `ledger`
// must outlive the cluster.
Result<std::unique_ptr<SshCluster>> CreateSshCluster(const ClusterSpec& spec,
                                                     const std::string& run_id,
                                                     Ledger& ledger);

}  // namespace faultline::harness

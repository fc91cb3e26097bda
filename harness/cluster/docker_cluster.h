// The docker cluster provider: nodes are containers that already run (a
// user's `docker compose up -d`, or a test's `docker run`), reached with
// DockerRemote (harness/cluster/docker_remote.h). faultline creates no
// container and removes none: it creates the run's work directory in each
// container (recorded in the fault ledger first, with the container's remote
// descriptor, so `faultline heal` removes it after a crash) and Destroy
// removes it again.
//
// Node i (0-based) is named n<i+1> and uses the container
// spec.containers[i], or faultline-n<i+1> when no list is given (the names
// docker/compose.yaml gives its services). Its address is the container's
// IPv4 address on `spec.network` (or on its only network), read with
// `docker inspect`; the controller's address is that network's gateway,
// which is the host's own address on a local bridge network. The controller
// must reach the nodes' addresses directly (a bridge network of an engine
// on this machine does; a remote engine's usually does not).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "harness/cluster/cluster.h"
#include "harness/cluster/docker_remote.h"
#include "harness/config/spec.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger.h"

namespace faultline::harness {

// The container of node `index` (0-based) under `spec`.
std::string DockerContainerName(const ClusterSpec& spec, int index);

struct DockerAddress {
  std::string ip;
  std::string gateway;
};

// Picks the address from `docker inspect --format '{{json
// .NetworkSettings.Networks}}'` output: the network `network`, or, when it
// is empty, the container's only network with an IPv4 address. Fails with a
// message naming the networks found when there is no such address or the
// choice is ambiguous.
Result<DockerAddress> PickDockerAddress(std::string_view networks_json,
                                        const std::string& network);

// Checks every container (exists, running), reads the addresses, creates
// `work_dir` (absolute; its last component must start with "faultline-")
// in each container and returns the cluster. Fails with a one-line message
// naming the container and what to do. `ledger` must outlive the cluster.
Result<std::unique_ptr<Cluster>> OpenDockerCluster(const ClusterSpec& spec,
                                                   const std::string& work_dir,
                                                   Ledger& ledger);

}  // namespace faultline::harness

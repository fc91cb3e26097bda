// A running cluster of nodes, as a provider (netns, later ssh/docker) hands
// it to targets, clients and nemeses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "harness/cluster/remote.h"

namespace faultline::harness {

struct Node {
  int index = 0;             // 0-based position in the cluster
  std::string name;          // "n1", "n2", ... (stable, used in histories)
  std::string ip;            // address other nodes and the controller use
  std::string netns;         // namespace name (netns provider), else ""
  Remote* remote = nullptr;  // owned by the Cluster
};

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual const std::vector<Node>& nodes() const = 0;
  // Address of the controller as the nodes see it (the bridge address).
  virtual std::string controller_ip() const = 0;
  // Removes everything the provider created: processes in the nodes,
  // links, namespaces, bridge, in that order. Idempotent.
  virtual Status Destroy() = 0;
};

}  // namespace faultline::harness

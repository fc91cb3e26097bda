// RemoteDescriptor: how to reach a node again from a fresh process, e.g. in
// `faultline heal` after the controller was SIGKILLed. A fault-ledger entry
// made for a node with its own process table carries one
// (harness/ledger/ledger.h), and OpenRemote (harness/cluster/remote_factory.h)
// turns it back into a Remote.
//
// `kind` selects the transport: "" = the controller itself (local and netns
// nodes; nothing to record), "ssh" = SshRemote (harness/cluster/ssh_remote.h).
// Other transports add their kind and, below, a block of their own fields.
// Plain value type, no secrets: `key` is the path of a key file, never the
// key itself.
#pragma once

#include <string>

namespace faultline::harness {

struct RemoteDescriptor {
  std::string kind;  // "" (controller), "ssh", "docker"

  // kind "ssh"
  std::string host;  // address or name
  int port = 22;
  std::string user;
  std::string key;          // private key file; "" = agent and default keys
  std::string known_hosts;  // "" = ~/.ssh/known_hosts
  std::string host_key_policy = "strict";  // strict | accept-new | off
  bool sudo = false;

  // kind "docker" (harness/cluster/docker_remote.h)
  std::string container;    // name or id
  std::string docker_host;  // "" = docker's default (local socket)

  bool empty() const { return kind.empty(); }
  bool operator==(const RemoteDescriptor&) const = default;
};

}  // namespace faultline::harness

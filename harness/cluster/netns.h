// The netns cluster provider: one Linux network namespace per node on a
// private bridge, all on the controller's host. Needs root, `ip` and
// `iptables`.
//
// Layout for run id R (short id S = ShortRunId(R), subnet P/len):
//   bridge      flb-S            controller address: last usable host of P
//   namespace   fl-S-n<i>        node i (1-based) address: P + i, on eth0
//   veth        flv-S-<i> (host side, enslaved to the bridge) <-> eth0 (in
//               the namespace); lo is up in every namespace.
// Traffic stays on the bridge: no IP forwarding, no NAT, no default route.
// When the host FORWARD policy is not ACCEPT (bridged packets traverse it
// because of br_netfilter), an ACCEPT rule `-i flb-S -o flb-S` is added.
// Every resource is recorded in the run's Ledger before it is created, so
// HealLedger can remove it after a controller crash.
//
// Thread-safety: the Cluster and its Remotes may be used from any thread;
// Destroy may race with Remote calls (those then fail cleanly).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/cluster/remote.h"
#include "harness/config/spec.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger.h"

namespace faultline::harness {

// Short id used in resource names (interface names are at most 15 chars):
// `run_id` itself when it is 1..8 chars of [a-z0-9], else 8 hex digits of
// a hash of it. Deterministic.
std::string ShortRunId(const std::string& run_id);

struct NetnsOptions {
  // Add the FORWARD ACCEPT rule for the bridge even when the host policy is
  // ACCEPT (tests use it to exercise that path).
  bool force_forward_rule = false;
  // How long setup waits for leftover interfaces with our names to vanish.
  std::chrono::milliseconds leftover_wait{5000};
};

// Creates the cluster described by `spec` (spec.provider must be "netns").
// Fails with a one-line message, after removing whatever it created, when
// not root, when `ip`/`iptables` are missing, when the subnet is not a
// private IPv4 /16../29 with room for the nodes, or when it overlaps an
// address already configured on the host. `ledger` must outlive the
// returned cluster.
Result<std::unique_ptr<Cluster>> CreateNetnsCluster(
    const ClusterSpec& spec, const std::string& run_id, Ledger& ledger,
    const NetnsOptions& options = {});

// Opens a TCP listening socket bound to ip:port inside namespace `netns`
// ("" = the controller's own namespace); the kernel completes handshakes
// into the backlog, so nothing needs to accept. Returns the fd (caller
// closes). Entering a namespace needs root.
Result<int> ListenTcpIn(const std::string& netns, const std::string& ip,
                        int port);

// True when a TCP connection from namespace `netns` ("" = the controller's)
// to ip:port is established within `timeout`.
bool TcpReachableFrom(const std::string& netns, const std::string& ip, int port,
                      std::chrono::milliseconds timeout);

// Remote for a node inside a namespace. Run/Start enter the namespace
// (setns) before exec; Start records a `process` ledger entry (pid and start
// time) right after the process exists. Upload/Download are plain file
// copies: namespaces share the filesystem.
class NetnsRemote : public Remote {
 public:
  NetnsRemote(std::string netns, std::string node_name, Ledger* ledger);

  CommandResult Run(const std::vector<std::string>& argv,
                    const CommandOptions& options = {}) override;
  Result<pid_t> Start(const std::vector<std::string>& argv,
                      const std::string& log_path,
                      const std::vector<std::string>& env) override;
  Status Signal(pid_t pid, int sig) override;
  Status Upload(const std::string& local, const std::string& remote) override;
  Status Download(const std::string& remote, const std::string& local) override;

  const std::string& netns() const { return netns_; }

  // The `process` entries Start recorded since the last call (the cluster
  // marks them healed on Destroy).
  std::vector<LedgerEntry> TakeStarted();

 private:
  std::string netns_;
  std::string node_name_;
  Ledger* ledger_;  // may be null (then Start records nothing)
  std::mutex mu_;
  std::vector<LedgerEntry> started_;
};

}  // namespace faultline::harness

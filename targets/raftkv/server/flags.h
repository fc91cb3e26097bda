// Command-line flags and config file of the raftkv server
// (docs/targets/raftkv.md, "Running it").
//
// Flags: `--name value` or `--name=value`; boolean flags take no value.
// `--config FILE` reads `name = value` lines (`#` comments, blank lines;
// names with or without the leading `--`; a boolean as `name` alone or
// `name = true|false`). Flags on the command line win over the file.
//
// Pure apart from reading the config file. Thread-safety: none needed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/server/log.h"

namespace faultline::raftkv::server {

struct HostPort {
  std::string host;
  int port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
  bool operator==(const HostPort&) const = default;
};

// One member of --peers: `id=host:port[/client]`, where `client` is the
// member's client (RESP) address as `host:port`, or just `port` (same host
// as the peer address). Without it the client address is the peer host with
// this node's --listen port.
struct Peer {
  raft::NodeId id = raft::kNone;
  HostPort raft;    // peer (Raft) port
  HostPort client;  // client (RESP) port, for -NOTLEADER redirects
};

struct Options {
  raft::NodeId id = raft::kNone;
  std::map<raft::NodeId, Peer> peers;  // includes `id`
  HostPort listen{"127.0.0.1", 6379};
  std::string data_dir;
  raft::ReadMode read_mode = raft::ReadMode::kReadIndex;
  int heartbeat_ms = 50;
  int election_ms = 500;
  int follower_lease_ms = 300;
  // The clock-rate error every lease assumes (raft::Config::drift_epsilon,
  // lease.h "Clock model"; also the lock TTL margin): each node's clock
  // runs at a rate within [1/(1+e), 1+e] of real time. 0..0.5.
  double lease_drift_bound = 0.001;
  bool pre_vote = true;
  bool check_quorum = true;
  std::uint64_t snapshot_entries = 10000;
  int request_timeout_ms = 5000;
  // Replication batching (raft::Config): entries per append message and
  // unacknowledged appends per follower. Smaller values only slow
  // replication down; they change no safety rule.
  int max_append_entries = 256;
  int max_inflight = 64;
  raft::Unsafe unsafe = raft::Unsafe::kNone;
  LogLevel log_level = LogLevel::kInfo;
};

struct FlagsResult {
  bool ok = false;
  bool help = false;  // --help was given: print Usage() and exit 0
  Options options;
  std::string error;  // !ok: one line naming the flag (or file:line)
};

// `args` excludes argv[0].
FlagsResult ParseFlags(const std::vector<std::string>& args);

// Parses `host:port` (port 1..65535). Returns false on malformed input.
bool ParseHostPort(const std::string& s, HostPort* out);

// Multi-line usage text.
std::string Usage();

}  // namespace faultline::raftkv::server

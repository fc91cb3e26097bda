// TestSpec: a validated, seeded test campaign, the result of loading a YAML
// config (harness/config.h) and applying command-line overrides. Every field
// is documented for users in docs/config.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace faultline::harness {

struct ClusterSpec {
  std::string provider = "netns";     // only "netns" for now
  int nodes = 5;                      // 1..9 (etcd: odd sizes recommended)
  std::string subnet = "10.77.0.0/24";  // private IPv4 /16../29; node i gets
                                        // host i+1, the controller the last
};

struct EtcdSpec {
  bool pre_vote = true;
  int heartbeat_ms = 100;
  int election_timeout_ms = 1000;
  bool serializable_reads = false;  // true is known to allow stale reads
  std::string binary = "etcd";      // path or name on PATH
};

struct TargetSpec {
  std::string name = "etcd";
  EtcdSpec etcd;
};

struct WorkloadSpec {
  std::string name = "register";
  int keys = 8;             // registers, spread over client threads
  int concurrency = 10;     // worker threads
  double rate = 200;        // invocations per second, all workers; 0 = no limit
  // Relative weights of the op mix (need not sum to anything).
  double read = 50;
  double write = 30;
  double cas = 20;
  int op_timeout_ms = 2000;  // client-side timeout; a timeout is `info`
};

struct NemesisSpec {
  // Fault kinds: "partition", "pause", "kill". Empty: no faults.
  std::vector<std::string> faults = {"partition", "pause", "kill"};
  double interval_s = 10;  // quiet time before each fault
  double duration_s = 10;  // how long each fault lasts before it heals
  // Partition shapes: "one", "leader", "halves", "majorities-ring", "bridge".
  std::vector<std::string> partitions = {"one", "leader", "halves",
                                         "majorities-ring", "bridge"};
  // Which nodes pause/kill hit: "one", "leader", "minority", "majority", "all".
  std::vector<std::string> targets = {"one", "leader", "minority"};
};

struct TestSpec {
  std::string name;         // [a-z0-9-]+; the store folder
  std::string source_file;  // config path, for messages
  std::uint64_t seed = 0;
  bool seed_given = false;  // false: seed was drawn at random
  double time_limit_s = 60;
  double recovery_s = 5;    // after the final heal, before final reads
  std::string store_dir = "store";
  std::optional<std::string> expect;  // "valid" | "invalid"
  ClusterSpec cluster;
  TargetSpec target;
  WorkloadSpec workload;
  NemesisSpec nemesis;
};

}  // namespace faultline::harness

// The config schema: YAML sections -> TestSpec fields, with the range and
// hint of each field. Generic value reading is in config_reader.cpp,
// cross-field rules in config_validate.cpp.
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/config_reader.h"
#include "harness/fault_group.h"

namespace faultline::harness::config_internal {

const std::vector<std::pair<std::string, std::string>>& AllKeys() {
  static const std::vector<std::pair<std::string, std::string>> kKeys = {
      {"", "name"},
      {"", "description"},
      {"", "seed"},
      {"", "time_limit"},
      {"", "recovery"},
      {"", "store"},
      {"", "expect"},
      {"", "cluster"},
      {"", "target"},
      {"", "workload"},
      {"", "nemesis"},
      {"", "checker"},
      {"cluster", "provider"},
      {"cluster", "nodes"},
      {"cluster", "subnet"},
      // provider: docker
      {"cluster", "containers"},
      {"cluster", "docker_host"},
      {"cluster", "network"},
      // end provider: docker
      // provider: ssh
      {"cluster", "user"},
      {"cluster", "key"},
      {"cluster", "port"},
      {"cluster", "known_hosts"},
      {"cluster", "host_key_policy"},
      {"cluster", "sudo"},
      {"cluster", "controller_ip"},
      {"cluster", "work_dir"},
      {"cluster", "system_clock"},
      {"cluster.nodes[]", "name"},
      {"cluster.nodes[]", "address"},
      // end provider: ssh
      {"target", "pre_vote"},
      {"target", "heartbeat_ms"},
      {"target", "election_timeout_ms"},
      {"target", "serializable_reads"},
      {"target", "binary"},
      {"target", "extra_args"},
      {"target", "read_mode"},
      {"target", "follower_lease_ms"},
      {"target", "lease_drift_bound"},
      {"target", "check_quorum"},
      {"target", "snapshot_entries"},
      {"target", "unsafe"},
      {"target", "down_after_ms"},
      {"target", "failover_timeout_ms"},
      {"target", "min_replicas_to_write"},
      {"target", "min_replicas_max_lag_s"},
      {"target", "appendonly"},
      {"target", "sentinel_binary"},
      {"target", "tick_ms"},
      {"target", "init_limit"},
      {"target", "sync_limit"},
      {"target", "sync_reads"},
      {"target", "java"},
      {"target", "classpath"},
      {"target", "jvm_args"},
      {"workload", "keys"},
      {"workload", "concurrency"},
      {"workload", "rate"},
      {"workload", "mix"},
      {"workload", "op_timeout_ms"},
      {"workload", "locks"},
      {"workload", "ttl_ms"},
      {"workload", "hold_ms"},
      {"workload", "writes_per_hold"},
      {"workload", "stall_probability"},
      {"workload", "stall_ms"},
      {"workload", "fenced"},
      {"workload", "observe_ms"},
      {"workload.mix", "read"},
      {"workload.mix", "write"},
      {"workload.mix", "cas"},
      {"nemesis", "faults"},
      {"nemesis", "interval"},
      {"nemesis", "duration"},
      {"nemesis", "partitions"},
      {"nemesis", "targets"},
      {"nemesis", "delay_ms"},
      {"nemesis", "loss_probability"},
      {"nemesis", "clock_offset_ms"},
      {"nemesis", "clock_rate"},
      {"nemesis", "clock_monotonic"},
      {"nemesis", "clock_mode"},
      {"nemesis", "partition_mode"},
      {"nemesis", "clock_strobe_delta_ms"},
      {"nemesis", "clock_strobe_period_ms"},
      {"checker", "timeout"},
      {"checker", "memory_limit_mb"},
      {"checker", "threads"},
  };
  return kKeys;
}

namespace {

// nemesis.partition_mode values (defined with the nemesis.faults entries).
const std::vector<KnownName>& PartitionModes();

class Parser : public YamlReader {
 public:
  Parser(TestSpec* spec, Provenance* prov, Diagnostics* diag)
      : YamlReader(prov, diag), spec_(spec) {}

  void Run(const YAML::Node& root);

 private:
  void Cluster(const Item& it);
  // provider: docker
  static bool IsDockerName(const std::string& s);
  void DockerContainers(const Item& x);
  void DockerHost(const Item& x);
  // provider: ssh: `nodes` as a list of hosts, and the ssh-only keys.
  void SshHosts(const Item& it);
  std::vector<FieldDef> SshFields();
  void Target(const Item& it);
  std::vector<FieldDef> EtcdFields();
  std::vector<FieldDef> RaftkvFields();
  std::vector<FieldDef> ZookeeperFields();
  std::vector<FieldDef> RedisFields();
  // The keys of target `name` (etcd's for an unknown name).
  std::vector<FieldDef> FieldsOf(const std::string& name);
  // Reports a key of another target than the one named (`name_known`:
  // target.name is a known target, else its own error says enough).
  FieldDef Foreign(const std::string& key, const std::string& owner,
                   const std::string& chosen, bool name_known);
  // extra_args: reports (and marks bad) every flag in `reserved`.
  void ReservedFlags(const Item& x, const std::vector<std::string>& args,
                     const std::set<std::string>& reserved,
                     const std::string& hint);
  void Workload(const Item& it);
  void Mix(const Item& it);
  void Nemesis(const Item& it);
  // nemesis.faults with mappings (per-fault settings, together groups).
  void ParseFaultEntries(const Item& it, NemesisSpec* n);
  bool ParseFaultEntry(const Item& it, harness::FaultEntry* out);
  void ParseTogether(const Item& x, harness::FaultEntry* out, bool* have_list);
  bool ParseFaultMember(const Item& it, bool in_group, FaultSettings* out,
                        std::optional<double>* duration);
  // `same` in a targets/partitions list (harness/fault_group.h): false when
  // the list does not name it; else true, reporting misuse, with *out =
  // {"same"} when it is used right.
  bool SameList(const Item& x, bool in_group, std::vector<std::string>* out);
  // `same` in a together group: not on the first fault, and only after a
  // first fault that acts on nodes.
  void CheckSameInGroup(const Item& x, const harness::FaultEntry& group);
  void Checker(const Item& it);

  TestSpec* spec_;
};

void Parser::Cluster(const Item& it) {
  Record(it);
  ClusterSpec& c = spec_->cluster;
  std::vector<FieldDef> fields = {
      {"provider",
       [&](const Item& x) {
         static const std::vector<KnownName> kProviders = {
             {"netns", "network namespaces on this machine", 1},
             {"docker", "running containers (docs/docker.md)", 1},
             {"ssh", "hosts reached over SSH (docs/remote.md)", 1}};
         Enum(x, kProviders, "cluster provider", &c.provider);
       }},
      {"nodes",
       [&](const Item& x) {
         if (x.value.IsSequence()) {
           SshHosts(x);
           return;
         }
         Int(x, 1, 9, &c.nodes,
             "faultline runs 1 to 9 nodes; etcd is usually tested "
             "with 3 or 5");
       }},
      {"subnet",
       [&](const Item& x) {
         std::string text;
         if (!Text(x, false, &text)) return;
         auto cidr = ParseCidr(text);
         if (!cidr) {
           Error(x, "expected an IPv4 network like 10.77.0.0/24, got " +
                        Got(x.value));
           return;
         }
         const std::uint32_t a = cidr->address;
         const bool is_private = (a >> 24) == 10 ||
                                 (a >> 20) == ((172u << 4) | 1u) ||
                                 (a >> 16) == ((192u << 8) | 168u);
         if (!is_private) {
           Error(x,
                 text +
                     " is not a private network; expected a "
                     "subnet of 10.0.0.0/8, 172.16.0.0/12 or "
                     "192.168.0.0/16",
                 "faultline only creates networks on private "
                 "addresses, e.g. `subnet: 10.77.0.0/24`");
           return;
         }
         if (cidr->prefix < 16 || cidr->prefix > 29) {
           Error(x,
                 "prefix /" + std::to_string(cidr->prefix) +
                     " is out of range; expected /16 to /29",
                 "e.g. `subnet: 10.77.0.0/24`");
           return;
         }
         const std::uint32_t mask = ~std::uint32_t{0} << (32 - cidr->prefix);
         if ((a & ~mask) != 0) {
           Cidr net{a & mask, cidr->prefix};
           Error(x,
                 text +
                     " has host bits set; a subnet is written "
                     "with its network address",
                 "did you mean " + FormatCidr(net) + "?");
           return;
         }
         c.subnet = text;
       }},
      // provider: docker
      {"containers", [&](const Item& x) { DockerContainers(x); }},
      {"docker_host", [&](const Item& x) { DockerHost(x); }},
      {"network",
       [&](const Item& x) {
         std::string text;
         if (!Text(x, false, &text)) return;
         if (!IsDockerName(text)) {
           Error(x, "'" + Shorten(text) + "' is not a docker network name",
                 "letters, digits and _ . - (not first), e.g. "
                 "`network: faultline`");
           return;
         }
         c.network = text;
       }},
      // end provider: docker
  };
  for (FieldDef& f : SshFields()) fields.push_back(std::move(f));
  WalkMap(it.value, "cluster", ValueOrigin(it), fields);
  // provider: docker: without `nodes`, the container list sets the size.
  if (!c.containers.empty() && prov_->at.count("cluster.nodes") == 0 &&
      prov_->bad.count("cluster.containers") == 0) {
    c.nodes = static_cast<int>(c.containers.size());
    prov_->at["cluster.nodes"] = prov_->Of("cluster.containers");
  }
}

// --- provider: docker ------------------------------------------------------

// Docker's rule for container and network names.
bool Parser::IsDockerName(const std::string& s) {
  static const std::regex kName("[a-zA-Z0-9][a-zA-Z0-9_.-]*");
  return s.size() <= 128 && std::regex_match(s, kName);
}

void Parser::DockerContainers(const Item& x) {
  ClusterSpec& c = spec_->cluster;
  std::vector<std::string> names;
  if (!TextList(x, &names)) return;
  const auto bad = [&](std::size_t i, std::string message, std::string hint) {
    Item elem{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
              x.name};
    Error(elem, std::move(message), std::move(hint));
    prov_->bad.insert(x.path);
  };
  if (names.empty() || names.size() > 9) {
    Error(x,
          "expected a list of 1 to 9 container names, got " +
              std::to_string(names.size()),
          "one running container per node, e.g. `containers: [faultline-n1, "
          "faultline-n2, faultline-n3]`");
    return;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!IsDockerName(names[i])) {
      bad(i, "'" + Shorten(names[i]) + "' is not a container name",
          "a name or id: letters, digits and _ . - (not first)");
      return;
    }
    if (!seen.insert(names[i]).second) {
      bad(i, "container " + names[i] + " is listed twice",
          "each node needs a container of its own");
      return;
    }
  }
  c.containers = std::move(names);
}

void Parser::DockerHost(const Item& x) {
  std::string text;
  if (!Text(x, false, &text)) return;
  for (const char* scheme : {"unix://", "tcp://", "ssh://", "fd://"}) {
    if (text.starts_with(scheme) && text.size() > std::string(scheme).size()) {
      spec_->cluster.docker_host = text;
      return;
    }
  }
  Error(x, "expected a docker engine address, got " + Got(x.value),
        "as `docker --host` takes it, e.g. `docker_host: "
        "unix:///run/docker.sock` or `tcp://10.0.0.5:2375`");
}
// --- end provider: docker --------------------------------------------------

// --- provider: ssh ----------------------------------------------------------

void Parser::SshHosts(const Item& it) {
  ClusterSpec& c = spec_->cluster;
  const YAML::Node& v = it.value;
  Record(it);
  if (v.size() < 1 || v.size() > 9) {
    Error(it, "expected 1 to 9 hosts, got " + std::to_string(v.size()),
          "list each node once, e.g. `nodes: [10.0.0.2, 10.0.0.3, 10.0.0.4]`");
    return;
  }
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.-]{0,62}");
  static const std::regex kAddress("[A-Za-z0-9][A-Za-z0-9.:-]{0,252}");
  std::vector<SshHostSpec> hosts;
  bool ok = true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    Item elem{it.key, v[i], it.path + "[" + std::to_string(i) + "]", it.name};
    SshHostSpec h;
    h.name = "n" + std::to_string(i + 1);
    if (v[i].IsScalar()) {
      if (!Text(elem, false, &h.address)) {
        ok = false;
        continue;
      }
    } else if (v[i].IsMap()) {
      WalkMap(
          v[i], "cluster.nodes[]", ValueOrigin(elem),
          {{"name", [&](const Item& x) { Text(x, false, &h.name); }},
           {"address", [&](const Item& x) { Text(x, false, &h.address); }}});
      if (h.address.empty()) {
        Error(elem, "a host needs an `address`",
              "e.g. `{name: n1, address: 10.0.0.2}` or just `10.0.0.2`");
        ok = false;
        continue;
      }
    } else {
      Error(elem,
            "expected an address or `{name: ..., address: ...}`, got " +
                Got(v[i]),
            "e.g. `- 10.0.0.2` or `- {name: n1, address: 10.0.0.2}`");
      ok = false;
      continue;
    }
    if (!std::regex_match(h.name, kName)) {
      Error(elem, "node name `" + Shorten(h.name) + "` is not a plain name",
            "use letters, digits, '-', '_' and '.', e.g. `n1`");
      ok = false;
      continue;
    }
    if (!std::regex_match(h.address, kAddress)) {
      Error(elem, "`" + Shorten(h.address) + "` is not a host address",
            "an IPv4 address like 10.0.0.2 or a host name");
      ok = false;
      continue;
    }
    for (const SshHostSpec& other : hosts) {
      if (other.name == h.name || other.address == h.address) {
        Error(elem,
              other.name == h.name ? "node name `" + h.name + "` is used twice"
                                   : "address " + h.address + " is used twice",
              "every node needs its own name and address");
        ok = false;
      }
    }
    hosts.push_back(std::move(h));
  }
  if (!ok) {
    prov_->bad.insert(it.path);
    return;
  }
  c.hosts = std::move(hosts);
  c.nodes = static_cast<int>(c.hosts.size());
  prov_->at["cluster.hosts"] = ValueOrigin(it);
}

std::vector<FieldDef> Parser::SshFields() {
  ClusterSpec& c = spec_->cluster;
  auto path = [this](const Item& x, std::string* out) {
    if (!Text(x, false, out)) return;
    if (out->front() != '/' && out->front() != '~') {
      Error(x, "expected an absolute path, got `" + Shorten(*out) + "`",
            "e.g. `" + x.name + ": /root/.ssh/id_ed25519`");
    }
  };
  return {
      {"user", [&](const Item& x) { Text(x, false, &c.user); }},
      {"key", [path, &c](const Item& x) { path(x, &c.key); }},
      {"port",
       [&](const Item& x) {
         Int(x, 1, 65535, &c.port, "sshd listens on 22 unless told otherwise");
       }},
      {"known_hosts", [path, &c](const Item& x) { path(x, &c.known_hosts); }},
      {"host_key_policy",
       [&](const Item& x) {
         static const std::vector<KnownName> kPolicies = {
             {"strict", "the host key must be in known_hosts", 1},
             {"accept-new", "unknown hosts are added, changed keys refused", 1},
             {"off", "any host key is accepted (tests only)", 1}};
         Enum(x, kPolicies, "host key policy", &c.host_key_policy);
       }},
      {"sudo", [&](const Item& x) { Bool(x, &c.sudo); }},
      {"controller_ip",
       [&](const Item& x) { Text(x, false, &c.controller_ip); }},
      {"work_dir",
       [&](const Item& x) {
         std::string dir;
         if (!Text(x, false, &dir)) return;
         if (dir.front() != '/' || dir.find("..") != std::string::npos ||
             dir.find_first_of(" '\"\\$`\n") != std::string::npos) {
           Error(x,
                 "expected an absolute path without `..`, spaces or quotes, "
                 "got `" +
                     Shorten(dir) + "`",
                 "e.g. `work_dir: /tmp`; a run works in "
                 "<work_dir>/faultline-<run id>");
           return;
         }
         c.work_dir = dir;
       }},
      {"system_clock",
       [&](const Item& x) {
         static const std::vector<KnownName> kAllow = {
             {"deny", "clock faults never step the nodes' real clocks", 1},
             {"allow", "clock faults may step the nodes' real clocks", 1}};
         Enum(x, kAllow, "system_clock value", &c.system_clock);
       }},
  };
}

// --- end provider: ssh ------------------------------------------------------

void Parser::ReservedFlags(const Item& x, const std::vector<std::string>& args,
                           const std::set<std::string>& reserved,
                           const std::string& hint) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    if (flag.starts_with("-") && !flag.starts_with("--")) {
      flag = "-" + flag;  // both accept -flag as --flag
    }
    flag = flag.substr(0, flag.find('='));
    if (reserved.count(flag) != 0) {
      Item elem{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                x.name};
      Error(elem, flag + " is set by faultline itself and cannot be overridden",
            hint);
      prov_->bad.insert(x.path);
    }
  }
}

FieldDef Parser::Foreign(const std::string& key, const std::string& owner,
                         const std::string& chosen, bool name_known) {
  return {key, [this, key, owner, chosen, name_known](const Item& x) {
            if (!name_known) return;  // target.name has its own error
            Error(x,
                  "`" + key + "` is a key of the " + owner +
                      " target, but target.name is " + chosen,
                  "set `name: " + owner + "` or remove `" + key + "`");
          }};
}

std::vector<FieldDef> Parser::EtcdFields() {
  EtcdSpec& e = spec_->target.etcd;
  return {
      {"pre_vote", [&](const Item& x) { Bool(x, &e.pre_vote); }},
      {"heartbeat_ms",
       [&](const Item& x) {
         Millis(x, 10, 5000, &e.heartbeat_ms,
                "etcd's default is 100; keep it near the round-trip "
                "time between nodes");
       }},
      {"election_timeout_ms",
       [&](const Item& x) {
         Millis(x, 50, 50000, &e.election_timeout_ms,
                "etcd accepts at most 50000; its default is 1000");
       }},
      {"serializable_reads",
       [&](const Item& x) { Bool(x, &e.serializable_reads); }},
      {"binary", [&](const Item& x) { Text(x, false, &e.binary); }},
      {"extra_args",
       [&](const Item& x) {
         if (!TextList(x, &e.extra_args)) return;
         static const std::set<std::string> kReserved = {
             "--name",
             "--data-dir",
             "--listen-client-urls",
             "--listen-peer-urls",
             "--advertise-client-urls",
             "--initial-advertise-peer-urls",
             "--initial-cluster",
             "--initial-cluster-state",
             "--initial-cluster-token",
             "--heartbeat-interval",
             "--election-timeout",
             "--pre-vote"};
         ReservedFlags(x, e.extra_args, kReserved,
                       "use the target keys (heartbeat_ms, "
                       "election_timeout_ms, pre_vote) instead");
       }},
  };
}

std::vector<FieldDef> Parser::RaftkvFields() {
  RaftkvSpec& r = spec_->target.raftkv;
  return {
      {"read_mode",
       [&](const Item& x) {
         static const std::vector<KnownName> kModes = {
             {"readindex", "", 1}, {"lease", "", 1}, {"follower-lease", "", 1}};
         Enum(x, kModes, "read mode", &r.read_mode);
       }},
      {"heartbeat_ms",
       [&](const Item& x) {
         Millis(x, 5, 5000, &r.heartbeat_ms, "raftkv's default is 50");
       }},
      {"election_timeout_ms",
       [&](const Item& x) {
         Millis(x, 20, 60000, &r.election_timeout_ms,
                "raftkv's default is 500 (randomized in [t, 2t))");
       }},
      {"follower_lease_ms",
       [&](const Item& x) {
         Millis(x, 1, 60000, &r.follower_lease_ms,
                "raftkv's default is 300; it must stay below "
                "election_timeout_ms");
       }},
      {"lease_drift_bound",
       [&](const Item& x) {
         Number(x, Range{0, 0.5, false, ""}, &r.lease_drift_bound,
                "the clock-rate error raftkv's leases assume: 0.2 means "
                "every clock runs within [1/1.2, 1.2] of real time; "
                "raftkv's default is 0.001");
       }},
      {"pre_vote", [&](const Item& x) { Bool(x, &r.pre_vote); }},
      {"check_quorum", [&](const Item& x) { Bool(x, &r.check_quorum); }},
      {"snapshot_entries",
       [&](const Item& x) {
         Int(x, 10, 100000000, &r.snapshot_entries,
             "a snapshot every N applied entries; raftkv's default is "
             "10000");
       }},
      {"unsafe",
       [&](const Item& x) {
         static const std::vector<KnownName> kUnsafe = {
             {"none", "", 1},
             {"vote-not-persisted", "", 1},
             {"leader-read-no-quorum", "", 1},
             {"follower-lease-no-margin", "", 1},
             {"commit-old-terms", "", 1},
             {"lock-token-per-term", "", 1}};
         Enum(x, kUnsafe, "unsafe switch", &r.unsafe);
       }},
      {"binary", [&](const Item& x) { Text(x, false, &r.binary); }},
      {"extra_args",
       [&](const Item& x) {
         if (!TextList(x, &r.extra_args)) return;
         static const std::set<std::string> kReserved = {"--id",
                                                         "--peers",
                                                         "--listen",
                                                         "--data-dir",
                                                         "--read-mode",
                                                         "--heartbeat-ms",
                                                         "--election-ms",
                                                         "--follower-lease-ms",
                                                         "--lease-drift-bound",
                                                         "--no-pre-vote",
                                                         "--no-check-quorum",
                                                         "--unsafe",
                                                         "--snapshot-entries"};
         ReservedFlags(x, r.extra_args, kReserved,
                       "use the target keys (read_mode, heartbeat_ms, "
                       "election_timeout_ms, follower_lease_ms, "
                       "lease_drift_bound, pre_vote, check_quorum, "
                       "snapshot_entries, unsafe) instead");
       }},
  };
}

std::vector<FieldDef> Parser::RedisFields() {
  RedisSpec& r = spec_->target.redis;
  return {
      {"down_after_ms",
       [&](const Item& x) {
         Millis(x, 100, 600000, &r.down_after_ms,
                "sentinel down-after-milliseconds; faultline's default is "
                "2000 (Redis's own is 30000)");
       }},
      {"failover_timeout_ms",
       [&](const Item& x) {
         Millis(x, 1000, 3600000, &r.failover_timeout_ms,
                "sentinel failover-timeout; faultline's default is 6000");
       }},
      {"min_replicas_to_write",
       [&](const Item& x) {
         Int(x, 0, 8, &r.min_replicas_to_write,
             "redis min-replicas-to-write; 0 turns it off");
       }},
      {"min_replicas_max_lag_s",
       [&](const Item& x) {
         Int(x, 1, 3600, &r.min_replicas_max_lag_s,
             "redis min-replicas-max-lag in seconds; Redis's default is 10");
       }},
      {"appendonly", [&](const Item& x) { Bool(x, &r.appendonly); }},
      {"binary", [&](const Item& x) { Text(x, false, &r.binary); }},
      {"sentinel_binary",
       [&](const Item& x) { Text(x, false, &r.sentinel_binary); }},
  };
}

std::vector<FieldDef> Parser::ZookeeperFields() {
  ZookeeperSpec& z = spec_->target.zookeeper;
  return {
      {"tick_ms",
       [&](const Item& x) {
         Millis(x, 10, 10000, &z.tick_ms,
                "ZooKeeper's tickTime; faultline's default is 200 (the "
                "package's is 2000)");
       }},
      {"init_limit",
       [&](const Item& x) {
         Int(x, 1, 1000, &z.init_limit,
             "initLimit, in ticks: how long a follower may take to join");
       }},
      {"sync_limit",
       [&](const Item& x) {
         Int(x, 1, 1000, &z.sync_limit,
             "syncLimit, in ticks: how long a follower may lag before it "
             "is dropped");
       }},
      {"sync_reads", [&](const Item& x) { Bool(x, &z.sync_reads); }},
      {"java", [&](const Item& x) { Text(x, false, &z.java); }},
      {"classpath", [&](const Item& x) { Text(x, true, &z.classpath); }},
      {"jvm_args", [&](const Item& x) { TextList(x, &z.jvm_args); }},
  };
}

std::vector<FieldDef> Parser::FieldsOf(const std::string& name) {
  if (name == "zookeeper") return ZookeeperFields();
  if (name == "raftkv") return RaftkvFields();
  if (name == "redis") return RedisFields();
  return EtcdFields();
}

void Parser::Target(const Item& it) {
  Record(it);
  TargetSpec& t = spec_->target;
  // The keys depend on the target, so read `name` first.
  std::string chosen = t.name;
  bool name_known = true;
  if (it.value.IsMap()) {
    for (auto kv = it.value.begin(); kv != it.value.end(); ++kv) {
      const YAML::Node k = kv->first;
      const YAML::Node v = kv->second;
      if (!k.IsScalar() || k.Scalar() != "name") continue;
      name_known = false;
      if (!v.IsScalar()) break;
      for (const KnownName& n : Known().targets) {
        if (n.name == v.Scalar()) {
          chosen = n.name;
          name_known = true;
        }
      }
      break;
    }
  }
  std::vector<FieldDef> fields = {
      {"name",
       [&](const Item& x) { Enum(x, Known().targets, "target", &t.name); }}};
  std::vector<FieldDef> own = FieldsOf(chosen);
  fields.insert(fields.end(), own.begin(), own.end());
  // Keys only other targets have get a clear error, not "unknown key"; a
  // key several others have is named after the first of them.
  for (const KnownName& other : Known().targets) {
    if (other.name == chosen) continue;
    for (const FieldDef& f : FieldsOf(other.name)) {
      bool taken = false;
      for (const FieldDef& g : fields) taken = taken || g.key == f.key;
      if (!taken) {
        fields.push_back(Foreign(f.key, other.name, chosen, name_known));
      }
    }
  }
  WalkMap(it.value, "target", ValueOrigin(it), fields);
}

void Parser::Mix(const Item& it) {
  Record(it);
  WorkloadSpec& w = spec_->workload;
  const Range weight{0, 1e9, false, ""};
  WalkMap(it.value, "workload.mix", ValueOrigin(it),
          {
              {"read", [&](const Item& x) { Number(x, weight, &w.read); }},
              {"write", [&](const Item& x) { Number(x, weight, &w.write); }},
              {"cas", [&](const Item& x) { Number(x, weight, &w.cas); }},
          });
}

void Parser::Workload(const Item& it) {
  Record(it);
  WorkloadSpec& w = spec_->workload;
  WalkMap(
      it.value, "workload", ValueOrigin(it),
      {
          {"name",
           [&](const Item& x) {
             Enum(x, Known().workloads, "workload", &w.name);
           }},
          {"keys", [&](const Item& x) { Int(x, 1, 100000, &w.keys); }},
          {"concurrency",
           [&](const Item& x) { Int(x, 1, 1000, &w.concurrency); }},
          {"rate",
           [&](const Item& x) {
             Number(x, Range{0, 1e6, false, ""}, &w.rate, "0 means no limit");
           }},
          {"mix", [&](const Item& x) { Mix(x); }},
          {"op_timeout_ms",
           [&](const Item& x) { Millis(x, 1, 600000, &w.op_timeout_ms); }},
          {"locks", [&](const Item& x) { Int(x, 1, 1000, &w.locks); }},
          {"ttl_ms", [&](const Item& x) { Millis(x, 1, 600000, &w.ttl_ms); }},
          {"hold_ms", [&](const Item& x) { Millis(x, 0, 600000, &w.hold_ms); }},
          {"writes_per_hold",
           [&](const Item& x) { Int(x, 0, 1000, &w.writes_per_hold); }},
          {"stall_probability",
           [&](const Item& x) {
             Number(x, Range{0, 1, false, ""}, &w.stall_probability);
           }},
          {"stall_ms",
           [&](const Item& x) { Millis(x, 0, 600000, &w.stall_ms); }},
          {"fenced", [&](const Item& x) { Bool(x, &w.fenced); }},
          {"observe_ms",
           [&](const Item& x) {
             Millis(x, 0, 600000, &w.observe_ms, "0 means no observer");
           }},
      });
}

void Parser::Nemesis(const Item& it) {
  Record(it);
  NemesisSpec& n = spec_->nemesis;
  WalkMap(it.value, "nemesis", ValueOrigin(it),
          {
              {"faults",
               [&](const Item& x) {
                 // Names only (or not a list: EnumList says what is
                 // wrong) keep the old reading.
                 bool plain = true;
                 for (std::size_t i = 0;
                      x.value.IsSequence() && plain && i < x.value.size(); ++i)
                   plain = !x.value[i].IsMap();
                 if (plain) {
                   EnumList(x, Known().faults, "fault", &n.faults);
                 } else {
                   ParseFaultEntries(x, &n);
                 }
               }},
              {"partition_mode",
               [&](const Item& x) {
                 Enum(x, PartitionModes(), "partition mode", &n.partition_mode);
               }},
              {"interval",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, false, " s"}, &n.interval_s);
               }},
              {"duration",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &n.duration_s);
               }},
              {"partitions",
               [&](const Item& x) {
                 std::vector<std::string> unused;
                 if (SameList(x, false, &unused)) return;
                 EnumList(x, Known().partition_shapes, "partition shape",
                          &n.partitions);
               }},
              {"targets",
               [&](const Item& x) {
                 std::vector<std::string> unused;
                 if (SameList(x, false, &unused)) return;
                 EnumList(x, Known().node_selectors, "node selector",
                          &n.targets);
               }},
              {"delay_ms",
               [&](const Item& x) { Millis(x, 1, 10000, &n.delay_ms); }},
              {"loss_probability",
               [&](const Item& x) {
                 Number(x, Range{0, 1, true, ""}, &n.loss_probability,
                        "a share of packets: 0.3 drops about 3 in 10");
               }},
              {"clock_offset_ms",
               [&](const Item& x) {
                 int ms = 0;
                 if (Millis(x, -86400000, 86400000, &ms,
                            "at most one day either way"))
                   n.clock_offset_ms = ms;
               }},
              {"clock_rate",
               [&](const Item& x) {
                 Number(x, Range{0.01, 100, false, ""}, &n.clock_rate,
                        "1 is real speed, 2 twice as fast, 0.5 half");
               }},
              {"clock_monotonic",
               [&](const Item& x) { Bool(x, &n.clock_monotonic); }},
              {"clock_mode",
               [&](const Item& x) {
                 static const std::vector<KnownName> kModes = {
                     {"faketime", "libfaketime in the target's processes", 1},
                     {"system", "the nodes' real system clocks (ssh)", 1}};
                 Enum(x, kModes, "clock mode", &n.clock_mode);
               }},
              {"clock_strobe_delta_ms",
               [&](const Item& x) {
                 int ms = 0;
                 if (Millis(x, 1, 86400000, &ms, "at most one day"))
                   n.clock_strobe_delta_ms = ms;
               }},
              {"clock_strobe_period_ms",
               [&](const Item& x) {
                 int ms = 0;
                 if (Millis(x, 10, 3600000, &ms, "10 ms to one hour"))
                   n.clock_strobe_period_ms = ms;
               }},
          });
}

// --- nemesis.faults entries as mappings (per-fault settings) -------------

const std::vector<KnownName>& PartitionModes() {
  static const std::vector<KnownName> kModes = {
      {"drop", "packets are dropped silently", 1},
      {"reset", "TCP segments are answered with a TCP reset", 1}};
  return kModes;
}

void Parser::ParseFaultEntries(const Item& it, NemesisSpec* n) {
  Record(it);
  std::vector<harness::FaultEntry> entries;
  std::vector<std::string> kinds;
  bool ok = true;
  for (std::size_t i = 0; i < it.value.size(); ++i) {
    Item elem{it.key, it.value[i], it.path + "[" + std::to_string(i) + "]",
              it.name};
    harness::FaultEntry entry;
    if (!ParseFaultEntry(elem, &entry)) {
      ok = false;
      continue;
    }
    if (entry.plain) {
      for (const auto& e : entries) {
        if (e.plain && e.faults[0].fault == entry.faults[0].fault) {
          Error(elem, "fault \"" + entry.faults[0].fault + "\" is listed twice",
                "list each plain fault once; to run it with other settings "
                "too, write a mapping such as `{fault: " +
                    entry.faults[0].fault + ", targets: [leader]}`");
          ok = false;
        }
      }
    }
    for (const auto& f : entry.faults)
      if (std::find(kinds.begin(), kinds.end(), f.fault) == kinds.end())
        kinds.push_back(f.fault);
    entries.push_back(std::move(entry));
  }
  if (!ok) {
    prov_->bad.insert(it.path);
    return;
  }
  n->faults = std::move(kinds);
  n->entries = std::move(entries);
}

bool Parser::ParseFaultEntry(const Item& it, harness::FaultEntry* out) {
  if (it.value.IsScalar()) {
    FaultSettings f;
    if (!Enum(it, Known().faults, "fault", &f.fault)) return false;
    out->plain = true;
    out->faults.push_back(std::move(f));
    return true;
  }
  if (!it.value.IsMap()) {
    Error(it, "expected a fault name or a mapping, got " + Got(it.value),
          "e.g. `- pause`, `- {fault: pause, targets: [leader]}` or "
          "`- together: [{fault: clock}, {fault: partition}]`");
    return false;
  }
  Record(it);
  if (!it.value["together"]) {
    const std::size_t before = diag_->size();
    FaultSettings f;
    if (!ParseFaultMember(it, false, &f, &out->duration_s)) return false;
    out->faults.push_back(std::move(f));
    return diag_->size() == before;
  }
  // {together: [...], duration: ...}
  const std::size_t before = diag_->size();
  bool have_list = false;
  WalkMap(
      it.value, it.path, ValueOrigin(it),
      {{"together", [&](const Item& x) { ParseTogether(x, out, &have_list); }},
       {"duration", [&](const Item& x) {
          double d = 0;
          if (Seconds(x, Range{0, 86400, true, " s"}, &d)) out->duration_s = d;
        }}});
  if (!have_list && diag_->size() == before)
    Error(it, "`together` needs a list of faults",
          "e.g. `together: [{fault: clock}, {fault: partition}]`");
  out->together = true;
  return diag_->size() == before;
}

// The list of a `together` entry (at least two faults, each kind once).
void Parser::ParseTogether(const Item& x, harness::FaultEntry* out,
                           bool* have_list) {
  Record(x);
  if (!x.value.IsSequence() || x.value.size() < 2) {
    Error(x,
          "expected a list of at least two faults to apply at "
          "once, got " +
              Got(x.value),
          "e.g. `together: [{fault: clock, targets: [minority]}, "
          "{fault: partition, partitions: [halves]}]`");
    return;
  }
  *have_list = true;
  for (std::size_t i = 0; i < x.value.size(); ++i) {
    Item m{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]", x.name};
    FaultSettings f;
    if (m.value.IsScalar()) {
      if (Enum(m, Known().faults, "fault", &f.fault))
        out->faults.push_back(std::move(f));
      continue;
    }
    if (!m.value.IsMap()) {
      Error(m, "expected a fault name or a mapping, got " + Got(m.value),
            "e.g. `{fault: partition, partitions: [halves]}`");
      continue;
    }
    Record(m);
    std::optional<double> unused;
    if (ParseFaultMember(m, true, &f, &unused))
      out->faults.push_back(std::move(f));
  }
  if (out->faults.size() == x.value.size()) CheckSameInGroup(x, *out);
  // Two faults of one kind, or two that stop/start the same
  // processes, would undo each other.
  for (std::size_t i = 0; i < out->faults.size(); ++i) {
    const std::string& a = out->faults[i].fault;
    for (std::size_t j = 0; j < i; ++j) {
      const std::string& b = out->faults[j].fault;
      const bool process =
          (a == "pause" || a == "kill") && (b == "pause" || b == "kill");
      if (a == b || process) {
        Error(Item{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                   x.name},
              "`together` has " + b + " and " + a +
                  (a == b ? "; a group applies each kind once"
                          : ", which act on the same processes"),
              "keep one of them in this group, or put the other in "
              "its own entry");
      }
    }
    if (a == "kill-voter")
      Error(Item{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                 x.name},
            "kill-voter cannot be combined with other faults (it "
            "delays, kills and restarts nodes of its own)",
            "put kill-voter in its own entry of nemesis.faults");
    if (a == "figure8")
      Error(Item{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                 x.name},
            "figure8 cannot be combined with other faults (it delays, "
            "cuts and pauses nodes of its own)",
            "put figure8 in its own entry of nemesis.faults");
  }
}

bool Parser::SameList(const Item& x, bool in_group,
                      std::vector<std::string>* out) {
  if (!x.value.IsSequence()) return false;
  for (std::size_t i = 0; i < x.value.size(); ++i) {
    const YAML::Node& e = x.value[i];
    if (!e.IsScalar() || e.Scalar() != harness::kSameNodes) continue;
    const Item at{x.key, e, x.path + "[" + std::to_string(i) + "]", x.name};
    if (!in_group) {
      Error(at,
            "`same` means the nodes the first fault of a `together` group "
            "acted on, so it only fits a later fault of such a group",
            "e.g. `together: [{fault: clock, targets: [follower]}, "
            "{fault: partition, partitions: [same]}]`, or use a selector "
            "such as `one`");
    } else if (x.value.size() != 1) {
      Error(at, "`same` cannot be drawn among other choices",
            "write `" + x.name + ": [same]` alone, or leave `same` out");
    } else {
      *out = {harness::kSameNodes};
    }
    return true;
  }
  return false;
}

void Parser::CheckSameInGroup(const Item& x, const harness::FaultEntry& group) {
  auto is_same = [](const FaultSettings& f) {
    const auto& list = f.fault == "partition" ? f.partitions : f.targets;
    return list && *list == std::vector<std::string>{harness::kSameNodes};
  };
  auto key_of = [&](std::size_t i) {
    const char* key =
        group.faults[i].fault == "partition" ? "partitions" : "targets";
    const std::string at = x.path + "[" + std::to_string(i) + "]";
    const YAML::Node member = x.value[i];
    const YAML::Node list = member[key];
    return Item{list, list, at + "." + key, key};
  };
  const FaultSettings& first = group.faults[0];
  if (is_same(first)) {
    Error(key_of(0),
          "`same` on the first fault of a group: there is no earlier "
          "fault whose nodes it could take",
          "draw the nodes here (e.g. `targets: [follower]`) and write "
          "`same` on the faults after it");
    return;
  }
  for (std::size_t i = 1; i < group.faults.size(); ++i) {
    if (!is_same(group.faults[i])) continue;
    if (first.fault == "partition") {
      Error(key_of(i),
            "`same` takes the nodes the group's first fault acted on, but "
            "the first fault is a partition, which cuts by shape and "
            "names no single set of nodes",
            "put a fault that draws nodes with `targets` first (e.g. "
            "`{fault: clock, targets: [follower]}`), then `{fault: "
            "partition, partitions: [same]}`");
    } else if (group.faults[i].fault == "partition" && first.targets &&
               *first.targets == std::vector<std::string>{"all"}) {
      Error(key_of(i),
            "`partitions: [same]` would cut off every node: the group's "
            "first fault acts on `all`",
            "give the first fault a selector that leaves nodes out, e.g. "
            "`targets: [minority]`");
    }
  }
}

bool Parser::ParseFaultMember(const Item& it, bool in_group, FaultSettings* out,
                              std::optional<double>* duration) {
  const std::size_t before = diag_->size();
  bool have_fault = false;
  std::vector<FieldDef> fields = {
      {"fault",
       [&](const Item& x) {
         have_fault = Enum(x, Known().faults, "fault", &out->fault);
       }},
      {"targets",
       [&](const Item& x) {
         std::vector<std::string> v;
         if (SameList(x, in_group, &v)) {
           if (!v.empty()) out->targets = std::move(v);
           return;
         }
         if (!EnumList(x, Known().node_selectors, "node selector", &v)) return;
         if (v.empty()) {
           Error(x, "targets is empty",
                 "list at least one node selector, or leave `targets` out "
                 "to use nemesis.targets");
           return;
         }
         out->targets = std::move(v);
       }},
      {"partitions",
       [&](const Item& x) {
         std::vector<std::string> v;
         if (SameList(x, in_group, &v)) {
           if (!v.empty()) out->partitions = std::move(v);
           return;
         }
         if (!EnumList(x, Known().partition_shapes, "partition shape", &v))
           return;
         if (v.empty()) {
           Error(x, "partitions is empty",
                 "list at least one shape, or leave `partitions` out to use "
                 "nemesis.partitions");
           return;
         }
         out->partitions = std::move(v);
       }},
      {"partition_mode",
       [&](const Item& x) {
         std::string m;
         if (Enum(x, PartitionModes(), "partition mode", &m))
           out->partition_mode = m;
       }},
      {"delay_ms",
       [&](const Item& x) {
         int ms = 0;
         if (Millis(x, 1, 10000, &ms)) out->delay_ms = ms;
       }},
      {"loss_probability",
       [&](const Item& x) {
         double p = 0.3;
         if (Number(x, Range{0, 1, true, ""}, &p,
                    "a share of packets: 0.3 drops about 3 in 10"))
           out->loss_probability = p;
       }},
      {"clock_offset_ms",
       [&](const Item& x) {
         int ms = 0;
         if (Millis(x, -86400000, 86400000, &ms, "at most one day either way"))
           out->clock_offset_ms = ms;
       }},
      {"clock_rate",
       [&](const Item& x) {
         double r = 1;
         if (Number(x, Range{0.01, 100, false, ""}, &r,
                    "1 is real speed, 2 twice as fast, 0.5 half"))
           out->clock_rate = r;
       }},
      {"duration",
       [&](const Item& x) {
         if (in_group) {
           Error(x, "a fault inside `together` has no duration of its own",
                 "set `duration:` on the together entry, beside `together:`");
           return;
         }
         double d = 0;
         if (Seconds(x, Range{0, 86400, true, " s"}, &d)) *duration = d;
       }},
  };
  WalkMap(it.value, it.path, ValueOrigin(it), fields);
  if (!have_fault && diag_->size() == before) {
    Error(it, "this fault has no `fault:` key",
          "name the fault kind, e.g. `{fault: pause, targets: [leader]}`; "
          "one of: " +
              JoinNames(Names(Known().faults)));
  }
  if (diag_->size() != before) return false;
  // Settings that the fault would ignore are mistakes.
  auto unused = [&](const char* key, bool applies) {
    if (applies || !it.value[key]) return;
    Error(Item{it.value[key], it.value[key], it.path + "." + key, key},
          std::string("`") + key + "` does not apply to the " + out->fault +
              " fault",
          out->fault == "partition" && std::string(key) == "targets"
              ? "a partition picks nodes by shape: use `partitions: "
                "[one]` or `partitions: [leader]`"
              : std::string("remove `") + key + "`");
  };
  const std::string& k = out->fault;
  unused("targets", k != "partition");
  unused("partitions", k == "partition");
  unused("partition_mode", k == "partition");
  unused("delay_ms", k == "delay" || k == "kill-voter" || k == "figure8");
  unused("loss_probability", k == "loss");
  unused("clock_offset_ms", k == "clock");
  unused("clock_rate", k == "clock");
  return diag_->size() == before;
}

// --- end nemesis.faults entries ---

void Parser::Checker(const Item& it) {
  Record(it);
  CheckerSpec& c = spec_->checker;
  WalkMap(it.value, "checker", ValueOrigin(it),
          {
              {"timeout",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &c.timeout_s);
               }},
              {"memory_limit_mb",
               [&](const Item& x) {
                 Int(x, 0, 1 << 20, &c.memory_limit_mb,
                     "0 means the checker's default bound");
               }},
              {"threads",
               [&](const Item& x) {
                 Int(x, 0, 1024, &c.threads, "0 means all cores");
               }},
          });
}

void Parser::Run(const YAML::Node& root) {
  if (IsNothing(root)) {
    diag_->Add(Origin{}, "the config is empty",
               "a config is a YAML mapping with at least `name: <test-name>`");
    return;
  }
  const Origin root_at = OriginOf(root);
  prov_->at[""] = root_at;
  bool have_name = false;
  TestSpec& s = *spec_;
  WalkMap(root, "", root_at,
          {
              {"name",
               [&](const Item& x) {
                 have_name = true;
                 std::string name;
                 if (!Text(x, false, &name)) return;
                 static const std::regex kName("[a-z0-9][a-z0-9-]*");
                 if (name.size() > 64 || !std::regex_match(name, kName)) {
                   std::string fixed;
                   for (char ch : name) {
                     ch = static_cast<char>(std::tolower(ch));
                     bool keep =
                         (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                     if (keep) {
                       fixed += ch;
                     } else if (!fixed.empty() && fixed.back() != '-') {
                       fixed += '-';
                     }
                   }
                   while (!fixed.empty() && fixed.back() == '-') {
                     fixed.pop_back();
                   }
                   if (fixed.size() > 64) fixed.resize(64);
                   Error(x,
                         "\"" + Shorten(name) +
                             "\" is not a valid test name; expected lowercase "
                             "letters, digits and '-', starting with a "
                             "letter or digit, at most 64 characters",
                         fixed.empty() ? "e.g. `name: etcd-register`"
                                       : "e.g. `name: " + fixed + "`");
                   return;
                 }
                 s.name = name;
               }},
              {"description",
               [&](const Item& x) { Text(x, true, &s.description); }},
              {"seed",
               [&](const Item& x) {
                 if (Seed(x, &s.seed)) s.seed_given = true;
               }},
              {"time_limit",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &s.time_limit_s);
               }},
              {"recovery",
               [&](const Item& x) {
                 Seconds(x, Range{0, 3600, false, " s"}, &s.recovery_s);
               }},
              {"store", [&](const Item& x) { Text(x, false, &s.store_dir); }},
              {"expect",
               [&](const Item& x) {
                 static const std::vector<KnownName> kExpect = {
                     {"valid", "", 1}, {"invalid", "", 1}};
                 std::string e;
                 if (Enum(x, kExpect, "expected verdict", &e)) s.expect = e;
               }},
              {"cluster", [&](const Item& x) { Cluster(x); }},
              {"target", [&](const Item& x) { Target(x); }},
              {"workload", [&](const Item& x) { Workload(x); }},
              {"nemesis", [&](const Item& x) { Nemesis(x); }},
              {"checker", [&](const Item& x) { Checker(x); }},
          });
  if (root.IsMap() && !have_name) {
    diag_->Add(root_at, "missing required key `name`",
               "add a test name at the top level, e.g. `name: etcd-register`");
  }
}

// The first tab in the leading whitespace of lines 1..last_line (1-based).
std::optional<Origin> FirstIndentTab(std::string_view text, int last_line) {
  int line = 1;
  std::size_t start = 0;
  while (start <= text.size() && line <= last_line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (std::size_t i = start; i < end; ++i) {
      if (text[i] == '\t') {
        return Origin{line, static_cast<int>(i - start) + 1, ""};
      }
      if (text[i] != ' ') break;
    }
    start = end + 1;
    ++line;
  }
  return std::nullopt;
}

// Counts the documents of a stream without building them, and where each
// starts. Used instead of YAML::LoadAll, which loops forever on some
// malformed input in yaml-cpp 0.7 (jbeder/yaml-cpp#1040, fixed upstream by
// pull request #1319): a document that starts where the previous one did
// means the parser is stuck on a token.
class DocumentCounter : public YAML::EventHandler {
 public:
  struct Doc {
    YAML::Mark start;
    std::optional<YAML::Mark> first_node;
  };
  std::vector<Doc> docs;

  void OnDocumentStart(const YAML::Mark& m) override {
    docs.push_back({m, std::nullopt});
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { Saw(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { Saw(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Saw(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Saw(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Saw(m);
  }
  void OnMapEnd() override {}

 private:
  void Saw(const YAML::Mark& m) {
    if (!docs.empty() && !docs.back().first_node) docs.back().first_node = m;
  }
};

}  // namespace

void ParseText(std::string_view text, TestSpec* spec, Provenance* prov,
               Diagnostics* diag) {
  YAML::Node root;
  DocumentCounter counter;
  try {
    // Count documents first (stopping early), then build only the first.
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (counter.docs.size() < 3 && parser.HandleNextDocument(counter)) {
    }
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    std::string hint;
    if (e.msg.find("tab") != std::string::npos) {
      hint = "indent with spaces; YAML does not allow tabs for indentation";
    } else if (e.msg.find("map") != std::string::npos) {
      hint =
          "check the indentation and that every `key: value` has a space "
          "after the colon";
    } else if (e.msg.find("flow") != std::string::npos) {
      hint = "check that every [ and { has its closing ] or }";
    }
    Origin at;
    if (e.mark.line >= 0) at = Origin{e.mark.line + 1, e.mark.column + 1, ""};
    // yaml-cpp often reports a tab-indented line as some other problem
    // further on; name the tab when one precedes the error.
    if (auto tab = FirstIndentTab(text, at.line)) {
      diag->Add(
          *tab,
          "invalid YAML: tab character in indentation (parser: " + e.msg + ")",
          "indent with spaces; YAML does not allow tabs for "
          "indentation");
      return;
    }
    diag->Add(at, "invalid YAML: " + e.msg, hint);
    return;
  } catch (const YAML::Exception& e) {
    Origin at;
    if (e.mark.line >= 0) at = Origin{e.mark.line + 1, e.mark.column + 1, ""};
    diag->Add(at, "invalid YAML: " + e.msg);
    return;
  }
  const auto& docs = counter.docs;
  for (std::size_t i = 1; i < docs.size(); ++i) {
    if (docs[i].start.pos == docs[i - 1].start.pos) {
      // The parser made no progress: a token it cannot place.
      const auto pos = static_cast<std::size_t>(docs[i].start.pos);
      const std::string what =
          pos < text.size() ? std::string(1, text[pos]) : std::string("?");
      diag->Add(Origin{docs[i].start.line + 1, docs[i].start.column + 1, ""},
                "invalid YAML: unexpected `" + what + "`",
                "a config is a mapping of `key: value` lines; quote text "
                "that starts with one of , [ ] { } & * ! | > ' \" % @ `");
      return;
    }
  }
  if (docs.size() > 1) {
    const YAML::Mark at = docs[1].first_node.value_or(docs[1].start);
    diag->Add(Origin{at.line + 1, at.column + 1, ""},
              "the file holds more than one YAML document; expected exactly "
              "one",
              "remove the `---` separator and merge or split the configs");
    return;
  }
  Parser parser(spec, prov, diag);
  parser.Run(docs.empty() ? YAML::Node() : root);
}

}  // namespace faultline::harness::config_internal

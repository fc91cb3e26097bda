// The config schema: YAML sections -> TestSpec fields, with the range and
// hint of each field (harness/config/config_parser.h). This file: the document,
// cluster, workload and checker; target.* is in config_parse_targets.cpp,
// nemesis.* in config_parse_nemesis.cpp. Generic value reading is in
// config_reader.cpp, cross-field rules in config_validate.cpp.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/config/config_parser.h"

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
      {"target", "appendfsync"},
      {"target", "force_sync"},
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
      // target: process
      {"target", "system"},
      {"target", "config_dir"},
      {"target", "version"},
      {"target", "ports"},
      {"target", "lists"},
      {"target", "files"},
      {"target", "setup"},
      {"target", "start"},
      {"target", "processes"},
      {"target", "status"},
      {"target", "client"},
      {"target.processes[]", "name"},
      {"target.processes[]", "argv"},
      {"target.processes[]", "bootstrap_args"},
      {"target.processes[]", "env"},
      {"target.processes[]", "cwd"},
      {"target.processes[]", "ready"},
      {"target.processes[]", "ready_timeout"},
      {"target.processes[]", "stop_signal"},
      {"target.processes[]", "stop_grace"},
      {"target.processes[]", "faults"},
      {"target.processes[]", "logs"},
      {"target.client", "protocol"},
      {"target.client", "command"},
      {"target.client", "env"},
      {"target.client", "cwd"},
      {"target.client", "start_timeout"},
      {"target.client", "port"},
      {"target.client", "route"},
      {"target.client", "sentinel"},
      {"target.client", "commands"},
      {"target.status", "command"},
      {"target.status", "client"},
      {"target.status", "timeout"},
      {"target.files[]", "path"},
      {"target.files[]", "content"},
      {"target.lists.*", "each"},
      {"target.lists.*", "separator"},
      {"target.lists.*", "others"},
      // end target: process
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
      {"workload", "key_dist"},
      {"workload", "max_writes_per_key"},
      {"workload", "min_txn_length"},
      {"workload", "max_txn_length"},
      {"workload", "consistency_model"},
      {"workload", "accounts"},
      {"workload", "total"},
      {"workload", "max_transfer"},
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
      {"nemesis", "fsync_errors"},
      {"nemesis", "disk_latency_ms"},
      {"nemesis", "disk_namespace"},
      {"nemesis", "disk_writeback_ms"},
      {"checker", "timeout"},
      {"checker", "memory_limit_mb"},
      {"checker", "threads"},
  };
  return kKeys;
}

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
       [&](const Item& x) {
         std::string ip;
         if (!Text(x, false, &ip)) return;
         if (!ParseIpv4(ip)) {
           Error(x,
                 "expected an IPv4 address like 10.0.0.1, got " + Got(x.value),
                 "the controller's address as the nodes see it (partitions "
                 "and loss never drop its packets); leave it out when the "
                 "controller is not on the nodes' network");
           return;
         }
         c.controller_ip = ip;
       }},
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
          {"key_dist",
           [&](const Item& x) {
             static const std::vector<KnownName> kDists = {
                 {"uniform", "every key alike", 1},
                 {"exponential",
                  "the first key slot about 100 times as likely as the last",
                  1},
                 {"hot", "a tenth of the keys get 90 % of accesses", 1}};
             Enum(x, kDists, "workload.key_dist", &w.key_dist);
           }},
          {"max_writes_per_key",
           [&](const Item& x) { Int(x, 1, 100000, &w.max_writes_per_key); }},
          {"min_txn_length",
           [&](const Item& x) { Int(x, 1, 64, &w.min_txn_length); }},
          {"max_txn_length",
           [&](const Item& x) { Int(x, 1, 64, &w.max_txn_length); }},
          {"consistency_model",
           [&](const Item& x) {
             static const std::vector<KnownName> kModels = {
                 {"strict-serializable",
                  "serializable, in an order that respects real time", 1},
                 {"serializable", "equivalent to some serial order", 1},
                 {"snapshot-isolation",
                  "no G-single, no lost update; write skew allowed", 1},
                 {"repeatable-read", "no G2-item, no lost update", 1},
                 {"read-committed", "no aborted or intermediate reads, no G1c",
                  1},
                 {"read-uncommitted", "no write cycles (G0)", 1}};
             Enum(x, kModels, "workload.consistency_model",
                  &w.consistency_model);
           }},
          {"accounts",
           [&](const Item& x) {
             Int(x, 2, 1000, &w.accounts,
                 "a transfer needs two accounts; a read lists them all");
           }},
          {"total",
           [&](const Item& x) {
             Int(x, 0, 1000000000, &w.total,
                 "the money spread over the accounts at the start");
           }},
          {"max_transfer",
           [&](const Item& x) {
             Int(x, 1, 1000000000, &w.max_transfer,
                 "a transfer moves 1..max_transfer");
           }},
      });
}

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
namespace {

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

  // The first list or mapping opened deeper than kMaxConfigDepth.
  std::optional<YAML::Mark> too_deep;

  void OnDocumentStart(const YAML::Mark& m) override {
    docs.push_back({m, std::nullopt});
    depth_ = 0;
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
    Open(m);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Open(m);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Saw(const YAML::Mark& m) {
    if (!docs.empty() && !docs.back().first_node) docs.back().first_node = m;
  }
  void Open(const YAML::Mark& m) {
    Saw(m);
    if (++depth_ > kMaxConfigDepth && !too_deep) too_deep = m;
  }
  int depth_ = 0;
};

// The first NUL byte of `text`, as a 1-based line and column (bytes).
std::optional<Origin> FirstNul(std::string_view text) {
  const std::size_t at = text.find('\0');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view before = text.substr(0, at);
  const std::size_t line_start = before.rfind('\n');
  const std::size_t column =
      line_start == std::string_view::npos ? at + 1 : at - line_start;
  const auto line = std::count(before.begin(), before.end(), '\n') + 1;
  return Origin{static_cast<int>(line), static_cast<int>(column), ""};
}

// Reports nesting deeper than kMaxConfigDepth at `at`.
void TooDeep(const YAML::Mark& at, Diagnostics* diag) {
  diag->Add(Origin{at.line + 1, at.column + 1, ""},
            "lists and mappings are nested more than " +
                std::to_string(kMaxConfigDepth) +
                " levels deep here; a config needs only a few levels",
            "look for a [ or { that is never closed, or indentation that "
            "keeps growing");
}

}  // namespace

void ParseText(std::string_view text, TestSpec* spec, Provenance* prov,
               Diagnostics* diag) {
  YAML::Node root;
  DocumentCounter counter;
  if (auto nul = FirstNul(text)) {
    // yaml-cpp reads a NUL as the end of the text or as an escape; neither
    // says what is wrong.
    diag->Add(*nul, "the file contains a NUL byte; a config is plain text",
              "is it a binary file or saved as UTF-16? save it as UTF-8 "
              "text");
    return;
  }
  try {
    // Count documents first (stopping early), then build only the first.
    // The count also measures nesting, before yaml-cpp's own, much deeper,
    // recursion limit.
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (counter.docs.size() < 3 && !counter.too_deep &&
           parser.HandleNextDocument(counter)) {
    }
    if (counter.too_deep) {
      TooDeep(*counter.too_deep, diag);
      return;
    }
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    if (counter.too_deep) {
      TooDeep(*counter.too_deep, diag);
      return;
    }
    Origin at;
    if (e.mark.line >= 0) at = Origin{e.mark.line + 1, e.mark.column + 1, ""};
    diag->Add(at,
              "lists and mappings are nested too deeply for the YAML reader "
              "(" +
                  std::to_string(e.depth()) + " levels)",
              "look for a [ or { that is never closed, or indentation that "
              "keeps growing");
    return;
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

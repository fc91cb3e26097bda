// DescribeSpec (spec -> YAML that loads back to the same spec), the tables
// of known names, and the did-you-mean helper.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/config/config_internal.h"

namespace faultline::harness {

const KnownNames& Known() {
  static const KnownNames kKnown = {
      .targets = {{"etcd",
                   "etcd v3 (Raft key-value store), one member per node", 1},
                  {"raftkv",
                   "raftkv, this repository's own Raft key-value and lock "
                   "server (RESP), one node per namespace",
                   1},
                  {"redis",
                   "Redis 7 primary + replicas with one Sentinel per node "
                   "(failover)",
                   1},
                  {"zookeeper",
                   "Apache ZooKeeper 3.8 ensemble, one server per node "
                   "(registers as znodes, lock recipe)",
                   1},
                  {"process",
                   "any system described in the config: its processes, "
                   "ports, readiness and status, with an exec (any "
                   "language), resp or etcd client (docs/targets/process.md)",
                   1}},
      .workloads = {{"register",
                     "read / write / compare-and-set on independent keys; "
                     "checked per key for linearizability (cas-register)",
                     1},
                    {"lock",
                     "acquire a named lock (TTL lease), write a protected "
                     "resource with the fencing token, release; checked "
                     "for mutual exclusion and fencing (etcd, raftkv, redis, "
                     "zookeeper)",
                     1},
                    {"election",
                     "candidates campaign through the target's lock "
                     "recipe, write a protected resource while leading "
                     "(renewing first), resign; checked for fencing and one "
                     "leader per term (any target with lock ops)",
                     1},
                    {"list-append",
                     "transactions of appends to and whole reads of keys' "
                     "lists; checked for dependency cycles and named "
                     "anomalies (G0 .. G2-item) against "
                     "workload.consistency_model (raftkv)",
                     1},
                    {"rw-register",
                     "transactions of unique writes and reads of registers; "
                     "checked like list-append, from reads-from and "
                     "write-follows-read orders (raftkv)",
                     1},
                    {"set",
                     "adds of unique integers and reads of the whole set; "
                     "checked for lost, stale and unexpected elements "
                     "(raftkv)",
                     1},
                    {"bank",
                     "transfers between accounts and reads of every "
                     "balance; checked that the total holds and no balance "
                     "goes negative (raftkv)",
                     1},
                    {"counter",
                     "small positive increments and reads; each read must "
                     "lie between the acknowledged and the attempted sums "
                     "(raftkv)",
                     1}},
      .faults = {{"partition",
                  "cut network links between groups of nodes (shape from "
                  "nemesis.partitions); heals by restoring them",
                  2},
                 {"pause",
                  "SIGSTOP the target process on nodes chosen by "
                  "nemesis.targets; heals with SIGCONT",
                  1},
                 {"kill",
                  "SIGKILL the target process on nodes chosen by "
                  "nemesis.targets; heals by restarting it",
                  1},
                 {"delay",
                  "hold every packet that nodes chosen by nemesis.targets "
                  "receive from the other nodes for nemesis.delay_ms "
                  "(NFQUEUE + faultline-netdelay); heals by releasing them",
                  2},
                 {"loss",
                  "drop a share (nemesis.loss_probability) of the packets "
                  "nodes chosen by nemesis.targets receive from the other "
                  "nodes (iptables statistic); heals by removing the rules",
                  2},
                 {"clock",
                  "step (nemesis.clock_offset_ms) and/or drift "
                  "(nemesis.clock_rate) the clocks of nodes chosen by "
                  "nemesis.targets through libfaketime (not etcd); heals by "
                  "resetting them",
                  1},
                 {"strobe",
                  "flip the clocks of nodes chosen by nemesis.targets up by "
                  "nemesis.clock_strobe_delta_ms and back, every "
                  "nemesis.clock_strobe_period_ms, through libfaketime (not "
                  "etcd); heals by resetting them",
                  1},
                 {"kill-voter",
                  "SIGKILL nodes chosen by nemesis.targets (e.g. the "
                  "leader), then the first other node seen voting in the "
                  "election that follows; heals by restarting them",
                  3},
                 {"power-loss",
                  "SIGKILL the target process on nodes chosen by "
                  "nemesis.targets and drop every write their disk holds "
                  "that was never fsynced (lazy file system); heals by "
                  "restarting it",
                  1},
                 {"torn-write",
                  "like power-loss, but each file keeps a random prefix of "
                  "its unsynced writes (the first lost one may be cut)",
                  1},
                 {"fsync-error",
                  "the next nemesis.fsync_errors fsyncs on nodes chosen by "
                  "nemesis.targets fail with EIO and lose the file's unsynced "
                  "data; heals by cancelling what is left",
                  1},
                 {"disk-full",
                  "writes that grow a file on nodes chosen by "
                  "nemesis.targets fail with ENOSPC; heals by making room",
                  1},
                 {"slow-disk",
                  "every file system operation on nodes chosen by "
                  "nemesis.targets waits nemesis.disk_latency_ms; heals by "
                  "removing the delay",
                  1},
                 {"figure8",
                  "steer a 3-node raftkv cluster through the Raft paper's "
                  "figure 8 (isolate the leader, let a lonely leader win, "
                  "bring the old leader back and cut it off again once it "
                  "reports a commit; nemesis.delay_ms holds peer packets); "
                  "heals by lifting the cuts and delays",
                  3}},
      .partition_shapes =
          {{"one", "isolate one random node from all others", 2},
           {"leader", "isolate the current leader from all others", 2},
           {"halves",
            "split the nodes into two random halves (the larger one keeps a "
            "majority; with an even count neither does)",
            2},
           {"majorities-ring",
            "every node sees a majority, but no two nodes see the same one "
            "(overlapping majorities)",
            3},
           {"bridge",
            "two halves that cannot talk, joined by one node that sees both",
            3},
           // One-way shapes (nemesis/net/partition.h): the first group stops
           // receiving from the rest, which still receives from it.
           {"one-way-one",
            "one random node stops receiving from the others; they still "
            "receive from it",
            2},
           {"one-way-leader",
            "the current leader stops receiving from the others; they still "
            "receive from it",
            2},
           {"one-way-halves",
            "the smaller random half stops receiving from the larger one, "
            "which still receives from it",
            2}},
      .node_selectors =
          {{"one", "one random node", 1},
           {"leader", "the current leader", 1},
           {"follower", "one random node that is not the current leader", 2},
           {"minority", "a random minority (fewer than half, at least one)", 3},
           {"majority", "a random majority that is not every node", 3},
           {"all", "every node", 1}},
  };
  return kKnown;
}

namespace {

int MinNodesIn(const std::vector<KnownName>& known, std::string_view name) {
  for (const KnownName& k : known) {
    if (k.name == name) return k.min_nodes;
  }
  return 0;
}

// Optimal string alignment distance (Levenshtein plus adjacent swaps).
std::size_t EditDistance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1,
                                          std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) {
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

// YAML double-quoted scalar (JSON-compatible escapes).
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string Flow(const std::vector<std::string>& names, bool quote) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote ? Quote(names[i]) : names[i];
  }
  return out + "]";
}

// target: process, every key written out (the spec loads back the same).
std::string DescribeProcess(const ProcessSpec& p) {
  auto env = [](const std::vector<std::pair<std::string, std::string>>& e) {
    std::string o = "{";
    for (std::size_t i = 0; i < e.size(); ++i)
      o += (i ? ", " : "") + e[i].first + ": " + Quote(e[i].second);
    return o + "}";
  };
  auto ms = [](int v) { return std::to_string(v) + "ms"; };
  std::string o;
  o += "  system: " + Quote(p.system) + "\n";
  if (!p.config_dir.empty()) o += "  config_dir: " + Quote(p.config_dir) + "\n";
  if (!p.version.empty()) o += "  version: " + Flow(p.version, true) + "\n";
  if (!p.ports.empty()) {
    o += "  ports: {";
    for (std::size_t i = 0; i < p.ports.size(); ++i)
      o += (i ? ", " : "") + p.ports[i].first + ": " +
           std::to_string(p.ports[i].second);
    o += "}\n";
  }
  if (!p.lists.empty()) {
    o += "  lists:\n";
    for (const PeerListSpec& l : p.lists)
      o += "    " + l.name + ": {each: " + Quote(l.each) +
           ", separator: " + Quote(l.separator) +
           ", others: " + (l.others ? "true" : "false") + "}\n";
  }
  if (!p.files.empty()) {
    o += "  files:\n";
    for (const ProcessFileSpec& f : p.files)
      o += "    - {path: " + Quote(f.path) + ", content: " + Quote(f.content) +
           "}\n";
  }
  if (!p.setup.empty()) {
    o += "  setup:\n";
    for (const auto& argv : p.setup) o += "    - " + Flow(argv, true) + "\n";
  }
  o += "  start: " + p.start + "\n";
  o += "  processes:\n";
  for (const ProcessDef& d : p.processes) {
    o += "    - name: " + Quote(d.name) + "\n";
    o += "      argv: " + Flow(d.argv, true) + "\n";
    if (!d.bootstrap_args.empty())
      o += "      bootstrap_args: " + Flow(d.bootstrap_args, true) + "\n";
    if (!d.env.empty()) o += "      env: " + env(d.env) + "\n";
    if (!d.cwd.empty()) o += "      cwd: " + Quote(d.cwd) + "\n";
    const ProcessReadySpec& r = d.ready;
    if (r.kind == "tcp") o += "      ready: {tcp: " + Quote(r.port) + "}\n";
    if (r.kind == "command")
      o += "      ready: {command: " + Flow(r.command, true) + "}\n";
    if (r.kind == "http")
      o += "      ready: {http: {port: " + Quote(r.port) +
           ", path: " + Quote(r.path) +
           ", status: " + std::to_string(r.status) + "}}\n";
    o += "      ready_timeout: " + ms(d.ready_timeout_ms) + "\n";
    o += "      stop_signal: " + d.stop_signal + "\n";
    o += "      stop_grace: " + ms(d.stop_grace_ms) + "\n";
    o += "      faults: " + Flow(d.faults, false) + "\n";
    if (!d.logs.empty()) o += "      logs: " + Flow(d.logs, true) + "\n";
  }
  if (!p.status.empty())
    o += "  status: {command: " + Flow(p.status, true) +
         ", timeout: " + ms(p.status_timeout_ms) + "}\n";
  if (p.status_client)
    o += "  status: {client: true, timeout: " + ms(p.status_timeout_ms) + "}\n";
  const ProcessClientSpec& c = p.client;
  o += "  client:\n";
  o += "    protocol: " + c.protocol + "\n";
  if (!c.command.empty()) o += "    command: " + Flow(c.command, true) + "\n";
  if (!c.env.empty()) o += "    env: " + env(c.env) + "\n";
  if (!c.cwd.empty()) o += "    cwd: " + Quote(c.cwd) + "\n";
  o += "    start_timeout: " + ms(c.start_timeout_ms) + "\n";
  if (!c.port.empty()) o += "    port: " + Quote(c.port) + "\n";
  o += "    route: " + c.route + "\n";
  if (!c.sentinel_port.empty())
    o += "    sentinel: {port: " + Quote(c.sentinel_port) +
         ", master: " + Quote(c.master) + "}\n";
  if (!c.commands.empty()) {
    o += "    commands:\n";
    for (const auto& [f, argv] : c.commands)
      o += "      " + f + ": " + Flow(argv, true) + "\n";
  }
  return o;
}

// --- nemesis.faults entries (per-fault settings) as YAML ---

std::string FlowSettings(const FaultSettings& f) {
  using config_internal::FormatNumber;
  std::string o = "{fault: " + f.fault;
  if (f.targets) o += ", targets: " + Flow(*f.targets, false);
  if (f.partitions) o += ", partitions: " + Flow(*f.partitions, false);
  if (f.partition_mode) o += ", partition_mode: " + *f.partition_mode;
  if (f.delay_ms) o += ", delay_ms: " + std::to_string(*f.delay_ms);
  if (f.loss_probability)
    o += ", loss_probability: " + FormatNumber(*f.loss_probability);
  if (f.clock_offset_ms)
    o += ", clock_offset_ms: " + std::to_string(*f.clock_offset_ms);
  if (f.clock_rate) o += ", clock_rate: " + FormatNumber(*f.clock_rate);
  return o + "}";
}

// One `- ...` line per entry, indented under `  faults:`.
std::string BlockEntries(const std::vector<FaultEntry>& entries) {
  using config_internal::FormatNumber;
  std::string o;
  for (const FaultEntry& e : entries) {
    if (e.plain) {
      o += "    - " + e.faults[0].fault + "\n";
      continue;
    }
    std::string duration =
        e.duration_s ? ", duration: " + FormatNumber(*e.duration_s) : "";
    if (!e.together) {
      std::string one = FlowSettings(e.faults[0]);
      one.pop_back();  // the closing brace
      o += "    - " + one + duration + "}\n";
      continue;
    }
    o += "    - {together: [";
    for (std::size_t i = 0; i < e.faults.size(); ++i)
      o += (i > 0 ? ", " : "") + FlowSettings(e.faults[i]);
    o += "]" + duration + "}\n";
  }
  return o;
}

// --- end nemesis.faults entries ---

std::string OneLine(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  return s;
}

}  // namespace

int MinNodesForShape(std::string_view shape) {
  return MinNodesIn(Known().partition_shapes, shape);
}

int MinNodesForSelector(std::string_view selector) {
  return MinNodesIn(Known().node_selectors, selector);
}

std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& candidates) {
  const std::string w = Lower(word);
  if (w.empty()) return "";
  const std::size_t limit =
      w.size() <= 3 ? 1 : std::max<std::size_t>(2, w.size() / 3);
  std::string best;
  std::size_t best_d = limit + 1;
  for (const std::string& c : candidates) {
    std::size_t d = EditDistance(w, Lower(c));
    if (d < best_d && d < c.size()) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string FormatKnownNames() {
  const KnownNames& k = Known();
  std::string out;
  auto group = [&out](const char* title, const char* key,
                      const std::vector<KnownName>& names, bool show_min) {
    out += std::string(title) + " (" + key + "):\n";
    std::size_t width = 0;
    for (const KnownName& n : names) width = std::max(width, n.name.size());
    for (const KnownName& n : names) {
      out += "  " + n.name + std::string(width - n.name.size() + 2, ' ') +
             n.description;
      if (show_min && n.min_nodes > 1) {
        out += " [needs >= " + std::to_string(n.min_nodes) + " nodes]";
      }
      out += "\n";
    }
  };
  group("targets", "target.name", k.targets, false);
  group("workloads", "workload.name", k.workloads, false);
  group("faults", "nemesis.faults", k.faults, true);
  group("partition shapes", "nemesis.partitions", k.partition_shapes, true);
  group("node selectors", "nemesis.targets", k.node_selectors, true);
  return out;
}

std::string DescribeSpec(const TestSpec& s) {
  using config_internal::FormatNumber;
  const EtcdSpec& e = s.target.etcd;
  const WorkloadSpec& w = s.workload;
  const NemesisSpec& n = s.nemesis;
  std::string o;
  o += "# faultline config, resolved: every field spelled out, defaults and\n";
  o += "# command-line overrides included (see docs/config.md).\n";
  if (!s.source_file.empty()) {
    o += "# Loaded from: " + OneLine(s.source_file) + "\n";
  }
  if (!s.seed_given) o += "# The seed below was drawn at random.\n";
  o += "name: " + Quote(s.name) + "\n";
  o += "description: " + Quote(s.description) + "\n";
  o += "seed: " + std::to_string(s.seed) + "\n";
  o += "time_limit: " + FormatNumber(s.time_limit_s) + "\n";
  o += "recovery: " + FormatNumber(s.recovery_s) + "\n";
  o += "store: " + Quote(s.store_dir) + "\n";
  if (s.expect) o += "expect: " + Quote(*s.expect) + "\n";
  o += "cluster:\n";
  o += "  provider: " + Quote(s.cluster.provider) + "\n";
  if (s.cluster.provider == "ssh") {
    // --- provider: ssh
    const ClusterSpec& c = s.cluster;
    o += "  nodes:\n";
    for (const SshHostSpec& h : c.hosts)
      o += "    - {name: " + Quote(h.name) + ", address: " + Quote(h.address) +
           "}\n";
    o += "  user: " + Quote(c.user) + "\n";
    if (!c.key.empty()) o += "  key: " + Quote(c.key) + "\n";
    o += "  port: " + std::to_string(c.port) + "\n";
    if (!c.known_hosts.empty())
      o += "  known_hosts: " + Quote(c.known_hosts) + "\n";
    o += "  host_key_policy: " + Quote(c.host_key_policy) + "\n";
    o += std::string("  sudo: ") + (c.sudo ? "true" : "false") + "\n";
    if (!c.controller_ip.empty())
      o += "  controller_ip: " + Quote(c.controller_ip) + "\n";
    o += "  work_dir: " + Quote(c.work_dir) + "\n";
    if (c.system_clock != "deny")
      o += "  system_clock: " + c.system_clock + "\n";
    // --- end provider: ssh
  } else {
    o += "  nodes: " + std::to_string(s.cluster.nodes) + "\n";
    o += "  subnet: " + Quote(s.cluster.subnet) + "\n";
    // provider: docker
    if (!s.cluster.containers.empty()) {
      o += "  containers: " + Flow(s.cluster.containers, true) + "\n";
    }
    if (!s.cluster.docker_host.empty()) {
      o += "  docker_host: " + Quote(s.cluster.docker_host) + "\n";
    }
    if (!s.cluster.network.empty()) {
      o += "  network: " + Quote(s.cluster.network) + "\n";
    }
    // end provider: docker
  }
  o += "target:\n";
  o += "  name: " + Quote(s.target.name) + "\n";
  if (s.target.name == "raftkv") {
    const RaftkvSpec& r = s.target.raftkv;
    o += "  read_mode: " + Quote(r.read_mode) + "\n";
    o += "  heartbeat_ms: " + std::to_string(r.heartbeat_ms) + "\n";
    o += "  election_timeout_ms: " + std::to_string(r.election_timeout_ms) +
         "\n";
    o += "  follower_lease_ms: " + std::to_string(r.follower_lease_ms) + "\n";
    o += "  lease_drift_bound: " +
         config_internal::FormatNumber(r.lease_drift_bound) + "\n";
    o += std::string("  pre_vote: ") + (r.pre_vote ? "true" : "false") + "\n";
    o += std::string("  check_quorum: ") + (r.check_quorum ? "true" : "false") +
         "\n";
    o += "  snapshot_entries: " + std::to_string(r.snapshot_entries) + "\n";
    o += "  unsafe: " + Quote(r.unsafe) + "\n";
    o += "  binary: " + Quote(r.binary) + "\n";
    o += "  extra_args: " + Flow(r.extra_args, true) + "\n";
  } else if (s.target.name == "zookeeper") {
    const ZookeeperSpec& z = s.target.zookeeper;
    o += "  tick_ms: " + std::to_string(z.tick_ms) + "\n";
    o += "  init_limit: " + std::to_string(z.init_limit) + "\n";
    o += "  sync_limit: " + std::to_string(z.sync_limit) + "\n";
    o += std::string("  sync_reads: ") + (z.sync_reads ? "true" : "false") +
         "\n";
    o += std::string("  force_sync: ") + (z.force_sync ? "true" : "false") +
         "\n";
    o += "  java: " + Quote(z.java) + "\n";
    o += "  classpath: " + Quote(z.classpath) + "\n";
    o += "  jvm_args: " + Flow(z.jvm_args, true) + "\n";
  } else if (s.target.name == "process") {
    o += DescribeProcess(s.target.process);
  } else if (s.target.name == "redis") {
    const RedisSpec& r = s.target.redis;
    o += "  down_after_ms: " + std::to_string(r.down_after_ms) + "\n";
    o += "  failover_timeout_ms: " + std::to_string(r.failover_timeout_ms) +
         "\n";
    o += "  min_replicas_to_write: " + std::to_string(r.min_replicas_to_write) +
         "\n";
    o += "  min_replicas_max_lag_s: " +
         std::to_string(r.min_replicas_max_lag_s) + "\n";
    o += std::string("  appendonly: ") + (r.appendonly ? "true" : "false") +
         "\n";
    o += "  appendfsync: " + Quote(r.appendfsync) + "\n";
    o += "  binary: " + Quote(r.binary) + "\n";
    o += "  sentinel_binary: " + Quote(r.sentinel_binary) + "\n";
  } else {
    o += std::string("  pre_vote: ") + (e.pre_vote ? "true" : "false") + "\n";
    o += "  heartbeat_ms: " + std::to_string(e.heartbeat_ms) + "\n";
    o += "  election_timeout_ms: " + std::to_string(e.election_timeout_ms) +
         "\n";
    o += std::string("  serializable_reads: ") +
         (e.serializable_reads ? "true" : "false") + "\n";
    o += "  binary: " + Quote(e.binary) + "\n";
    o += "  extra_args: " + Flow(e.extra_args, true) + "\n";
  }
  o += "workload:\n";
  o += "  name: " + Quote(w.name) + "\n";
  o += "  keys: " + std::to_string(w.keys) + "\n";
  o += "  concurrency: " + std::to_string(w.concurrency) + "\n";
  o += "  rate: " + FormatNumber(w.rate) + "\n";
  o += "  mix: {read: " + FormatNumber(w.read) +
       ", write: " + FormatNumber(w.write) + ", cas: " + FormatNumber(w.cas) +
       "}\n";
  o += "  op_timeout_ms: " + std::to_string(w.op_timeout_ms) + "\n";
  o += "  locks: " + std::to_string(w.locks) + "\n";
  o += "  ttl_ms: " + std::to_string(w.ttl_ms) + "\n";
  o += "  hold_ms: " + std::to_string(w.hold_ms) + "\n";
  o += "  writes_per_hold: " + std::to_string(w.writes_per_hold) + "\n";
  o += "  stall_probability: " + FormatNumber(w.stall_probability) + "\n";
  o += "  stall_ms: " + std::to_string(w.stall_ms) + "\n";
  o += std::string("  fenced: ") + (w.fenced ? "true" : "false") + "\n";
  o += "  observe_ms: " + std::to_string(w.observe_ms) + "\n";
  o += "  key_dist: " + w.key_dist + "\n";
  o += "  max_writes_per_key: " + std::to_string(w.max_writes_per_key) + "\n";
  o += "  min_txn_length: " + std::to_string(w.min_txn_length) + "\n";
  o += "  max_txn_length: " + std::to_string(w.max_txn_length) + "\n";
  o += "  consistency_model: " + w.consistency_model + "\n";
  o += "  accounts: " + std::to_string(w.accounts) + "\n";
  o += "  total: " + std::to_string(w.total) + "\n";
  o += "  max_transfer: " + std::to_string(w.max_transfer) + "\n";
  o += "nemesis:\n";
  if (n.entries.empty()) {
    o += "  faults: " + Flow(n.faults, false) + "\n";
  } else {
    o += "  faults:\n" + BlockEntries(n.entries);
  }
  o += "  partition_mode: " + n.partition_mode + "\n";
  o += "  interval: " + FormatNumber(n.interval_s) + "\n";
  o += "  duration: " + FormatNumber(n.duration_s) + "\n";
  o += "  partitions: " + Flow(n.partitions, false) + "\n";
  o += "  targets: " + Flow(n.targets, false) + "\n";
  o += "  delay_ms: " + std::to_string(n.delay_ms) + "\n";
  o += "  loss_probability: " + FormatNumber(n.loss_probability) + "\n";
  o += "  clock_offset_ms: " + std::to_string(n.clock_offset_ms) + "\n";
  o += "  clock_rate: " + FormatNumber(n.clock_rate) + "\n";
  o += std::string("  clock_monotonic: ") +
       (n.clock_monotonic ? "true" : "false") + "\n";
  if (n.clock_mode != "faketime") o += "  clock_mode: " + n.clock_mode + "\n";
  o += "  clock_strobe_delta_ms: " + std::to_string(n.clock_strobe_delta_ms) +
       "\n";
  o += "  clock_strobe_period_ms: " + std::to_string(n.clock_strobe_period_ms) +
       "\n";
  if (UsesDiskFaults(n)) {
    o += "  fsync_errors: " + std::to_string(n.fsync_errors) + "\n";
    o += "  disk_latency_ms: " + std::to_string(n.disk_latency_ms) + "\n";
    o += "  disk_namespace: " + n.disk_namespace + "\n";
    o += "  disk_writeback_ms: " + std::to_string(n.disk_writeback_ms) + "\n";
  }
  o += "checker:\n";
  o += "  timeout: " + FormatNumber(s.checker.timeout_s) + "\n";
  o += "  memory_limit_mb: " + std::to_string(s.checker.memory_limit_mb) + "\n";
  o += "  threads: " + std::to_string(s.checker.threads) + "\n";
  return o;
}

namespace config_internal {

std::string FormatNumber(double v) {
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "0";
  return std::string(buf, p);
}

std::vector<std::string> Names(const std::vector<KnownName>& known) {
  std::vector<std::string> out;
  for (const KnownName& k : known) out.push_back(k.name);
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out;
}

}  // namespace config_internal
}  // namespace faultline::harness

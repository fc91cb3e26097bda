// TestSpec: a validated, seeded test campaign, the result of loading a YAML
// config (harness/config/config.h) and applying command-line overrides. Every
// field is documented for users in docs/config.md (YAML key in brackets below).
//
// A TestSpec that came out of LoadConfigFile/LoadConfigText satisfies every
// rule in docs/config.md (ranges, known names, cross-field rules such as
// "a bridge partition needs >= 3 nodes"), so consumers need not re-check.
// Plain value types: copyable, no shared state, no thread-safety concerns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline::harness {

// One node of an ssh cluster ([nodes] as a list): `{name: n1, address:
// 10.0.0.2}` or just the address (name then n<position>).
struct SshHostSpec {
  std::string name;     // [name] letters, digits, '-', '_', '.'; unique
  std::string address;  // [address] IPv4 address or host name; unique
  bool operator==(const SshHostSpec&) const = default;
};

struct ClusterSpec {
  std::string provider = "netns";       // [provider] netns | ssh | docker
  int nodes = 5;                        // [nodes] 1..9 (etcd: odd sizes);
                                        // for ssh: the length of `hosts`
  std::string subnet = "10.77.0.0/24";  // [subnet] private IPv4 /16../29,
                                        // network address (host bits zero).
                                        // Node i (0-based) gets host i+1, the
                                        // controller the last usable host.
                                        // netns only.
  // --- provider: docker (docs/docker.md); every key below is docker-only ---
  // [containers] the container of node i (named n<i+1>); empty = the
  // compose file's names faultline-n1 .. faultline-n<nodes>. When given,
  // `nodes` is its length.
  std::vector<std::string> containers;
  std::string docker_host;  // [docker_host] the engine, as `docker --host`
                            // takes it ("" = $DOCKER_HOST or the local
                            // socket)
  std::string network;      // [network] the docker network whose addresses
                            // the nodes use ("" = each container's only one)
  // --- end provider: docker ------------------------------------------------
  // --- provider: ssh (docs/remote.md); every key below is ssh-only --------
  std::vector<SshHostSpec> hosts;  // [nodes] as a list; required for ssh
  std::string user = "root";       // [user] login user on every node
  std::string key;                 // [key] private key file; "" = agent and
                                   // ~/.ssh default keys
  int port = 22;                   // [port] 1..65535
  std::string known_hosts;         // [known_hosts] "" = ~/.ssh/known_hosts
  std::string host_key_policy = "strict";  // [host_key_policy] strict |
                                           // accept-new | off
  bool sudo = false;              // [sudo] every command under `sudo -n`
  std::string controller_ip;      // [controller_ip] the controller's address
                                  // as the nodes reach it ("" = unknown)
  std::string work_dir = "/tmp";  // [work_dir] absolute directory on the
                                  // nodes; a run uses and removes
                                  // <work_dir>/faultline-<run id>
  // [system_clock] "allow": clock faults may step the nodes' real system
  // clocks (nemesis.clock_mode: system); "deny" (default) refuses that.
  std::string system_clock = "deny";
  // --- end provider: ssh ---------------------------------------------------
  bool operator==(const ClusterSpec&) const = default;
};

struct EtcdSpec {
  bool pre_vote = true;             // [pre_vote]
  int heartbeat_ms = 100;           // [heartbeat_ms] 10..5000
  int election_timeout_ms = 1000;   // [election_timeout_ms] 50..50000,
                                    // >= 5 * heartbeat_ms (etcd's rule)
  bool serializable_reads = false;  // [serializable_reads] true is known to
                                    // allow stale reads
  std::string binary = "etcd";      // [binary] path or name on PATH
  // [extra_args] Extra etcd command-line arguments, appended as given. Never
  // contains a flag faultline sets itself (--name, --data-dir, URLs,
  // --initial-cluster*, --heartbeat-interval, --election-timeout, --pre-vote).
  std::vector<std::string> extra_args;
  bool operator==(const EtcdSpec&) const = default;
};

// raftkv, this repository's own Raft key-value server
// (docs/targets/raftkv.md). Keys sit flat under `target:` like etcd's; the
// timing keys share etcd's names but have raftkv's own defaults.
struct RaftkvSpec {
  std::string read_mode = "readindex";  // [read_mode] readindex | lease |
                                        // follower-lease
  int heartbeat_ms = 50;                // [heartbeat_ms] 5..5000
  int election_timeout_ms = 500;        // [election_timeout_ms] 20..60000,
                                        // >= 3 * heartbeat_ms
  int follower_lease_ms = 300;          // [follower_lease_ms] 1..60000,
                                        // < election_timeout_ms
  // [lease_drift_bound] raftkv --lease-drift-bound, 0..0.5: the clock-rate
  // error its leases assume (every clock within [1/(1+e), 1+e] of real time).
  double lease_drift_bound = 0.001;
  bool pre_vote = true;          // [pre_vote]
  bool check_quorum = true;      // [check_quorum]; lease and
                                 // follower-lease need it
  int snapshot_entries = 10000;  // [snapshot_entries] 10..100000000
  // [unsafe] One safety mechanism turned off, for checking the checkers:
  // none | vote-not-persisted | leader-read-no-quorum |
  // follower-lease-no-margin | commit-old-terms | lock-token-per-term |
  // log-not-synced (the WAL, snapshot and data directory are never fsynced) |
  // txn-not-atomic (each micro-op of a TXN is its own log entry, so other
  // writes interleave: G1b, read skew, cycles).
  std::string unsafe = "none";
  std::string binary = "raftkv";  // [binary] path or name; the default is
                                  // looked up next to faultline, then PATH
  // [extra_args] Extra raftkv arguments, appended as given. Never contains a
  // flag faultline sets itself (--id, --peers, --listen, --data-dir and the
  // flags of the keys above).
  std::vector<std::string> extra_args;
  bool operator==(const RaftkvSpec&) const = default;
};

// Redis 7 with Sentinel (docs/targets/redis.md): per node one redis-server
// (n1 starts as primary, the others replicate it) and one redis-sentinel.
struct RedisSpec {
  int down_after_ms = 2000;         // [down_after_ms] 100..600000, sentinel
                                    // down-after-milliseconds
  int failover_timeout_ms = 6000;   // [failover_timeout_ms] 1000..3600000
  int min_replicas_to_write = 0;    // [min_replicas_to_write] 0..8, 0 = off
  int min_replicas_max_lag_s = 10;  // [min_replicas_max_lag_s] 1..3600
  bool appendonly = false;          // [appendonly]
  // [appendfsync] always | everysec | no: redis.conf appendfsync; matters
  // only with appendonly (everysec may lose ~1 s of acknowledged writes on
  // power loss, no leaves it to the kernel).
  std::string appendfsync = "everysec";
  std::string binary = "redis-server";             // [binary]
  std::string sentinel_binary = "redis-sentinel";  // [sentinel_binary]
  bool operator==(const RedisSpec&) const = default;
};

// Apache ZooKeeper 3.8 (docs/targets/zookeeper.md): one server per node,
// run by faultline's own java command line.
struct ZookeeperSpec {
  int tick_ms = 200;       // [tick_ms] tickTime, 10..10000; sessions last
                           // 2..20 ticks
  int init_limit = 20;     // [init_limit] initLimit in ticks, 1..1000
  int sync_limit = 5;      // [sync_limit] syncLimit in ticks, 1..1000
  bool sync_reads = true;  // [sync_reads] register reads call sync first;
                           // false is known to allow stale reads
  // [force_sync] false starts the servers with -Dzookeeper.forceSync=no: the
  // transaction log is never fsynced, so a power loss can lose acknowledged
  // writes.
  bool force_sync = true;
  std::string java = "java";  // [java] path or name on PATH
  std::string classpath;      // [classpath] "" = the Debian jars
  // [jvm_args] Extra JVM arguments (e.g. -Dzookeeper.x=y), before the
  // main class.
  std::vector<std::string> jvm_args;
  bool operator==(const ZookeeperSpec&) const = default;
};

// --- target: process (docs/targets/process.md): any system from YAML -------
// Every text below marked "template" may hold placeholders ({name}, {ip},
// {port:NAME}, {peers:NAME}, ...; harness/config/template.h), checked when
// the config is loaded.

// How a process shows it is ready ([ready]). kind "" = as soon as it runs.
struct ProcessReadySpec {
  std::string kind;                  // "" | "tcp" | "command" | "http"
  std::string port;                  // tcp, http: a name of `ports`
  std::vector<std::string> command;  // command: argv template, run on the
                                     // node; exit 0 = ready
  std::string path = "/";            // http: the path asked (GET)
  int status = 200;                  // http: the status that means ready
  bool operator==(const ProcessReadySpec&) const = default;
};

// One named process of every node ([processes] item).
struct ProcessDef {
  std::string name;                         // [name] [A-Za-z0-9_-]+, unique
  std::vector<std::string> argv;            // [argv] templates, >= 1
  std::vector<std::string> bootstrap_args;  // [bootstrap_args] appended on
                                            // the first start of node 1 only
  std::vector<std::pair<std::string, std::string>> env;  // [env] templates
  std::string cwd;                   // [cwd] template; "" = {dir}
  ProcessReadySpec ready;            // [ready]
  int ready_timeout_ms = 30000;      // [ready_timeout]
  std::string stop_signal = "TERM";  // [stop_signal] TERM INT QUIT
                                     // HUP KILL
  int stop_grace_ms = 5000;          // [stop_grace]
  // [faults] what acts on this process: pause, kill, clock. Unset: all
  // three for the first process, none for the others.
  std::vector<std::string> faults;
  std::vector<std::string> logs;  // [logs] extra files to collect
                                  // (templates, on the node)
  bool operator==(const ProcessDef&) const = default;
};

// A custom peer list ([lists] NAME: {each, separator, others}).
struct PeerListSpec {
  std::string name;
  std::string each;             // [each] per-peer template
  std::string separator = ",";  // [separator]
  bool others = false;          // [others] leave out the node itself
  bool operator==(const PeerListSpec&) const = default;
};

struct ProcessFileSpec {
  std::string path;     // [path] template, absolute after expansion
  std::string content;  // [content] template
  bool operator==(const ProcessFileSpec&) const = default;
};

struct ProcessClientSpec {
  std::string protocol = "exec";  // [protocol] exec | resp | etcd
  // exec: [command] argv template run on the controller, one process per
  // worker; [env] templates; [start_timeout].
  std::vector<std::string> command;
  std::vector<std::pair<std::string, std::string>> env;
  int start_timeout_ms = 10000;
  // exec: [cwd] the clients' working directory; relative to the config
  // file's directory, which is also the default ("" when loaded from text:
  // the controller's current directory).
  std::string cwd;
  // resp, etcd: [port] the named port clients connect to.
  std::string port;
  // resp: [route] node | sentinel; [sentinel] {port, master}; [commands]
  // f -> argv template ({key} {value} {old} {new} {ttl} {token} {owner}).
  std::string route = "node";
  std::string sentinel_port;
  std::string master = "mymaster";
  std::map<std::string, std::vector<std::string>> commands;
  bool operator==(const ProcessClientSpec&) const = default;
};

struct ProcessSpec {
  std::string system = "process";    // [system] the name reports show
  std::vector<std::string> version;  // [version] argv run on the controller
  std::vector<std::pair<std::string, int>> ports;  // [ports] name -> port
  std::vector<PeerListSpec> lists;                 // [lists]
  std::vector<ProcessFileSpec> files;              // [files]
  std::vector<std::vector<std::string>> setup;     // [setup] argv templates
  std::string start = "parallel";     // [start] parallel | sequential
  std::vector<ProcessDef> processes;  // [processes] >= 1
  std::vector<std::string> status;    // [status.command] argv template
  // [status.client] ask an exec client instead (an operation f: status on
  // a client process kept per node; docs/exec-protocol.md).
  bool status_client = false;
  int status_timeout_ms = 1000;  // [status.timeout]
  // Whether the nodes can be asked who leads (a status command or client).
  bool has_status() const { return !status.empty() || status_client; }
  ProcessClientSpec client;  // [client]
  // [config_dir] what the {config_dir} placeholder stands for; default: the
  // config file's directory, absolute ("" when loaded from text). A
  // described config (a run's stored copy) names it, so it still points
  // where the original did.
  std::string config_dir;
  bool operator==(const ProcessSpec&) const = default;
};
// --- end target: process ---

struct TargetSpec {
  std::string name = "etcd";  // [name] etcd | raftkv | redis | zookeeper |
                              // process
  EtcdSpec etcd;              // etcd's keys, flat under `target:`
  RaftkvSpec raftkv;          // raftkv's keys, flat under `target:`
  RedisSpec redis;            // redis's keys, flat under `target:`
  ZookeeperSpec zookeeper;    // zookeeper's keys, flat under `target:`
  ProcessSpec process;        // process's keys, flat under `target:`
  bool operator==(const TargetSpec&) const = default;
};

struct WorkloadSpec {
  std::string name = "register";  // [name] "register" | "lock" | "election"
                                  // | "list-append" | "rw-register"
                                  // | "set" | "bank" | "counter"
  int keys = 8;          // [keys] registers, spread over client threads
  int concurrency = 10;  // [concurrency] worker threads, 1..1000
  double rate = 200;     // [rate] invocations per second, all workers;
                         // 0 = no limit
  // [mix: {read, write, cas}] Relative weights of the op mix (need not sum to
  // anything; each >= 0, not all zero).
  double read = 50;
  double write = 30;
  double cas = 20;
  int op_timeout_ms = 2000;  // [op_timeout_ms] client-side timeout; a
                             // timeout is `info`
  // The lock and election workloads (workloads/lock.h, election.h; an
  // election's locks = elections, hold_ms = a term); ignored by others.
  int locks = 1;                 // [locks] lock names, 1..1000
  int ttl_ms = 1000;             // [ttl_ms] lock lease TTL, 1..600000
  int hold_ms = 100;             // [hold_ms] time a holder spends between its
                                 // acquire and its release, 0..600000
  int writes_per_hold = 3;       // [writes_per_hold] resource writes per hold,
                                 // 0..1000
  double stall_probability = 0;  // [stall_probability] chance per hold of
                                 // one stall before a write, 0..1
  int stall_ms = 0;              // [stall_ms] that stall, 0..600000; longer
                                 // than ttl_ms = the paused holder ("GC pause")
  bool fenced = true;            // [fenced] the protected resource rejects
                                 // writes with a token lower than it has seen
  // [observe_ms] Leader observer, any workload: every observe_ms each node
  // is asked for its role/term/leader (`observe` events, checked by
  // leader-per-term). 0 = off; else 1..600000.
  int observe_ms = 0;
  // The transactional workloads list-append and rw-register
  // (workloads/txn.h); ignored by others. `keys` is the number of keys in
  // use at a time; the mix's read and write weights choose each micro-op.
  std::string key_dist = "uniform";  // [key_dist] uniform | exponential | hot
  int max_writes_per_key = 32;       // [max_writes_per_key] about this many
                                     // appends/writes per key, then a fresh key
  int min_txn_length = 1;  // [min_txn_length] micro-ops per transaction
  int max_txn_length = 4;  // [max_txn_length] 1..64, >= min_txn_length
  // [consistency_model] what the history must satisfy to be valid.
  std::string consistency_model = "strict-serializable";
  // The bank workload (workloads/collections.h); ignored by others.
  int accounts = 5;      // [accounts] 2..1000 accounts
  int total = 100;       // [total] 0..10^9, the initial total, spread
                         // evenly (the remainder on the first account)
  int max_transfer = 5;  // [max_transfer] transfers move 1..max_transfer
                         // (1..10^9)
  bool operator==(const WorkloadSpec&) const = default;
};

// --- per-fault settings and combined faults (docs/config.md, "Schedules") --
// One fault of a `nemesis.faults` entry written as a mapping. An unset
// field means the nemesis-level value.
struct FaultSettings {
  std::string fault;  // [fault] a kind of Known().faults
  std::optional<std::vector<std::string>> targets;     // [targets] non-empty
  std::optional<std::vector<std::string>> partitions;  // [partitions]
  std::optional<std::string> partition_mode;           // [partition_mode]
  std::optional<int> delay_ms;                         // [delay_ms]
  std::optional<double> loss_probability;              // [loss_probability]
  std::optional<long long> clock_offset_ms;            // [clock_offset_ms]
  std::optional<double> clock_rate;                    // [clock_rate]
  bool operator==(const FaultSettings&) const = default;
};
// One entry of `nemesis.faults`: a plain name (`plain`, one fault using the
// nemesis-level settings), a mapping with `fault:` (one fault), or
// `{together: [...]}` (several faults of different kinds applied at once,
// healed together). [duration] overrides nemesis.duration for the entry.
struct FaultEntry {
  std::vector<FaultSettings> faults;  // >= 1; exactly 1 unless together
  bool plain = false;                 // written as a bare name
  bool together = false;              // written as {together: [...]}
  std::optional<double> duration_s;   // [duration] > 0
  bool operator==(const FaultEntry&) const = default;
};
// --- end per-fault settings ---

struct NemesisSpec {
  // [faults] Fault kinds: "partition", "pause", "kill", "delay",
  // "kill-voter", "loss", "clock", "figure8" (3 raftkv nodes), "strobe",
  // "power-loss", "torn-write", "fsync-error", "disk-full", "slow-disk".
  // Empty: no faults.
  // No duplicates. When the config writes entries as mappings (see
  // `entries`), this lists every kind any entry uses, once, in order.
  std::vector<std::string> faults = {"partition", "pause", "kill"};
  // [faults] as written, one per list item, when at least one item is a
  // mapping; empty otherwise (then every name in `faults` is a plain entry,
  // see EffectiveFaultEntries in nemesis/schedule/schedule.h).
  std::vector<FaultEntry> entries;
  // [partition_mode] how partitions (and one-way partitions) cut traffic:
  // "drop" (silently, the default) or "reset" (TCP segments are answered
  // with a TCP reset, so connections fail at once; other packets dropped).
  std::string partition_mode = "drop";
  double interval_s = 10;  // [interval] quiet time before each fault, >= 0;
                           // < time_limit_s when faults is not empty
  double duration_s = 10;  // [duration] how long each fault lasts before it
                           // heals, > 0
  // [partitions] Partition shapes: "one", "leader", "halves",
  // "majorities-ring", "bridge". Non-empty when faults has "partition"; every
  // shape fits cluster.nodes (see MinNodes in harness/config/config.h).
  std::vector<std::string> partitions = {"one", "leader", "halves",
                                         "majorities-ring", "bridge"};
  // [targets] Which nodes pause/kill/delay hit: "one", "leader", "follower",
  // "minority", "majority", "all". Non-empty when faults has "pause", "kill",
  // "kill-voter" or "delay".
  std::vector<std::string> targets = {"one", "leader", "minority"};
  // [delay_ms] "delay": how long packets from the other nodes to a chosen
  // node are held, 1..10000.
  int delay_ms = 500;
  // [loss_probability] "loss": share of the packets from the other nodes a
  // chosen node drops, (0, 1].
  double loss_probability = 0.3;
  // [clock_offset_ms] "clock": step of a chosen node's clock, -86400000..
  // 86400000 (>= 0 with clock_monotonic); [clock_rate] its rate from then
  // on, 0.01..100. A clock fault needs one of them to change the clock.
  // [clock_monotonic] whether CLOCK_MONOTONIC is faked too
  // (harness/clock/clock.h).
  long long clock_offset_ms = 0;
  double clock_rate = 1.0;
  bool clock_monotonic = false;
  // [clock_mode] how clock and strobe move clocks: "faketime" (libfaketime
  // in the target's processes) or "system" (the nodes' real CLOCK_REALTIME
  // through faultline-clock; ssh only, needs cluster.system_clock: allow,
  // no clock_rate, no clock_monotonic; docs/faults.md "System clocks").
  std::string clock_mode = "faketime";
  // [clock_strobe_delta_ms] "strobe": how far a chosen node's clock flips
  // up, 1..86400000; [clock_strobe_period_ms] how often it flips (up, back,
  // up, ...), 10..3600000 (nemesis/clock/strobe.h). Not with clock_monotonic.
  long long clock_strobe_delta_ms = 5000;
  long long clock_strobe_period_ms = 1000;
  // The disk faults (power-loss, torn-write, fsync-error, disk-full,
  // slow-disk) run on the lazy file system, mounted over every node's data
  // directory when any of them is configured (docs/disk-faults.md).
  // [fsync_errors] "fsync-error": how many of the next fsyncs on a chosen
  // node fail with EIO, 1..1000000.
  int fsync_errors = 1;
  // [disk_latency_ms] "slow-disk": the delay per file system operation,
  // 1..60000.
  int disk_latency_ms = 100;
  // [disk_namespace] when a file's creation, rename or unlink is durable:
  // "dir-fsync" (when its directory is fsynced, as POSIX promises) or
  // "any-fsync" (at any later fsync, like ext4's journal).
  std::string disk_namespace = "dir-fsync";
  // [disk_writeback_ms] > 0: a held write is written back (not fsynced)
  // once it is this old, as a kernel writes expired dirty pages back (Linux:
  // 30000); 0..3600000, 0 = only fsync, O_SYNC and the memory bound.
  int disk_writeback_ms = 0;
  bool operator==(const NemesisSpec&) const = default;
};

// How the history is checked after the run (checker bounds).
struct CheckerSpec {
  double timeout_s = 300;   // [timeout] > 0; a checker that runs out of time
                            // says unknown
  int memory_limit_mb = 0;  // [memory_limit_mb] 0 = the checker's default
  int threads = 0;          // [threads] 0 = all cores
  bool operator==(const CheckerSpec&) const = default;
};

struct TestSpec {
  std::string name;          // [name] [a-z0-9][a-z0-9-]*, <= 64 chars; the
                             // store folder
  std::string description;   // [description] free text for reports
  std::string source_file;   // config path (or display name), for messages
  std::uint64_t seed = 0;    // [seed]
  bool seed_given = false;   // false: seed was drawn at random
  double time_limit_s = 60;  // [time_limit] (0, 86400]
  double recovery_s = 5;     // [recovery] [0, 3600]; after the final heal,
                             // before final reads
  std::string store_dir = "store";    // [store]
  std::optional<std::string> expect;  // [expect] "valid" | "invalid"
  ClusterSpec cluster;
  TargetSpec target;
  WorkloadSpec workload;
  NemesisSpec nemesis;
  CheckerSpec checker;
  bool operator==(const TestSpec&) const = default;
};

}  // namespace faultline::harness

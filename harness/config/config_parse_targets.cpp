// The target section of the config: target.name and the keys of each
// target (etcd, raftkv, ZooKeeper, Redis), a key of another target than the
// one named, and extra_args flags that faultline sets itself.
#include <set>
#include <string>
#include <vector>

#include "harness/config/config_parser.h"

namespace faultline::harness::config_internal {

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
             {"lock-token-per-term", "", 1},
             {"log-not-synced", "", 1},
             {"txn-not-atomic", "", 1}};
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
      {"appendfsync",
       [&](const Item& x) {
         static const std::vector<KnownName> kPolicies = {
             {"always", "", 1}, {"everysec", "", 1}, {"no", "", 1}};
         Enum(x, kPolicies, "appendfsync policy", &r.appendfsync);
       }},
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
      {"force_sync", [&](const Item& x) { Bool(x, &z.force_sync); }},
      {"java", [&](const Item& x) { Text(x, false, &z.java); }},
      {"classpath", [&](const Item& x) { Text(x, true, &z.classpath); }},
      {"jvm_args", [&](const Item& x) { TextList(x, &z.jvm_args); }},
  };
}

std::vector<FieldDef> Parser::FieldsOf(const std::string& name) {
  if (name == "zookeeper") return ZookeeperFields();
  if (name == "raftkv") return RaftkvFields();
  if (name == "redis") return RedisFields();
  if (name == "process") return ProcessFields();
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
  if (t.name == "process") FinishProcess(it);
}

}  // namespace faultline::harness::config_internal

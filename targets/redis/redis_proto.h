// Pure pieces of the Redis + Sentinel target (docs/targets/redis.md): the
// config files faultline writes for redis-server and redis-sentinel, parsers
// for the replies the target and client read (INFO, ROLE, SENTINEL MASTER,
// SENTINEL get-master-addr-by-name), the Lua scripts of the register and
// lock recipes, and which error replies guarantee "no effect".
// No I/O; every function is safe to call from any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "harness/config/spec.h"
#include "targets/raftkv/resp_conn.h"  // resp::Value, HostPort

namespace faultline::targets::redis {

namespace resp = ::faultline::raftkv::resp;
using raftkv::HostPort;

constexpr int kRedisPort = 6379;
constexpr int kSentinelPort = 26379;
// redis-server's `dir` (dump.rdb, appendonlydir/), relative to the node's
// directory; everything Redis must keep across a crash lives in it.
constexpr const char* kDataSubdir = "data";
// The name every Sentinel monitors the primary under.
constexpr const char* kMasterName = "faultline";

// Sentinel quorum for `nodes` sentinels: a majority (1 for a single node).
int SentinelQuorum(int nodes);

// redis.conf for a node listening on `ip`, its data (`dir`: dump.rdb,
// appendonlydir/) in `data_dir`, `appendonly` and `appendfsync` from `spec`.
// `primary_ip` empty: the node starts as primary; else
// `replicaof primary_ip 6379`.
std::string RenderRedisConf(const harness::RedisSpec& spec,
                            const std::string& ip, const std::string& data_dir,
                            const std::string& primary_ip);
// sentinel.conf (Sentinel rewrites it, so it must be a writable file).
std::string RenderSentinelConf(const harness::RedisSpec& spec,
                               const std::string& ip, const std::string& dir,
                               const std::string& primary_ip, int quorum);

// INFO text ("# Section" headers, "field:value" lines, CRLF or LF) as a map.
std::map<std::string, std::string> ParseInfo(std::string_view text);

// The ROLE reply.
struct Role {
  std::string role;       // "master", "slave", "sentinel"; "" if malformed
  std::string master_ip;  // slave only
  int master_port = 0;    // slave only
  std::string link;       // slave only: "connect", "connecting", "sync",
                          // "connected"
  int replicas = 0;       // master only: replicas listed
};
Role ParseRole(const resp::Value& reply);

// A flat array of bulk strings "name", "value", ... (SENTINEL MASTER in
// RESP2) as a map; empty when the reply has another shape.
std::map<std::string, std::string> ParsePairs(const resp::Value& reply);

// SENTINEL get-master-addr-by-name: [ip, port] -> address; nullopt for a
// null reply, an error or another shape.
std::optional<HostPort> ParseMasterAddr(const resp::Value& reply);

// "master" -> "leader", "slave" -> "follower", anything else "".
std::string NormalizeRole(const std::string& redis_role);

// Value of `field` in `m`, or "".
std::string Field(const std::map<std::string, std::string>& m,
                  const std::string& field);
long long FieldInt(const std::map<std::string, std::string>& m,
                   const std::string& field, long long fallback);

// The first word of an error reply ("READONLY", "NOREPLICAS", ...). A
// script error ("ERR Error running script ...: NOREPLICAS ...") keeps the
// word "ERR".
std::string_view ErrorCode(std::string_view error);
// Error replies Redis gives before a command runs, so the command had no
// effect: READONLY (a replica), NOREPLICAS (min-replicas-to-write), OOM,
// MASTERDOWN, LOADING, BUSY, NOSCRIPT, WRONGTYPE, NOAUTH, ERR (syntax). Our
// scripts write at most once, as their last call, so an error from a script
// also means no effect.
bool NoEffect(std::string_view code);
// Errors after which the client must find the primary again: the node is
// not (or no longer) a primary that may accept writes.
bool Rediscover(std::string_view code);

// Lua scripts (EVAL; keys and arguments as listed). All start with
// "#!lua" and declare no flags, so Redis 7 treats them as writing scripts:
// a read-only replica answers -READONLY and a primary without enough
// replicas -NOREPLICAS, before the script runs.
// READ: KEYS[1]. The value, or nil. Used for reads so that a node that was
// turned into a replica never serves them.
extern const char* const kReadScript;
// CAS: KEYS[1]; ARGV[1] expected, ARGV[2] new, ARGV[3] "1" when the
// expected value is "absent". Returns 1 (set) or 0 (mismatch).
extern const char* const kCasScript;
// RENEW: KEYS[1] lock key; ARGV[1] owner, ARGV[2] ttl ms. 1 renewed, 0 not
// held by owner.
extern const char* const kRenewScript;
// RELEASE: KEYS[1] lock key; ARGV[1] owner. 1 deleted, 0 not held by owner.
extern const char* const kReleaseScript;

}  // namespace faultline::targets::redis

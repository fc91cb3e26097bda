// Pure pieces of the ZooKeeper target (docs/targets/zookeeper.md): the
// per-node zoo.cfg, the java command line, the `srvr` four-letter-word
// answer, the session-timeout clamp and the lock recipe's choice of
// predecessor. No I/O here, so every rule is unit-tested
// (zk_config_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace faultline::targets::zookeeper {

constexpr int kClientPort = 2181;
constexpr int kQuorumPort = 2888;
constexpr int kElectionPort = 3888;

// The Debian jars: ZooKeeper itself, an slf4j binding (without it the
// server logs nothing) and the servlet API (the AdminServer needs it; it is
// off, but a user may turn it on through extra JVM properties).
constexpr const char* kDefaultClasspath =
    "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar:"
    "/usr/share/java/servlet-api.jar";

struct ZooCfg {
  int tick_ms = 200;
  int init_limit = 20;  // in ticks
  int sync_limit = 5;   // in ticks
  std::string data_dir;
  std::string client_ip;  // clientPortAddress: the node's own address
  // server.<i+1>=<ip>:2888:3888, in cluster order.
  std::vector<std::string> server_ips;
};

// The text of zoo.cfg: tickTime, initLimit, syncLimit, dataDir (also the
// transaction log's: no dataLogDir, so myid, version-2/log.* and
// version-2/snapshot.* and the epoch files all live under it), clientPort
// 2181 bound to client_ip, 4lw whitelist srvr,mntr, the AdminServer off, no
// snapshot purging, and one server.N line per member (none for 1 node:
// standalone).
std::string RenderZooCfg(const ZooCfg& cfg);

// java [-Xmx256m ...] -cp <classpath> ... QuorumPeerMain <zoo.cfg>.
// `force_sync` false adds -Dzookeeper.forceSync=no (a system property that
// FileTxnLog reads; not a zoo.cfg key): the transaction log is then written
// but never fsynced, so a power loss can lose acknowledged writes.
std::vector<std::string> JavaCommand(const std::string& java,
                                     const std::string& classpath,
                                     const std::string& cfg_path,
                                     const std::string& log_dir,
                                     bool force_sync);

// What `srvr` says about a server.
struct SrvrInfo {
  bool serving = false;  // false: "not currently serving requests"
  std::string mode;      // "leader", "follower", "standalone", "observer"
  std::optional<std::uint64_t> zxid;
  // Zookeeper epoch = zxid >> 32 (rises by one with every new leader).
  std::optional<long long> epoch() const {
    if (!zxid) return std::nullopt;
    return static_cast<long long>(*zxid >> 32);
  }
};
// Parses the answer to `srvr` ("Zxid: 0x...", "Mode: ..."). nullopt when the
// text is neither a srvr answer nor the not-serving notice.
std::optional<SrvrInfo> ParseSrvr(const std::string& text);

// ZooKeeper grants a session timeout only within [2, 20] x tickTime; a
// request outside is clamped by the server. Returns what the server will
// grant for `requested_ms`.
int ClampSessionTimeout(int requested_ms, int tick_ms);

// The lock recipe (zk_lock_client.h): children of /faultline/locks/<name>
// are "<prefix><10-digit sequence>". Returns the child that `own` must
// watch (the one with the next lower sequence), "" when `own` has the lowest
// sequence (it holds the lock), or nullopt when `own` is not among the
// children (its znode is gone: the session expired).
std::optional<std::string> LockPredecessor(
    const std::vector<std::string>& children, const std::string& own);
// The sequence number ZooKeeper appended to a sequential znode's name, or -1.
long long SequenceOf(const std::string& name);

}  // namespace faultline::targets::zookeeper

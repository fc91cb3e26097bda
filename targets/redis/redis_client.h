// RedisClient: a register and lock client for Redis behind Sentinel
// (docs/targets/redis.md), over RESP2 (targets/raftkv/resp_conn.h).
//
// Finding the primary: ask the sentinels in order (the client's own node's
// first) `SENTINEL get-master-addr-by-name faultline`, connect to the
// answer and use it only if its `ROLE` says master. The primary connection
// is kept until a connection error, a timeout or an error reply that says
// the node is no longer a writable primary (-READONLY, -NOREPLICAS, ...);
// the next operation then discovers again. So, like real Sentinel clients,
// a client keeps writing to an isolated old primary until it errors.
//
// Register (keys "r/<key>", values as JSON text like the other targets):
//   read   EVAL of kReadScript (GET in a script a replica refuses, so a
//          node demoted under a client's feet never serves its reads).
//          ok value | ok null. Timeout -> info; other errors -> fail (a
//          read has no effect).
//   write  SET.  +OK -> ok.
//   cas    EVAL of kCasScript (atomic compare-and-set; a null expected
//          value means "absent"). 1 -> ok, 0 -> fail "mismatch".
// Lock (workloads/lock.h vocabulary), lock <name> -> keys "lock:<name>" and
// "lock:<name>:token":
//   acquire  SET lock:<name> <owner> NX PX <ttl>, then, only after +OK,
//            INCR lock:<name>:token -> ok with that token. Nil -> fail
//            (held by another). The token is fetched after the acquire, in
//            a second command: on one primary it is unique and grows with
//            the order of acquisitions (a holder's INCR comes after its SET
//            and before anyone else's SET can succeed, unless the lease
//            expired first); across a failover the counter may go back, as
//            acknowledged writes may be lost. A failure between SET and INCR
//            is info (the lock may be held, with no token).
//   renew    EVAL kRenewScript (PEXPIRE if the owner still holds it): 1 ->
//            ok, 0 -> fail "not-held".
//   release  EVAL kReleaseScript (DEL if the owner still holds it): 1 -> ok,
//            0 -> fail "not-held".
//   Every acquire uses a fresh owner id; renew and release use this
//   client's last acquire of that lock (fail "not-held" when there is none
//   or the token differs; nothing is sent).
// Outcomes of updates: no primary found, could not connect (nothing sent),
// or an error reply Redis gives before running a command (NoEffect in
// redis_proto.h) -> fail; when nothing was sent or the reply was -READONLY
// / -NOREPLICAS the update is retried once on a freshly discovered primary
// within the deadline. Timeout, connection lost after sending, any other
// reply -> info. Every operation is bounded by op_timeout_ms.
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/interfaces/client.h"
#include "targets/raftkv/resp_conn.h"

namespace faultline::targets::redis {

struct RedisClientOptions {
  // Sentinel addresses (port 26379), asked in this order.
  std::vector<std::string> sentinels;
  long op_timeout_ms = 2000;
  long lock_ttl_ms = 1000;  // acquire's TTL when the op gives none
};

class RedisClient : public harness::Client {
 public:
  explicit RedisClient(RedisClientOptions options);
  ~RedisClient() override;

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

  // "r/<key>" for a null, string or integer key; "" otherwise.
  static std::string KeyFor(const checkers::Value& key);

  using Clock = std::chrono::steady_clock;
  using Command = std::vector<std::string>;
  // One command on the primary (also used by RedisTxnClient,
  // redis_txn_client.h). With `may_switch`, discovers the primary when
  // there is none and retries once on a newly discovered one when the first
  // attempt surely had no effect (nothing sent, or an error reply for which
  // Rediscover() holds); without it, uses only the current connection. No
  // primary: error kConnect with sent = false. After a connection error
  // the primary is forgotten (the next call discovers again).
  raftkv::CallResult Call(const Command& command, Clock::time_point deadline,
                          bool may_switch);
  // Forgets the primary connection (e.g. after a reply out of step with
  // the request): the next Call with may_switch discovers again.
  void DropPrimary() { primary_.reset(); }

 private:
  // Connects `primary_` to the primary some sentinel names (verified by
  // ROLE). "" on success, else why not.
  std::string Discover(Clock::time_point deadline);
  harness::Completion Read(const harness::Operation& op);
  harness::Completion Update(const harness::Operation& op,
                             const Command& command);
  harness::Completion Lock(const harness::Operation& op);

  RedisClientOptions options_;
  std::vector<std::unique_ptr<raftkv::RespConn>> sentinels_;
  std::unique_ptr<raftkv::RespConn> primary_;  // null: discover first

  struct Held {
    std::string owner;
    long ttl = 0;
    long long token = 0;
  };
  std::string owner_;  // random prefix, per client object
  long acquisitions_ = 0;
  std::map<std::string, Held> held_;
};

}  // namespace faultline::targets::redis

// ZooKeeper clients for the register and lock workloads. Each owns one
// session (ZkSession) to its node, made on first use, and bounds every
// operation by op_timeout_ms in total.
//
// ZkRegisterClient (docs/history-format.md, cas-register): key k is the
// znode /faultline/registers/<k>, whose data is the value as JSON text.
//   read   getData on the own node; ZNONODE -> ok null. With sync_reads a
//          `sync` comes first: the node catches up with the leader, so the
//          read sees every write committed before the read began. Without
//          it the node answers from its own state, which may be stale
//          (the known anomaly of configs/known/zookeeper-no-sync-*). A
//          timeout is info; any other error is fail (a read has no effect).
//   write  setData (version -1); on ZNONODE create it; on ZNODEEXISTS set
//          again.
//   cas    [expected, new]: sync, getData (data + version), compare, then
//          setData with that version, so the swap happens only if nothing
//          wrote in between. Compare mismatch, ZNONODE for a non-null
//          expected, ZBADVERSION (someone wrote after our read: written
//          values are unique, so the value is no longer `expected`) and
//          ZNODEEXISTS for a null expected (create raced) -> fail
//          "mismatch". The sync is not optional here: a stale read would
//          make a fail "mismatch" a false claim.
//   Definitely no effect -> fail: the session never connected before the
//   deadline (nothing sent), ZINVALIDSTATE, any error before the update
//   was sent. Maybe an effect -> info: timeout, ZCONNECTIONLOSS,
//   ZOPERATIONTIMEOUT, ZSESSIONEXPIRED or another error after sending.
//
// ZkLockClient (workloads/lock.h vocabulary), the ZooKeeper lock recipe:
//   acquire  create an EPHEMERAL_SEQUENTIAL znode
//            /faultline/locks/<name>/lock-<seq>; list the children; the
//            lowest sequence holds the lock; otherwise watch the next lower
//            one (exists + watch) and look again when it goes. ok value =
//            the token = the znode's czxid. Gives up before op_timeout_ms:
//            deletes its znode (then fail "timeout-waiting") or, if that
//            delete is not confirmed, info.
//   renew    the session is alive and the znode exists and is ours -> ok;
//            ZNONODE or session expired -> fail "not-held".
//   release  delete the znode: ok; ZNONODE or session expired -> fail
//            "not-held"; anything uncertain -> info.
//   The lease is the session: when it expires (no heartbeat reached the
//   ensemble for session_timeout_ms) the server deletes the znode, and the
//   next waiter acquires. A holder stalled past that (SIGSTOP of its node,
//   a partition) still believes it holds: only fencing protects the
//   resource then.
//   Why czxid as the token: the lock goes to znodes in sequence order,
//   sequence order is creation order, and creations are ordered by their
//   zxid, which ZooKeeper assigns from one ensemble-wide counter. So
//   czxids are unique and grow with the order of acquisitions, across
//   sessions and leader changes (a new epoch only raises the high bits).
//   The sequence number would do for one lock as well; czxid also orders
//   acquisitions of different locks and survives deleting the lock's
//   parent znode.
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "harness/interfaces/client.h"

namespace faultline::targets::zookeeper {

class ZkSession;

struct ZkClientOptions {
  std::string host;  // the node's address; port kClientPort
  long op_timeout_ms = 2000;
  int session_timeout_ms = 4000;  // asked for; the server clamps it
  bool sync_reads = true;         // register reads: sync first
};

class ZkRegisterClient : public harness::Client {
 public:
  explicit ZkRegisterClient(ZkClientOptions options);
  ~ZkRegisterClient() override;
  harness::Completion Invoke(const harness::Operation& op) noexcept override;

  // "/faultline/registers/<key>", or "" for an unsupported key shape.
  static std::string PathFor(const checkers::Value& key);

 private:
  harness::Completion Read(const harness::Operation& op);
  harness::Completion Write(const harness::Operation& op);
  harness::Completion Cas(const harness::Operation& op);

  ZkClientOptions options_;
  std::unique_ptr<ZkSession> session_;
};

class ZkLockClient : public harness::Client {
 public:
  explicit ZkLockClient(ZkClientOptions options);
  ~ZkLockClient() override;
  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  harness::Completion Acquire(const harness::Operation& op,
                              const std::string& name);
  harness::Completion RenewOrRelease(const harness::Operation& op,
                                     const std::string& name);

  ZkClientOptions options_;
  std::unique_ptr<ZkSession> session_;
  // Lock name -> path of the znode this client's last acquire created.
  std::map<std::string, std::string> held_;
  std::int64_t held_session_ = 0;  // the session those znodes belong to
};

}  // namespace faultline::targets::zookeeper

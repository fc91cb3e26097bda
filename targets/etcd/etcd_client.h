// EtcdClient: a register client (read / write / cas) and a lock client
// (acquire / renew / release) for one etcd member, over the v3 JSON gateway
// (http://<ip>:2379/v3/...) with libcurl.
//
// Outcomes (see docs/targets/etcd.md):
//   read   any error is `fail` (a read has no effect), error says why;
//          a reply whose kv is not the key asked for is such an error
//   write  connection refused -> fail "connection-refused" (never sent);
//   cas    timeout -> info "timeout"; HTTP error, unexpected reply, any
//          other transport error -> info with a short error string. A
//          request is sent at most once, and one that went out on a kept
//          connection which then died (the member killed before it
//          answered) is info even when the reconnect is refused: the
//          member may have applied it (HttpSession, http.h).
//   cas    txn succeeded -> ok; compare did not match -> fail "mismatch"
// An unknown `f` or an unsupported key/value shape is `fail` (nothing was
// sent).
//
// Locks: etcd's concurrency-package recipe (what clientv3/concurrency's
// Mutex does), with the vocabulary of docs/history-locks.md:
//   acquire  key = lock name, value = ttl_ms (int; null: lock_ttl_ms).
//            1. grant a lease of ceil(ttl_ms / 1000) s (etcd keeps its own
//               minimum, ceil(1.5 * election timeout) s, and answers the TTL
//               it granted; that one is used); 2. put
//               /faultline-lock/<name>/<lease hex> with the lease; 3. poll
//               the prefix (linearizable range, every lock_poll_ms) until
//               that key has the lowest create revision, sending a lease
//               keepalive every third of the TTL meanwhile; 4. a keepalive
//               confirms that the lease is still alive (the range may have
//               been answered late, after the lease expired) and starts
//               the hold with a full TTL.
//            -> ok, value = the key's create revision (the fencing token:
//               unique, and it grows with the real-time order of puts);
//            fail when nothing can be held: the grant failed, the put was
//               refused, or the key vanished while waiting (lease expired);
//            info when the put's outcome is unknown or the wait outlived
//               acquire_timeout_ms (the key is then deleted by revoking the
//               lease, best effort, so it does not block others).
//   renew    value = token. Lease keepalive: TTL > 0 -> ok; TTL 0 (lease
//            gone) -> fail "lease-expired"; no hold of that token by this
//            client -> fail "not-held"; no answer -> info.
//   release  value = token. Delete the key (deleted 1 -> ok, 0 -> fail
//            "not-held"; no answer -> info), then revoke the lease (best
//            effort; an unrevoked lease expires by itself).
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "harness/interfaces/client.h"

namespace faultline::targets::etcd {

class HttpSession;

struct EtcdClientOptions {
  std::string ip;  // member address; client port 2379
  int port = 2379;
  long op_timeout_ms = 2000;  // CURLOPT_TIMEOUT_MS per operation
  bool serializable_reads = false;
  long lock_ttl_ms = 1000;         // acquire's TTL when the op gives none
  long acquire_timeout_ms = 2000;  // total wait of one acquire
  long lock_poll_ms = 20;          // between two looks at the lock's queue
};

class EtcdClient : public harness::Client {
 public:
  explicit EtcdClient(EtcdClientOptions options);
  ~EtcdClient() override;

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  harness::Completion Read(const harness::Operation& op);
  harness::Completion Write(const harness::Operation& op);
  harness::Completion Cas(const harness::Operation& op);
  harness::Completion Acquire(const harness::Operation& op);
  harness::Completion Renew(const harness::Operation& op);
  harness::Completion Release(const harness::Operation& op);

  // The hold of one lock by this client (from a put that may still wait).
  struct Hold {
    std::int64_t lease = 0;
    std::int64_t ttl_s = 0;
    std::string key;
    std::int64_t token = 0;  // 0 until acquired
  };
  // Waits until `h.key` leads its prefix; the acquire's completion.
  harness::Completion AwaitTurn(const harness::Operation& op,
                                const std::string& prefix, Hold& h,
                                std::chrono::steady_clock::time_point until);
  // Once `h.key` leads: a keepalive confirms that the lease is still alive
  // (ok), or not (fail), or cannot tell (info; the lease is revoked).
  harness::Completion Confirm(const harness::Operation& op, const Hold& h);
  // Revokes the lease (deleting its key); errors ignored.
  void RevokeQuietly(std::int64_t lease);

  EtcdClientOptions options_;
  std::string root_url_;               // "http://<ip>:<port>/v3/"
  std::string base_url_;               // "http://<ip>:<port>/v3/kv/"
  std::map<std::string, Hold> holds_;  // by lock name
  std::unique_ptr<HttpSession> http_;
};

}  // namespace faultline::targets::etcd

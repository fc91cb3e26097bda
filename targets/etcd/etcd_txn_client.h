// EtcdTxnClient: the list-append and rw-register workloads' client for one
// etcd member (docs/transactions.md), over the v3 JSON gateway. How a
// transaction maps onto etcd txns is in txn_gateway.h: a snapshot read at
// one revision, then (when it writes) one txn that compares the
// mod_revisions it depended on and puts the new values.
//
// Outcomes of an operation f "txn":
//   ok    read-only: the snapshot read answered; with writes: the write txn
//         succeeded. The value is the micro-op list with reads filled in.
//   fail  the value is malformed (nothing sent); the snapshot read failed in
//         any way (it has no effect, and nothing was written yet); the write
//         txn's compare failed ("conflict": etcd applied nothing); the write
//         txn was refused before anything was sent.
//   info  the write txn timed out, its connection died after it was sent,
//         or it was answered by an HTTP error or an unexpected body: etcd
//         may have applied it.
// Reads are linearizable, or serializable (answered from the member's own
// state, possibly stale) with serializable_reads; the write txn's compares
// are decided by the leader either way, so only read-only transactions can
// see stale state.
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <memory>
#include <string>

#include "harness/interfaces/client.h"
#include "targets/etcd/etcd_client.h"
#include "targets/etcd/txn_gateway.h"

namespace faultline::targets::etcd {

class HttpSession;

class EtcdTxnClient : public harness::Client {
 public:
  // options.ip, port, op_timeout_ms (for the whole transaction) and
  // serializable_reads are used.
  EtcdTxnClient(EtcdClientOptions options, TxnWorkload workload);
  ~EtcdTxnClient() override;

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  harness::Completion Txn(const harness::Operation& op);

  EtcdClientOptions options_;
  TxnWorkload workload_;
  std::string txn_url_;  // "http://<ip>:<port>/v3/kv/txn"
  std::unique_ptr<HttpSession> http_;
};

}  // namespace faultline::targets::etcd

// EtcdClient: a register client (read / write / cas) for one etcd member,
// over the v3 JSON gateway (http://<ip>:2379/v3/kv/...) with libcurl.
//
// Outcomes (see docs/targets/etcd.md):
//   read   any error is `fail` (a read has no effect), error says why
//   write  connection refused -> fail "connection-refused" (never sent);
//   cas    timeout -> info "timeout"; HTTP error, unexpected reply, any
//          other transport error -> info with a short error string
//   cas    txn succeeded -> ok; compare did not match -> fail "mismatch"
// An unknown `f` or an unsupported key/value shape is `fail` (nothing was
// sent).
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <memory>
#include <string>

#include "harness/client.h"

namespace faultline::targets::etcd {

class HttpSession;

struct EtcdClientOptions {
  std::string ip;  // member address; client port 2379
  int port = 2379;
  long op_timeout_ms = 2000;  // CURLOPT_TIMEOUT_MS per operation
  bool serializable_reads = false;
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

  EtcdClientOptions options_;
  std::string base_url_;  // "http://<ip>:<port>/v3/kv/"
  std::unique_ptr<HttpSession> http_;
};

}  // namespace faultline::targets::etcd

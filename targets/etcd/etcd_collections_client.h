// EtcdCollectionsClient: the set, bank and counter workloads' client for
// one etcd member (docs/collections.md; history shapes in
// checkers/collections/set.h, bank.h, counter.h), over the v3 JSON gateway.
//
// Encoding and requests:
//   set      element E at "/faultline-set/E" (value "1"). add: a put. read:
//            one range over the prefix (keys only): every element at one
//            revision, linearizable.
//   counter  "/faultline-counter" holds the decimal sum. add n: a snapshot
//            read of the key, then a txn comparing its mod_revision and
//            putting the new sum; a lost race (compare failed: nothing
//            applied) is retried while the operation's time lasts. read: a
//            linearizable range.
//   bank     account i (0..accounts-1) at "/faultline-bank/i", decimal
//            balances. Before its first operation a client creates every
//            account in one txn guarded by "no account exists yet" (total /
//            accounts each, the remainder on account 0), so the accounts are
//            created once, atomically, whoever comes first. transfer {from,
//            to, amount}: a snapshot read of both accounts; too little on
//            `from` -> fail "insufficient-funds"; else a txn comparing both
//            mod_revisions and putting both balances (a lost race is retried
//            as for counter). read: one txn ranging over every account (one
//            revision) -> {"0": b0, "1": b1, ...}.
//
// Outcomes: reads fail on any error (no effect). A put or guarded txn:
// ok when applied; fail when refused before sending, when its compare
// failed on the last try ("conflict"), or when the funds are short;
// info on a timeout, a connection lost after sending, an HTTP error or an
// unexpected reply (etcd may have applied it). An operation this client
// does not know, or a malformed value, is fail (nothing sent).
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/interfaces/client.h"
#include "targets/etcd/etcd_client.h"
#include "targets/etcd/txn_gateway.h"

namespace faultline::targets::etcd {

class HttpSession;
struct HttpReply;

enum class CollectionWorkload { kSet, kBank, kCounter };

struct CollectionOptions {
  CollectionWorkload workload = CollectionWorkload::kSet;
  int accounts = 5;          // bank: accounts 0..accounts-1
  std::int64_t total = 100;  // bank: the sum of the initial balances
};

class EtcdCollectionsClient : public harness::Client {
 public:
  // options.ip, port and op_timeout_ms (per operation) are used.
  EtcdCollectionsClient(EtcdClientOptions options, CollectionOptions what);
  ~EtcdCollectionsClient() override;

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  harness::Completion SetAdd(const harness::Operation& op, Deadline d);
  harness::Completion SetRead(const harness::Operation& op, Deadline d);
  harness::Completion CounterAdd(const harness::Operation& op, Deadline d);
  harness::Completion CounterRead(const harness::Operation& op, Deadline d);
  harness::Completion Transfer(const harness::Operation& op, Deadline d);
  harness::Completion BankRead(const harness::Operation& op, Deadline d);
  // Creates the accounts unless they exist; false (with why) when etcd
  // could not tell.
  bool EnsureAccounts(Deadline d, std::string* why);
  // A snapshot read of `keys`; nullopt with *why on any failure.
  std::optional<std::vector<TxnKeyState>> ReadStates(
      const std::vector<std::string>& keys, Deadline d, std::string* why);
  // A guarded put; the completion when it was not applied for certain or
  // was applied (ok), or nullopt when its compare failed (retry).
  std::optional<harness::Completion> GuardedPut(
      const harness::Operation& op, const std::vector<std::string>& keys,
      const std::vector<TxnKeyState>& states,
      const std::vector<std::string>& values, Deadline d);
  HttpReply Post(const std::string& path, const std::string& body, Deadline d);

  EtcdClientOptions options_;
  CollectionOptions what_;
  std::string root_url_;  // "http://<ip>:<port>/v3/kv/"
  bool accounts_ready_ = false;
  std::unique_ptr<HttpSession> http_;
};

}  // namespace faultline::targets::etcd

// RaftkvClient: a register client (read / write / cas), a lock client and a
// transaction client (txn) for one raftkv node,
// over RESP2 (docs/targets/raftkv.md). Keys are "r/<key>"; values are the
// history value as JSON text (integers as decimal).
//
//   read   GET on the client's own node (every read mode is linearizable on
//          every node). Bulk -> ok with the value, nil -> ok null. A timeout
//          is info "timeout" (project rule); any other failure is fail (a
//          read has no effect).
//   write  SET on the own node; a `-NOTLEADER id host:port` reply is
//   cas    followed once, to the named leader (a second connection, kept for
//          later redirects). CAS `:1` -> ok, `:0` -> fail "mismatch".
//          Definitely no effect -> fail: could not connect (nothing sent),
//          -NOTLEADER (after the redirect), -NOLEADER, -LOCKED, -ERR.
//          Maybe an effect -> info: timeout, connection lost after sending,
//          -TIMEOUT, -SHUTDOWN, any other or unexpected reply.
// Lock operations (the lock workload's vocabulary, workloads/lock.h), with
// the same redirect and fail/info rules as writes:
//   acquire  LOCK <key> <owner> <ttl>; value = ttl_ms (int, or null for
//            lock_ttl_ms). `:token` -> ok with the token; -LOCKED -> fail.
//   renew    RENEW <key> <owner> <token> <ttl>; value = token. +OK -> ok;
//            -NOTOWNER -> fail "not-held" (the lease is gone).
//   release  UNLOCK <key> <owner> <token>; value = token. +OK -> ok;
//            -NOTOWNER -> fail "not-held".
// The key is the lock's name (a string or integer, used as is). Every
// acquire uses a fresh owner id (random per client, plus a counter), so a
// re-acquire never gets an old hold's token back; renew and release use the
// owner and TTL of this client's last acquire of that lock (fail
// "not-held" when there was none).
// Transactions (the list-append and rw-register workloads, checkers/txn):
//   txn      value = [[f, k, v], ...] with f "append", "w" or "r"; one TXN
//            command, TXN APPEND t/<k> v W t/<k> v R t/<k> - ... (k: string
//            or integer, TxnKeyFor; v: integer as decimal or string as is).
//            The array reply -> ok with the same list, each read's value
//            filled in: a list -> the list, each element an integer when it
//            is one in canonical decimal, else a string; a bulk string the
//            same way; null -> [] when list_reads (list-append), else null.
//            Same redirect and fail/info rules as writes (-WRONGTYPE: fail).
//            A malformed txn is fail, nothing sent.
// The collection workloads (docs/collections.md, checkers/collections),
// chosen by RaftkvClientOptions::workload; same redirect and fail/info
// rules as writes (reads included: a read's outcome other than ok is
// ignored by the checkers anyway):
//   set      add v: TXN APPEND c/set v (v integer or string) -> ok;
//            read: TXN R c/set - -> ok with the list (absent: []).
//   counter  add n: INCRBY c/counter n -> ok; read: TXN R c/counter - ->
//            ok with the integer (absent: 0).
//   bank     accounts 0..accounts-1 under b/<i>. Before its first bank op
//            each client initialises them once with MSETNX b/0 x0 b/1 x1
//            ... (total/accounts each, the remainder on account 0), which
//            sets all or none, so whichever client's MSETNX applies first
//            wins and every later one is a no-op (:0). Until an MSETNX
//            reply (:1 or :0) came back, the op is fail "bank init: ..."
//            (the op itself is not sent). transfer {"from","to","amount"}:
//            XFER b/from b/to amount; :1 -> ok, :0 -> fail "insufficient
//            funds", -ERR -> fail. read: one TXN R b/0 - R b/1 - ... -> ok
//            with {"0": balance, ...} (an absent account is left out, for
//            the checker to report; a non-integer balance is info).
// A cas whose expected value is null is fail (raftkv's CAS never matches an
// absent key; nothing is sent). An unknown `f` or key shape is fail.
// Every operation is bounded by op_timeout_ms in total (redirect included).
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/interfaces/client.h"
#include "targets/raftkv/resp/resp.h"

namespace faultline::targets::raftkv {

class RespConn;

struct RaftkvClientOptions {
  std::string host;  // the node's client address
  int port = 6379;
  long op_timeout_ms = 2000;
  long lock_ttl_ms = 1000;  // acquire's TTL when the op gives none
  // list-append: a txn read of an absent key is [] (rw-register: null).
  bool list_reads = false;
  // The workload ("set", "bank", "counter" select the collection
  // vocabulary above; any other value the register/lock/txn one).
  std::string workload;
  int accounts = 5;          // bank: number of accounts, >= 1
  std::int64_t total = 100;  // bank: initial total over the accounts, >= 0
};

class RaftkvClient : public harness::Client {
 public:
  explicit RaftkvClient(RaftkvClientOptions options);
  ~RaftkvClient() override;

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

  // The key raftkv stores a register under ("r/<key>"), or "" when the key
  // shape is unsupported (not null, string or integer).
  static std::string KeyFor(const checkers::Value& key);

  // The key raftkv stores a transaction key under ("t/<key>"), or "" when
  // the key is not a string or integer.
  static std::string TxnKeyFor(const checkers::Value& key);
  // The TXN command for a txn value, or nullopt (and *error) when the value
  // is not a non-empty list of [f, k, v] micro-ops as above.
  static std::optional<std::vector<std::string>> TxnCommand(
      const checkers::Value& txn, std::string* error);
  // The txn value with each read filled in from `reply` (TXN's array), or
  // nullopt when the reply does not fit the transaction.
  static std::optional<checkers::Value> TxnResult(
      const checkers::Value& txn, const ::faultline::raftkv::resp::Value& reply,
      bool list_reads);
  // A stored string as a history value: an integer when it is one in
  // canonical decimal ("-12", not "012" or "+1"), else the string.
  static checkers::Value DecodeElement(const std::string& s);

 private:
  harness::Completion Read(const harness::Operation& op);
  // What a successful reply to an update looks like.
  enum class Expect {
    kOk,
    kCasInt,
    kToken,
    kTxn,
    kInteger,      // INCRBY: any integer -> ok with the op's value
    kAppended,     // TXN of one APPEND: [+OK] -> ok with the op's value
    kSetRead,      // TXN R of the set -> ok with the list
    kCounterRead,  // TXN R of the counter -> ok with the integer
    kBankRead,     // TXN R of every account -> ok with the balances
    kTransfer,     // XFER: :1 ok, :0 fail "insufficient funds"
    kInit,         // MSETNX: :1 or :0 -> ok
  };
  harness::Completion Update(const harness::Operation& op,
                             std::vector<std::string> command, Expect expect);
  harness::Completion LockOp(const harness::Operation& op);
  harness::Completion CollectionOp(const harness::Operation& op);
  // The completion of a collection Expect for a non-error reply, or
  // nullopt when the reply does not fit.
  std::optional<harness::Completion> CollectionReply(
      const harness::Operation& op, const ::faultline::raftkv::resp::Value& v,
      Expect expect) const;

  RaftkvClientOptions options_;
  std::string NextOwner();

  // The owner and TTL of this client's last acquire of each lock.
  struct Held {
    std::string owner;
    long ttl = 0;
  };
  std::string owner_;  // random prefix, per client object
  long acquisitions_ = 0;
  std::map<std::string, Held> held_;
  bool bank_ready_ = false;  // an MSETNX of the accounts got a reply
  std::unique_ptr<RespConn> own_;
  std::unique_ptr<RespConn> leader_;  // last redirect target, may be null
};

}  // namespace faultline::targets::raftkv

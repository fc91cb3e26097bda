// RedisTxnClient: the transaction client (f "txn", workloads/txn.h) of the
// Redis + Sentinel target for the list-append and rw-register workloads
// (docs/targets/redis.md, "Transactions"; docs/transactions.md).
//
// One transaction is one EVAL of a fixed Lua script on the primary, found
// and kept exactly as the register client finds and keeps it
// (RedisClient::Call: Sentinel, ROLE check, one retry on a freshly
// discovered primary when the first attempt surely had no effect). Redis
// runs a script atomically: no other command runs between its first and
// last call, so the reads come from one state and other clients see all of
// the writes or none. The script gets KEYS[i] = the i-th micro-op's key and
// ARGV[2i-1], ARGV[2i] = its letter and value (TxnEval), runs the
// micro-ops in order and returns one element per micro-op:
//   list-append  ["append", k, v]  RPUSH la:<k> v  -> 1
//                ["r", k, null]    LRANGE la:<k> 0 -1 -> the list ([] when
//                                  the key does not exist)
//   rw-register  ["w", k, v]       SET rw:<k> v    -> 1
//                ["r", k, null]    GET rw:<k> -> {v}, or {} when absent
// k is an integer (or string), v an integer (written in decimal) or a
// string. A read after the same transaction's write sees it. Read values
// come back as integers when they are one in canonical decimal, else as
// strings, so integers round-trip exactly (TxnFill).
//
// The scripts start with "#!lua" and declare no flags, so Redis 7 treats
// them as writing scripts, even a read-only transaction: a replica refuses
// them with -READONLY, a primary short of min-replicas-to-write with
// -NOREPLICAS, before any micro-op runs. A demoted old primary therefore
// never serves a read.
//
// Outcomes (a Redis script is NOT rolled back when it fails after a write:
// the writes it made stay; so only errors Redis gives before the script
// changed anything are fail):
//   ok    the reply has the expected shape: the transaction with every
//         read filled in.
//   fail  nothing was sent (no primary found, connection refused or not
//         connected); an error reply TxnNoEffect() holds for (READONLY,
//         NOREPLICAS, MASTERDOWN, LOADING, BUSY, NOSCRIPT, OOM: Redis
//         checks these before the script runs, or, for OOM, only while the
//         script has written nothing yet); a malformed transaction or an
//         unknown f (nothing sent). A transaction of reads only has no
//         effect whatever happens, so it is fail on every error but a
//         timeout.
//   info  with a write: timeout, connection lost after sending, any other
//         error reply (e.g. ERR or WRONGTYPE from a call inside the script,
//         which may come after an earlier write took effect), an
//         unexpected reply (which also drops the connection). A timeout is
//         info even for reads only (project rule).
// Every transaction is bounded by op_timeout_ms (discovery and the retry
// included).
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
// The free functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/interfaces/client.h"
#include "targets/raftkv/resp_conn.h"
#include "targets/redis/redis_client.h"

namespace faultline::targets::redis {

enum class TxnKind { kListAppend, kRwRegister };

// "list-append" / "rw-register" -> the kind; nullopt otherwise.
std::optional<TxnKind> TxnKindOf(std::string_view workload);

// The scripts described above (KEYS[i]; ARGV[2i-1] "r" / "a" / "w",
// ARGV[2i] the value, "" for reads).
extern const char* const kListAppendTxnScript;
extern const char* const kRwRegisterTxnScript;

// "la:<k>" (list-append) or "rw:<k>" (rw-register) for an integer or
// string key; "" otherwise.
std::string TxnKey(TxnKind kind, const checkers::Value& key);

// The EVAL command for `txn`: {"EVAL", script, n, keys..., f1, v1, ...}.
// nullopt (with *error set) when txn is not a non-empty list of
// [f, k, v] with f "r" or the kind's write ("append" resp. "w"), a
// supported key and, for writes, an integer or string value.
std::optional<RedisClient::Command> TxnEval(TxnKind kind,
                                            const checkers::Value& txn,
                                            std::string* error);

// True when `txn` (a list of micro-ops) has no write.
bool TxnReadOnly(const checkers::Value& txn);

// The script's reply -> `txn` with every read filled in; nullopt when the
// reply does not have the shape TxnEval's script returns for it.
std::optional<checkers::Value> TxnFill(TxnKind kind, const checkers::Value& txn,
                                       const raftkv::resp::Value& reply);

// Error codes (ErrorCode() of the reply) Redis gives only before the
// script changed anything.
bool TxnNoEffect(std::string_view code);

// fail or info for an error reply `error` (the whole text, "CODE ...").
harness::Outcome TxnErrorOutcome(std::string_view error, bool read_only);
// fail or info for a call that got no reply (r.error != kNone).
harness::Outcome TxnUnansweredOutcome(const raftkv::CallResult& r,
                                      bool read_only);

class RedisTxnClient : public harness::Client {
 public:
  // `options` as for RedisClient (sentinels, op_timeout_ms).
  RedisTxnClient(RedisClientOptions options, TxnKind kind);

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  harness::Completion Txn(const harness::Operation& op, bool read_only);

  TxnKind kind_;
  long op_timeout_ms_;
  RedisClient primary_;  // discovery and the connection to the primary
};

}  // namespace faultline::targets::redis

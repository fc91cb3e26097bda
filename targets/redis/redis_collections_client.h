// RedisCollectionsClient: the set, bank and counter workloads' client of
// the Redis + Sentinel target (docs/collections.md, docs/targets/redis.md;
// history shapes in checkers/collections/set.h, bank.h, counter.h), plus
// its pure parts, declared here so they can be unit tested without a
// server.
//
// Every command goes to the primary, found and kept exactly as the register
// client finds and keeps it (RedisClient::Call: Sentinel, ROLE check, one
// retry on a freshly discovered primary when the first attempt surely had
// no effect). Each operation is one command, which Redis runs alone:
//   set      the set faultline:set; element E in decimal (an integer) or
//            as is (a non-empty string). add: SADD faultline:set E (an
//            integer reply: ok). read: EVAL of kSetReadScript, SMEMBERS in
//            a script -> the elements, canonical decimals as integers.
//   counter  faultline:counter, a decimal. add n: INCRBY faultline:counter
//            n (an integer reply: ok). read: EVAL of kReadScript
//            (redis_proto.h: GET in a script); absent reads 0.
//   bank     account i (0..accounts-1) is faultline:bank:<i>, a decimal.
//            Before its first bank operation a client runs kBankInitScript,
//            which sets every account (total/accounts each, the remainder
//            on account 0) only when none of them exists, like MSETNX:
//            1 = created, 0 = they existed, both "ready". transfer: EVAL of
//            kTransferScript: 1 = moved, 0 = too little on `from` -> fail
//            "insufficient-funds", -1 = an account is missing or not a
//            number (nothing written) -> fail. read: EVAL of
//            kBankReadScript, MGET of every account in a script -> {"0":
//            b0, ...}; an account that does not exist (after this client
//            saw the accounts created: lost) is left out of the object, so
//            the bank checker reports it missing.
// Reads run inside scripts for the same reason as the register client's
// (redis_proto.h, kReadScript): "#!lua" without flags makes Redis 7 treat a
// script as writing, so a replica refuses it with -READONLY before it
// runs, and a node demoted under a client's feet never serves a stale read.
//
// Outcomes:
//   ok    the reply has the expected shape.
//   fail  a malformed operation (nothing sent); nothing was sent (no
//         primary, not connected); an error reply that guarantees no
//         effect: for SADD and INCRBY any NoEffect() code (redis_proto.h;
//         one command either runs or is refused), for the transfer script
//         a TxnNoEffect() code (redis_txn_client.h: refused before the
//         script ran); short funds or a missing account (the script wrote
//         nothing); the accounts could not be confirmed created (no money
//         moved: the transfer is not sent); a read's error other than a
//         timeout, or an unexpected read reply.
//   info  an update was sent and no reply says it had no effect: timeout,
//         connection lost after sending, another error reply, an
//         unexpected reply (which also drops the connection); a read's
//         timeout.
// Every operation is bounded by op_timeout_ms (discovery included).
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
// The free functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/interfaces/client.h"
#include "targets/raftkv/resp_conn.h"
#include "targets/redis/redis_client.h"

namespace faultline::targets::redis {

inline constexpr const char* kSetKey = "faultline:set";
inline constexpr const char* kCounterKey = "faultline:counter";

enum class Collection { kSet, kBank, kCounter };

// "set" / "bank" / "counter" -> the kind; nullopt otherwise.
std::optional<Collection> CollectionOf(std::string_view workload);

// "faultline:bank:<i>".
std::string AccountKey(int i);

// The scripts described above. SET READ: KEYS[1] -> SMEMBERS. BANK INIT:
// KEYS = every account, ARGV = their initial balances -> 1 | 0. TRANSFER:
// KEYS[1] from, KEYS[2] to, ARGV[1] amount -> 1 | 0 | -1. BANK READ:
// KEYS = every account -> MGET.
extern const char* const kSetReadScript;
extern const char* const kBankInitScript;
extern const char* const kTransferScript;
extern const char* const kBankReadScript;

// SADD faultline:set E; nullopt (with *error) unless the element is an
// integer or a non-empty string.
std::optional<RedisClient::Command> SetAddCommand(
    const checkers::Value& element, std::string* error);
RedisClient::Command SetReadCommand();
// The set read's reply (an array of bulk strings) -> the elements; nullopt
// for another shape.
std::optional<checkers::Value> ParseSetRead(const raftkv::resp::Value& reply);

// INCRBY faultline:counter n; nullopt (with *error) unless n is a
// non-negative integer.
std::optional<RedisClient::Command> CounterAddCommand(const checkers::Value& n,
                                                      std::string* error);
RedisClient::Command CounterReadCommand();
// The counter read's reply: a decimal bulk string, or null (0); nullopt for
// anything else.
std::optional<std::int64_t> ParseCounterRead(const raftkv::resp::Value& reply);

// The initial balances: total/accounts each, the remainder on account 0.
// accounts >= 1.
std::vector<std::int64_t> InitialBalances(int accounts, std::int64_t total);
RedisClient::Command BankInitCommand(int accounts, std::int64_t total);
// EVAL kTransferScript for {"from": A, "to": B, "amount": N}: A and B
// integers (or their decimal text) in 0..accounts-1, A != B, N >= 0;
// nullopt (with *error) otherwise.
std::optional<RedisClient::Command> TransferCommand(
    const checkers::Value& transfer, int accounts, std::string* error);
RedisClient::Command BankReadCommand(int accounts);
// The bank read's reply (an array of `accounts` decimal bulk strings or
// nulls) -> {"0": b0, ...} without the null ones; nullopt for another
// shape.
std::optional<checkers::Value> ParseBankRead(const raftkv::resp::Value& reply,
                                             int accounts);

// fail or info for an update's error reply `error` (the whole text): for a
// plain command (SADD, INCRBY) any NoEffect() code is fail, for a script
// only a TxnNoEffect() code.
harness::Outcome UpdateErrorOutcome(std::string_view error, bool script);

struct CollectionOptions {
  Collection workload = Collection::kSet;
  int accounts = 5;          // bank: accounts 0..accounts-1 (>= 2)
  std::int64_t total = 100;  // bank: the sum of the initial balances
};

class RedisCollectionsClient : public harness::Client {
 public:
  // `options` as for RedisClient (sentinels, op_timeout_ms).
  RedisCollectionsClient(RedisClientOptions options, CollectionOptions what);

  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  using Deadline = RedisClient::Clock::time_point;
  // An update (SADD, INCRBY, the transfer script): the completion for its
  // reply; `script` as for UpdateErrorOutcome.
  harness::Completion Update(const harness::Operation& op,
                             const RedisClient::Command& command, bool script,
                             Deadline d);
  // A read: the reply, or nullopt with *failed set.
  std::optional<raftkv::resp::Value> Read(const harness::Operation& op,
                                          const RedisClient::Command& command,
                                          Deadline d,
                                          harness::Completion* failed);
  harness::Completion Transfer(const harness::Operation& op, Deadline d);
  harness::Completion BankRead(const harness::Operation& op, Deadline d);
  // Runs kBankInitScript unless it answered before; false (with *why)
  // when Redis could not tell.
  bool EnsureAccounts(Deadline d, std::string* why);

  CollectionOptions what_;
  long op_timeout_ms_;
  bool accounts_ready_ = false;
  RedisClient primary_;  // discovery and the connection to the primary
};

}  // namespace faultline::targets::redis

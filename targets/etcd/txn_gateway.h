// Transactions (list-append, rw-register; docs/transactions.md) over etcd's
// v3 JSON gateway: the pure half of EtcdTxnClient (etcd_txn_client.h), the
// request bodies, reply parsing and the evaluation of micro-ops against a
// snapshot, without I/O so it can be unit tested.
//
// Encoding: transaction key K (an integer or a string) lives at
// "/faultline-txn/K". A list-append key's value is the compact JSON array of
// its elements ("[3,7]"); a rw-register key's value is the register value's
// compact JSON ("7"). An absent key is the empty list / null.
//
// A transaction runs as (EtcdTxnClient has the outcomes):
//   1. read: one etcd txn with no compares whose success branch ranges over
//      every key the transaction needs (ReadRequest). etcd runs a txn at one
//      revision, so the reads come from one state; it is linearizable unless
//      the ranges are serializable (then the member answers from its own,
//      possibly stale, state).
//   2. Evaluate the micro-ops in order against that snapshot (Evaluate):
//      reads see the transaction's own earlier writes.
//   3. write (only when the transaction writes): one etcd txn comparing the
//      mod_revision of every key whose snapshot value was used with the one
//      read (0 for an absent key: etcd compares a missing key's revisions as
//      0), whose success branch puts every written key's final value
//      (WriteRequest). A failed compare applies nothing: someone wrote in
//      between and the transaction aborts. A write-only rw-register
//      transaction skips step 1 and puts without compares.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/value.h"
#include "harness/interfaces/result.h"

namespace faultline::targets::etcd {

inline constexpr std::string_view kTxnKeyPrefix = "/faultline-txn/";

enum class TxnWorkload { kListAppend, kRwRegister };

// One micro-op of a transaction, parsed.
struct TxnMicroOp {
  enum class Kind { kRead, kWrite, kAppend } kind = Kind::kRead;
  std::string key;      // the etcd key, "/faultline-txn/K"
  checkers::Value k;    // K as the history has it
  checkers::Value arg;  // the written / appended value (int or string)
};

// What a transaction touches, in first-use order.
struct TxnPlan {
  std::vector<TxnMicroOp> ops;
  // Keys whose current value the transaction depends on (read before its
  // own write to them, or appended to): read in step 1, compared in step 3.
  std::vector<std::string> depends;
  // Keys the transaction writes, in first-write order.
  std::vector<std::string> writes;
};

// Parses an operation's value, a non-empty list of [f, k, v]: f "r" or, per
// workload, "append" (list-append) or "w" (rw-register); k an integer or a
// string without NUL; v an integer or a string for writes, anything
// (ignored) for reads. An error says which micro-op is wrong and why.
harness::Result<TxnPlan> PlanTxn(const checkers::Value& txn,
                                 TxnWorkload workload);

// The current state of one key, as step 1 read it.
struct TxnKeyState {
  bool found = false;
  std::string value;              // raw stored bytes, when found
  std::int64_t mod_revision = 0;  // 0 when absent
};

// Step 1's body: {"success":[{"request_range":{"key":..}}, ...]} over
// `keys`, each range serializable when asked.
std::string ReadRequest(const std::vector<std::string>& keys,
                        bool serializable);
// Step 1's reply: one state per key of `keys`, in that order. Any other
// shape (a missing response, a kv of another key) is an error.
harness::Result<std::vector<TxnKeyState>> ParseReadReply(
    std::string_view body, const std::vector<std::string>& keys);

// The result of evaluating a plan on a snapshot.
struct TxnEvaluation {
  checkers::Value completed;  // the op's value with every read filled in
  // Final stored bytes of each written key, in plan.writes order.
  std::vector<std::string> puts;
};
// Evaluates `plan` against `states` (one per plan.depends key, in that
// order). A stored value that is not what faultline writes (not a JSON
// array for list-append) is an error naming the key.
harness::Result<TxnEvaluation> Evaluate(const TxnPlan& plan,
                                        TxnWorkload workload,
                                        const std::vector<TxnKeyState>& states);

// Step 3's body: compare mod_revision of each plan.depends key with its
// state's, then put each plan.writes key's value from `puts`.
std::string WriteRequest(const TxnPlan& plan,
                         const std::vector<TxnKeyState>& states,
                         const std::vector<std::string>& puts);
// The same for any keys: compare mod_revision of each `depends[i]` with
// `states[i]`'s (0: absent), then put `puts[i]` at `writes[i]`.
std::string GuardedPutRequest(const std::vector<std::string>& depends,
                              const std::vector<TxnKeyState>& states,
                              const std::vector<std::string>& writes,
                              const std::vector<std::string>& puts);

}  // namespace faultline::targets::etcd

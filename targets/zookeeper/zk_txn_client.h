// ZkTxnClient: the list-append and rw-register workloads' client for one
// ZooKeeper server (docs/transactions.md, docs/targets/zookeeper.md,
// "Transactions"), plus its pure parts, declared here so they can be unit
// tested without a server.
//
// Encoding: transaction key K (an integer, or a string that is a valid znode
// name) is the persistent znode /faultline/txn/<K>. A list-append key's data
// is the compact JSON array of its elements ("[3,7]"); a rw-register key's
// data is the value's compact JSON ("7"). An absent znode is the empty list
// / null. Nothing ever deletes a key's znode, so its version (bumped by
// every setData) names its content.
//
// A transaction runs as:
//   1. read: with sync_reads a `sync` first (the server catches up with the
//      leader), then getData of every key the transaction touches, keeping
//      each one's data and version (ZNONODE: absent).
//   2. evaluate the micro-ops in order on what was read: reads see the
//      transaction's own earlier writes (EvaluateZkTxn).
//   3. commit: one `multi` (TxnMulti) that, for each key:
//        written, existing   setData with the version read, or with -1
//                            (any) when the transaction's result does not
//                            depend on the old value (a rw-register write
//                            before any read of the key)
//        written, absent     create
//        only read, existing check of the version read
//        only read, absent   create + delete (ZooKeeper has no "does not
//                            exist" check; the pair fails with ZNODEEXISTS
//                            when someone created the key, and otherwise
//                            leaves nothing behind)
//      The leader applies all of it or none: a version conflict, ZNODEEXISTS
//      or ZNONODE means another transaction wrote in between, and this one
//      aborts with nothing applied.
//   A read-only transaction with sync_reads: false skips the sync and the
//   multi: its reads are whatever the connected server has, which on a
//   lagging or cut-off follower is stale (the unsafe mode of
//   configs/known/zookeeper-txn-no-sync.yaml). With sync_reads: true it
//   commits the check multi as well, so its reads were all current at the
//   moment the leader applied it (strict serializability). Transactions
//   that write are validated by their multi in both modes.
//
// Outcomes of an operation f "txn":
//   ok    the multi succeeded (or, unsafe read-only, the reads answered);
//         the value is the micro-op list with every read filled in.
//   fail  the value is malformed, or a stored value is not what faultline
//         writes (nothing sent); an error in steps 1-2 (nothing written
//         yet), except a timeout of a read-only transaction; the multi
//         failed with ZBADVERSION, ZNODEEXISTS or ZNONODE ("conflict":
//         nothing applied) or was refused before it was sent (the session
//         was not connected, ZINVALIDSTATE).
//   info  the multi of a transaction that writes timed out, lost its
//         connection, hit session expiry or any other error after it was
//         sent; a read-only transaction's timeout.
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
// The pure functions are thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "checkers/value.h"
#include "harness/interfaces/client.h"
#include "harness/interfaces/result.h"
#include "targets/zookeeper/zk_session.h"

namespace faultline::targets::zookeeper {

inline constexpr const char* kTxnRoot = "/faultline/txn";

enum class ZkTxnWorkload { kListAppend, kRwRegister };

// "/faultline/txn/<key>", or "" when the key is not an integer or a string
// usable as a znode name.
std::string TxnPathFor(const checkers::Value& key);

// A parsed transaction: its micro-ops and the distinct keys they touch.
struct ZkTxnPlan {
  struct Micro {
    enum class Kind { kRead, kWrite, kAppend } kind = Kind::kRead;
    std::size_t key = 0;  // index into keys / paths
    checkers::Value arg;  // the written or appended value
  };
  std::vector<Micro> ops;
  std::vector<checkers::Value> keys;  // K as the history has it, first use
  std::vector<std::string> paths;     // their znodes
  // Per key: the result depends on its current value (read before the
  // transaction's first write of it, or appended to).
  std::vector<bool> depends;
  std::vector<bool> written;  // per key: the transaction writes it
  bool read_only() const;
};

// Parses an operation's value, a non-empty list of [f, k, v]: f "r" or, per
// workload, "append" (list-append) or "w" (rw-register); v an integer or a
// string for writes, ignored for reads. The error names the bad micro-op.
harness::Result<ZkTxnPlan> PlanZkTxn(const checkers::Value& txn,
                                     ZkTxnWorkload workload);

// One key as step 1 read it.
struct ZkKeyState {
  bool found = false;
  std::string data;  // when found
  int version = -1;  // when found
};

// The stored data of a key's value (a list for list-append).
std::string EncodeTxnData(const checkers::Value& value);
// The value a state holds: the list ([] when absent) for list-append, the
// value (null when absent) for rw-register. Data that faultline does not
// write (not a JSON array of integers/strings for list-append, not JSON for
// rw-register) is an error naming `path`.
harness::Result<checkers::Value> DecodeTxnData(ZkTxnWorkload workload,
                                               const ZkKeyState& state,
                                               const std::string& path);

struct ZkTxnEvaluation {
  checkers::Value completed;  // the micro-ops with every read filled in
  // Per key: the data to store when plan.written[i] (else "").
  std::vector<std::string> data;
};
// Step 2: evaluates `plan` on `states` (one per plan key, in order).
harness::Result<ZkTxnEvaluation> EvaluateZkTxn(
    const ZkTxnPlan& plan, ZkTxnWorkload workload,
    const std::vector<ZkKeyState>& states);

// Step 3's ops, key by key in plan order (see the table above). For a
// read-only plan: the validating checks (and create+delete pairs).
std::vector<ZkOp> TxnMulti(const ZkTxnPlan& plan,
                           const std::vector<ZkKeyState>& states,
                           const ZkTxnEvaluation& eval);

// Where a request that did not succeed was in the transaction.
enum class ZkTxnStep {
  kRead,   // sync / getData (step 1): nothing written yet
  kMulti,  // the commit (step 3)
};
// The completion for return code `rc` (not ZOK) at `step`; `value` is the
// operation's value.
harness::Completion TxnError(int rc, ZkTxnStep step, bool read_only,
                             const checkers::Value& value);

struct ZkTxnOptions {
  std::string host;  // the node's address; port kClientPort
  long op_timeout_ms = 2000;
  int session_timeout_ms = 4000;
  bool sync_reads = true;  // sync first, and validate read-only txns
  ZkTxnWorkload workload = ZkTxnWorkload::kListAppend;
};

class ZkTxnClient : public harness::Client {
 public:
  explicit ZkTxnClient(ZkTxnOptions options);
  ~ZkTxnClient() override;
  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  harness::Completion Txn(const harness::Operation& op);

  ZkTxnOptions options_;
  std::unique_ptr<ZkSession> session_;
  bool root_ready_ = false;  // kTxnRoot is known to exist
};

}  // namespace faultline::targets::zookeeper

// ZkCollectionsClient: the set, bank and counter workloads' client for one
// ZooKeeper server (docs/collections.md, docs/targets/zookeeper.md; history
// shapes in checkers/collections/set.h, bank.h, counter.h), plus its pure
// parts, declared here so they can be unit tested without a server.
//
// Encoding (persistent znodes, open ACL; nothing ever deletes one, so a
// znode's version, bumped by every setData, names its content):
//   set      element E (an integer, or a string usable as a znode name) is
//            the znode /faultline/set/E, with empty data.
//   counter  /faultline/counter holds the decimal sum; absent means 0.
//   bank     account i (0..accounts-1) is /faultline/bank/<i>, holding its
//            decimal balance.
//
// Requests:
//   set add      create /faultline/set/E (ZNONODE: the parent is missing,
//                made, and the create sent again). Elements are unique per
//                history, so ZNODEEXISTS can only mean that an earlier
//                attempt of this same add was applied: ok. After a lost
//                connection the create is sent again while the operation's
//                time lasts; ok or ZNODEEXISTS then settles it.
//   set read     with sync_reads a `sync` first, then getChildren of
//                /faultline/set (ZNONODE: the empty set).
//   counter add  getData of the counter (its data and version), then
//                setData of the new sum with that version, or, when absent,
//                a create. ZBADVERSION / ZNODEEXISTS is a lost race with
//                nothing applied, retried (up to 10 tries) while the
//                operation's time lasts. The server answers a session's
//                requests in order, so a retry's getData sees at least what
//                the failed write was checked against.
//   counter read with sync_reads a `sync` first, then getData.
//   bank         before its first bank operation a client creates every
//                account in one multi of creates (total/accounts each, the
//                remainder on account 0; BankCreateMulti): the leader
//                applies all of it or none, so ZNODEEXISTS means the
//                accounts were created before, by whoever came first.
//   transfer     getData of both accounts (with versions); too little on
//                `from` -> fail "insufficient-funds"; else one multi of two
//                setData with the versions read (TransferMulti); ZBADVERSION
//                is a lost race, retried as for counter add.
//   bank read    with sync_reads a `sync` first, then getData of every
//                account, then one multi of a check of each version read
//                (BankCheckMulti). When it succeeds every balance read was
//                current at the moment the leader applied the multi, so the
//                read is one snapshot of the bank, linearizable; a failed
//                check (a transfer came in between) is retried as above.
//                The checks are made with sync_reads false too: a series of
//                getData calls alone is not one snapshot. (sync_reads then
//                only decides whether the reads sync first, which makes
//                the checks fail less often.)
//
// Outcomes (ZkUpdateOutcome, ZkReadOutcome):
//   ok    the update was applied (for set add also ZNODEEXISTS), or the
//         read answered.
//   fail  a malformed operation or stored data that faultline does not
//         write (nothing sent); an error before the update was sent (the
//         getData of counter add and transfer, or not connected:
//         kNotConnected, ZINVALIDSTATE); ZooKeeper refused the update
//         (ZBADVERSION / ZNODEEXISTS on the last try: "conflict"; ZNONODE,
//         ZBADARGUMENTS); short funds; a read's error other than a timeout
//         (a read has no effect); creating the bank accounts could not be
//         confirmed (no money moved: the transfer is not sent).
//   info  an update was sent and no answer says it was not applied:
//         timeout, ZCONNECTIONLOSS, ZOPERATIONTIMEOUT, ZSESSIONEXPIRED, any
//         other error; a read's timeout.
//
// Thread-safety: one client per worker thread; Invoke is not reentrant.
// The pure functions are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/value.h"
#include "harness/interfaces/client.h"
#include "harness/interfaces/result.h"
#include "targets/zookeeper/zk_session.h"

namespace faultline::targets::zookeeper {

inline constexpr const char* kSetRoot = "/faultline/set";
inline constexpr const char* kCounterPath = "/faultline/counter";
inline constexpr const char* kBankRoot = "/faultline/bank";

enum class ZkCollection { kSet, kBank, kCounter };

// "/faultline/set/<E>", or "" when the element is not an integer or a
// string usable as a znode name.
std::string SetPathFor(const checkers::Value& element);
// The elements named by getChildren of kSetRoot: a name that is an integer
// in canonical decimal becomes that integer, any other the string.
checkers::Value SetElements(const std::vector<std::string>& children);

// A stored decimal amount (counter or balance); nullopt for anything else.
std::optional<std::int64_t> ParseAmount(std::string_view data);

// "/faultline/bank/<i>".
std::string AccountPath(int i);
// The initial balances: total/accounts each, the remainder on account 0.
// accounts >= 1.
std::vector<std::int64_t> InitialBalances(int accounts, std::int64_t total);
// The multi that creates every account with its initial balance.
std::vector<ZkOp> BankCreateMulti(int accounts, std::int64_t total);

// A transfer's value {"from": A, "to": B, "amount": N}: A and B integers
// (or their decimal text) in 0..accounts-1, A != B, N >= 0.
struct ZkTransfer {
  int from = 0;
  int to = 0;
  std::int64_t amount = 0;
};
harness::Result<ZkTransfer> ParseTransfer(const checkers::Value& value,
                                          int accounts);

// One account as getData found it.
struct ZkBalance {
  std::int64_t amount = 0;
  int version = -1;
};
// The transfer's commit: setData of both new balances with the versions
// read. Precondition: from.amount >= t.amount.
std::vector<ZkOp> TransferMulti(const ZkTransfer& t, const ZkBalance& from,
                                const ZkBalance& to);
// A bank read's validation: a check of every account's version, in
// account order.
std::vector<ZkOp> BankCheckMulti(const std::vector<ZkBalance>& balances);
// The ok value of a bank read: {"0": b0, "1": b1, ...}.
checkers::Value BankReadValue(const std::vector<ZkBalance>& balances);

// The completion of an update that did not succeed with code `rc` (not
// ZOK): fail when ZooKeeper did not apply it for certain, else info.
// `value` is the operation's value.
harness::Completion ZkUpdateOutcome(int rc, const checkers::Value& value);
// The completion of a read (or of a request before an update was sent)
// that failed with `rc`: info for a timeout when `read` (a read's
// timeout stays unknown), fail otherwise.
harness::Completion ZkReadOutcome(int rc, bool read,
                                  const checkers::Value& value);

struct ZkCollectionsOptions {
  std::string host;  // the node's address; port kClientPort
  long op_timeout_ms = 2000;
  int session_timeout_ms = 4000;
  bool sync_reads = true;  // reads sync first
  ZkCollection workload = ZkCollection::kSet;
  int accounts = 5;          // bank: accounts 0..accounts-1 (>= 2)
  std::int64_t total = 100;  // bank: the sum of the initial balances
};

class ZkCollectionsClient : public harness::Client {
 public:
  explicit ZkCollectionsClient(ZkCollectionsOptions options);
  ~ZkCollectionsClient() override;
  harness::Completion Invoke(const harness::Operation& op) noexcept override;

 private:
  harness::Completion SetAdd(const harness::Operation& op, Deadline d);
  harness::Completion SetRead(const harness::Operation& op, Deadline d);
  harness::Completion CounterAdd(const harness::Operation& op, Deadline d);
  harness::Completion CounterRead(const harness::Operation& op, Deadline d);
  harness::Completion Transfer(const harness::Operation& op, Deadline d);
  harness::Completion BankRead(const harness::Operation& op, Deadline d);
  // Creates the accounts unless they exist; false (with *why) when
  // ZooKeeper could not tell.
  bool EnsureAccounts(Deadline d, std::string* why);
  // getData of `path` as a balance; nullopt with *failed set (the read's
  // completion) on an error, a missing znode or data that is not a number.
  std::optional<ZkBalance> ReadBalance(const std::string& path, bool read,
                                       const harness::Operation& op, Deadline d,
                                       harness::Completion* failed);

  ZkCollectionsOptions options_;
  std::unique_ptr<ZkSession> session_;
  bool accounts_ready_ = false;
};

}  // namespace faultline::targets::zookeeper

// The fixed operation sequences of `faultline client-test`
// (docs/exec-protocol.md, "Checking a client"): each drives a client
// (harness::Client: an exec, resp or etcd client of a process target, or
// any other) against a system nobody else is using and checks its answers:
// their shape, that reads see the client's own writes, and that a fail
// means the operation did not happen. Every check is one PASS or FAIL.
//
//   register     a fresh key reads null; a write is read back; a cas with a
//                wrong expected value fails and changes nothing; a right
//                cas is read back.
//   lock         acquire gives an integer token; a second client is
//                refused; renew and release of the hold succeed; a second
//                release fails; the next acquire's token is larger.
//   status       ok with an object whose "role" is a string and whose
//                "term", when present, is an integer.
//   list-append  (txn) a fresh key reads []; a read after the txn's own
//                append sees it; a read before an append does not, one
//                after sees both; two keys appended in one txn are both
//                read back by the next.
//   rw-register  (txn) the same with writes: a fresh key reads null, a
//                read sees the txn's own write, the next txn reads the last
//                write of each key.
//   set          a read is a list; an added element is read back with
//                every element read before; each is listed once.
//   counter      a read is an integer; after adds of 3, then 2 and 4, the
//                reads are exactly 3 and 9 more than the first (nobody else
//                may use the counter meanwhile).
//   bank         a read lists exactly the accounts "0".."accounts-1" with
//                balances that sum to the total, none negative; a transfer
//                of 1 from the richest account is read back; a transfer of
//                more than the total fails and changes nothing.
// Keys, values and elements come from the caller (random per run, so a
// system used before still has fresh ones); the collections use the
// system's one set, counter and accounts.
//
// Thread-safety: a ClientChecks and the clients are used by one thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/interfaces/client.h"

namespace faultline::cli {

class ClientChecks {
 public:
  // Operation lines and PASS/FAIL lines go to `out` (nullptr: nowhere).
  explicit ClientChecks(std::FILE* out) : out_(out) {}

  // Invokes `op` on `client` and prints it with its answer and latency.
  harness::Completion Do(harness::Client& client, const harness::Operation& op);
  // One check: `good` says whether it passed; `what` describes it.
  void Expect(bool good, const std::string& what);

  int failed() const { return static_cast<int>(failures_.size()); }
  int total() const { return total_; }
  // The descriptions of the checks that failed, in order.
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  std::FILE* out_;
  int total_ = 0;
  std::vector<std::string> failures_;
};

// `key` a register key nobody used; `value` any integer.
void RegisterChecks(harness::Client& c, ClientChecks& k, std::int64_t key,
                    std::int64_t value);
// `a` and `b` two clients of the same node; `lock` a fresh lock name.
void LockChecks(harness::Client& a, harness::Client& b, ClientChecks& k,
                const std::string& lock, int ttl_ms);
void StatusChecks(harness::Client& c, ClientChecks& k);
// Keys `key` and `key` + 1 are fresh; values from `value` on are unique.
void ListAppendChecks(harness::Client& c, ClientChecks& k, std::int64_t key,
                      std::int64_t value);
void RwRegisterChecks(harness::Client& c, ClientChecks& k, std::int64_t key,
                      std::int64_t value);
// `element` and `element` + 1 were never added to the set.
void SetChecks(harness::Client& c, ClientChecks& k, std::int64_t element);
void CounterChecks(harness::Client& c, ClientChecks& k);
// The bank's configuration: accounts "0".."accounts-1" sharing `total`.
void BankChecks(harness::Client& c, ClientChecks& k, int accounts,
                std::int64_t total);

}  // namespace faultline::cli

// Internal to the fault ledger (harness/ledger/ledger.cpp): undoing entries
// that carry a RemoteDescriptor, on their node (see "Entries for a node with
// its own process table" in harness/ledger/ledger.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/cluster/remote.h"
#include "harness/ledger/ledger.h"

namespace faultline::harness {

// Remotes opened for one heal, one per distinct descriptor, so a ledger with
// many entries for a node connects once. A descriptor that failed to open is
// not retried within the heal. Not thread-safe.
class RemoteCache {
 public:
  Result<Remote*> Get(const RemoteDescriptor& d);

 private:
  std::map<std::string, std::unique_ptr<Remote>> open_;
  std::map<std::string, std::string> failed_;
};

// Undoes `e` (e.remote non-empty) on its node; idempotent like
// UndoLedgerEntry. The caller has checked RefusalReason(e).
Status UndoRemoteLedgerEntry(const LedgerEntry& e, RemoteCache& remotes,
                             std::vector<std::string>* log);

}  // namespace faultline::harness

// The election workload (docs/history-locks.md, "Elections"): candidates
// campaign for one of `locks` elections ("election0".."election<n-1>")
// through the target's lock recipe, lead for a term of about hold_ms, and
// resign. While they believe they lead they write the election's protected
// resource ("<election>-resource", fenced or not) with their term/token,
// and before each write they renew their lease: a renew that fails means
// they were deposed, so they stop writing and do not resign. A stall
// (stall_probability, stall_ms) falls between a renew and the write after
// it: the leader paused right after checking that it still leads.
//
// In the history: campaign (ok value = the token, which is the term),
// renew, resource-write [token, value] with "fenced" and "lock" fields,
// resign. The target's client sees only the lock vocabulary (acquire with
// value = ttl_ms, renew, release with the token), so any target whose client
// implements lock ops runs elections: the workload asks Target::OpenClient
// for a "lock" client (name() is the client vocabulary).
//
// Built on the lock workload's pieces (workloads/lock.h: HoldGenerator,
// HoldClient, ProtectedResource). Checked by mutex-fencing (campaigns as
// holds), leader-per-term (won campaigns claim their term; when the history
// has leader observations, the observer's leader-per-term verdict covers
// the campaigns too and none is added here) and stats.
#pragma once

#include <memory>
#include <string>

#include "harness/config/spec.h"
#include "harness/interfaces/workload.h"

namespace faultline::workloads {

// "election<i>".
std::string ElectionName(int i);

std::unique_ptr<harness::Workload> MakeElectionWorkload(
    const harness::WorkloadSpec& spec);

}  // namespace faultline::workloads

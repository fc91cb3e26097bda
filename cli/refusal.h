// Refused runs: what `faultline run` says and leaves when it stops before
// its cluster exists (subnet in use, SSH authentication failed, containers
// missing, ...). Such a run leaves no run directory and does not move
// `store/<test>/latest`; its message names what is in the way and how to
// clear it.
#pragma once

#include <string>
#include <vector>

#include "harness/interfaces/result.h"

namespace faultline::cli {

// True when the IPv4 networks `a` and `b` ("a.b.c.d/len") share an
// address; false when either does not parse. Pure.
bool CidrOverlap(const std::string& a, const std::string& b);

// The run directories of the active runs listed in `index_dir` (one file
// per run holding its ledger's path; harness/ledger/ledger.h) whose
// resolved config (config.yaml beside the ledger) puts a netns cluster on a
// subnet overlapping `subnet`, in name order. `except_dir` (a run
// directory) is skipped. Unreadable entries are skipped.
std::vector<std::string> RunsHoldingSubnet(const std::string& index_dir,
                                           const std::string& subnet,
                                           const std::string& except_dir);

// One sentence naming each run of `holders` and the command that heals
// it, for the refusal message; "" when `holders` is empty.
std::string HolderNote(const std::vector<std::string>& holders);

// True when every resource entry of the ledger at `path` is marked healed
// (nothing of the run is left on any host). False when it cannot be read.
bool LedgerAllHealed(const std::string& path);

}  // namespace faultline::cli

// One test run end to end: run directory, ledger, cluster, target, nemesis,
// interpreter, teardown, checks, results. Used by `faultline run`.
#pragma once

#include <atomic>
#include <string>

#include "harness/config/spec.h"

namespace faultline::cli {

struct CampaignOptions {
  // Set by the signal thread on SIGINT/SIGTERM: the run stops early, heals,
  // tears down and still checks what it recorded.
  const std::atomic<bool>* abort = nullptr;
  std::string index_dir;  // active-run index for the ledger ("" = default)
};

struct CampaignResult {
  int exit_code = 255;
  std::string run_dir;  // "" when none was created
};

// Runs `spec` once. Never throws; problems become the exit code.
CampaignResult RunCampaign(const harness::TestSpec& spec,
                           const CampaignOptions& options);

// Checks the environment the spec needs (root, ip, iptables, the target's
// binary). Returns "" when fine, else a one-line message saying what is
// missing and how to get it.
std::string Preflight(const harness::TestSpec& spec);

}  // namespace faultline::cli

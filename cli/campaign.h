// One test run end to end: run directory, ledger, cluster, target, nemesis,
// interpreter, teardown, checks, results. Used by `faultline run`.
#pragma once

#include <string>

#include "cli/signals.h"
#include "harness/config/spec.h"

namespace faultline::cli {

struct CampaignOptions {
  // SIGINT/SIGTERM (may be null): the run stops early, heals, still reads
  // every key once more (bounded), tears down, checks what it recorded and
  // exits 128 + the signal's number; faultline.log and the results say
  // which signal came and when.
  SignalWatcher* signals = nullptr;
  std::string index_dir;  // active-run index for the ledger ("" = default)
  // Console output. `verbosity` -1 (--quiet: warnings and errors only, no
  // status line), 0 (info), 1 (-v: debug). faultline.log always gets info
  // and above. `color` false (NO_COLOR, not a terminal) prints no ANSI
  // colour. `status_line` false prints no live status line. `json_summary`
  // prints the run's results as one JSON document on stdout instead of the
  // text summary (logs stay on stderr).
  int verbosity = 0;
  bool color = true;
  bool status_line = true;
  bool json_summary = false;
};

struct CampaignResult {
  int exit_code = 255;
  std::string run_dir;  // "" when none was kept (e.g. a refused run)
};

// Runs `spec` once. Never throws; problems become the exit code: the
// verdict's (reports::RunExitCode), 254 when the run was refused before
// its cluster existed (the store, the ledger or the cluster could not be
// set up: subnet in use, SSH authentication failed, containers missing;
// nothing is kept and `latest` does not move), 255 when the cluster never
// became healthy.
CampaignResult RunCampaign(const harness::TestSpec& spec,
                           const CampaignOptions& options);

// Checks the environment the spec needs (root, ip, iptables, the target's
// binary). Returns "" when fine, else a one-line message saying what is
// missing and how to get it.
std::string Preflight(const harness::TestSpec& spec);

}  // namespace faultline::cli

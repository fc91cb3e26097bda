// faultline run CONFIG...: runs each campaign K times; the exit code is the
// worst outcome. The global --quiet and -v set the console's log level
// (cli/output.h); --json prints the results on stdout as one JSON document
// (results.json's, docs/results.schema.json; an array of them, in run
// order, when more than one run is planned) with the logs on stderr and no
// status line; the exit code is the same as without it.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/campaign.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/signals.h"
#include "harness/config/config.h"

namespace faultline::cli {
namespace {

struct RunOptions {
  std::vector<std::string> configs;
  double time_limit = 0;
  std::uint64_t seed = 0;
  int concurrency = 0;
  int nodes = 0;
  std::string store;
  int test_count = 1;
  std::string index_dir;
  CLI::Option* time_limit_opt = nullptr;
  CLI::Option* seed_opt = nullptr;
  CLI::Option* concurrency_opt = nullptr;
  CLI::Option* nodes_opt = nullptr;
  CLI::Option* store_opt = nullptr;
  std::string cluster;
  CLI::Option* cluster_opt = nullptr;
  bool json = false;
};

// Severity of exit codes: valid < unknown < invalid < bad input < internal
// (an interrupt decides the exit code on its own, see DoRun).
int Severity(int code) {
  switch (code) {
    case 0:
      return 0;
    case 2:
      return 1;
    case 1:
      return 2;
    case kExitUsage:
      return 3;
    default:
      return 4;
  }
}

int DoRun(const RunOptions& o) {
  harness::Overrides ov;
  if (o.time_limit_opt->count()) ov.time_limit_s = o.time_limit;
  if (o.seed_opt->count()) ov.seed = o.seed;
  if (o.concurrency_opt->count()) ov.concurrency = o.concurrency;
  if (o.nodes_opt->count()) ov.nodes = o.nodes;
  if (o.store_opt->count()) ov.store_dir = o.store;
  if (o.cluster_opt->count()) ov.cluster = o.cluster;
  // Load and check everything before starting anything.
  std::vector<harness::TestSpec> specs;
  bool bad = false;
  for (const auto& path : o.configs) {
    auto loaded = harness::LoadConfigFile(path, ov);
    if (!loaded.ok()) {
      std::fputs(loaded.FormatErrors().c_str(), stderr);
      bad = true;
      continue;
    }
    std::string missing = Preflight(*loaded.spec);
    if (!missing.empty()) {
      std::fprintf(stderr, "faultline run: %s: %s\n", path.c_str(),
                   missing.c_str());
      bad = true;
      continue;
    }
    specs.push_back(*loaded.spec);
  }
  if (bad) return kExitUsage;

  SignalWatcher signals;
  CampaignOptions co;
  co.signals = &signals;
  co.index_dir = o.index_dir;
  const Console console = CurrentConsole();
  co.verbosity = console.verbosity;
  co.color = console.color;
  co.status_line = console.verbosity >= 0 && !o.json;
  co.json_summary = o.json;
  const std::size_t planned =
      specs.size() * static_cast<std::size_t>(o.test_count);
  // Several runs under --json: one array with an entry per run done, its
  // document, or null for a run that printed none (refused before it
  // wrote results.json).
  const bool json_array = o.json && planned > 1;
  if (json_array) std::printf("[\n");
  int worst = 0;
  std::vector<std::string> lines;
  for (const auto& base : specs) {
    for (int i = 0; i < o.test_count && !signals.abort()->load(); ++i) {
      harness::TestSpec spec = base;
      // Repeated runs of one config get distinct, reproducible seeds.
      if (i > 0) spec.seed = base.seed + static_cast<std::uint64_t>(i);
      if (json_array && !lines.empty()) std::printf(",\n");
      std::fflush(stdout);
      auto r = RunCampaign(spec, co);
      std::error_code ec;
      if (json_array &&
          (r.run_dir.empty() ||
           !std::filesystem::exists(r.run_dir + "/results.json", ec))) {
        std::printf("null\n");
      }
      if (Severity(r.exit_code) > Severity(worst)) worst = r.exit_code;
      lines.push_back(spec.name + " #" + std::to_string(i + 1) + " seed " +
                      std::to_string(spec.seed) + ": exit " +
                      std::to_string(r.exit_code) + "  " + r.run_dir);
    }
  }
  if (json_array) std::printf("]\n");
  // Under --json stdout holds only the document: the rest goes to stderr.
  FILE* text = o.json ? stderr : stdout;
  if (lines.size() > 1) {
    std::fprintf(text, "\nall runs:\n");
    for (const auto& l : lines) std::fprintf(text, "  %s\n", l.c_str());
  }
  // Interrupted: the remaining runs did not start; 128 + the signal.
  if (int sig = signals.first().number; sig != 0) {
    if (lines.size() < planned) {
      std::fprintf(text, "interrupted by %s: %zu of %zu runs done\n",
                   signals.first().name.c_str(), lines.size(), planned);
    }
    return 128 + sig;
  }
  return worst;
}

}  // namespace

void AddRunCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = root.add_subcommand(
      "run", "Run test campaigns: cluster, workload, faults, checks, store");
  cmd->add_option("config", o->configs, "YAML campaign file(s)")->required();
  o->time_limit_opt =
      cmd->add_option("--time-limit", o->time_limit,
                      "Seconds of workload and faults (overrides time_limit)");
  o->seed_opt = cmd->add_option(
      "--seed", o->seed, "Seed for operations and faults (overrides seed)");
  o->concurrency_opt =
      cmd->add_option("--concurrency", o->concurrency,
                      "Client worker threads (overrides workload.concurrency)");
  o->nodes_opt = cmd->add_option("--nodes", o->nodes,
                                 "Cluster size (overrides cluster.nodes)");
  o->store_opt =
      cmd->add_option("--store", o->store, "Store directory (overrides store)");
  o->cluster_opt = cmd->add_option(
      "--cluster", o->cluster,
      "Cluster provider (overrides cluster.provider): netns, or docker for "
      "running containers faultline-n1.. (docs/docker.md)");
  cmd->add_option("--test-count", o->test_count,
                  "Run each config this many times (seeds seed, seed+1, ...)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--index-dir", o->index_dir,
                  "Directory listing active runs for 'heal --all' "
                  "(default /run/faultline/active)");
  cmd->add_flag("--json", o->json,
                "Print the results as one JSON document on stdout (an array "
                "for several runs); logs stay on stderr, no status line");
  cmd->footer(
      "Each run is stored in STORE/NAME/TIMESTAMP/ (config.yaml, "
      "history.jsonl, "
      "junit.xml,"
      "\nledger.jsonl, faultline.log, results.json, nodes/<node>/ logs), with "
      "a "
      "'latest'\nlink. Ctrl-C (or SIGTERM) stops the workload early, heals "
      "every fault, reads every\nkey once more (at most 10 s), tears down, "
      "checks what was recorded and exits\n130 (143 for SIGTERM); no "
      "further run starts. A second Ctrl-C is ignored; a third\nwithin 5 s "
      "exits at once and names the `faultline heal` command that finishes "
      "the\njob. Needs root (network namespaces).\n\nExit code: the worst "
      "outcome over all runs (invalid > unknown > valid); a run\nwith "
      "'expect:' exits 0 when the verdict is the expected one; 130/143 when "
      "interrupted;\n254 for bad input or a run refused before its cluster "
      "existed (subnet in use,\nSSH authentication failed: nothing is kept); "
      "255 when a cluster never became healthy.\n\nExamples:\n"
      "  faultline run configs/etcd-register.yaml\n"
      "  faultline run configs/etcd-register.yaml --time-limit 120 --seed 7\n"
      "  faultline run configs/known/*.yaml --test-count 3 --store /tmp/store\n"
      "  faultline run -q configs/raftkv-quick.yaml\n"
      "  faultline run --json configs/raftkv-quick.yaml | jq .valid");
  cmd->callback([o, &exit_code] { exit_code = DoRun(*o); });
}

}  // namespace faultline::cli

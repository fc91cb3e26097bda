// faultline heal [RUN_DIR | --all]: undoes what a run left behind, from its
// fault ledger (works after the controller was SIGKILLed), records in the
// ledger what it undid (a second heal does nothing) and, once everything is
// undone, removes the run from the active index. Only what follows
// faultline's naming rules is touched (harness/ledger/ledger_names.h); other
// names in a ledger are refused, and the heal then exits 255.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "harness/ledger/ledger.h"
#include "harness/run/store.h"

namespace faultline::cli {
namespace {

struct HealOptions {
  std::string run_dir;
  bool all = false;
  std::string index_dir = harness::DefaultActiveIndexDir();
};

int DoHeal(const HealOptions& o) {
  if (o.run_dir.empty() && !o.all) {
    std::fprintf(stderr,
                 "faultline heal: name a run directory or pass --all\n");
    return kExitUsage;
  }
  if (geteuid() != 0) {
    std::fprintf(stderr,
                 "faultline heal: needs root (namespaces, iptables and "
                 "processes of a run belong to root); run it as root\n");
    return kExitUsage;
  }
  std::vector<std::string> log;
  harness::Status status = harness::Ok();
  if (!o.run_dir.empty()) {
    std::filesystem::path ledger =
        std::filesystem::path(o.run_dir) / harness::kLedgerFile;
    if (!std::filesystem::exists(ledger)) {
      std::fprintf(stderr, "faultline heal: %s has no %s\n", o.run_dir.c_str(),
                   harness::kLedgerFile);
      return kExitUsage;
    }
    status = harness::HealLedger(ledger.string(), &log, o.index_dir);
  }
  if (o.all && status.ok()) status = harness::HealAll(o.index_dir, &log);
  for (const auto& line : log) std::printf("%s\n", line.c_str());
  if (!status.ok()) {
    std::fprintf(stderr, "faultline heal: %s\n", status.error().c_str());
    return kExitInternal;
  }
  std::printf(log.empty() ? "nothing to heal\n" : "healed\n");
  return 0;
}

}  // namespace

void AddHealCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<HealOptions>();
  auto* cmd = root.add_subcommand(
      "heal",
      "Undo every fault and remove every namespace, bridge and process a run "
      "left behind");
  cmd->add_option("run_dir", o->run_dir,
                  "Run directory whose ledger.jsonl to replay");
  cmd->add_flag("--all", o->all,
                "Heal every run still listed as active (" +
                    harness::DefaultActiveIndexDir() + ")");
  cmd->add_option("--index-dir", o->index_dir,
                  "Directory listing active runs (for tests)");
  cmd->footer(
      "A run writes every resource and fault to its ledger before it takes "
      "effect, so\nthis works even after the controller was killed with "
      "SIGKILL. Only faultline's own\nnamespaces, links, iptables chains "
      "(and the rules that jump to them) and paths\nare touched; an entry "
      "naming anything else is refused (exit 255). What was undone\nis "
      "recorded in the ledger, so a second heal does nothing; a healed run "
      "leaves the\nactive index.\n\nExamples:\n"
      "  faultline heal store/etcd-register/latest\n  faultline heal --all");
  cmd->callback([o, &exit_code] { exit_code = DoHeal(*o); });
}

}  // namespace faultline::cli

// faultline list: what faultline can run and check.
#include <cstdio>

#include "checkers/linearizable.h"
#include "cli/commands.h"
#include "harness/config/config.h"

namespace faultline::cli {

void AddListCommand(CLI::App& root, int& exit_code) {
  auto* cmd = root.add_subcommand(
      "list", "List targets, workloads, faults and checkers");
  cmd->footer("Example:\n  faultline list");
  cmd->callback([&exit_code] {
    std::printf("%s", harness::FormatKnownNames().c_str());
    std::printf("\ncheckers:\n");
    std::printf(
        "  %-16s %s\n", "linearizable",
        "every operation appears to take effect at one instant inside its "
        "interval (Wing & Gong search, per key, bounded; unknown when out "
        "of time or memory)");
    std::printf("  %-16s %s\n", "stats",
                "ok/fail/info counts and latency quantiles per operation; "
                "unknown when nothing succeeded");
    std::printf("  %-16s %s\n", "mutex-fencing",
                "lock histories: overlapping holds, fencing tokens unique and "
                "increasing, no stale write accepted by a fenced resource, "
                "no corrupted unfenced one (docs/history-locks.md)");
    std::printf("  %-16s %s\n", "leader-per-term",
                "leader observations: at most one leader per term; reports "
                "how long two nodes both believed they led");
    std::printf("\nmodels for 'faultline check --model':\n");
    for (const auto& m : checkers::LinearizableModelNames()) {
      std::printf("  %s\n", m.c_str());
    }
    std::printf("  mutex-fencing\n  leader-per-term\n");
    exit_code = 0;
  });
}

}  // namespace faultline::cli

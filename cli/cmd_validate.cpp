// faultline validate CONFIG...: checks configs without running anything.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "harness/config/config.h"

namespace faultline::cli {

void AddValidateCommand(CLI::App& root, int& exit_code) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* cmd = root.add_subcommand(
      "validate", "Check config files without starting anything");
  cmd->add_option("config", *files, "YAML campaign file(s)")->required();
  cmd->footer(
      "Each problem is reported as file:line:column with what was expected "
      "and how to fix it.\nExit code 0 when every config is valid, 254 "
      "otherwise.\n\nExamples:\n  faultline validate "
      "configs/etcd-register.yaml\n"
      "  faultline validate configs/*.yaml configs/known/*.yaml");
  cmd->callback([files, &exit_code] {
    int code = 0;
    for (const auto& path : *files) {
      auto loaded = harness::LoadConfigFile(path);
      if (loaded.ok()) {
        std::printf("%s: ok (%s, %d nodes, target %s, workload %s)\n",
                    path.c_str(), loaded.spec->name.c_str(),
                    loaded.spec->cluster.nodes,
                    loaded.spec->target.name.c_str(),
                    loaded.spec->workload.name.c_str());
      } else {
        std::fputs(loaded.FormatErrors().c_str(), stderr);
        code = kExitUsage;
      }
    }
    exit_code = code;
  });
}

}  // namespace faultline::cli

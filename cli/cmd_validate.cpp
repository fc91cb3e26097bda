// faultline validate [--json] CONFIG...: checks configs without running
// anything. Text: one "FILE: ok (...)" line per valid config on stdout
// (none with --quiet), the errors of the others on stderr as
// file:line:column. --json: one JSON object on stdout and nothing on
// stderr: {"ok": bool, "configs": [{"file", "ok", and either "name",
// "nodes", "target", "workload" or "errors": [{"file", "line", "column",
// "message", "hint"}]}]} (line and column 0 when an error has no place,
// every error listed). Exit code 0 when every config is valid, else 254,
// with or without --json.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output.h"
#include "harness/config/config.h"

namespace faultline::cli {
namespace {

using Json = nlohmann::ordered_json;

struct ValidateOptions {
  std::vector<std::string> files;
  bool json = false;
};

Json ConfigJson(const std::string& path, const harness::LoadResult& loaded) {
  Json c = {{"file", path}, {"ok", loaded.ok()}};
  if (loaded.ok()) {
    c["name"] = loaded.spec->name;
    c["nodes"] = loaded.spec->cluster.nodes;
    c["target"] = loaded.spec->target.name;
    c["workload"] = loaded.spec->workload.name;
    return c;
  }
  c["errors"] = Json::array();
  for (const harness::ConfigError& e : loaded.errors) {
    c["errors"].push_back({{"file", e.file},
                           {"line", e.line},
                           {"column", e.column},
                           {"message", e.message},
                           {"hint", e.hint}});
  }
  return c;
}

int DoValidate(const ValidateOptions& o) {
  const bool quiet = CurrentConsole().verbosity < 0;
  Json all = {{"ok", true}, {"configs", Json::array()}};
  int code = 0;
  for (const auto& path : o.files) {
    auto loaded = harness::LoadConfigFile(path);
    if (!loaded.ok()) code = kExitUsage;
    if (o.json) {
      all["configs"].push_back(ConfigJson(path, loaded));
    } else if (!loaded.ok()) {
      std::fputs(loaded.FormatErrors().c_str(), stderr);
    } else if (!quiet) {
      std::printf("%s: ok (%s, %d nodes, target %s, workload %s)\n",
                  path.c_str(), loaded.spec->name.c_str(),
                  loaded.spec->cluster.nodes, loaded.spec->target.name.c_str(),
                  loaded.spec->workload.name.c_str());
    }
  }
  if (o.json) {
    all["ok"] = code == 0;
    // Invalid UTF-8 in a message (from the file's bytes) is replaced, not
    // thrown.
    std::string text =
        all.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
    std::fputs(text.c_str(), stdout);
  }
  return code;
}

}  // namespace

void AddValidateCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = root.add_subcommand(
      "validate", "Check config files without starting anything");
  cmd->add_option("config", o->files, "YAML campaign file(s)")->required();
  cmd->add_flag("--json", o->json,
                "Print one JSON object on stdout: ok, and per config its "
                "summary or its errors (file, line, column, message, hint)");
  cmd->footer(
      "Each problem is reported as file:line:column with what was expected "
      "and how to fix it.\nExit code 0 when every config is valid, 254 "
      "otherwise (also with --json).\n\nExamples:\n  faultline validate "
      "configs/etcd-register.yaml\n"
      "  faultline validate configs/*.yaml configs/known/*.yaml\n"
      "  faultline validate --json my.yaml | jq '.configs[].errors'");
  cmd->callback([o, &exit_code] { exit_code = DoValidate(*o); });
}

}  // namespace faultline::cli

// faultline: wires the subcommands; all work happens in them.
#include <cstdio>
#include <exception>
#include <string>

#include "cli/build_info.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace faultline::cli;
  CLI::App app{
      "faultline: Jepsen-style fault injection. Stands up a real cluster, "
      "drives a concurrent workload, injects faults, records every "
      "operation and checks the history."};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version",
      std::string("faultline ") + BuildVersion() + " (commit " + BuildCommit() +
          ")",
      "Print faultline's version and the git commit it was built from");
  app.footer(
      "Exit codes: 0 valid, 1 invalid, 2 unknown, 130/143 interrupted "
      "(SIGINT/SIGTERM),\n254 bad usage/config/input or a run refused by its "
      "environment, 255 internal error.\nRun 'faultline SUBCOMMAND --help' "
      "for details and examples.");
  int exit_code = 0;
  AddRunCommand(app, exit_code);
  AddAnalyzeCommand(app, exit_code);
  AddCheckCommand(app, exit_code);
  AddValidateCommand(app, exit_code);
  AddHealCommand(app, exit_code);
  AddListCommand(app, exit_code);
  AddReportCommand(app, exit_code);
  AddSuiteCommand(app, exit_code);
  // Help text ends with a newline, so nothing printed after it joins its
  // last line.
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->footer(sub->get_footer() + "\n");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "faultline: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return exit_code;
}

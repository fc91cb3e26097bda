// faultline: wires the subcommands; all work happens in them. Bare
// `faultline` (no subcommand) prints the top-level help on stdout and exits
// 0. The global flags (cli/output.h) are accepted before or after the
// subcommand. The hidden `--generate man|bash|zsh` prints the man page or a
// completion script built from this very command tree (cli/generate.h); the
// build runs it to write faultline.1 and the completion scripts.
//
// SIGPIPE is ignored: a run whose output reader goes away (`| head`) must
// not die with its faults in force; its writes to the closed pipe fail
// (EPIPE) and it goes on, heals and exits as its verdict says.
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

#include "cli/build_info.h"
#include "cli/commands.h"
#include "cli/generate.h"
#include "cli/output.h"

int main(int argc, char** argv) {
  using namespace faultline::cli;
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{
      "faultline: Jepsen-style fault injection. Stands up a real cluster, "
      "drives a concurrent workload, injects faults, records every "
      "operation and checks the history."};
  app.name("faultline");
  app.require_subcommand(0, 1);
  // Set before the subcommands are added: they inherit it, so a global flag
  // after the subcommand goes to the top-level app.
  app.fallthrough();
  const std::string version = std::string("faultline ") + BuildVersion() +
                              " (commit " + BuildCommit() + ")";
  app.set_version_flag(
      "--version", version,
      "Print faultline's version and the git commit it was built from");
  ConsoleFlags console;
  AddConsoleFlags(app, console);
  std::string generate;
  app.add_option("--generate", generate,
                 "Print the man page or a completion script")
      ->check(CLI::IsMember({"man", "bash", "zsh"}))
      ->group("");  // hidden: the build uses it
  app.footer(
      "Global flags go before or after the subcommand. NO_COLOR (set and "
      "non-empty)\nturns colour off, as does a stderr that is not a "
      "terminal. Bare 'faultline' prints\nthis help and exits 0.\n\n"
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
  AddClientTestCommand(app, exit_code);
  // Each subcommand's help names the global flags, which CLI11 lists only
  // in the top-level help, and ends with a newline, so nothing printed
  // after it joins its last line.
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->footer(sub->get_footer() +
                "\n\nGlobal flags work here too: -q/--quiet, -v/--verbose, "
                "--color auto|always|never\n(see 'faultline --help').\n");
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
  if (!generate.empty()) {
    std::string text = generate == "man"    ? ManPage(app, BuildVersion())
                       : generate == "bash" ? BashCompletion(app)
                                            : ZshCompletion(app);
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  }
  return exit_code;
}

#include "cli/output.h"

#include <unistd.h>

#include <cstdlib>

namespace faultline::cli {
namespace {

const ConsoleFlags* registered = nullptr;

}  // namespace

void AddConsoleFlags(CLI::App& app, ConsoleFlags& flags) {
  registered = &flags;
  app.add_flag("-q,--quiet", flags.quiet,
               "Print warnings, errors and results only: no info lines, no "
               "status line");
  app.add_flag("-v,--verbose", flags.verbose,
               "Also print debug lines (run, suite)");
  app.add_option("--color", flags.color,
                 "Colour on stderr: auto (a terminal, and NO_COLOR unset or "
                 "empty), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

bool ColorWanted(const std::string& color_flag, const char* no_color_env,
                 bool stderr_is_terminal) {
  if (color_flag == "always") return true;
  if (color_flag == "never") return false;
  const bool no_color = no_color_env != nullptr && no_color_env[0] != '\0';
  return !no_color && stderr_is_terminal;
}

Console ResolveConsole(const ConsoleFlags& flags) {
  Console c;
  c.verbosity = flags.quiet ? -1 : (flags.verbose > 0 ? 1 : 0);
  c.color = ColorWanted(flags.color, std::getenv("NO_COLOR"),
                        isatty(STDERR_FILENO) != 0);
  return c;
}

Console CurrentConsole() {
  return registered != nullptr ? ResolveConsole(*registered)
                               : ResolveConsole(ConsoleFlags{});
}

}  // namespace faultline::cli

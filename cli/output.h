// Console conventions shared by every subcommand: the global flags
// --quiet/-q, -v/--verbose and --color, and the NO_COLOR environment
// variable (https://no-color.org). main.cpp registers the flags on the
// top-level app with fallthrough, so they are accepted before or after the
// subcommand (`faultline -q run x.yaml` and `faultline run x.yaml -q`).
//
// What they change (README.md, "Command-line conventions"):
//   --quiet     run and suite log warnings and errors only and draw no
//               status line; validate prints nothing for a valid config.
//   -v          run and suite also log debug lines on the console.
//   colour      ANSI colour on stderr only when --color always, or with
//               --color auto (the default) when NO_COLOR is unset or empty
//               and stderr is a terminal.
// Exit codes never depend on them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace faultline::cli {

struct ConsoleFlags {
  bool quiet = false;
  int verbose = 0;             // how many times -v was given
  std::string color = "auto";  // auto | always | never
};

// The settings the flags resolve to.
struct Console {
  int verbosity = 0;  // -1 quiet, 0 normal, 1 verbose
  bool color = false;
};

// Registers --quiet/-q, -v/--verbose and --color on `app` (the top-level
// app), storing into `flags`, which must outlive parsing.
void AddConsoleFlags(CLI::App& app, ConsoleFlags& flags);

// Whether colour is wanted. Pure. `color_flag` is "auto", "always" or
// "never"; `no_color_env` is getenv("NO_COLOR") (may be null); an explicit
// "always" or "never" wins over NO_COLOR, as no-color.org asks.
bool ColorWanted(const std::string& color_flag, const char* no_color_env,
                 bool stderr_is_terminal);

// The Console for `flags` in this process's environment: NO_COLOR and
// whether stderr is a terminal. --quiet wins over -v.
Console ResolveConsole(const ConsoleFlags& flags);

// The Console of the flags last given to AddConsoleFlags, resolved now;
// the defaults when none were registered (e.g. in unit tests). Subcommand
// callbacks call it: CLI11 runs them after every flag has been parsed.
Console CurrentConsole();

}  // namespace faultline::cli

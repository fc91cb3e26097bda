// The console flags: colour rules (NO_COLOR, terminals, --color), --quiet
// and -v before and after a subcommand, and the choices the generated
// completions read from an option.
#include "cli/output.h"

#include <catch2/catch.hpp>

#include "cli/generate.h"

namespace faultline::cli {
namespace {

TEST_CASE("colour follows --color, NO_COLOR and the terminal", "[output]") {
  CHECK(ColorWanted("auto", nullptr, true));
  CHECK_FALSE(ColorWanted("auto", nullptr, false));
  CHECK_FALSE(ColorWanted("auto", "1", true));
  // no-color.org: present and not empty; an empty value does not count.
  CHECK(ColorWanted("auto", "", true));
  CHECK(ColorWanted("always", "1", false));
  CHECK_FALSE(ColorWanted("never", nullptr, true));
}

// Parses argv with the global flags on a root app that has one subcommand.
ConsoleFlags Parse(std::vector<std::string> args) {
  CLI::App app{"test"};
  app.fallthrough();
  ConsoleFlags flags;
  AddConsoleFlags(app, flags);
  auto* sub = app.add_subcommand("run", "run");
  std::string config;
  sub->add_option("config", config);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return flags;
}

TEST_CASE("global flags go before or after the subcommand", "[output]") {
  CHECK(Parse({"-q", "run", "x.yaml"}).quiet);
  CHECK(Parse({"run", "x.yaml", "--quiet"}).quiet);
  CHECK(Parse({"run", "-v", "x.yaml"}).verbose == 1);
  CHECK(Parse({"--color", "never", "run", "x.yaml"}).color == "never");
  CHECK(Parse({"run", "x.yaml", "--color", "always"}).color == "always");
  CHECK_THROWS_AS(Parse({"run", "x.yaml", "--color", "sometimes"}),
                  CLI::ValidationError);
  ConsoleFlags both;
  both.quiet = true;
  both.verbose = 1;
  CHECK(ResolveConsole(both).verbosity == -1);  // --quiet wins
  both.quiet = false;
  CHECK(ResolveConsole(both).verbosity == 1);
}

TEST_CASE("choices of an option come from its IsMember check", "[output]") {
  CLI::App app{"test"};
  std::string format;
  int n = 0;
  auto* with = app.add_option("--format", format)
                   ->check(CLI::IsMember({"jsonl", "edn", "porcupine"}));
  auto* without = app.add_option("--n", n);
  CHECK(OptionChoices(*with) ==
        std::vector<std::string>{"jsonl", "edn", "porcupine"});
  CHECK(OptionChoices(*without).empty());
}

TEST_CASE("generated documents name every subcommand and option", "[output]") {
  CLI::App app{"faultline: test"};
  app.fallthrough();
  ConsoleFlags flags;
  AddConsoleFlags(app, flags);
  auto* sub = app.add_subcommand("check", "Check a history");
  std::string format;
  sub->add_option("--format", format, "Input format")
      ->check(CLI::IsMember({"jsonl", "edn"}));
  std::string hidden;
  app.add_option("--secret", hidden)->group("");
  const std::string man = ManPage(app, "9.9.9");
  CHECK(man.find(".TH FAULTLINE 1") != std::string::npos);
  CHECK(man.find("faultline check") != std::string::npos);
  CHECK(man.find("\\-\\-format") != std::string::npos);
  CHECK(man.find("secret") == std::string::npos);
  const std::string bash = BashCompletion(app);
  CHECK(bash.find("check:--format)") != std::string::npos);
  CHECK(bash.find("\"jsonl edn\"") != std::string::npos);
  CHECK(bash.find("--quiet") != std::string::npos);
  CHECK(bash.find("secret") == std::string::npos);
  const std::string zsh = ZshCompletion(app);
  CHECK(zsh.rfind("#compdef faultline", 0) == 0);
  CHECK(zsh.find("'--format[Input format]:value:(jsonl edn)'") !=
        std::string::npos);
}

}  // namespace
}  // namespace faultline::cli

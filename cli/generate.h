// Documents generated from the CLI11 command tree itself, so that they list
// exactly the subcommands, options and choices the binary accepts: the man
// page faultline(1) and the bash and zsh completion scripts. main.cpp prints
// them for the hidden `faultline --generate man|bash|zsh`; the build writes
// them into the build directory and `cmake --install` installs them
// (cli/CMakeLists.txt). Hidden options (empty group) are left out.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace faultline::cli {

// faultline.1 in man(7) roff: name, synopsis, description, global options,
// one section per subcommand (its options and its help footer), exit status,
// environment. `version` goes into the title line.
std::string ManPage(const CLI::App& app, const std::string& version);

// A bash completion script (complete -F): subcommand names, every option of
// the subcommand being typed (and the global ones), the choices of options
// that have them (--model, --format, --color), file names otherwise. Needs
// no bash-completion package.
std::string BashCompletion(const CLI::App& app);

// A zsh completion function (#compdef faultline) with the same content,
// described.
std::string ZshCompletion(const CLI::App& app);

// The choices of an option with a CLI::IsMember check, from its type name
// ("TEXT:{jsonl,edn,porcupine}" gives jsonl, edn, porcupine); empty when it
// has none.
std::vector<std::string> OptionChoices(const CLI::Option& option);

}  // namespace faultline::cli

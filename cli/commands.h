// Subcommands of the faultline CLI. Each Add*Command registers one CLI11
// subcommand whose callback stores its exit code in `exit_code`
// (docs/history-format.md: 0 valid, 1 invalid, 2 unknown, 254 bad
// usage/config/input or a run refused by its environment, 255 internal
// error; `run` and `suite` exit 128 + the signal, 130 or 143, when
// interrupted).
#pragma once

#include <CLI/CLI.hpp>

namespace faultline::cli {

inline constexpr int kExitUsage = 254;
inline constexpr int kExitInternal = 255;

void AddRunCommand(CLI::App& root, int& exit_code);
void AddAnalyzeCommand(CLI::App& root, int& exit_code);
void AddCheckCommand(CLI::App& root, int& exit_code);
void AddValidateCommand(CLI::App& root, int& exit_code);
void AddHealCommand(CLI::App& root, int& exit_code);
void AddListCommand(CLI::App& root, int& exit_code);
void AddReportCommand(CLI::App& root, int& exit_code);
void AddSuiteCommand(CLI::App& root, int& exit_code);
void AddClientTestCommand(CLI::App& root, int& exit_code);

}  // namespace faultline::cli

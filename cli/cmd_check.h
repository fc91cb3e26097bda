// faultline check --model M FILE, callable without a command line (for
// AddCheckCommand and the CLI's unit tests).
//
// The file is read as a stream (cli/history_input.h): a malformed file is
// refused at its first bad line (file:line:column, what was expected, exit
// 254) without the rest being read. list-append and rw-register are checked
// without a History: each event goes through the well-formedness check into
// the checker's builder as it is read. --memory-limit counts everything the
// process holds (its resident set): past it while reading, the verdict is
// unknown (exit 2) and says how far reading got; the linearizability and
// transactional checkers then measure the same thing against the same
// limit (LinearizableOptions / TxnOptions::memory_in_use) and give up,
// unknown, past it. The other checkers are linear in the history and are
// not bounded beyond reading it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace faultline::cli {

struct CheckArgs {
  std::string model;
  std::string file;
  std::string format;  // "" = detect
  int threads = 0;     // 0: all cores
  double time_limit = 0;
  // MiB; 0: no limit. --memory-limit's default is kDefaultCheckMemoryMiB.
  double memory_limit_mib = 0;
  bool json = false;
  bool witness = false;
  std::string consistency_model = "strict-serializable";
  // What the process holds, in bytes; empty: its resident set. For tests.
  std::function<std::uint64_t()> memory_held;
};

inline constexpr double kDefaultCheckMemoryMiB = 4096;

// Checks args.file: the verdict on `out` (text, or one JSON object with
// --json), warnings and errors on `err`. Returns the exit code: 0 valid,
// 1 invalid, 2 unknown, 254 bad input.
int RunCheck(const CheckArgs& args, std::FILE* out, std::FILE* err);

// "" when `text` is a valid --memory-limit (a number of MiB >= 0, 0 for no
// limit), else what is wrong with it (negative, NaN, infinite, not a
// number).
std::string MemoryLimitProblem(const std::string& text);

}  // namespace faultline::cli

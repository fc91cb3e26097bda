// Running local processes: argv only (never a shell string), bounded waits,
// optional entry into a network namespace before exec. The one place that
// forks; everything else (Remote implementations, heal) goes through here.
//
// Why not Boost.Process (Debian 12 has Boost 1.74, Process v1), measured
// here: it can enter a namespace (on_exec_setup), gives the program's own
// pid and its own process group, but its bounded waits are not safe from
// several threads, which the controller needs: two threads each calling
// child::wait_for on their own child hung at 100% CPU in every run (it
// swaps a process-wide SIGCHLD handler; boostorg/process issues 168 and
// 347), its pipes are not close-on-exec (a capture waited for an unrelated
// child started meanwhile, 3 s), and a killed or failed child is left a
// zombie. Including it also adds about 3 s of compile time per file.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "harness/interfaces/result.h"

namespace faultline::harness {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or timed out (see error)
  std::string out;
  std::string err;
  std::string error;  // why it did not run to completion; empty when it did
  bool ok() const { return exit_code == 0; }
};

struct CommandOptions {
  std::chrono::milliseconds timeout{30000};  // SIGKILL after this
  std::string stdin_data;                    // written to the child's stdin
  std::string netns;  // when set, the child enters /run/netns/<netns> first
};

// Why a command failed, for messages: its `error` (the command could not
// run or timed out), else its stderr with trailing blanks cut, else
// "exit N".
std::string DescribeResult(const CommandResult& r);

// Runs argv to completion and captures stdout and stderr.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const CommandOptions& options = {});

struct SpawnOptions {
  std::string netns;             // enter this namespace before exec
  std::string log_path;          // stdout+stderr appended here ("" = /dev/null)
  std::string working_dir;       // "" = inherit
  std::vector<std::string> env;  // extra NAME=value entries
};

// Starts a long-running process in its own process group and returns its
// pid, which is the pid of the exec'd program itself (signals reach it, not a
// wrapper). The caller owns it and must reap it with ReapOrKill.
Result<pid_t> Spawn(const std::vector<std::string>& argv,
                    const SpawnOptions& options);

// True while `pid` is a live (not zombie) process.
bool ProcessAlive(pid_t pid);

// Process start time (field 22 of /proc/<pid>/stat), used to tell a pid from
// a later process that reused it; nullopt if the process is gone.
std::optional<unsigned long long> ProcessStartTime(pid_t pid);

// Sends `sig`, waits up to `grace` for the process to exit, then SIGKILLs
// it and waits again. Reaps it when it is our child. Returns true once it is
// gone.
bool TerminateProcess(pid_t pid, int sig, std::chrono::milliseconds grace);

}  // namespace faultline::harness

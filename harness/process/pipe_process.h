// PipeProcess: a local child program the controller talks to in lines over
// its stdin and stdout (the exec client protocol, docs/exec-protocol.md).
//
// The child is started from argv (never a shell string, argv[0] is looked up
// on PATH), in its own process group, with every inherited descriptor other
// than 0, 1 and 2 closed at exec, with PR_SET_PDEATHSIG(SIGKILL) so that it
// dies when the controller does, and with extra NAME=value environment
// entries (they replace inherited entries of the same name). Its stderr is
// appended to a log file. Note that Linux delivers the parent-death signal
// when the *thread* that started the child exits: start it from a thread
// that outlives it (a run's worker thread does).
//
// Why not Boost.Process: the same reasons as harness/process/process.h (its
// bounded waits are not safe from several threads, its pipes are not
// close-on-exec, a killed child is left a zombie).
//
// Writes never raise SIGPIPE in the controller: a closed stdin is an error
// value. Reads and writes take a deadline and wait with poll.
//
// Thread-safety: one PipeProcess is used by one thread at a time; distinct
// objects are independent and may be used from different threads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/interfaces/result.h"

namespace faultline::harness {

struct PipeProcessOptions {
  std::string log_path;            // stderr appended here ("" = /dev/null)
  std::string working_dir;         // "" = inherit
  std::vector<std::string> env;    // extra NAME=value entries
  std::size_t max_line = 1 << 20;  // longer stdout lines are an error
};

class PipeProcess {
 public:
  using Clock = std::chrono::steady_clock;

  enum class ReadStatus {
    kLine,     // `line` holds one line, without its '\n'
    kTimeout,  // no complete line before the deadline
    kEof,      // the child closed its stdout (it usually exited)
    kTooLong,  // a line longer than max_line: `line` holds its beginning
    kError,    // read failed: `error` says why
  };
  struct ReadResult {
    ReadStatus status = ReadStatus::kError;
    std::string line;
    std::string error;
  };

  // Starts the program. Fails when argv is empty, a pipe or fork fails, the
  // working directory cannot be entered, or exec fails (e.g. no such
  // program); the message names argv[0] and the cause.
  static Result<std::unique_ptr<PipeProcess>> Start(
      const std::vector<std::string>& argv, const PipeProcessOptions& options);

  // Kills and reaps the child (Kill()).
  ~PipeProcess();
  PipeProcess(const PipeProcess&) = delete;
  PipeProcess& operator=(const PipeProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Size of the log file when the child was started (its output follows).
  std::uint64_t log_offset() const { return log_offset_; }
  const std::string& log_path() const { return options_.log_path; }

  // Writes `line` plus '\n' to the child's stdin, waiting (poll) while the
  // pipe is full. Fails on a closed stdin ("stdin closed"), an error, or
  // the deadline. `*written` (when given) is set to the bytes written, so a
  // caller can tell "nothing was sent" from "part was sent".
  Status WriteLine(std::string_view line, Clock::time_point deadline,
                   std::size_t* written = nullptr);

  // Reads the next line of the child's stdout, waiting (poll) until the
  // deadline. Bytes after the line stay buffered for the next call.
  ReadResult ReadLine(Clock::time_point deadline);

  // Closes the child's stdin (a well-behaved child then exits).
  void CloseStdin();

  // Waits until the child exits or the deadline passes; reaps it. Returns
  // its wait status, or nullopt when it is still running (or was already
  // reaped without a status).
  std::optional<int> WaitExit(Clock::time_point deadline);

  // SIGKILLs the child (by pid, and its process group, so helpers it
  // started in that group die with it) and reaps it. Idempotent; returns
  // the wait status when the child had not been reaped before.
  std::optional<int> Kill();

  // True until the child has been reaped.
  bool running() const { return !reaped_; }
  // The wait status once reaped.
  std::optional<int> exit_status() const { return status_; }

  // "exited with status N" / "killed by signal N (SIGKILL)" for a wait
  // status.
  static std::string DescribeStatus(int status);

 private:
  PipeProcess() = default;
  void Reaped(int status);

  PipeProcessOptions options_;
  pid_t pid_ = -1;
  int pidfd_ = -1;      // pidfd of the child, -1 when unavailable
  int stdin_fd_ = -1;   // write end
  int stdout_fd_ = -1;  // read end
  std::uint64_t log_offset_ = 0;
  std::string buffer_;  // bytes read past the last returned line
  bool eof_ = false;
  bool reaped_ = false;
  std::optional<int> status_;
};

// The last `max_lines` lines (at most `max_bytes` bytes) of `path` from
// byte `from` on, trailing blank lines cut; "" when there are none or the
// file cannot be read. For messages quoting a client's stderr.
std::string LogTail(const std::string& path, std::uint64_t from,
                    int max_lines = 5, std::size_t max_bytes = 2000);

}  // namespace faultline::harness

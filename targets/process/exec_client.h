// ExecClient: a harness::Client that runs an external program and speaks
// the exec client protocol, version 1, with it (docs/exec-protocol.md): one
// JSON object per line on the program's stdin and stdout, a hello, then one
// invoke and one answer at a time.
//
// One program per client object: OpenExecClient starts it and does the
// hello; Invoke sends one operation and waits for its answer, bounded by the
// operation's timeout plus kGrace. When the answer does not come in time,
// the program exits or closes its stdout, or it prints a line that is not a
// valid answer, the operation is info (the program may have acted on it),
// the program is killed (SIGKILL by pid) and reaped, and the client object
// is dead: later Invokes fail "client process is gone" without sending
// anything. The interpreter opens a fresh client after every info, so a
// dead client object is not used again in a run.
//
// Answers become completions as docs/exec-protocol.md says: ok to a read
// carries the value read, ok to an acquire its integer token, ok to a
// status its object, and ok to a txn (list-append and rw-register
// workloads) the transaction's micro-op list with every read filled in.
// An ok answer's value is checked against the workload's vocabulary by
// OkAnswerValue (targets/process/exec_answer.h): a txn's list must match
// the micro-ops sent, a set read is a list, a counter read an integer, a
// bank read an object of integer balances of the configured accounts, and
// a set or counter add and a bank transfer echo the value sent; an answer
// that does not is invalid (info, a misbehaviour). ok to other operations
// records the invocation's value. fail and info keep the invocation's
// value and carry the answer's "error".
//
// The hello names the workload and the node; for the bank workload it also
// carries "accounts" and "total", so the client can create the accounts.
//
// Misbehaviour (a crash, an invalid answer, a failed hello; not a timeout)
// is counted in an ExecHealth shared by every ExecClient of a run; a valid
// answer resets it. ExecHealth::Fatal() is non-empty once the count reaches
// its limit, so the run can stop with a message naming the command.
//
// Thread-safety: an ExecClient is used by one worker thread at a time;
// ExecHealth may be used from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/interfaces/client.h"
#include "harness/interfaces/result.h"

namespace faultline::targets::process {

inline constexpr int kExecProtocol = 1;
// Added to every operation's timeout before faultline gives up waiting.
inline constexpr long kGraceMs = 100;

struct ExecClientOptions {
  std::vector<std::string> argv;  // expanded; argv[0] a path or a name on PATH
  std::vector<std::string> env;   // extra NAME=value (the FAULTLINE_* entries)
  std::string working_dir;        // "" = inherit
  std::string log_path;           // the program's stderr is appended here
  // "register" | "lock" | "list-append" | "rw-register" | "set" | "bank" |
  // "counter"
  std::string workload;
  std::string node;               // node name for the hello
  long op_timeout_ms = 2000;      // each invoke's timeout_ms
  long start_timeout_ms = 10000;  // time allowed for the hello answer
  long lock_ttl_ms = 1000;        // acquire's ttl when op.value is null
  // bank: the accounts ("0" .. accounts-1, >= 1) and their total, in the
  // hello and checked in every read.
  int accounts = 5;
  std::int64_t total = 100;
};

// Counts consecutive misbehaviours of the clients of one run.
class ExecHealth {
 public:
  // `command_for_messages` names the client program in Fatal()'s message
  // (e.g. CommandForMessages(argv)). `max_consecutive` >= 1.
  explicit ExecHealth(std::string command_for_messages,
                      int max_consecutive = 10);

  // One misbehaviour; `what` says what happened ("exited with status 1:
  // <stderr tail>").
  void Misbehaved(const std::string& what);
  // A valid answer: the count starts again from 0.
  void Answered();
  // "" while fine; once max_consecutive misbehaviours happened in a row, a
  // message naming the command, the count and the last misbehaviour.
  std::string Fatal() const;
  int consecutive() const;
  const std::string& command() const { return command_; }

 private:
  const std::string command_;
  const int max_;
  mutable std::mutex mu_;
  int consecutive_ = 0;
  std::string last_;
};

// argv joined with spaces for messages; arguments with spaces or quotes are
// single-quoted.
std::string CommandForMessages(const std::vector<std::string>& argv);

// Starts the program and does the hello. Fails (with the reason and the
// tail of its stderr log) when it cannot start or the hello fails (no answer
// within start_timeout_ms, not a hello, another protocol version); that
// failure counts as a misbehaviour in `health` (which may be null).
harness::Result<std::unique_ptr<harness::Client>> OpenExecClient(
    const ExecClientOptions& options, std::shared_ptr<ExecHealth> health);

}  // namespace faultline::targets::process

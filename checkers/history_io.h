// Reading histories: the strict JSONL reader for history.jsonl (the format
// in docs/history-format.md), readers for Jepsen's history.edn and
// Porcupine's logs, and the well-formedness check every checker relies on.
// Pure: callers read the file and pass its text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/history.h"

namespace faultline::checkers {

struct ReadError {
  std::int64_t line = 0;    // 1-based
  std::int64_t column = 0;  // 1-based; 0 when not about one place
  std::string message;      // what was expected, and how to fix it
};

struct ReadResult {
  History history;
  std::vector<std::string> warnings;  // e.g. a truncated last line ignored
  bool ok = true;
  ReadError error;  // meaningful when !ok
};

enum class HistoryFormat { kJsonl, kJepsenEdn, kPorcupine };

// Parses a whole file's text. A truncated (unterminated, unparsable) last
// line is ignored with a warning; any other malformed line is an error.
// Texts of 8 MB or more are parsed in two halves on two threads (the same
// events, errors and warnings as one thread); it falls back to one thread
// when a second cannot be started. Reentrant.
ReadResult ParseJsonl(std::string_view text);
ReadResult ParseHistory(std::string_view text, HistoryFormat format);

// Checks the rules of the spec: a completion matches an outstanding invoke of
// the same process and f; at most one outstanding op per process; no invoke
// by a process after its info; known types; times non-decreasing; the value
// shapes of the model's vocabulary when `model` is non-empty ("register",
// "cas-register", "kv", "mutex", "list-append", "rw-register"). Returns ok or the first violation, with
// line = index + 1 of the offending event.
std::optional<ReadError> CheckWellFormed(const History& history,
                                         std::string_view model);

// "line L, column C: message" (", column C" omitted when column is 0).
std::string ToString(const ReadError& error);

// How ParseJepsenEdn treats jepsen.independent histories, whose client
// values are [key value] tuples.
enum class TupleKeys {
  // Split when every client event lacks :key and has a 2-element vector
  // value, unless the history could be a plain cas-register one (every
  // client f is "cas" and no tuple's second element is a list) or a
  // transactional one (any client f is "txn"). A warning says when values
  // were split.
  kAuto,
  kSplit,  // always split (an event whose value is not a 2-tuple: error)
  kKeep,   // never split
};

struct EdnOptions {
  TupleKeys tuples = TupleKeys::kAuto;
};

// Jepsen's history.edn (see docs/history-formats.md). ParseHistory with
// kJepsenEdn calls this with default options.
ReadResult ParseJepsenEdn(std::string_view text, const EdnOptions& options);

// Porcupine's test-data logs: Jepsen etcd logs ("INFO  jepsen.util - 3
// :invoke :write 4") and kv logs (one EDN map per line). See
// docs/history-formats.md. ParseHistory with kPorcupine calls this.
ReadResult ParsePorcupineLog(std::string_view text);

// True for the model names CheckWellFormed knows value shapes for:
// "register", "cas-register", "kv", "mutex", "list-append", "rw-register".
// CheckWellFormed skips the shape rules (but keeps every other rule) for
// any other name.
bool IsKnownModel(std::string_view model);

}  // namespace faultline::checkers

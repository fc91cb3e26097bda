// Reading histories: the strict JSONL reader for history.jsonl (the format
// in shared/spec/history.md), readers for Jepsen's history.edn and
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
ReadResult ParseJsonl(std::string_view text);
ReadResult ParseHistory(std::string_view text, HistoryFormat format);

// Checks the rules of the spec: a completion matches an outstanding invoke of
// the same process and f; at most one outstanding op per process; no invoke
// by a process after its info; known types; times non-decreasing; the value
// shapes of the model's vocabulary when `model` is non-empty ("register",
// "cas-register", "kv", "mutex"). Returns ok or the first violation, with
// line = index + 1 of the offending event.
std::optional<ReadError> CheckWellFormed(const History& history,
                                         std::string_view model);

}  // namespace faultline::checkers

// Reading histories: the strict JSONL reader for history.jsonl (the format
// in docs/history-format.md), readers for Jepsen's history.edn and
// Porcupine's logs, and the well-formedness check every checker relies on.
// Pure: callers read the file and pass its text.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

// ParseJsonl without materialising the History: calls sink(event) for each
// event line, in file order, on the calling thread (one thread). The same
// parsing rules, errors (line, column) and warnings as ParseJsonl; the
// result's `history` stays empty. Events are handed to the sink before the
// rest of the text is read: when the result is not ok, the sink has seen
// the events before the failing line and the caller must discard what it
// built from them. The Event passed is reused for the next line (copy what
// must outlive the call). Reentrant.
using EventSink = std::function<void(const Event&)>;
ReadResult StreamJsonl(std::string_view text, const EventSink& sink);
// The number of event (non-blank) lines of JSONL text: the History size
// ParseJsonl gives when it reads the text without an error or a truncated
// last line. A cheap pass (memchr), for sizing buffers before StreamJsonl.
std::size_t CountJsonlEvents(std::string_view text);

// Checks the rules of the spec: a completion matches an outstanding invoke of
// the same process and f; at most one outstanding op per process; no invoke
// by a process after its info; known types; times non-decreasing; the value
// shapes of the model's vocabulary when `model` is non-empty ("register",
// "cas-register", "kv", "mutex", "list-append", "rw-register"). Returns ok or
// the first violation, with line = index + 1 of the offending event.
std::optional<ReadError> CheckWellFormed(const History& history,
                                         std::string_view model);

// CheckWellFormed one event at a time, for readers that do not keep the
// History: Add the events in order (their position in the history is the
// number added before); error() is the first violation, the same as
// CheckWellFormed's on the same events. Events after a violation are
// ignored. Keeps per process its outstanding invoke's f and key (not the
// events). Not thread-safe; one instance per history.
class WellFormedChecker {
 public:
  explicit WellFormedChecker(std::string_view model);
  ~WellFormedChecker();
  WellFormedChecker(WellFormedChecker&&) noexcept;
  WellFormedChecker& operator=(WellFormedChecker&&) noexcept;
  WellFormedChecker(const WellFormedChecker&) = delete;
  WellFormedChecker& operator=(const WellFormedChecker&) = delete;

  // Checks `e` (unless a violation was found before); returns error().
  const std::optional<ReadError>& Add(const Event& e);
  const std::optional<ReadError>& error() const { return error_; }

 private:
  struct Processes;
  std::optional<ReadError> Check(const Event& e);

  std::string model_name_;
  int model_ = 0;  // well_formed.cpp's Model
  std::unique_ptr<Processes> processes_;
  std::optional<std::int64_t> last_time_;
  std::size_t last_time_pos_ = 0;
  std::size_t position_ = 0;
  std::optional<ReadError> error_;
};

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

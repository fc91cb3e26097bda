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
  // Streaming readers: the sink asked to stop; the text after the event it
  // was given was not read (no warning about the end of the file is given).
  bool stopped = false;
};

enum class HistoryFormat { kJsonl, kJepsenEdn, kPorcupine };

// Every reader sets Event::line (the event's first line in the file) and
// index (its position), skips a UTF-8 byte-order mark at the start, and
// refuses an integer literal beyond 64 bits with a message that says so.

// Parses a whole file's text. A truncated (unterminated, unparsable) last
// line is ignored with a warning; any other malformed line is an error.
// Texts of 8 MB or more are parsed in two halves on two threads (the same
// events, errors and warnings as one thread); it falls back to one thread
// when a second cannot be started. Reentrant.
ReadResult ParseJsonl(std::string_view text);
ReadResult ParseHistory(std::string_view text, HistoryFormat format);

// A streaming reader's consumer: called with each event in file order and
// `read_to`, the offset in the text up to which the reader is done with it
// (it never looks at the text before `read_to` again, so a caller may give
// those pages back). The Event passed is reused for the next one (copy
// what must outlive the call). Returning false stops the reader at once:
// it returns ok with `stopped` set.
using EventSink = std::function<bool(const Event& e, std::size_t read_to)>;

// ParseJsonl without materialising the History: calls sink for each event
// line, in file order, on the calling thread (one thread). The same
// parsing rules, errors (line, column) and warnings as ParseJsonl; the
// result's `history` stays empty. Events are handed to the sink before the
// rest of the text is read: when the result is not ok, the sink has seen
// the events before the failing line and the caller must discard what it
// built from them. Nothing is read ahead of the line being parsed, so a
// malformed line is found without reading the text after it. Reentrant.
ReadResult StreamJsonl(std::string_view text, const EventSink& sink);
// The number of event (non-blank) lines of JSONL text: the History size
// ParseJsonl gives when it reads the text without an error or a truncated
// last line. A cheap pass (memchr), for sizing buffers before StreamJsonl.
std::size_t CountJsonlEvents(std::string_view text);

// Checks the rules of the spec: a completion matches an outstanding invoke of
// the same process and f; at most one outstanding op per process; no invoke
// by a process after its info; known types; times >= 0 (not necessarily
// non-decreasing: the history's order is the file's); the value shapes of
// the model's vocabulary when `model` is non-empty ("register",
// "cas-register", "kv", "mutex", "list-append", "rw-register"), and for any
// other non-empty model name no transactions (f "txn": the message points
// to list-append and rw-register). Returns ok or the first violation, at
// LineOf(the offending event), column 0.
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
  // The first event whose time is earlier than an earlier event's (not an
  // error: Jepsen's histories do that), with a sentence saying by how much
  // and that the file's order is used; nullopt when times never step back.
  const std::optional<ReadError>& time_note() const { return time_note_; }

 private:
  struct Processes;
  std::optional<ReadError> Check(const Event& e);

  std::string model_name_;
  int model_ = 0;  // well_formed.cpp's Model
  std::unique_ptr<Processes> processes_;
  std::optional<std::int64_t> last_time_;  // the latest time so far
  std::int64_t last_time_line_ = 0;
  std::size_t position_ = 0;
  std::optional<ReadError> error_;
  std::optional<ReadError> time_note_;
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
// kJepsenEdn calls this with default options. It is StreamJepsenEdn into a
// History, then SplitJepsenTuples.
ReadResult ParseJepsenEdn(std::string_view text, const EdnOptions& options);

// Jepsen's history.edn one event at a time (EventSink's contract), with the
// values as written (TupleKeys::kKeep): the same errors and warnings as
// ParseJepsenEdn but those of the tuple split. A top-level vector is read
// item by item, so neither it nor the text after a malformed op is held or
// read ahead.
ReadResult StreamJepsenEdn(std::string_view text, const EventSink& sink);

// The jepsen.independent split of `read.history` (a ParseJepsenEdn or
// StreamJepsenEdn result) under `tuples`: on a split, a warning (kAuto);
// an event that cannot be split makes `read` not ok, at its line.
void SplitJepsenTuples(ReadResult& read, TupleKeys tuples);

// Porcupine's test-data logs: Jepsen etcd logs ("INFO  jepsen.util - 3
// :invoke :write 4") and kv logs (one EDN map per line). See
// docs/history-formats.md. ParseHistory with kPorcupine calls this.
ReadResult ParsePorcupineLog(std::string_view text);
// ParsePorcupineLog one event at a time (EventSink's contract).
ReadResult StreamPorcupineLog(std::string_view text, const EventSink& sink);

// The streaming reader of `format` (StreamJsonl, StreamJepsenEdn,
// StreamPorcupineLog). What it hands the sink, followed by
// SplitJepsenTuples(kAuto) for EDN, is what ParseHistory returns.
ReadResult StreamHistory(std::string_view text, HistoryFormat format,
                         const EventSink& sink);

// True for the model names CheckWellFormed knows value shapes for:
// "register", "cas-register", "kv", "mutex", "list-append", "rw-register".
// CheckWellFormed skips the shape rules (but keeps every other rule) for
// any other name.
bool IsKnownModel(std::string_view model);

}  // namespace faultline::checkers

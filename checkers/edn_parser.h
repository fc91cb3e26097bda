// A reader for the subset of EDN (Clojure's data notation) that Jepsen
// writes in history.edn and logs, producing checkers::Value.
//
// Mapping: nil -> null; true/false -> bool; integers (optional N suffix)
// -> int (beyond int64: an error that says so); decimals (optional M suffix)
// and ratios -> double; strings -> string; keywords -> string without the colon
// (":ok" -> "ok", ":a/b" -> "a/b"); symbols -> string; characters -> string;
// vectors, lists and sets -> list; maps -> object whose field names are the
// keys as strings (non-string keys as their JSON text). Tagged elements
// (#inst "...", #jepsen.history.Op{...}) read as the element, tag dropped;
// "#_" discards the next form; commas are whitespace; ";" starts a comment.
// Not supported (an error): regex literals other than as strings, reader
// conditionals, hexadecimal/radix numbers.
//
// Thread-safety: one parser per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "checkers/history.h"
#include "checkers/value.h"

namespace faultline::checkers {

class EdnParser {
 public:
  static constexpr int kMaxDepth = 256;

  explicit EdnParser(std::string_view text) : text_(text) {}

  // Skips whitespace, commas and ; comments.
  void SkipSpace();
  // Parses one form at the current position (after SkipSpace).
  bool ParseForm(Value& out) { return ParseFormAt(out, 0); }

  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t pos) { pos_ = pos; }
  // Where the value of `field` starts in the map (or #tag{...} record) that
  // starts at `map_at`, re-reading it; nullopt when the map has no such
  // key or cannot be read. Moves pos(). For error positions.
  std::optional<std::size_t> FieldValueAt(std::size_t map_at,
                                          std::string_view field);
  bool at_end() const { return pos_ >= text_.size(); }
  const std::string& error() const { return error_; }
  std::size_t error_offset() const { return error_offset_; }
  bool hit_end() const { return hit_end_; }
  // When the failure is a closing bracket that does not match: where the
  // vector, list, set or map it fell inside starts (that one is not
  // closed).
  std::optional<std::size_t> unclosed_at() const { return unclosed_at_; }

 private:
  bool ParseFormAt(Value& out, int depth);
  bool ParseSeq(char close, Value& out, int depth);
  bool ParseMap(Value& out, int depth);
  bool ParseString(Value& out);
  bool ParseChar(Value& out);
  bool ParseDispatch(Value& out, int depth);
  bool ParseToken(Value& out);
  std::string_view ReadToken();
  bool Fail(std::size_t at, std::string message);
  bool FailEnd(std::string_view what);
  // Fails (true) when the next character closes something other than what
  // opens at `open` and is closed by `close`.
  bool WrongCloser(std::size_t open, char close);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
  std::size_t error_offset_ = 0;
  bool hit_end_ = false;
  std::optional<std::size_t> unclosed_at_;
};

// 1-based line and column of a 0-based byte offset in `text`.
void LineColumn(std::string_view text, std::size_t offset, std::int64_t& line,
                std::int64_t& column);

// LineColumn for offsets that mostly move forward (a reader's): counts the
// newlines between the last offset asked and this one, so a reader walking
// the text asks in O(text) overall and never re-reads what it passed
// (asking for an earlier offset counts again from the start). Columns of
// line 1 count from `start` (after a byte-order mark).
class LineCounter {
 public:
  explicit LineCounter(std::string_view text, std::size_t start = 0)
      : text_(text), offset_(start), line_start_(start), start_(start) {}
  std::int64_t LineAt(std::size_t offset);
  void At(std::size_t offset, std::int64_t& line, std::int64_t& column);

 private:
  std::string_view text_;
  std::size_t offset_;      // counted up to here
  std::int64_t line_ = 1;   // the line of offset_
  std::size_t line_start_;  // where that line starts
  std::size_t start_;
};

// Fills `e` (except index) from a Jepsen op map as read by EdnParser
// (:type, :process, :f required; :value, :time, :key, :error, :node
// optional; other fields go to extra; :index is returned in *index when
// present). Returns an empty string or what is wrong; then *field (when
// non-null) is the key whose value is wrong, or empty when a key is
// missing.
std::string EventFromEdnMap(const Value& map, Event& e,
                            std::optional<std::int64_t>* index,
                            std::string* field = nullptr);

}  // namespace faultline::checkers

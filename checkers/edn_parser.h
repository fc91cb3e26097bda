// A reader for the subset of EDN (Clojure's data notation) that Jepsen
// writes in history.edn and logs, producing checkers::Value.
//
// Mapping: nil -> null; true/false -> bool; integers (optional N suffix)
// -> int, or double when beyond int64; decimals (optional M suffix) and
// ratios -> double; strings -> string; keywords -> string without the colon
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
  bool at_end() const { return pos_ >= text_.size(); }
  const std::string& error() const { return error_; }
  std::size_t error_offset() const { return error_offset_; }
  bool hit_end() const { return hit_end_; }

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

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
  std::size_t error_offset_ = 0;
  bool hit_end_ = false;
};

// 1-based line and column of a 0-based byte offset in `text`.
void LineColumn(std::string_view text, std::size_t offset, std::int64_t& line,
                std::int64_t& column);

// Fills `e` (except index) from a Jepsen op map as read by EdnParser
// (:type, :process, :f required; :value, :time, :key, :error, :node
// optional; other fields go to extra; :index is returned in *index when
// present). Returns an empty string or what is wrong.
std::string EventFromEdnMap(const Value& map, Event& e,
                            std::optional<std::int64_t>* index);

}  // namespace faultline::checkers

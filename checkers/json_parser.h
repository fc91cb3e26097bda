// A small, strict JSON (RFC 8259) parser producing checkers::Value, used by
// the history.jsonl reader and available to anyone who needs to parse one
// JSON document without pulling in a JSON library.
//
// Accepted: exactly the RFC grammar (no comments, no trailing commas, no
// NaN/Infinity, no leading zeros, no single quotes); strings must be valid
// UTF-8, escapes include \uXXXX with surrogate pairs (a lone surrogate is an
// error). A number without fraction or exponent that fits in int64 becomes
// Value::Int; every other number becomes Value::Double (an integer literal
// out of int64 range loses precision; a magnitude beyond double is an error).
// Objects keep their fields in text order; a duplicate field name is an
// error. Nesting deeper than kMaxDepth is an error (keeps the stack bounded).
//
// Thread-safety: a JsonParser is used by one thread; distinct parsers are
// independent.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "checkers/value.h"

namespace faultline::checkers {

class JsonParser {
 public:
  static constexpr int kMaxDepth = 256;

  explicit JsonParser(std::string_view text) : text_(text) {}

  // An integer literal beyond int64 is an error (BigIntegerMessage) rather
  // than a double.
  void set_exact_integers(bool exact) { exact_integers_ = exact; }

  // Parses one value at the current position (after optional whitespace).
  // On failure returns false; error(), error_offset() and hit_end() say why.
  bool ParseValue(Value& out) { return ParseValueAt(out, 0); }
  // Parses a string literal at the current position (must be at '"').
  bool ParseString(std::string& out);
  // Skips JSON whitespace (space, tab, CR, LF).
  void SkipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
      ++pos_;
    }
  }

  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t p) { pos_ = p; }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  // Records an error at `offset` (0-based byte offset into the text).
  bool Fail(std::size_t offset, std::string message);
  const std::string& error() const { return error_; }
  std::size_t error_offset() const { return error_offset_; }
  // True when the failure was running out of text (a truncated document).
  bool hit_end() const { return hit_end_; }

 private:
  bool ParseValueAt(Value& out, int depth);
  bool ParseNumber(Value& out);
  bool ParseArray(Value& out, int depth);
  bool ParseObject(Value& out, int depth);
  bool ParseLiteral(std::string_view word, Value value, Value& out);
  bool FailEnd(std::string_view what);
  bool ParseEscape(std::string& out);
  bool ParseHex4(std::size_t at, unsigned& code);

  std::string_view text_;
  std::size_t pos_ = 0;
  std::string error_;
  std::size_t error_offset_ = 0;
  bool hit_end_ = false;
  bool exact_integers_ = false;
};

// The message for an integer literal that does not fit in 64 bits (the
// history readers refuse it rather than lose its precision).
std::string BigIntegerMessage(std::string_view literal);

// 3 when `text` starts with a UTF-8 byte-order mark (EF BB BF), else 0.
// The history readers skip it.
inline std::size_t ByteOrderMarkLength(std::string_view text) {
  return text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
}

// Length of the valid UTF-8 sequence starting at s[i] (1-4), or 0 when the
// bytes there are not valid UTF-8 (overlong, surrogate, > U+10FFFF,
// truncated).
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i);

// Parses a complete JSON document (surrounding whitespace allowed). On
// failure returns false and sets *error (when non-null) to "column N: ...".
bool ParseJson(std::string_view text, Value& out, std::string* error);

// Index of the first field whose name already appeared earlier in
// `fields`, or fields.size() when all names are distinct. O(n log n).
std::size_t FirstDuplicateField(const Value::Object& fields);

// Duplicate-name checks are linear per field up to this many fields; past
// it, parsers check once at the end of the object with FirstDuplicateField.
inline constexpr std::size_t kLinearDuplicateCheck = 16;

// Human name of a value's kind, for messages: "null", "a string", ...
std::string_view KindName(const Value& v);

}  // namespace faultline::checkers

// Strict JSON parser; see json_parser.h for the accepted language.
#include "checkers/json_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>
#include <utility>

namespace faultline::checkers {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string Describe(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7F) return std::string("'") + c + "'";
  static constexpr char kHex[] = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 0xF];
}

}  // namespace

std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) -> unsigned {
    return static_cast<unsigned char>(s[k]);
  };
  unsigned c = at(i);
  if (c < 0x80) return 1;
  std::size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlongs
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlongs
    if (c == 0xF4) hi = 0x8F;  // <= U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool JsonParser::Fail(std::size_t offset, std::string message) {
  error_ = std::move(message);
  error_offset_ = offset;
  hit_end_ = false;
  return false;
}

bool JsonParser::FailEnd(std::string_view what) {
  error_ = "the text ends in the middle of ";
  error_ += what;
  error_offset_ = text_.size();
  hit_end_ = true;
  return false;
}

bool JsonParser::ParseValueAt(Value& out, int depth) {
  SkipSpace();
  if (at_end()) return FailEnd("a value (expected a JSON value)");
  char c = text_[pos_];
  switch (c) {
    case '{':
      return ParseObject(out, depth);
    case '[':
      return ParseArray(out, depth);
    case '"': {
      std::string s;
      if (!ParseString(s)) return false;
      out = Value::String(std::move(s));
      return true;
    }
    case 't':
      return ParseLiteral("true", Value::Bool(true), out);
    case 'f':
      return ParseLiteral("false", Value::Bool(false), out);
    case 'n':
      return ParseLiteral("null", Value::Null(), out);
    default:
      if (c == '-' || IsDigit(c)) return ParseNumber(out);
      return Fail(pos_,
                  "expected a JSON value (object, array, string, "
                  "number, true, false or null) but found " +
                      Describe(c) +
                      "; strings need double quotes, and JSON has no "
                      "NaN, Infinity or comments");
  }
}

bool JsonParser::ParseLiteral(std::string_view word, Value value, Value& out) {
  std::size_t avail = std::min(word.size(), text_.size() - pos_);
  if (text_.substr(pos_, avail) != word.substr(0, avail)) {
    return Fail(pos_,
                "expected a JSON value but found an unknown word; "
                "the literals are true, false and null (lower case), "
                "and strings need double quotes");
  }
  if (avail < word.size()) return FailEnd("a literal");
  pos_ += word.size();
  out = std::move(value);
  return true;
}

bool JsonParser::ParseNumber(Value& out) {
  std::size_t start = pos_;
  std::size_t p = pos_;
  const std::size_t n = text_.size();
  if (p < n && text_[p] == '-') ++p;
  if (p >= n) return FailEnd("a number");
  if (text_[p] == '0') {
    ++p;
    if (p < n && IsDigit(text_[p])) {
      return Fail(p,
                  "a number may not have leading zeros (write 7, "
                  "not 07)");
    }
  } else if (IsDigit(text_[p])) {
    while (p < n && IsDigit(text_[p])) ++p;
  } else {
    return Fail(p, "expected a digit after '-' in a number");
  }
  bool integral = true;
  if (p < n && text_[p] == '.') {
    integral = false;
    ++p;
    if (p >= n) return FailEnd("a number");
    if (!IsDigit(text_[p])) {
      return Fail(p,
                  "expected a digit after the decimal point (write 1.0, "
                  "not 1.)");
    }
    while (p < n && IsDigit(text_[p])) ++p;
  }
  if (p < n && (text_[p] == 'e' || text_[p] == 'E')) {
    integral = false;
    ++p;
    if (p < n && (text_[p] == '+' || text_[p] == '-')) ++p;
    if (p >= n) return FailEnd("a number");
    if (!IsDigit(text_[p])) return Fail(p, "expected a digit in an exponent");
    while (p < n && IsDigit(text_[p])) ++p;
  }
  const char* first = text_.data() + start;
  const char* last = text_.data() + p;
  pos_ = p;
  if (integral) {
    std::int64_t i = 0;
    auto res = std::from_chars(first, last, i);
    if (res.ec == std::errc() && res.ptr == last) {
      out = Value::Int(i);
      return true;
    }
    if (exact_integers_ && res.ec == std::errc::result_out_of_range) {
      return Fail(start, BigIntegerMessage(std::string_view(
                             first, static_cast<std::size_t>(last - first))));
    }
    // Out of int64 range: fall through to double.
  }
  double d = 0;
  auto res = std::from_chars(first, last, d);
  if (res.ec == std::errc::result_out_of_range) {
    // Underflow to zero is harmless; overflow is not representable.
    auto e = std::find_if(first, last,
                          [](char ch) { return ch == 'e' || ch == 'E'; });
    std::string_view mant(first, static_cast<std::size_t>(e - first));
    bool tiny =
        (e != last && e + 1 < last && e[1] == '-') ||
        (e == last && (mant.rfind("0.", 0) == 0 || mant.rfind("-0.", 0) == 0));
    if (!tiny) {
      return Fail(start,
                  "number is too large to represent (beyond "
                  "double range); write it as a string");
    }
    d = 0;
  } else if (res.ec != std::errc() || res.ptr != last) {
    return Fail(start, "malformed number");
  }
  out = Value::Double(d);
  return true;
}

bool JsonParser::ParseHex4(std::size_t at, unsigned& code) {
  if (at + 4 > text_.size()) return FailEnd("a \\u escape");
  code = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    int h = HexDigit(text_[at + k]);
    if (h < 0) {
      return Fail(at + k,
                  "a \\u escape needs exactly 4 hex digits "
                  "(e.g. \\u00e9)");
    }
    code = code * 16 + static_cast<unsigned>(h);
  }
  return true;
}

bool JsonParser::ParseEscape(std::string& out) {
  // pos_ is at the backslash.
  std::size_t at = pos_;
  if (pos_ + 1 >= text_.size()) return FailEnd("a string escape");
  char e = text_[pos_ + 1];
  pos_ += 2;
  switch (e) {
    case '"':
      out += '"';
      return true;
    case '\\':
      out += '\\';
      return true;
    case '/':
      out += '/';
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'u':
      break;
    default:
      return Fail(at, "invalid escape \\" + std::string(1, e) +
                          "; valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r "
                          "\\t and \\uXXXX");
  }
  unsigned cp = 0;
  if (!ParseHex4(pos_, cp)) return false;
  pos_ += 4;
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return Fail(at,
                "lone low surrogate \\u escape; a character above "
                "U+FFFF is written as a high+low surrogate pair");
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    const std::size_t n = text_.size();
    if (pos_ >= n) return FailEnd("a surrogate pair");
    if (text_[pos_] == '\\' && pos_ + 1 >= n) {
      return FailEnd("a surrogate pair");
    }
    if (text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
      return Fail(at,
                  "high surrogate \\u escape not followed by a low "
                  "surrogate \\uDC00-\\uDFFF");
    }
    unsigned lo = 0;
    if (!ParseHex4(pos_ + 2, lo)) return false;
    if (lo < 0xDC00 || lo > 0xDFFF) {
      return Fail(pos_,
                  "high surrogate \\u escape not followed by a low "
                  "surrogate \\uDC00-\\uDFFF");
    }
    pos_ += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  AppendUtf8(out, cp);
  return true;
}

bool JsonParser::ParseString(std::string& out) {
  // pos_ is at the opening quote.
  out.clear();
  ++pos_;
  const std::size_t n = text_.size();
  std::size_t run = pos_;
  while (true) {
    // Fast scan over plain ASCII.
    while (pos_ < n) {
      auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++pos_;
    }
    if (pos_ >= n) return FailEnd("a string (missing closing quote)");
    auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      out.append(text_.data() + run, pos_ - run);
      ++pos_;
      return true;
    }
    if (c == '\\') {
      out.append(text_.data() + run, pos_ - run);
      if (!ParseEscape(out)) return false;
      run = pos_;
      continue;
    }
    if (c < 0x20) {
      return Fail(pos_,
                  "control character inside a string; escape it "
                  "(\\n, \\t, \\u0001, ...)");
    }
    std::size_t len = Utf8SequenceLength(text_, pos_);
    if (len == 0) {
      // A multi-byte sequence cut by the end of the text is truncation.
      std::size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
      if (c >= 0xC2 && c <= 0xF4 && pos_ + need > n) {
        bool prefix_ok = true;
        for (std::size_t k = pos_ + 1; k < n; ++k) {
          if ((static_cast<unsigned char>(text_[k]) & 0xC0) != 0x80) {
            prefix_ok = false;
          }
        }
        if (prefix_ok) return FailEnd("a UTF-8 character");
      }
      return Fail(pos_,
                  "invalid UTF-8 in a string; the file must be UTF-8 "
                  "(or use \\uXXXX escapes)");
    }
    pos_ += len;
  }
}

bool JsonParser::ParseArray(Value& out, int depth) {
  if (depth >= kMaxDepth) {
    return Fail(pos_, "nesting deeper than 256 levels");
  }
  ++pos_;  // '['
  Value::List items;
  SkipSpace();
  if (at_end()) return FailEnd("an array");
  if (text_[pos_] == ']') {
    ++pos_;
    out = Value::MakeList(std::move(items));
    return true;
  }
  while (true) {
    Value item;
    if (!ParseValueAt(item, depth + 1)) return false;
    items.push_back(std::move(item));
    SkipSpace();
    if (at_end()) return FailEnd("an array (missing ']')");
    char c = text_[pos_];
    if (c == ',') {
      ++pos_;
      SkipSpace();
      if (!at_end() && text_[pos_] == ']') {
        return Fail(pos_, "trailing comma before ']'; remove it");
      }
      continue;
    }
    if (c == ']') {
      ++pos_;
      out = Value::MakeList(std::move(items));
      return true;
    }
    return Fail(pos_,
                "expected ',' or ']' in an array but found " + Describe(c));
  }
}

bool JsonParser::ParseObject(Value& out, int depth) {
  if (depth >= kMaxDepth) {
    return Fail(pos_, "nesting deeper than 256 levels");
  }
  ++pos_;  // '{'
  Value::Object fields;
  std::vector<std::size_t> late_names;  // offsets of names past the 16th
  SkipSpace();
  if (at_end()) return FailEnd("an object");
  if (text_[pos_] == '}') {
    ++pos_;
    out = Value::MakeObject(std::move(fields));
    return true;
  }
  while (true) {
    SkipSpace();
    if (at_end()) return FailEnd("an object");
    if (text_[pos_] != '"') {
      if (text_[pos_] == '}') {
        return Fail(pos_, "trailing comma before '}'; remove it");
      }
      return Fail(pos_, "expected a field name in double quotes but found " +
                            Describe(text_[pos_]));
    }
    std::size_t name_at = pos_;
    std::string name;
    if (!ParseString(name)) return false;
    if (fields.size() < kLinearDuplicateCheck) {
      for (const auto& [existing, v] : fields) {
        if (existing == name) {
          return Fail(name_at, "duplicate field \"" + name +
                                   "\" in an object; each name may appear "
                                   "once");
        }
      }
    } else {
      late_names.push_back(name_at);
    }
    SkipSpace();
    if (at_end()) return FailEnd("an object");
    if (text_[pos_] != ':') {
      return Fail(pos_, "expected ':' after a field name but found " +
                            Describe(text_[pos_]));
    }
    ++pos_;
    Value v;
    if (!ParseValueAt(v, depth + 1)) return false;
    fields.emplace_back(std::move(name), std::move(v));
    SkipSpace();
    if (at_end()) return FailEnd("an object (missing '}')");
    char c = text_[pos_];
    if (c == ',') {
      ++pos_;
      continue;
    }
    if (c == '}') {
      ++pos_;
      if (!late_names.empty()) {
        std::size_t dup = FirstDuplicateField(fields);
        if (dup < fields.size()) {
          std::size_t at = dup >= kLinearDuplicateCheck
                               ? late_names[dup - kLinearDuplicateCheck]
                               : pos_ - 1;
          return Fail(at, "duplicate field \"" + fields[dup].first +
                              "\" in an object; each name may appear once");
        }
      }
      out = Value::MakeObject(std::move(fields));
      return true;
    }
    return Fail(pos_,
                "expected ',' or '}' in an object but found " + Describe(c));
  }
}

std::string BigIntegerMessage(std::string_view literal) {
  std::string shown(literal.substr(0, 40));
  if (literal.size() > 40) shown += "...";
  return "integer " + shown +
         " does not fit in 64 bits (faultline reads integers as signed "
         "64-bit, -9223372036854775808 to 9223372036854775807, and will not "
         "round one to a double); write it as a string if it is an "
         "identifier";
}

bool ParseJson(std::string_view text, Value& out, std::string* error) {
  JsonParser p(text);
  bool ok = p.ParseValue(out);
  if (ok) {
    p.SkipSpace();
    if (!p.at_end()) {
      ok = p.Fail(p.pos(), "unexpected text after the JSON value");
    }
  }
  if (!ok && error != nullptr) {
    *error = "byte " + std::to_string(p.error_offset() + 1) + ": " + p.error();
  }
  return ok;
}

std::size_t FirstDuplicateField(const Value::Object& fields) {
  const std::size_t n = fields.size();
  if (n <= kLinearDuplicateCheck) {
    for (std::size_t i = 1; i < n; ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (fields[j].first == fields[i].first) return i;
      }
    }
    return n;
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    int c = fields[a].first.compare(fields[b].first);
    return c != 0 ? c < 0 : a < b;
  });
  std::size_t first = n;
  for (std::size_t k = 1; k < n; ++k) {
    if (fields[order[k]].first == fields[order[k - 1]].first) {
      first = std::min(first, order[k]);
    }
  }
  return first;
}

std::string_view KindName(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBool:
      return "a boolean";
    case Value::Kind::kInt:
      return "an integer";
    case Value::Kind::kDouble:
      return "a non-integer number";
    case Value::Kind::kString:
      return "a string";
    case Value::Kind::kList:
      return "an array";
    case Value::Kind::kObject:
      return "an object";
  }
  return "a value";
}

}  // namespace faultline::checkers

// EDN reader (see edn_parser.h) and the Jepsen op map -> Event mapping.
#include "checkers/edn_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' ||
         c == '\f';
}

bool IsDelimiter(char c) {
  return IsSpace(c) || c == '(' || c == ')' || c == '[' || c == ']' ||
         c == '{' || c == '}' || c == '"' || c == ';' || c == '\\';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool ParseHex4(std::string_view s, unsigned& cp) {
  if (s.size() != 4) return false;
  cp = 0;
  for (char c : s) {
    int h = (c >= '0' && c <= '9')   ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (h < 0) return false;
    cp = cp * 16 + static_cast<unsigned>(h);
  }
  return true;
}

enum class Number { kOk, kMalformed, kBeyond64Bits };

// Parses an EDN number token.
Number ParseNumberToken(std::string_view tok, Value& out) {
  if (tok.empty()) return Number::kMalformed;
  bool is_double = tok.back() == 'M';
  if (tok.back() == 'N' || tok.back() == 'M') tok.remove_suffix(1);
  if (!tok.empty() && tok.front() == '+') tok.remove_prefix(1);
  if (tok.empty()) return Number::kMalformed;
  if (auto slash = tok.find('/'); slash != std::string_view::npos) {
    std::int64_t num = 0, den = 0;
    std::string_view a = tok.substr(0, slash), b = tok.substr(slash + 1);
    auto r1 = std::from_chars(a.data(), a.data() + a.size(), num);
    auto r2 = std::from_chars(b.data(), b.data() + b.size(), den);
    if (r1.ec != std::errc() || r1.ptr != a.data() + a.size() ||
        r2.ec != std::errc() || r2.ptr != b.data() + b.size() || den == 0) {
      return Number::kMalformed;
    }
    out = Value::Double(static_cast<double>(num) / static_cast<double>(den));
    return Number::kOk;
  }
  if (!is_double && tok.find_first_of(".eE") == std::string_view::npos) {
    std::int64_t i = 0;
    auto r = std::from_chars(tok.data(), tok.data() + tok.size(), i);
    if (r.ec == std::errc() && r.ptr == tok.data() + tok.size()) {
      out = Value::Int(i);
      return Number::kOk;
    }
    // An integer beyond int64 is refused rather than rounded to a double.
    if (r.ec == std::errc::result_out_of_range &&
        r.ptr == tok.data() + tok.size()) {
      return Number::kBeyond64Bits;
    }
    return Number::kMalformed;
  }
  double d = 0;
  auto r = std::from_chars(tok.data(), tok.data() + tok.size(), d);
  if (r.ptr != tok.data() + tok.size()) return Number::kMalformed;
  if (r.ec == std::errc::result_out_of_range) {
    d = tok.find("e-") != std::string_view::npos ||
                tok.find("E-") != std::string_view::npos
            ? 0.0
            : (tok.front() == '-' ? -1 : 1) *
                  std::numeric_limits<double>::infinity();
  } else if (r.ec != std::errc()) {
    return Number::kMalformed;
  }
  out = Value::Double(d);
  return Number::kOk;
}

}  // namespace

std::int64_t LineCounter::LineAt(std::size_t offset) {
  offset = std::min(offset, text_.size());
  if (offset < offset_) {  // backwards: count again from the start
    offset_ = start_;
    line_ = 1;
    line_start_ = start_;
  }
  while (offset_ < offset) {
    const void* nl =
        std::memchr(text_.data() + offset_, '\n', offset - offset_);
    if (nl == nullptr) {
      offset_ = offset;
      break;
    }
    ++line_;
    offset_ =
        static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) +
        1;
    line_start_ = offset_;
  }
  return line_;
}

void LineCounter::At(std::size_t offset, std::int64_t& line,
                     std::int64_t& column) {
  line = LineAt(offset);
  column = static_cast<std::int64_t>(std::min(offset, text_.size()) -
                                     std::max(line_start_, start_)) +
           1;
}

std::optional<std::size_t> EdnParser::FieldValueAt(std::size_t map_at,
                                                   std::string_view field) {
  pos_ = map_at;
  if (pos_ < text_.size() && text_[pos_] == '#') {  // #ns.Record{...}
    ++pos_;
    ReadToken();
  }
  if (pos_ >= text_.size() || text_[pos_] != '{') return std::nullopt;
  ++pos_;
  while (true) {
    SkipSpace();
    if (at_end() || text_[pos_] == '}') return std::nullopt;
    Value key;
    if (!ParseFormAt(key, 1)) return std::nullopt;
    SkipSpace();
    const std::size_t value_at = pos_;
    std::string name = key.is_string() ? key.as_string() : key.ToJson();
    if (name == field) return value_at;
    Value v;
    if (!ParseFormAt(v, 1)) return std::nullopt;
  }
}

void LineColumn(std::string_view text, std::size_t offset, std::int64_t& line,
                std::int64_t& column) {
  offset = std::min(offset, text.size());
  std::string_view before = text.substr(0, offset);
  line = 1 + std::count(before.begin(), before.end(), '\n');
  std::size_t nl = before.rfind('\n');
  column = static_cast<std::int64_t>(
      nl == std::string_view::npos ? offset + 1 : offset - nl);
}

bool EdnParser::Fail(std::size_t at, std::string message) {
  unclosed_at_.reset();
  error_ = std::move(message);
  error_offset_ = at;
  hit_end_ = false;
  return false;
}

bool EdnParser::FailEnd(std::string_view what) {
  unclosed_at_.reset();
  error_ = "the text ends in the middle of ";
  error_ += what;
  error_offset_ = text_.size();
  hit_end_ = true;
  return false;
}

void EdnParser::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
    } else if (c == ';') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

std::string_view EdnParser::ReadToken() {
  std::size_t start = pos_;
  while (pos_ < text_.size() && !IsDelimiter(text_[pos_])) ++pos_;
  return text_.substr(start, pos_ - start);
}

bool EdnParser::ParseFormAt(Value& out, int depth) {
  if (depth >= kMaxDepth) return Fail(pos_, "nesting deeper than 256 levels");
  SkipSpace();
  if (at_end()) return FailEnd("a form (expected an EDN value)");
  char c = text_[pos_];
  switch (c) {
    case '{':
      return ParseMap(out, depth);
    case '[':
      return ParseSeq(']', out, depth);
    case '(':
      return ParseSeq(')', out, depth);
    case '"':
      return ParseString(out);
    case '\\':
      return ParseChar(out);
    case '#':
      return ParseDispatch(out, depth);
    case ')':
    case ']':
    case '}':
      return Fail(pos_, std::string("unmatched '") + c + "'");
    default:
      return ParseToken(out);
  }
}

bool EdnParser::WrongCloser(std::size_t open, char close) {
  const char c = text_[pos_];
  if ((c != ')' && c != ']' && c != '}') || c == close) return false;
  Fail(pos_, std::string("unexpected '") + c + "' where a '" + close +
                 "' closes what is open");
  unclosed_at_ = open;
  return true;
}

bool EdnParser::ParseSeq(char close, Value& out, int depth) {
  const std::size_t open = pos_;
  ++pos_;
  Value::List items;
  while (true) {
    SkipSpace();
    if (at_end()) return FailEnd(close == ']' ? "a vector" : "a list");
    if (text_[pos_] == close) {
      ++pos_;
      out = Value::MakeList(std::move(items));
      return true;
    }
    if (WrongCloser(open, close)) return false;
    Value item;
    if (!ParseFormAt(item, depth + 1)) return false;
    items.push_back(std::move(item));
  }
}

bool EdnParser::ParseMap(Value& out, int depth) {
  const std::size_t open = pos_;
  ++pos_;
  Value::Object fields;
  std::vector<std::size_t> late_keys;  // offsets of keys past the 16th
  while (true) {
    SkipSpace();
    if (at_end()) return FailEnd("a map");
    if (text_[pos_] == '}') {
      ++pos_;
      if (!late_keys.empty()) {
        std::size_t dup = FirstDuplicateField(fields);
        if (dup < fields.size()) {
          std::size_t at = dup >= kLinearDuplicateCheck
                               ? late_keys[dup - kLinearDuplicateCheck]
                               : pos_ - 1;
          return Fail(at, "duplicate map key " + fields[dup].first);
        }
      }
      out = Value::MakeObject(std::move(fields));
      return true;
    }
    if (WrongCloser(open, '}')) return false;
    std::size_t key_at = pos_;
    Value key;
    if (!ParseFormAt(key, depth + 1)) return false;
    SkipSpace();
    if (at_end()) return FailEnd("a map");
    if (text_[pos_] == '}') {
      return Fail(key_at,
                  "map has a key without a value (odd number of "
                  "forms)");
    }
    if (WrongCloser(open, '}')) return false;
    Value v;
    if (!ParseFormAt(v, depth + 1)) return false;
    std::string name = key.is_string() ? key.as_string() : key.ToJson();
    if (fields.size() < kLinearDuplicateCheck) {
      for (const auto& [existing, unused] : fields) {
        if (existing == name) {
          return Fail(key_at, "duplicate map key " + name);
        }
      }
    } else {
      late_keys.push_back(key_at);
    }
    fields.emplace_back(std::move(name), std::move(v));
  }
}

bool EdnParser::ParseString(Value& out) {
  ++pos_;
  std::string s;
  while (true) {
    if (at_end()) return FailEnd("a string (missing closing quote)");
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      out = Value::String(std::move(s));
      return true;
    }
    if (c == '\\') {
      if (pos_ + 1 >= text_.size()) return FailEnd("a string escape");
      char e = text_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case 't':
          s += '\t';
          break;
        case 'r':
          s += '\r';
          break;
        case 'n':
          s += '\n';
          break;
        case 'b':
          s += '\b';
          break;
        case 'f':
          s += '\f';
          break;
        case '\\':
        case '"':
        case '\'':
          s += e;
          break;
        case 'u': {
          if (pos_ + 4 > text_.size()) return FailEnd("a \\u escape");
          unsigned cp = 0;
          if (!ParseHex4(text_.substr(pos_, 4), cp) ||
              (cp >= 0xD800 && cp <= 0xDFFF)) {
            return Fail(pos_ - 2, "bad \\u escape in a string");
          }
          AppendUtf8(s, cp);
          pos_ += 4;
          break;
        }
        default:
          return Fail(pos_ - 2,
                      std::string("invalid escape \\") + e + " in a string");
      }
      continue;
    }
    std::size_t len = Utf8SequenceLength(text_, pos_);
    if (len == 0) {
      if (text_.size() - pos_ < 4 && static_cast<unsigned char>(c) >= 0xC2) {
        return FailEnd("a UTF-8 character");
      }
      return Fail(pos_, "invalid UTF-8 in a string");
    }
    s.append(text_.data() + pos_, len);
    pos_ += len;
  }
}

bool EdnParser::ParseChar(Value& out) {
  std::size_t at = pos_;
  ++pos_;
  if (at_end()) return FailEnd("a character literal");
  // A character is one (possibly multi-byte) char, or a name.
  std::size_t len = Utf8SequenceLength(text_, pos_);
  if (len == 0) return Fail(pos_, "invalid UTF-8 in a character literal");
  std::size_t start = pos_;
  pos_ += len;
  while (pos_ < text_.size() && !IsDelimiter(text_[pos_])) ++pos_;
  std::string_view tok = text_.substr(start, pos_ - start);
  if (tok.size() == len) {
    out = Value::String(std::string(tok));
    return true;
  }
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"newline", '\n'}, {"space", ' '},      {"tab", '\t'},
      {"return", '\r'},  {"backspace", '\b'}, {"formfeed", '\f'}};
  for (const auto& [name, ch] : kNamed) {
    if (tok == name) {
      out = Value::String(std::string(1, ch));
      return true;
    }
  }
  unsigned cp = 0;
  if (tok.size() == 5 && tok[0] == 'u' && ParseHex4(tok.substr(1), cp) &&
      !(cp >= 0xD800 && cp <= 0xDFFF)) {
    std::string s;
    AppendUtf8(s, cp);
    out = Value::String(std::move(s));
    return true;
  }
  return Fail(at, "unknown character literal \\" + std::string(tok));
}

bool EdnParser::ParseDispatch(Value& out, int depth) {
  std::size_t at = pos_;
  ++pos_;
  if (at_end()) return FailEnd("a # form");
  char c = text_[pos_];
  if (c == '{') return ParseSeq('}', out, depth);  // set -> list
  if (c == '_') {
    ++pos_;
    Value discarded;
    if (!ParseFormAt(discarded, depth + 1)) return false;
    // depth + 1: a run of "#_x #_x ..." nests, so it stays bounded.
    return ParseFormAt(out, depth + 1);
  }
  if (c == '"') return ParseString(out);  // regex, kept as its text
  if (c == '#') {
    ++pos_;
    std::string_view tok = ReadToken();
    if (tok == "Inf") {
      out = Value::Double(std::numeric_limits<double>::infinity());
    } else if (tok == "-Inf") {
      out = Value::Double(-std::numeric_limits<double>::infinity());
    } else if (tok == "NaN") {
      out = Value::Double(std::numeric_limits<double>::quiet_NaN());
    } else {
      return Fail(at, "unknown symbolic value ##" + std::string(tok));
    }
    return true;
  }
  if (IsDelimiter(c) || c == '#') {
    return Fail(at, "unsupported # dispatch form");
  }
  // Tagged element: #tag form. The tag is dropped.
  std::string_view tag = ReadToken();
  if (tag.empty()) return Fail(at, "empty tag after '#'");
  // Record syntax (#ns.Type{...}) has no space before the form.
  return ParseFormAt(out, depth + 1);
}

bool EdnParser::ParseToken(Value& out) {
  std::size_t at = pos_;
  std::string_view tok = ReadToken();
  if (tok.empty()) {
    return Fail(at, "unexpected character '" + std::string(1, text_[at]) + "'");
  }
  if (tok == "nil") {
    out = Value::Null();
    return true;
  }
  if (tok == "true" || tok == "false") {
    out = Value::Bool(tok == "true");
    return true;
  }
  if (tok[0] == ':') {
    tok.remove_prefix(tok.size() > 1 && tok[1] == ':' ? 2 : 1);
    if (tok.empty()) return Fail(at, "empty keyword ':'");
    out = Value::String(std::string(tok));
    return true;
  }
  bool numeric = IsDigit(tok[0]) || ((tok[0] == '-' || tok[0] == '+') &&
                                     tok.size() > 1 && IsDigit(tok[1]));
  if (numeric) {
    switch (ParseNumberToken(tok, out)) {
      case Number::kOk:
        return true;
      case Number::kBeyond64Bits:
        return Fail(at, BigIntegerMessage(tok));
      case Number::kMalformed:
        break;
    }
    return Fail(at, "malformed or unsupported number " + std::string(tok));
  }
  for (char ch : tok) {
    if (static_cast<unsigned char>(ch) < 0x20) {
      return Fail(at, "control character in a symbol");
    }
  }
  if (Utf8SequenceLength(tok, 0) == 0) {
    return Fail(at, "invalid UTF-8 in a symbol");
  }
  out = Value::String(std::string(tok));  // symbol
  return true;
}

std::string EventFromEdnMap(const Value& map, Event& e,
                            std::optional<std::int64_t>* index,
                            std::string* field) {
  if (!map.is_object()) {
    return "expected an op map {:type ..., :process ..., :f ...}, not " +
           std::string(KindName(map));
  }
  bool has_type = false, has_process = false, has_f = false;
  for (const auto& [name, v] : map.as_object()) {
    if (field != nullptr) *field = name;  // the field an error is about
    if (name == "type") {
      has_type = true;
      auto t = ParseEventType(v.is_string() ? v.as_string() : "");
      if (t) {
        e.type = *t;
      } else {
        return ":type must be :invoke, :ok, :fail or :info, not " + v.ToJson();
      }
    } else if (name == "process") {
      has_process = true;
      if (v.is_int() && v.as_int() >= 0) {
        e.process = v.as_int();
      } else if (v.is_string() && v.as_string() == "nemesis") {
        e.process = kNemesisProcess;
      } else {
        return ":process must be an integer >= 0 or :nemesis, not " +
               v.ToJson();
      }
    } else if (name == "f") {
      has_f = true;
      if (v.is_string() && !v.as_string().empty()) {
        e.f = v.as_string();
      } else if (v.is_int()) {
        e.f = std::to_string(v.as_int());
      } else {
        return ":f must be a keyword or string, not " + v.ToJson();
      }
    } else if (name == "value") {
      e.value = v;
    } else if (name == "time") {
      if (v.is_null()) continue;
      if (!v.is_int() || v.as_int() < 0) {
        return ":time must be an integer >= 0 (nanoseconds), not " + v.ToJson();
      }
      e.time = v.as_int();
    } else if (name == "index") {
      if (!v.is_int()) return ":index must be an integer, not " + v.ToJson();
      if (index != nullptr) *index = v.as_int();
    } else if (name == "key") {
      if (!v.is_null() && !v.is_string() && !v.is_int()) {
        return ":key must be a string, keyword, integer or nil, not " +
               v.ToJson();
      }
      e.key = v;
    } else if (name == "error") {
      if (v.is_null()) continue;
      e.error = v.is_string() ? v.as_string() : v.ToJson();
    } else if (name == "node") {
      if (v.is_null()) continue;
      e.node = v.is_string() ? v.as_string() : v.ToJson();
    } else {
      e.extra.emplace_back(name, v);
    }
  }
  if (field != nullptr) field->clear();
  if (!has_type) return "op map has no :type (:invoke, :ok, :fail or :info)";
  if (!has_process) return "op map has no :process";
  if (!has_f) return "op map has no :f";
  return {};
}

}  // namespace faultline::checkers

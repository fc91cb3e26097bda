#include "targets/raftkv/resp/resp.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace faultline::raftkv::resp {
namespace {

// Strict decimal: optional '-', at least one digit, nothing else, no
// overflow.
bool ParseInt(std::string_view s, std::int64_t* v) {
  if (s.empty()) return false;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+') return false;
  auto [ptr, ec] = std::from_chars(first, last, *v);
  return ec == std::errc() && ptr == last;
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
         c == '\f';
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits an inline command line the way Redis's sdssplitargs does.
// Returns false on unbalanced quotes or a closing quote not followed by a
// blank.
bool SplitInline(std::string_view line, std::vector<std::string>* args) {
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (true) {
    while (i < n && IsBlank(line[i])) ++i;
    if (i == n) return true;
    std::string cur;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      if (in_double) {
        if (i == n) return false;
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' &&
            HexDigit(line[i + 2]) >= 0 && HexDigit(line[i + 3]) >= 0) {
          cur.push_back(static_cast<char>(HexDigit(line[i + 2]) * 16 +
                                          HexDigit(line[i + 3])));
          i += 4;
        } else if (c == '\\' && i + 1 < n) {
          char e = line[i + 1];
          switch (e) {
            case 'n':
              cur.push_back('\n');
              break;
            case 'r':
              cur.push_back('\r');
              break;
            case 't':
              cur.push_back('\t');
              break;
            case 'b':
              cur.push_back('\b');
              break;
            case 'a':
              cur.push_back('\a');
              break;
            default:
              cur.push_back(e);
              break;
          }
          i += 2;
        } else if (c == '"') {
          ++i;
          if (i < n && !IsBlank(line[i])) return false;
          done = true;
        } else {
          cur.push_back(c);
          ++i;
        }
      } else if (in_single) {
        if (i == n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          cur.push_back('\'');
          i += 2;
        } else if (c == '\'') {
          ++i;
          if (i < n && !IsBlank(line[i])) return false;
          done = true;
        } else {
          cur.push_back(c);
          ++i;
        }
      } else {
        if (i == n || IsBlank(line[i])) {
          done = true;
        } else if (line[i] == '"') {
          in_double = true;
          ++i;
        } else if (line[i] == '\'') {
          in_single = true;
          ++i;
        } else {
          cur.push_back(line[i]);
          ++i;
        }
      }
    }
    args->push_back(std::move(cur));
  }
}

// A byte for an error message: itself if printable, else \xNN.
std::string Shown(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  static constexpr char kHex[] = "0123456789abcdef";
  auto u = static_cast<unsigned char>(c);
  return std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
}

void AppendLine(std::string* out, char type, std::string_view s) {
  out->push_back(type);
  for (char c : s) out->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out->append("\r\n");
}

void AppendCount(std::string* out, char type, std::int64_t n) {
  out->push_back(type);
  out->append(std::to_string(n));
  out->append("\r\n");
}

}  // namespace

void Parser::Feed(std::string_view bytes) {
  if (!error_.empty()) return;
  if (bytes.size() > limits_.max_buffered ||
      buffered() > limits_.max_buffered - bytes.size()) {
    Fail("Protocol error: request too large");
    buf_.clear();
    pos_ = 0;
    return;
  }
  buf_.append(bytes);
}

Parser::Status Parser::More(std::size_t need) {
  need_ = std::max(need_, need);
  return Status::kMore;
}

Parser::Status Parser::Fail(std::string msg) {
  if (error_.empty()) error_ = std::move(msg);
  return Status::kError;
}

void Parser::Consume(std::size_t p) {
  pos_ = p;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > 4096 && pos_ > buf_.size() / 2) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
}

// A CRLF-terminated header line starting at *p (the type byte already
// consumed by the caller). A lone CR inside the line is an error; so is a
// line longer than max_line.
Parser::Status Parser::Line(std::size_t* p, std::string_view* line) {
  std::size_t cr = buf_.find('\r', *p);
  std::size_t end = cr == std::string::npos ? buf_.size() : cr;
  if (end - *p > limits_.max_line) return Fail("Protocol error: line too long");
  if (cr == std::string::npos || cr + 1 >= buf_.size()) return Status::kMore;
  if (buf_[cr + 1] != '\n') return Fail("Protocol error: expected CRLF");
  *line = std::string_view(buf_).substr(*p, cr - *p);
  *p = cr + 2;
  return Status::kDone;
}

Parser::Status Parser::ParseInline(std::size_t* p,
                                   std::vector<std::string>* args) {
  std::size_t nl = buf_.find('\n', *p);
  std::size_t end = nl == std::string::npos ? buf_.size() : nl;
  if (end - *p > limits_.max_line) {
    return Fail("Protocol error: too big inline request");
  }
  if (nl == std::string::npos) return Status::kMore;
  std::string_view line = std::string_view(buf_).substr(*p, nl - *p);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!SplitInline(line, args)) {
    return Fail("Protocol error: unbalanced quotes in request");
  }
  *p = nl + 1;
  return Status::kDone;
}

Parser::Status Parser::ParseCommand(std::size_t* p,
                                    std::vector<std::string>* args) {
  if (buf_[*p] != '*') return ParseInline(p, args);
  ++*p;
  std::string_view line;
  if (Status s = Line(p, &line); s != Status::kDone) return s;
  std::int64_t n = 0;
  if (!ParseInt(line, &n) || n > limits_.max_array) {
    return Fail("Protocol error: invalid multibulk length");
  }
  if (n <= 0) return Status::kDone;  // empty command: skipped
  // First find every argument, copy only once the command is complete: a
  // large command arriving in many pieces is not copied again per piece.
  // Never trust the count for memory: it is bounded by the bytes present.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  spans.reserve(std::min<std::size_t>(static_cast<std::size_t>(n),
                                      (buf_.size() - *p) / 4 + 1));
  for (std::int64_t i = 0; i < n; ++i) {
    if (*p >= buf_.size()) return Status::kMore;
    if (buf_[*p] != '$') {
      return Fail(std::string("Protocol error: expected '$', got '") +
                  Shown(buf_[*p]) + "'");
    }
    ++*p;
    if (Status s = Line(p, &line); s != Status::kDone) return s;
    std::int64_t len = 0;
    if (!ParseInt(line, &len) || len < 0 ||
        static_cast<std::uint64_t>(len) > limits_.max_bulk) {
      return Fail("Protocol error: invalid bulk length");
    }
    std::size_t ulen = static_cast<std::size_t>(len);
    if (buf_.size() - *p < ulen + 2) return More(*p + ulen + 2);
    if (buf_[*p + ulen] != '\r' || buf_[*p + ulen + 1] != '\n') {
      return Fail("Protocol error: bulk string not terminated by CRLF");
    }
    spans.emplace_back(*p, ulen);
    *p += ulen + 2;
  }
  args->reserve(spans.size());
  for (auto [at, len] : spans) args->emplace_back(buf_, at, len);
  return Status::kDone;
}

std::optional<std::vector<std::string>> Parser::NextCommand(
    std::string* error) {
  while (error_.empty()) {
    if (pos_ >= buf_.size() || buf_.size() < need_) return std::nullopt;
    std::size_t p = pos_;
    std::vector<std::string> args;
    need_ = buf_.size() + 1;  // unless the parse knows better
    Status s = ParseCommand(&p, &args);
    if (s == Status::kMore) return std::nullopt;
    if (s == Status::kError) break;
    Consume(p);
    need_ = 0;
    if (!args.empty()) return args;
  }
  if (error != nullptr) *error = error_;
  return std::nullopt;
}

// v == nullptr: only check that a complete, valid reply is present.
Parser::Status Parser::ParseReply(std::size_t* p, std::size_t depth, Value* v) {
  if (*p >= buf_.size()) return Status::kMore;
  char type = buf_[*p];
  ++*p;
  std::string_view line;
  switch (type) {
    case '+':
    case '-':
      if (Status s = Line(p, &line); s != Status::kDone) return s;
      if (v != nullptr) {
        v->kind = type == '+' ? Value::Kind::kSimple : Value::Kind::kError;
        v->str.assign(line);
      }
      return Status::kDone;
    case ':': {
      if (Status s = Line(p, &line); s != Status::kDone) return s;
      std::int64_t i = 0;
      if (!ParseInt(line, &i)) return Fail("Protocol error: invalid integer");
      if (v != nullptr) {
        v->kind = Value::Kind::kInteger;
        v->integer = i;
      }
      return Status::kDone;
    }
    case '$': {
      if (Status s = Line(p, &line); s != Status::kDone) return s;
      std::int64_t len = 0;
      if (!ParseInt(line, &len) || len < -1 ||
          (len >= 0 && static_cast<std::uint64_t>(len) > limits_.max_bulk)) {
        return Fail("Protocol error: invalid bulk length");
      }
      if (len == -1) {
        if (v != nullptr) v->kind = Value::Kind::kNull;
        return Status::kDone;
      }
      std::size_t ulen = static_cast<std::size_t>(len);
      if (buf_.size() - *p < ulen + 2) return More(*p + ulen + 2);
      if (buf_[*p + ulen] != '\r' || buf_[*p + ulen + 1] != '\n') {
        return Fail("Protocol error: bulk string not terminated by CRLF");
      }
      if (v != nullptr) {
        v->kind = Value::Kind::kBulk;
        v->str.assign(buf_, *p, ulen);
      }
      *p += ulen + 2;
      return Status::kDone;
    }
    case '*': {
      if (Status s = Line(p, &line); s != Status::kDone) return s;
      std::int64_t n = 0;
      if (!ParseInt(line, &n) || n < -1 || n > limits_.max_array) {
        return Fail("Protocol error: invalid multibulk length");
      }
      if (n == -1) {
        if (v != nullptr) v->kind = Value::Kind::kNull;
        return Status::kDone;
      }
      if (n > 0 && depth + 1 > limits_.max_depth) {
        return Fail("Protocol error: arrays nested too deeply");
      }
      if (v != nullptr) {
        v->kind = Value::Kind::kArray;
        v->array.reserve(static_cast<std::size_t>(n));  // checked complete
      }
      for (std::int64_t i = 0; i < n; ++i) {
        Value* e = v != nullptr ? &v->array.emplace_back() : nullptr;
        if (Status s = ParseReply(p, depth + 1, e); s != Status::kDone) {
          return s;
        }
      }
      return Status::kDone;
    }
    default:
      return Fail(std::string("Protocol error: unexpected type byte '") +
                  Shown(type) + "'");
  }
}

std::optional<Value> Parser::NextReply(std::string* error) {
  if (error_.empty()) {
    if (pos_ >= buf_.size() || buf_.size() < need_) return std::nullopt;
    // Pass one only checks the reply is complete; pass two builds it, so a
    // large reply arriving in many pieces is not copied again per piece.
    std::size_t p = pos_;
    need_ = buf_.size() + 1;
    Status s = ParseReply(&p, 0, nullptr);
    if (s == Status::kMore) return std::nullopt;
    if (s == Status::kDone) {
      p = pos_;
      Value v;
      s = ParseReply(&p, 0, &v);
      if (s != Status::kDone) {
        std::fprintf(stderr, "%s:%d: reply parse passes disagree\n", __FILE__,
                     __LINE__);
        std::abort();
      }
      Consume(p);
      need_ = 0;
      return v;
    }
  }
  if (error != nullptr) *error = error_;
  return std::nullopt;
}

void AppendSimple(std::string* out, std::string_view s) {
  AppendLine(out, '+', s);
}

void AppendError(std::string* out, std::string_view s) {
  AppendLine(out, '-', s);
}

void AppendInteger(std::string* out, std::int64_t v) {
  AppendCount(out, ':', v);
}

void AppendBulk(std::string* out, std::string_view s) {
  AppendCount(out, '$', static_cast<std::int64_t>(s.size()));
  out->append(s);
  out->append("\r\n");
}

void AppendNull(std::string* out) { out->append("$-1\r\n"); }

void AppendArrayHeader(std::string* out, std::size_t n) {
  AppendCount(out, '*', static_cast<std::int64_t>(n));
}

void AppendValue(std::string* out, const Value& v) {
  switch (v.kind) {
    case Value::Kind::kSimple:
      AppendSimple(out, v.str);
      return;
    case Value::Kind::kError:
      AppendError(out, v.str);
      return;
    case Value::Kind::kInteger:
      AppendInteger(out, v.integer);
      return;
    case Value::Kind::kBulk:
      AppendBulk(out, v.str);
      return;
    case Value::Kind::kNull:
      AppendNull(out);
      return;
    case Value::Kind::kArray:
      AppendArrayHeader(out, v.array.size());
      for (const Value& e : v.array) AppendValue(out, e);
      return;
  }
}

std::string EncodeCommand(const std::vector<std::string>& args) {
  std::size_t size = 16;
  for (const auto& a : args) size += a.size() + 16;
  std::string out;
  out.reserve(size);
  AppendArrayHeader(&out, args.size());
  for (const auto& a : args) AppendBulk(&out, a);
  return out;
}

}  // namespace faultline::raftkv::resp

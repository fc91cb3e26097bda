// RESP2 (the Redis serialization protocol) codec for raftkv's client port,
// shared by the server and faultline's raftkv client. Pure: works on byte
// buffers, no sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::raftkv::resp {

// A reply value. Arrays nest.
struct Value {
  enum class Kind : std::uint8_t {
    kSimple,
    kError,
    kInteger,
    kBulk,
    kNull,
    kArray
  };
  Kind kind = Kind::kNull;
  std::string str;  // simple, error, bulk
  std::int64_t integer = 0;
  std::vector<Value> array;
  bool operator==(const Value&) const = default;
};

// Bounds that turn hostile or broken input into a protocol error instead
// of unbounded memory or recursion. Defaults follow Redis.
struct Limits {
  std::size_t max_bulk = 512u << 20;    // one bulk string's length
  std::int64_t max_array = 1 << 20;     // elements of one array
  std::size_t max_line = 64u << 10;     // inline command, any CRLF line
  std::size_t max_depth = 64;           // nesting of reply arrays
  std::size_t max_buffered = 1u << 30;  // unconsumed bytes held at once
};

// Incremental parser. Feed bytes as they arrive; take complete items out.
// Accepts both RESP arrays of bulk strings (what redis-cli and
// redis-benchmark send) and inline commands ("GET k\r\n", split on
// blanks, with Redis's "double" (C escapes, \xHH) and 'single' quotes).
// Empty arrays ("*0", "*-1") and blank inline lines are skipped, as Redis
// does. A parser serves one direction: use either NextCommand or
// NextReply on it, not both.
//
// Errors are one line ("Protocol error: ...") and sticky: once one is
// reported every later call reports it again; the connection should be
// closed. Feeding more than Limits::max_buffered unconsumed bytes is an
// error too.
//
// Thread-safety: none (one parser per connection).
class Parser {
 public:
  Parser() = default;
  explicit Parser(const Limits& limits) : limits_(limits) {}

  void Feed(std::string_view bytes);
  // Next complete command (server side): its arguments. nullopt if more
  // bytes are needed; sets *error (and the connection should be closed) on
  // a protocol error.
  std::optional<std::vector<std::string>> NextCommand(std::string* error);
  // Next complete reply (client side).
  std::optional<Value> NextReply(std::string* error);

  // Bytes fed but not yet consumed by a complete item.
  std::size_t buffered() const { return buf_.size() - pos_; }

 private:
  enum class Status : std::uint8_t { kDone, kMore, kError };
  Status ParseCommand(std::size_t* p, std::vector<std::string>* args);
  Status ParseInline(std::size_t* p, std::vector<std::string>* args);
  Status ParseReply(std::size_t* p, std::size_t depth, Value* v);
  Status Line(std::size_t* p, std::string_view* line);
  Status Fail(std::string msg);
  Status More(std::size_t need);
  void Consume(std::size_t p);

  Limits limits_;
  std::string buf_;
  std::size_t pos_ = 0;
  // The buffer size below which another parse attempt cannot complete
  // (set when one ran out of bytes): polling and small feeds into a large
  // bulk string do not re-scan.
  std::size_t need_ = 0;
  std::string error_;
};

// Writers append to `out`.
void AppendSimple(std::string* out, std::string_view s);  // +s
void AppendError(std::string* out, std::string_view s);   // -s (one line)
void AppendInteger(std::string* out, std::int64_t v);     // :v
void AppendBulk(std::string* out, std::string_view s);    // $n s
void AppendNull(std::string* out);                        // $-1
void AppendArrayHeader(std::string* out, std::size_t n);  // *n
// Any value, arrays recursively; kNull is written as the null bulk $-1.
// Simple and error strings have CR/LF replaced by blanks (one line).
void AppendValue(std::string* out, const Value& v);
// A command as a RESP array of bulk strings (client side).
std::string EncodeCommand(const std::vector<std::string>& args);

}  // namespace faultline::raftkv::resp

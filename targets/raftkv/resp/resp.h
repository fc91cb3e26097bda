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
  enum class Kind : std::uint8_t { kSimple, kError, kInteger, kBulk, kNull, kArray };
  Kind kind = Kind::kNull;
  std::string str;  // simple, error, bulk
  std::int64_t integer = 0;
  std::vector<Value> array;
};

// Incremental parser. Feed bytes as they arrive; take complete items out.
// Accepts both RESP arrays of bulk strings (what redis-cli and
// redis-benchmark send) and inline commands ("GET k\r\n").
class Parser {
 public:
  void Feed(std::string_view bytes);
  // Next complete command (server side): its arguments. nullopt if more
  // bytes are needed; sets *error (and the connection should be closed) on
  // a protocol error.
  std::optional<std::vector<std::string>> NextCommand(std::string* error);
  // Next complete reply (client side).
  std::optional<Value> NextReply(std::string* error);

 private:
  std::string buf_;
  std::size_t pos_ = 0;
};

// Writers append to `out`.
void AppendSimple(std::string* out, std::string_view s);  // +s
void AppendError(std::string* out, std::string_view s);   // -s (one line)
void AppendInteger(std::string* out, std::int64_t v);     // :v
void AppendBulk(std::string* out, std::string_view s);    // $n s
void AppendNull(std::string* out);                        // $-1
void AppendArrayHeader(std::string* out, std::size_t n);  // *n
// A command as a RESP array of bulk strings (client side).
std::string EncodeCommand(const std::vector<std::string>& args);

}  // namespace faultline::raftkv::resp

// RespConn: one blocking-with-deadline RESP2 connection to a raftkv node,
// for faultline's raftkv client and target (STATUS). One request in flight at
// a time; every call is bounded by a deadline (non-blocking connect, poll for
// writes and reads). After any failure the connection is closed, so a late
// reply can never be taken for the answer to a later request.
//
// Thread-safety: none; one RespConn per thread (or under the owner's lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "targets/raftkv/resp/resp.h"

namespace faultline::targets::raftkv {

// The server's RESP codec (targets/raftkv/resp/, namespace
// faultline::raftkv::resp), under a short name for the adapter.
namespace resp = ::faultline::raftkv::resp;

// "host:port" -> (host, port); nullopt when malformed.
struct HostPort {
  std::string host;
  int port = 0;
};
std::optional<HostPort> ParseHostPort(std::string_view text);

enum class CallError : std::uint8_t {
  kNone,
  kConnect,   // could not connect (refused, unreachable, connect timeout):
              // nothing was sent
  kTimeout,   // deadline passed after (part of) the request was sent
  kClosed,    // the peer closed the connection before the reply
  kIo,        // other socket error after sending began
  kProtocol,  // the reply was not valid RESP
};
const char* ToString(CallError e);

struct CallResult {
  CallError error = CallError::kNone;
  // True when some byte of the request may have reached the server (so a
  // write may have taken effect). Always true when error is kNone.
  bool sent = false;
  resp::Value reply;   // when error == kNone
  std::string detail;  // errno text etc., for messages
};

class RespConn {
 public:
  using Clock = std::chrono::steady_clock;

  RespConn(std::string host, int port);
  ~RespConn();
  RespConn(const RespConn&) = delete;
  RespConn& operator=(const RespConn&) = delete;

  // Connects if needed, sends `args` as a RESP array and reads one reply, all
  // before `deadline`. Never throws.
  CallResult Call(const std::vector<std::string>& args,
                  Clock::time_point deadline);
  void Close();
  bool connected() const { return fd_ >= 0; }
  const std::string& host() const { return host_; }
  int port() const { return port_; }

 private:
  // False when the idle connection is readable (closed by the peer, or
  // unsolicited bytes): it must not carry the next request.
  bool Idle();
  // Returns "" on success, else why not (and the socket is closed).
  std::string Connect(Clock::time_point deadline);

  std::string host_;
  int port_;
  int fd_ = -1;
  resp::Parser parser_;
};

// STATUS (bulk string of "field:value" lines) as a map-like list of pairs.
std::vector<std::pair<std::string, std::string>> ParseStatusFields(
    std::string_view text);
// The value of `field` in `fields`, or "" when absent.
std::string StatusField(
    const std::vector<std::pair<std::string, std::string>>& fields,
    std::string_view field);

}  // namespace faultline::targets::raftkv

// A tiny blocking RESP client for the server's tests (not used by the
// server itself). Thread-safety: none.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/resp/resp.h"

namespace faultline::raftkv::server::testing {

class TestClient {
 public:
  TestClient(const std::string& host, int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~TestClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  bool SendRaw(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  bool Send(const std::vector<std::string>& args) {
    return SendRaw(resp::EncodeCommand(args));
  }
  // Next reply, waiting at most timeout_ms; nullopt on timeout/EOF/error.
  std::optional<resp::Value> Read(int timeout_ms = 10000) {
    for (;;) {
      std::string err;
      if (auto v = parser_.NextReply(&err)) return v;
      if (!err.empty()) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
      char buf[65536];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return std::nullopt;
      parser_.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
    }
  }
  std::optional<resp::Value> Call(const std::vector<std::string>& args) {
    if (!Send(args)) return std::nullopt;
    return Read();
  }
  // The reply as one comparable string: "+OK", "-ERR ...", ":3", "$v",
  // "nil", "*n", or "<none>".
  std::string CallStr(const std::vector<std::string>& args) {
    return Str(Call(args));
  }
  static std::string Str(const std::optional<resp::Value>& v) {
    if (!v) return "<none>";
    switch (v->kind) {
      case resp::Value::Kind::kSimple:
        return "+" + v->str;
      case resp::Value::Kind::kError:
        return "-" + v->str;
      case resp::Value::Kind::kInteger:
        return ":" + std::to_string(v->integer);
      case resp::Value::Kind::kBulk:
        return "$" + v->str;
      case resp::Value::Kind::kNull:
        return "nil";
      case resp::Value::Kind::kArray:
        return "*" + std::to_string(v->array.size());
    }
    return "?";
  }

 private:
  int fd_ = -1;
  resp::Parser parser_;
};

}  // namespace faultline::raftkv::server::testing

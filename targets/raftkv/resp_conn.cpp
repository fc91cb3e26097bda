#include "targets/raftkv/resp_conn.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace faultline::targets::raftkv {
namespace {

using Clock = RespConn::Clock;

int MillisLeft(Clock::time_point deadline) {
  // Rounded up, so a wait does not end just before the deadline.
  auto left =
      std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now())
          .count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// Waits for `events` on fd until the deadline: 1 ready, 0 timeout, -1 error.
int Wait(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, MillisLeft(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) {
      if (Clock::now() >= deadline) return 0;
      continue;  // poll's millisecond rounding woke us early
    }
    return 1;
  }
}

bool Resolve(const std::string& host, int port, sockaddr_in* out) {
  std::memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &out->sin_addr) == 1) return true;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || !res) {
    return false;
  }
  out->sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return true;
}

}  // namespace

std::optional<HostPort> ParseHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view port = text.substr(colon + 1);
  int p = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() ||
      p <= 0 || p > 65535) {
    return std::nullopt;
  }
  return HostPort{std::string(text.substr(0, colon)), p};
}

const char* ToString(CallError e) {
  switch (e) {
    case CallError::kNone:
      return "ok";
    case CallError::kConnect:
      return "connect";
    case CallError::kTimeout:
      return "timeout";
    case CallError::kClosed:
      return "connection closed";
    case CallError::kIo:
      return "io";
    case CallError::kProtocol:
      return "protocol";
  }
  return "?";
}

RespConn::RespConn(std::string host, int port)
    : host_(std::move(host)), port_(port) {}

RespConn::~RespConn() { Close(); }

void RespConn::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  parser_ = resp::Parser();
}

bool RespConn::Idle() {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return true;  // nothing pending: still good
  // Readable between requests: either EOF/reset (a restarted or killed
  // server) or bytes nobody asked for; both mean start afresh, before
  // anything is sent, so the request's outcome stays certain.
  return false;
}

std::string RespConn::Connect(Clock::time_point deadline) {
  sockaddr_in addr;
  if (!Resolve(host_, port_, &addr)) return "cannot resolve " + host_;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int r = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (r < 0 && errno != EINPROGRESS) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return why;
  }
  if (r < 0) {
    int w = Wait(fd, POLLOUT, deadline);
    if (w <= 0) {
      ::close(fd);
      return w == 0 ? "connect timeout" : "connect: poll failed";
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
      ::close(fd);
      return std::strerror(err != 0 ? err : errno);
    }
  }
  fd_ = fd;
  parser_ = resp::Parser();
  return "";
}

CallResult RespConn::Call(const std::vector<std::string>& args,
                          Clock::time_point deadline) {
  CallResult out;
  auto failed = [&](CallError e, std::string detail) {
    Close();
    out.error = e;
    out.detail = std::move(detail);
    return out;
  };
  if (fd_ >= 0 && !Idle()) Close();  // the peer went away while idle
  if (fd_ < 0) {
    std::string why = Connect(deadline);
    if (!why.empty()) return failed(CallError::kConnect, why);
  }
  const std::string request = resp::EncodeCommand(args);
  std::size_t off = 0;
  while (off < request.size()) {
    ssize_t n =
        ::send(fd_, request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      out.sent = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int w = Wait(fd_, POLLOUT, deadline);
      if (w == 0) {
        return failed(out.sent ? CallError::kTimeout : CallError::kConnect,
                      "send timeout");
      }
      if (w < 0) return failed(CallError::kIo, "poll failed");
      continue;
    }
    // Nothing of this request went out, but an established connection that
    // fails may have carried nothing at all: still, be conservative only
    // when something was sent.
    std::string why = std::strerror(errno);
    return failed(out.sent ? CallError::kIo : CallError::kConnect,
                  "send: " + why);
  }
  char buf[16384];
  while (true) {
    std::string perr;
    if (auto v = parser_.NextReply(&perr)) {
      out.reply = std::move(*v);
      return out;
    }
    if (!perr.empty()) return failed(CallError::kProtocol, perr);
    int w = Wait(fd_, POLLIN, deadline);
    if (w == 0) return failed(CallError::kTimeout, "no reply before deadline");
    if (w < 0) return failed(CallError::kIo, "poll failed");
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      parser_.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
      continue;
    }
    if (n == 0) return failed(CallError::kClosed, "closed by peer");
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    return failed(CallError::kIo, std::string("recv: ") + std::strerror(errno));
  }
}

std::vector<std::pair<std::string, std::string>> ParseStatusFields(
    std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto colon = line.find(':');
    if (colon == std::string_view::npos || line.starts_with("#")) continue;
    out.emplace_back(std::string(line.substr(0, colon)),
                     std::string(line.substr(colon + 1)));
  }
  return out;
}

std::string StatusField(
    const std::vector<std::pair<std::string, std::string>>& fields,
    std::string_view field) {
  for (const auto& [k, v] : fields) {
    if (k == field) return v;
  }
  return "";
}

}  // namespace faultline::targets::raftkv

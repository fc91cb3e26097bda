#include "targets/raftkv/server/transport.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "targets/raftkv/server/log.h"
#include "targets/raftkv/server/net.h"

namespace faultline::raftkv::server {

struct PeerTransport::Outbound {
  raft::NodeId id = raft::kNone;
  HostPort addr;
  enum class State { kIdle, kConnecting, kConnected } state = State::kIdle;
  int fd = -1;
  raft::Nanos next_attempt = 0;      // kIdle
  raft::Nanos connect_deadline = 0;  // kConnecting
  raft::Nanos backoff = 0;
  std::string buf;  // queued frames; bytes before `off` are written
  std::size_t off = 0;
  bool logged_down = false;
  std::size_t queued() const { return buf.size() - off; }
};

struct PeerTransport::Inbound {
  int fd = -1;
  std::string buf;
  bool closed = false;
};

PeerTransport::PeerTransport(raft::NodeId self,
                             const std::map<raft::NodeId, HostPort>& peers)
    : PeerTransport(self, peers, Limits{}) {}

PeerTransport::PeerTransport(raft::NodeId self,
                             const std::map<raft::NodeId, HostPort>& peers,
                             Limits limits)
    : self_(self), limits_(limits) {
  for (const auto& [id, addr] : peers) {
    if (id == self) continue;
    auto o = std::make_unique<Outbound>();
    o->id = id;
    o->addr = addr;
    o->backoff = limits_.min_backoff;
    out_[id] = std::move(o);
  }
}

PeerTransport::~PeerTransport() {
  CloseFd(&listen_fd_);
  for (auto& [id, o] : out_) CloseFd(&o->fd);
  for (auto& in : in_) CloseFd(&in->fd);
}

std::string PeerTransport::Listen(const HostPort& addr) {
  std::string err;
  listen_fd_ = ListenTcp(addr.host, addr.port, &err);
  return listen_fd_ < 0 ? "peer port: " + err : "";
}

int PeerTransport::BoundPort() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (listen_fd_ < 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return 0;
  if (ss.ss_family == AF_INET)
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

bool PeerTransport::Send(raft::NodeId to, std::string_view payload) {
  auto it = out_.find(to);
  if (it == out_.end()) {
    ++stats_.frames_dropped;
    return false;
  }
  Outbound* o = it->second.get();
  if (o->queued() + 4 + payload.size() > limits_.max_queue_bytes) {
    ++stats_.frames_dropped;
    return false;
  }
  if (o->off > 0 && o->off >= o->buf.size() / 2) {
    o->buf.erase(0, o->off);
    o->off = 0;
  }
  std::uint32_t n = static_cast<std::uint32_t>(payload.size());
  char hdr[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                 static_cast<char>(n >> 8), static_cast<char>(n)};
  o->buf.append(hdr, 4);
  o->buf.append(payload);
  ++stats_.frames_sent;
  return true;
}

void PeerTransport::Connect(Outbound* o, raft::Nanos now) {
  std::string err;
  o->fd = ConnectTcp(o->addr.host, o->addr.port, &err);
  if (o->fd < 0) {
    Fail(o, now, err.c_str(), 0);
    return;
  }
  SetNoDelay(o->fd);
  SetDeadPeerTimeout(o->fd, limits_.dead_peer_ms);
  o->state = Outbound::State::kConnecting;
  o->connect_deadline = now + limits_.connect_timeout;
}

void PeerTransport::Fail(Outbound* o, raft::Nanos now, const char* why,
                         int err) {
  if (!o->logged_down) {
    RAFTKV_INFO("peer %llu (%s) unreachable: %s%s%s",
                static_cast<unsigned long long>(o->id),
                o->addr.ToString().c_str(), why, err ? ": " : "",
                err ? std::strerror(err) : "");
    o->logged_down = true;
  }
  CloseFd(&o->fd);
  o->state = Outbound::State::kIdle;
  o->next_attempt = now + o->backoff;
  o->backoff = std::min(o->backoff * 2, limits_.max_backoff);
  o->buf.clear();
  o->off = 0;
}

void PeerTransport::WriteSome(Outbound* o, raft::Nanos now) {
  while (o->queued() > 0) {
    ssize_t n = ::send(o->fd, o->buf.data() + o->off, o->queued(),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      o->off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    Fail(o, now, "write failed", n < 0 ? errno : 0);
    return;
  }
  o->buf.clear();
  o->off = 0;
}

void PeerTransport::Flush(raft::Nanos now) {
  for (auto& [id, op] : out_) {
    Outbound* o = op.get();
    switch (o->state) {
      case Outbound::State::kIdle:
        if (now >= o->next_attempt) Connect(o, now);
        break;
      case Outbound::State::kConnecting:
        if (now >= o->connect_deadline) Fail(o, now, "connect timed out", 0);
        break;
      case Outbound::State::kConnected:
        WriteSome(o, now);
        break;
    }
  }
}

void PeerTransport::AppendPollFds(std::vector<pollfd>* fds) {
  poll_base_ = fds->size();
  poll_out_.clear();
  poll_in_.clear();
  fds->push_back(
      {listen_fd_, static_cast<short>(listen_fd_ >= 0 ? POLLIN : 0), 0});
  for (auto& [id, o] : out_) {
    if (o->fd < 0) continue;
    short ev = POLLIN;
    if (o->state == Outbound::State::kConnecting || o->queued() > 0)
      ev |= POLLOUT;
    fds->push_back({o->fd, ev, 0});
    poll_out_.push_back(o.get());
  }
  for (auto& in : in_) {
    fds->push_back({in->fd, POLLIN, 0});
    poll_in_.push_back(in.get());
  }
}

bool PeerTransport::ReadInbound(Inbound* in,
                                std::vector<std::string>* received) {
  char chunk[65536];
  for (int rounds = 0; rounds < 16; ++rounds) {
    ssize_t n = ::recv(in->fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      in->buf.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    return false;  // EOF or error
  }
  std::size_t pos = 0;
  while (in->buf.size() - pos >= 4) {
    const auto* p =
        reinterpret_cast<const unsigned char*>(in->buf.data() + pos);
    std::size_t len = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) |
                      (std::size_t{p[2]} << 8) | std::size_t{p[3]};
    if (len > limits_.max_frame_bytes) {
      RAFTKV_WARN("peer connection sent a %zu-byte frame; closing it", len);
      return false;
    }
    if (in->buf.size() - pos - 4 < len) break;
    received->emplace_back(in->buf, pos + 4, len);
    ++stats_.frames_received;
    pos += 4 + len;
  }
  in->buf.erase(0, pos);
  return true;
}

void PeerTransport::HandlePoll(const std::vector<pollfd>& fds, raft::Nanos now,
                               std::vector<std::string>* received) {
  std::size_t i = poll_base_;
  if (fds[i].revents & POLLIN) {
    for (int k = 0; k < 64; ++k) {
      int fd = AcceptTcp(listen_fd_);
      if (fd < 0) break;
      SetNoDelay(fd);
      SetDeadPeerTimeout(fd, limits_.dead_peer_ms);
      auto in = std::make_unique<Inbound>();
      in->fd = fd;
      in_.push_back(std::move(in));
    }
  }
  ++i;
  for (Outbound* o : poll_out_) {
    short re = fds[i++].revents;
    if (re == 0 || o->fd < 0) continue;
    if (o->state == Outbound::State::kConnecting) {
      if (re & (POLLOUT | POLLERR | POLLHUP)) {
        int err = ConnectResult(o->fd);
        if (err != 0) {
          Fail(o, now, "connect failed", err);
          continue;
        }
        o->state = Outbound::State::kConnected;
        o->backoff = limits_.min_backoff;
        ++stats_.connects;
        if (o->logged_down)
          RAFTKV_INFO("peer %llu (%s) connected",
                      static_cast<unsigned long long>(o->id),
                      o->addr.ToString().c_str());
        o->logged_down = false;
        WriteSome(o, now);
      }
      continue;
    }
    if (re & (POLLIN | POLLERR | POLLHUP)) {
      // Peers never write on our outbound connection: data is discarded,
      // EOF or an error means the connection is gone.
      char sink[512];
      ssize_t n = ::recv(o->fd, sink, sizeof sink, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                     errno != EINTR)) {
        Fail(o, now, "connection closed", n < 0 ? errno : 0);
        continue;
      }
    }
    if (re & POLLOUT) WriteSome(o, now);
  }
  for (Inbound* in : poll_in_) {
    short re = fds[i++].revents;
    if (re == 0) continue;
    if (!ReadInbound(in, received)) {
      CloseFd(&in->fd);
      in->closed = true;
    }
  }
  std::erase_if(in_,
                [](const std::unique_ptr<Inbound>& in) { return in->closed; });
  poll_out_.clear();
  poll_in_.clear();
}

bool PeerTransport::Connected(raft::NodeId to) const {
  auto it = out_.find(to);
  return it != out_.end() && it->second->state == Outbound::State::kConnected;
}

}  // namespace faultline::raftkv::server

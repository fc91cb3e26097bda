#include "targets/raftkv/server/client_port.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "targets/raftkv/server/net.h"

namespace faultline::raftkv::server {

struct ClientPort::Conn {
  std::uint64_t id = 0;
  int fd = -1;
  resp::Parser parser;
  // Unanswered and answered-but-not-yet-in-order replies; front() has
  // sequence number `front_seq`.
  struct Slot {
    bool done = false;
    std::string reply;
  };
  std::deque<Slot> slots;
  std::uint64_t front_seq = 0;
  std::uint64_t next_seq = 0;
  std::string out;  // ordered replies to write
  std::size_t out_off = 0;
  bool read_closed = false;       // EOF or protocol error: read no more
  std::uint64_t close_after = 0;  // close once front_seq passes this (QUIT)
  bool close_requested = false;
  bool dead = false;

  bool ShouldClose() const {
    bool all_out = out_off >= out.size();
    if (close_requested && front_seq > close_after && all_out) return true;
    return read_closed && slots.empty() && all_out;
  }
};

ClientPort::ClientPort() = default;
ClientPort::ClientPort(Limits limits) : limits_(limits) {}

ClientPort::~ClientPort() {
  CloseFd(&listen_fd_);
  for (auto& [id, c] : conns_) CloseFd(&c->fd);
}

std::string ClientPort::Listen(const HostPort& addr) {
  std::string err;
  listen_fd_ = ListenTcp(addr.host, addr.port, &err);
  return listen_fd_ < 0 ? "client port: " + err : "";
}

int ClientPort::BoundPort() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (listen_fd_ < 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return 0;
  if (ss.ss_family == AF_INET)
    return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
}

void ClientPort::AppendPollFds(std::vector<pollfd>* fds) {
  poll_base_ = fds->size();
  poll_conns_.clear();
  fds->push_back(
      {listen_fd_, static_cast<short>(listen_fd_ >= 0 ? POLLIN : 0), 0});
  for (auto& [id, c] : conns_) {
    short ev = 0;
    bool full = c->slots.size() >= limits_.max_pending ||
                c->out.size() - c->out_off >= limits_.max_output_bytes;
    if (!c->read_closed && !full) ev |= POLLIN;
    if (c->out_off < c->out.size()) ev |= POLLOUT;
    // A negative fd makes poll() skip it (no POLLHUP spin while a closed
    // connection waits for its answers).
    fds->push_back({ev != 0 ? c->fd : -1, ev, 0});
    poll_conns_.push_back(c.get());
  }
}

bool ClientPort::ReadConn(Conn* c, std::vector<ClientCommand>* out) {
  char buf[65536];
  ssize_t n = ::recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0) {
    c->read_closed = true;
  } else if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    return false;
  } else {
    c->parser.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  while (c->slots.size() < limits_.max_pending) {
    std::string error;
    auto cmd = c->parser.NextCommand(&error);
    if (!cmd) {
      if (!error.empty()) {
        // Answer in order, then close: the stream cannot be resynchronized.
        std::string reply;
        resp::AppendError(&reply, "ERR " + error);
        RequestRef ref{c->id, c->next_seq++};
        c->slots.push_back({});
        Reply(ref, std::move(reply));
        c->read_closed = true;
      }
      break;
    }
    if (cmd->empty()) continue;
    RequestRef ref{c->id, c->next_seq++};
    c->slots.push_back({});
    out->push_back({ref, std::move(*cmd)});
  }
  return true;
}

void ClientPort::WriteConn(Conn* c) {
  while (c->out_off < c->out.size()) {
    ssize_t n = ::send(c->fd, c->out.data() + c->out_off,
                       c->out.size() - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c->out_off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    c->dead = true;
    return;
  }
  if (c->out_off == c->out.size()) {
    c->out.clear();
    c->out_off = 0;
  } else if (c->out_off > (1 << 20)) {
    c->out.erase(0, c->out_off);
    c->out_off = 0;
  }
}

void ClientPort::HandlePoll(const std::vector<pollfd>& fds,
                            std::vector<ClientCommand>* out) {
  std::size_t i = poll_base_;
  if (fds[i].revents & POLLIN) {
    for (int k = 0; k < 64; ++k) {
      int fd = AcceptTcp(listen_fd_);
      if (fd < 0) break;
      SetNoDelay(fd);
      auto c = std::make_unique<Conn>();
      c->id = next_conn_++;
      c->fd = fd;
      conns_[c->id] = std::move(c);
    }
  }
  ++i;
  for (Conn* c : poll_conns_) {
    short re = fds[i++].revents;
    if (re == 0 || c->dead) continue;
    if (re & (POLLIN | POLLHUP | POLLERR)) {
      if (!ReadConn(c, out)) c->dead = true;
    }
    if (!c->dead && (re & POLLOUT)) WriteConn(c);
  }
  poll_conns_.clear();
  Flush();
}

void ClientPort::Reply(const RequestRef& ref, std::string reply) {
  auto it = conns_.find(ref.conn);
  if (it == conns_.end()) return;
  Conn* c = it->second.get();
  if (ref.seq < c->front_seq || ref.seq >= c->next_seq) return;
  Conn::Slot& s = c->slots[ref.seq - c->front_seq];
  if (s.done) return;
  s.done = true;
  s.reply = std::move(reply);
  while (!c->slots.empty() && c->slots.front().done) {
    c->out += c->slots.front().reply;
    c->slots.pop_front();
    ++c->front_seq;
  }
}

void ClientPort::CloseAfter(const RequestRef& ref) {
  auto it = conns_.find(ref.conn);
  if (it == conns_.end()) return;
  it->second->close_requested = true;
  it->second->close_after = ref.seq;
  it->second->read_closed = true;
}

void ClientPort::Flush() {
  for (auto it = conns_.begin(); it != conns_.end();) {
    Conn* c = it->second.get();
    if (!c->dead && c->out_off < c->out.size()) WriteConn(c);
    if (c->dead || c->ShouldClose()) {
      CloseFd(&c->fd);
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

void ClientPort::Shutdown() {
  Flush();
  for (auto& [id, c] : conns_) CloseFd(&c->fd);
  conns_.clear();
  CloseFd(&listen_fd_);
}

}  // namespace faultline::raftkv::server

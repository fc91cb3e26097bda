// The client (RESP2) port of the raftkv server: accepts connections, parses
// commands with resp::Parser, and writes replies back IN REQUEST ORDER per
// connection, whatever order the server answers them in (pipelining).
//
// Each parsed command gets a RequestRef; the server answers it exactly once
// with Reply() (now or later). Answers for a closed connection are dropped.
// A connection with too many unanswered commands or too much unsent output
// is not read until it drains (backpressure).
//
// Thread-safety: none; one owner (the loop).
#pragma once

#include <poll.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "targets/raftkv/resp/resp.h"
#include "targets/raftkv/server/flags.h"

namespace faultline::raftkv::server {

struct RequestRef {
  std::uint64_t conn = 0;  // 0: internal request, no client to answer
  std::uint64_t seq = 0;
};

struct ClientCommand {
  RequestRef ref;
  std::vector<std::string> args;  // args[0] is the command name
};

class ClientPort {
 public:
  struct Limits {
    std::size_t max_pending = 4096;           // unanswered per connection
    std::size_t max_output_bytes = 16 << 20;  // unsent per connection
  };

  ClientPort();
  explicit ClientPort(Limits limits);
  ~ClientPort();
  ClientPort(const ClientPort&) = delete;
  ClientPort& operator=(const ClientPort&) = delete;

  // Binds the client port. Returns "" or an error line.
  std::string Listen(const HostPort& addr);
  int BoundPort() const;

  void AppendPollFds(std::vector<pollfd>* fds);
  // After poll(): accepts, reads, appends complete commands to `out`.
  void HandlePoll(const std::vector<pollfd>& fds,
                  std::vector<ClientCommand>* out);

  // Answers `ref` with one encoded RESP reply. No-op for an unknown or
  // closed connection or an internal ref.
  void Reply(const RequestRef& ref, std::string reply);
  // Closes the connection once every reply up to `ref` is written (QUIT).
  void CloseAfter(const RequestRef& ref);
  // Writes buffered replies as far as the sockets accept them.
  void Flush();
  // Best-effort final flush, then closes every connection.
  void Shutdown();

  std::size_t connections() const { return conns_.size(); }

 private:
  struct Conn;
  bool ReadConn(Conn* c, std::vector<ClientCommand>* out);
  void WriteConn(Conn* c);

  Limits limits_;
  int listen_fd_ = -1;
  std::uint64_t next_conn_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Conn>> conns_;
  std::size_t poll_base_ = 0;
  std::vector<Conn*> poll_conns_;
};

}  // namespace faultline::raftkv::server

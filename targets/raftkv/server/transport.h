// Peer transport of the raftkv server: TCP between members, driven by the
// server's single poll loop, never blocking it.
//
// - One outbound connection per peer, opened with a non-blocking connect
//   (timeout, then retry with exponential backoff); writes are
//   non-blocking from a bounded per-peer queue: a frame that does not fit is
//   dropped (Raft tolerates loss) and counted. A failed connection drops its
//   queue.
// - Inbound connections are accepted on this node's peer port; they only
//   carry frames towards this node.
// - Framing: [u32 big-endian length][payload]; the payload is opaque here
//   (raft/codec.h EncodeMessage bytes). A frame longer than
//   Limits::max_frame_bytes closes the connection.
// - Dead peers (partitions) are detected by TCP keepalive and
//   TCP_USER_TIMEOUT (Limits::dead_peer_ms).
//
// Thread-safety: none; one owner (the loop).
#pragma once

#include <poll.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "targets/raftkv/raft/types.h"
#include "targets/raftkv/server/flags.h"

namespace faultline::raftkv::server {

class PeerTransport {
 public:
  struct Limits {
    std::size_t max_queue_bytes = 8 << 20;   // per peer
    std::size_t max_frame_bytes = 64 << 20;  // inbound
    raft::Nanos min_backoff = 20'000'000;
    raft::Nanos max_backoff = 200'000'000;
    raft::Nanos connect_timeout = 300'000'000;
    int dead_peer_ms = 2000;
  };
  struct Stats {
    std::uint64_t frames_sent = 0;  // queued for a connected/ing peer
    std::uint64_t frames_dropped = 0;
    std::uint64_t frames_received = 0;
    std::uint64_t connects = 0;  // outbound connections established
  };

  // `peers`: raft address of every other member (self may be included; it
  // is ignored).
  PeerTransport(raft::NodeId self,
                const std::map<raft::NodeId, HostPort>& peers, Limits limits);
  PeerTransport(raft::NodeId self,
                const std::map<raft::NodeId, HostPort>& peers);
  ~PeerTransport();
  PeerTransport(const PeerTransport&) = delete;
  PeerTransport& operator=(const PeerTransport&) = delete;

  // Binds the peer port. Returns "" or an error line.
  std::string Listen(const HostPort& addr);
  // The bound port (after Listen), e.g. when listening on port 0.
  int BoundPort() const;

  // Queues one frame for `to`. Returns false if dropped (unknown peer, queue
  // full). Call Flush() after a batch to start writing.
  bool Send(raft::NodeId to, std::string_view payload);
  // Writes queued frames as far as the sockets accept them, starts due
  // (re)connects and expires slow connects.
  void Flush(raft::Nanos now);

  // Poll integration: AppendPollFds adds this transport's fds to `fds`
  // (remembering where); HandlePoll, given the same vector after poll(),
  // handles their events and appends every complete inbound payload to
  // `received`.
  void AppendPollFds(std::vector<pollfd>* fds);
  void HandlePoll(const std::vector<pollfd>& fds, raft::Nanos now,
                  std::vector<std::string>* received);

  // True if the outbound connection to `to` is established.
  bool Connected(raft::NodeId to) const;
  const Stats& stats() const { return stats_; }

 private:
  struct Outbound;
  struct Inbound;
  void Connect(Outbound* o, raft::Nanos now);
  void Fail(Outbound* o, raft::Nanos now, const char* why, int err);
  void WriteSome(Outbound* o, raft::Nanos now);
  bool ReadInbound(Inbound* in, std::vector<std::string>* received);

  raft::NodeId self_;
  Limits limits_;
  int listen_fd_ = -1;
  std::map<raft::NodeId, std::unique_ptr<Outbound>> out_;
  std::vector<std::unique_ptr<Inbound>> in_;
  // Layout of the last AppendPollFds call.
  std::size_t poll_base_ = 0;
  std::vector<Outbound*> poll_out_;
  std::vector<Inbound*> poll_in_;
  Stats stats_;
};

}  // namespace faultline::raftkv::server

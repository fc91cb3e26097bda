#include "targets/raftkv/server/transport.h"

#include <poll.h>

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "targets/raftkv/server/server_impl.h"

namespace srv = faultline::raftkv::server;
namespace raft = faultline::raftkv::raft;

namespace {

// Drives the given transports' poll loop until `done` holds or 5 s pass.
bool PumpUntil(std::vector<srv::PeerTransport*> ts,
               std::vector<std::vector<std::string>*> inboxes,
               const std::function<bool()>& done) {
  raft::Nanos deadline = srv::MonotonicNow() + 5'000'000'000;
  while (!done()) {
    if (srv::MonotonicNow() > deadline) return false;
    std::vector<pollfd> fds;
    for (auto* t : ts) t->Flush(srv::MonotonicNow());
    for (auto* t : ts) t->AppendPollFds(&fds);
    ::poll(fds.data(), fds.size(), 5);
    for (std::size_t i = 0; i < ts.size(); ++i)
      ts[i]->HandlePoll(fds, srv::MonotonicNow(), inboxes[i]);
  }
  return true;
}

}  // namespace

TEST_CASE("transport: frames arrive in order, reconnects after a restart") {
  auto b = std::make_unique<srv::PeerTransport>(
      2, std::map<raft::NodeId, srv::HostPort>{{1, {"127.0.0.1", 1}}});
  REQUIRE(b->Listen({"127.0.0.1", 0}) == "");
  int port = b->BoundPort();
  REQUIRE(port > 0);
  srv::PeerTransport::Limits lim;
  lim.min_backoff = 1'000'000;
  lim.max_backoff = 20'000'000;
  srv::PeerTransport a(1, {{1, {"127.0.0.1", 1}}, {2, {"127.0.0.1", port}}},
                       lim);
  REQUIRE(a.Listen({"127.0.0.1", 0}) == "");

  std::vector<std::string> in_a, in_b;
  std::vector<std::string> sent;
  for (int i = 0; i < 100; ++i) {
    sent.push_back("msg-" + std::to_string(i) + std::string(i * 100, 'x'));
    REQUIRE(a.Send(2, sent.back()));
  }
  sent.push_back("");  // empty payloads are frames too
  REQUIRE(a.Send(2, ""));
  REQUIRE(PumpUntil({&a, b.get()}, {&in_a, &in_b},
                    [&] { return in_b.size() >= sent.size(); }));
  CHECK(in_b == sent);
  CHECK(in_a.empty());
  CHECK(a.Connected(2));
  CHECK_FALSE(a.Send(7, "to nobody"));  // unknown peer: dropped

  // Restart B on the same port: A notices, reconnects, delivers again.
  b.reset();
  b = std::make_unique<srv::PeerTransport>(
      2, std::map<raft::NodeId, srv::HostPort>{{1, {"127.0.0.1", 1}}});
  REQUIRE(b->Listen({"127.0.0.1", port}) == "");
  in_b.clear();
  REQUIRE(PumpUntil({&a, b.get()}, {&in_a, &in_b}, [&] {
    a.Send(2, "after-restart");
    return !in_b.empty();
  }));
  CHECK(in_b.back() == "after-restart");
  CHECK(a.stats().connects >= 2);
}

TEST_CASE("transport: a full queue drops frames instead of blocking") {
  srv::PeerTransport::Limits lim;
  lim.max_queue_bytes = 1000;
  // Port 1 on loopback: nothing listens, connects fail fast.
  srv::PeerTransport a(1, {{2, {"127.0.0.1", 1}}}, lim);
  int accepted = 0;
  for (int i = 0; i < 100; ++i) accepted += a.Send(2, std::string(96, 'y'));
  CHECK(accepted == 10);  // 10 frames of 4 + 96 bytes fit
  CHECK(a.stats().frames_dropped == 90);
  a.Flush(srv::MonotonicNow());  // must not block
  CHECK_FALSE(a.Connected(2));
}

TEST_CASE("transport: an oversized frame closes the inbound connection") {
  srv::PeerTransport::Limits small;
  small.max_frame_bytes = 10;
  srv::PeerTransport b(2, {{1, {"127.0.0.1", 1}}}, small);
  REQUIRE(b.Listen({"127.0.0.1", 0}) == "");
  srv::PeerTransport a(1, {{2, {"127.0.0.1", b.BoundPort()}}});
  std::vector<std::string> in_a, in_b;
  REQUIRE(a.Send(2, "ok"));
  REQUIRE(a.Send(2, std::string(100, 'z')));
  REQUIRE(PumpUntil({&a, &b}, {&in_a, &in_b}, [&] { return !in_b.empty(); }));
  CHECK(in_b == std::vector<std::string>{"ok"});
  // B closed the connection; A sees it as failed and reconnects later.
  REQUIRE(PumpUntil({&a, &b}, {&in_a, &in_b}, [&] { return !a.Connected(2); }));
}

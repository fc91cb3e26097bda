#include "targets/raftkv/server/client_port.h"

#include <poll.h>

#include <catch2/catch.hpp>
#include <memory>

#include "targets/raftkv/server/server_impl.h"
#include "targets/raftkv/server/test_client.h"

namespace srv = faultline::raftkv::server;
namespace raft = faultline::raftkv::raft;
namespace resp = faultline::raftkv::resp;
using srv::testing::TestClient;

namespace {

// Polls the port until `n` commands arrived (or 5 s passed).
std::vector<srv::ClientCommand> Collect(srv::ClientPort& port, std::size_t n,
                                        int timeout_ms = 5000) {
  std::vector<srv::ClientCommand> got;
  raft::Nanos end = srv::MonotonicNow() + raft::Nanos{timeout_ms} * 1'000'000;
  while (got.size() < n && srv::MonotonicNow() < end) {
    std::vector<pollfd> fds;
    port.AppendPollFds(&fds);
    ::poll(fds.data(), fds.size(), 5);
    port.HandlePoll(fds, &got);
  }
  return got;
}

std::string Simple(const std::string& s) {
  std::string out;
  resp::AppendSimple(&out, s);
  return out;
}

}  // namespace

TEST_CASE("client port: replies go out in request order") {
  srv::ClientPort port;
  REQUIRE(port.Listen({"127.0.0.1", 0}) == "");
  TestClient cl("127.0.0.1", port.BoundPort());
  REQUIRE(cl.ok());
  REQUIRE(cl.SendRaw(resp::EncodeCommand({"A"}) + "B x\r\n" +
                     resp::EncodeCommand({"C", "y z"})));
  std::vector<srv::ClientCommand> cmds = Collect(port, 3);
  REQUIRE(cmds.size() == 3);
  CHECK(cmds[0].args == std::vector<std::string>{"A"});
  CHECK(cmds[1].args == std::vector<std::string>{"B", "x"});
  CHECK(cmds[2].args == std::vector<std::string>{"C", "y z"});
  // Answer out of order: nothing may be written before the first answer.
  port.Reply(cmds[2].ref, Simple("third"));
  port.Reply(cmds[1].ref, Simple("second"));
  port.Flush();
  CHECK(TestClient::Str(cl.Read(100)) == "<none>");
  port.Reply(cmds[0].ref, Simple("first"));
  port.Reply(cmds[0].ref, Simple("again"));  // a second answer is ignored
  port.Flush();
  CHECK(TestClient::Str(cl.Read()) == "+first");
  CHECK(TestClient::Str(cl.Read()) == "+second");
  CHECK(TestClient::Str(cl.Read()) == "+third");
  CHECK(port.connections() == 1);
}

TEST_CASE(
    "client port: a protocol error is answered, then the connection closes") {
  srv::ClientPort port;
  REQUIRE(port.Listen({"127.0.0.1", 0}) == "");
  TestClient cl("127.0.0.1", port.BoundPort());
  REQUIRE(cl.SendRaw("*1\r\n$x\r\n"));
  std::vector<srv::ClientCommand> cmds = Collect(port, 1, 200);
  CHECK(cmds.empty());
  std::string r = TestClient::Str(cl.Read());
  CHECK(r.rfind("-ERR ", 0) == 0);
  CHECK(TestClient::Str(cl.Read()) == "<none>");  // closed
  CHECK(port.connections() == 0);
}

TEST_CASE(
    "client port: QUIT closes after the reply, closed clients are forgotten") {
  srv::ClientPort port;
  REQUIRE(port.Listen({"127.0.0.1", 0}) == "");
  auto gone = std::make_unique<TestClient>("127.0.0.1", port.BoundPort());
  REQUIRE(gone->Send({"GET", "k"}));
  std::vector<srv::ClientCommand> first = Collect(port, 1);
  REQUIRE(first.size() == 1);
  // The client disconnects before its answer: the connection lingers until
  // answered, then goes; the late answer goes nowhere.
  gone.reset();
  Collect(port, 1, 100);  // sees the EOF
  CHECK(port.connections() == 1);
  port.Reply(first[0].ref, Simple("late"));
  for (int i = 0; i < 100 && port.connections() > 0; ++i) {
    port.Flush();
    Collect(port, 1, 20);
  }
  CHECK(port.connections() == 0);
  TestClient cl("127.0.0.1", port.BoundPort());
  REQUIRE(cl.Send({"QUIT"}));
  std::vector<srv::ClientCommand> cmds = Collect(port, 1);
  REQUIRE(cmds.size() == 1);
  port.Reply(cmds[0].ref, Simple("OK"));
  port.CloseAfter(cmds[0].ref);
  port.Flush();
  CHECK(TestClient::Str(cl.Read()) == "+OK");
  CHECK(TestClient::Str(cl.Read()) == "<none>");
  CHECK(port.connections() == 0);
}

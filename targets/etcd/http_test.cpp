// HttpSession and EtcdClient against a scripted HTTP/1.1 server on
// 127.0.0.1: what a request's outcome says when the member dies (or drops
// the kept-alive connection) after the request was written to it.
#include "targets/etcd/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "targets/etcd/etcd_client.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using harness::Outcome;

constexpr const char* kReplyBody =
    R"({"header":{"cluster_id":"1","member_id":"2","revision":"5","raft_term":"2"}})";

// A listening socket on 127.0.0.1, an ephemeral port.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(fd, 4) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port = ntohs(addr.sin_port);
  }
  ~Listener() { Close(); }
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// Reads one whole request (headers and Content-Length body) from `fd`;
// false at EOF or error before it is complete.
bool ReadRequest(int fd, std::string* request) {
  std::string buf;
  char chunk[4096];
  for (;;) {
    auto end = buf.find("\r\n\r\n");
    if (end != std::string::npos) {
      std::size_t length = 0;
      auto cl = buf.find("Content-Length: ");
      if (cl != std::string::npos && cl < end) {
        length = std::stoul(buf.substr(cl + 16));
      }
      if (buf.size() >= end + 4 + length) {
        *request = buf.substr(0, end + 4 + length);
        return true;
      }
    }
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
}

// Writes `data` to `fd`, best effort (no SIGPIPE if the client is gone; no
// Catch2 assertion: this runs on the server's thread).
void Send(int fd, const std::string& data) {
  (void)!send(fd, data.data(), data.size(), MSG_NOSIGNAL);
}

void Reply(int fd, const std::string& body = kReplyBody) {
  Send(fd,
       "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
       "Content-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body);
}

// Runs `script` on a thread; joins it on destruction.
struct Server {
  Listener listener;
  std::atomic<int> requests{0};  // requests read in full, on any connection
  std::thread thread;
  explicit Server(std::function<void(Server&)> script)
      : thread([this, script] { script(*this); }) {}
  ~Server() {
    if (thread.joinable()) thread.join();
  }
  int Accept() { return accept(listener.fd, nullptr, nullptr); }
  // Reads one request from `fd`; counts it.
  bool Read(int fd) {
    std::string request;
    if (!ReadRequest(fd, &request)) return false;
    ++requests;
    return true;
  }
};

std::string Url(const Server& s) {
  return "http://127.0.0.1:" + std::to_string(s.listener.port) + "/v3/kv/put";
}

EtcdClientOptions OptionsFor(const Server& s) {
  EtcdClientOptions o;
  o.ip = "127.0.0.1";
  o.port = s.listener.port;
  o.op_timeout_ms = 2000;
  return o;
}

// The member answers one request on a kept-alive connection, reads the
// second one, and dies before answering it: its listener and the connection
// close, so a new connection is refused. (etcd killed just after it applied
// a put.)
void DiesAfterSecondRequest(Server& s) {
  int c = s.Accept();
  if (c < 0) return;
  if (s.Read(c)) Reply(c);
  s.Read(c);
  s.listener.Close();
  close(c);
}

TEST_CASE("a request read by a member that then dies is not 'refused'",
          "[etcd][http]") {
  Server s(DiesAfterSecondRequest);
  HttpSession http;
  HttpReply first = http.Post(Url(s), "{}", 2000);
  REQUIRE(first.transport == Transport::kOk);
  REQUIRE(first.status == 200);
  HttpReply second = http.Post(Url(s), R"({"key":"eA=="})", 2000);
  s.thread.join();
  CHECK(s.requests == 2);
  // It arrived: whatever the error, it must not claim nothing was sent.
  CHECK(second.transport != Transport::kOk);
  CHECK(second.transport != Transport::kRefused);
}

TEST_CASE("a write whose member dies after reading it is info, not fail",
          "[etcd][http]") {
  Server s(DiesAfterSecondRequest);
  EtcdClient client(OptionsFor(s));
  harness::Operation read{"read", Value::String("k1"), Value()};
  REQUIRE(client.Invoke(read).type == Outcome::kOk);
  harness::Operation write{"write", Value::String("k1"), Value::Int(76)};
  harness::Completion c = client.Invoke(write);
  s.thread.join();
  CHECK(s.requests == 2);
  CHECK(c.type == Outcome::kInfo);
  CHECK(c.error != "connection-refused");
}

TEST_CASE("a cas whose member dies after reading it is info, not fail",
          "[etcd][http]") {
  Server s(DiesAfterSecondRequest);
  EtcdClient client(OptionsFor(s));
  harness::Operation read{"read", Value::String("k1"), Value()};
  REQUIRE(client.Invoke(read).type == Outcome::kOk);
  harness::Operation cas{"cas", Value::String("k1"),
                         Value::MakeList({Value::Int(3), Value::Int(76)})};
  harness::Completion c = client.Invoke(cas);
  s.thread.join();
  CHECK(c.type == Outcome::kInfo);
}

TEST_CASE("a request is never sent twice on a fresh connection",
          "[etcd][http]") {
  // The member reads the second request and drops the connection without
  // answering, but still accepts new ones: libcurl's own retry of a reused
  // connection would send the put again (applying it twice, or failing a
  // cas that had succeeded).
  Server s([](Server& srv) {
    int c = srv.Accept();
    if (c < 0) return;
    if (srv.Read(c)) Reply(c);
    srv.Read(c);
    close(c);
    int again = srv.Accept();  // the client's next connection, if any
    if (again < 0) return;
    if (srv.Read(again)) Reply(again);
    close(again);
  });
  HttpSession http;
  REQUIRE(http.Post(Url(s), "{}", 2000).transport == Transport::kOk);
  HttpReply second = http.Post(Url(s), R"({"key":"eA=="})", 2000);
  const int seen = s.requests;
  // Let the server thread finish: a connection that sends nothing ends it.
  HttpSession other;
  (void)other.Post(Url(s), "{}", 2000);
  s.thread.join();
  CHECK(seen == 2);
  CHECK(second.transport != Transport::kOk);
  CHECK(second.transport != Transport::kRefused);
}

TEST_CASE(
    "a kept connection closed before the request, then refused, is "
    "'refused'",
    "[etcd][http]") {
  // The member answered, closed the idle connection and went away before
  // the next request: nothing of that request was sent.
  Server s([](Server& srv) {
    int c = srv.Accept();
    if (c < 0) return;
    if (srv.Read(c)) Reply(c);
    srv.listener.Close();
    close(c);
  });
  HttpSession http;
  REQUIRE(http.Post(Url(s), "{}", 2000).transport == Transport::kOk);
  s.thread.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  HttpReply second = http.Post(Url(s), R"({"key":"eA=="})", 2000);
  CHECK(s.requests == 1);
  CHECK(second.transport == Transport::kRefused);
}

TEST_CASE("a late answer is never read as the next request's answer",
          "[etcd][http]") {
  // The first request times out; its answer comes later on the same
  // connection. The next request must get its own answer.
  Server s([](Server& srv) {
    int c = srv.Accept();
    if (c < 0) return;
    srv.Read(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    std::string late = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n\"late\"";
    Send(c, late);
    int again = srv.Accept();
    if (again < 0) return;
    if (srv.Read(again)) Reply(again, "\"own\"");
    close(again);
    close(c);
  });
  HttpSession http;
  HttpReply first = http.Post(Url(s), "{}", 150);
  CHECK(first.transport == Transport::kTimeout);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  HttpReply second = http.Post(Url(s), "{}", 2000);
  s.thread.join();
  REQUIRE(second.transport == Transport::kOk);
  CHECK(second.body == "\"own\"");
}

TEST_CASE("no member at all is 'refused'", "[etcd][http]") {
  int port = 0;
  {
    Listener l;  // a port that was free a moment ago, closed again
    port = l.port;
  }
  HttpSession http;
  HttpReply r = http.Post(
      "http://127.0.0.1:" + std::to_string(port) + "/v3/kv/put", "{}", 2000);
  CHECK(r.transport == Transport::kRefused);
  EtcdClientOptions o;
  o.ip = "127.0.0.1";
  o.port = port;
  EtcdClient client(o);
  harness::Operation write{"write", Value::String("k1"), Value::Int(1)};
  harness::Completion c = client.Invoke(write);
  CHECK(c.type == Outcome::kFail);
  CHECK(c.error == "connection-refused");
}

}  // namespace
}  // namespace faultline::targets::etcd

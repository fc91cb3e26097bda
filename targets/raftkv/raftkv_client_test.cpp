// Unit tests for RaftkvClient's RESP exchange and outcome mapping, against
// scripted fake RESP servers on 127.0.0.1 (ephemeral ports).
#include "targets/raftkv/raftkv_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "targets/raftkv/resp/resp.h"
#include "targets/raftkv/resp_conn.h"

namespace {

using faultline::checkers::Value;
using faultline::harness::Completion;
using faultline::harness::Operation;
using faultline::harness::Outcome;
using faultline::targets::raftkv::ParseHostPort;
using faultline::targets::raftkv::ParseStatusFields;
using faultline::targets::raftkv::RaftkvClient;
using faultline::targets::raftkv::RaftkvClientOptions;
using faultline::targets::raftkv::StatusField;
namespace resp = faultline::raftkv::resp;

// What the fake server does with one command: bytes to send back, or
// kSilent (no reply, keep the connection), or kClose (close it).
const std::string kSilent = "<silent>";
const std::string kClose = "<close>";

class FakeServer {
 public:
  using Handler = std::function<std::string(const std::vector<std::string>&)>;

  explicit FakeServer(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr),
                   sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr),
                          &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  int port() const { return port_; }
  int closed() const { return closed_; }  // connections closed so far
  std::vector<std::vector<std::string>> commands() {
    std::lock_guard<std::mutex> lock(mu_);
    return commands_;
  }

 private:
  // Waits for fd to be readable, checking the stop flag every 10 ms.
  bool Readable(int fd) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) > 0) return true;
    }
    return false;
  }
  void Serve() {
    while (Readable(listen_fd_)) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      Handle(fd);
      ::close(fd);
      ++closed_;
    }
  }
  void Handle(int fd) {
    resp::Parser parser;
    char buf[4096];
    while (Readable(fd)) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      parser.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
      std::string error;
      while (auto cmd = parser.NextCommand(&error)) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          commands_.push_back(*cmd);
        }
        std::string out = handler_(*cmd);
        if (out == kClose) return;
        if (out.size() > kClose.size() && out.ends_with(kClose)) {
          out.resize(out.size() - kClose.size());  // reply, then close
          (void)::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
          return;
        }
        if (out == kSilent) continue;
        if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) return;
      }
      if (!error.empty()) return;
    }
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> closed_{0};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::vector<std::string>> commands_;
};

// A port on 127.0.0.1 with nothing listening (bound, then closed).
int DeadPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  (void)::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

RaftkvClient ClientFor(int port, long timeout_ms = 300) {
  RaftkvClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.op_timeout_ms = timeout_ms;
  return RaftkvClient(o);
}

Operation Read(const std::string& key) {
  return {"read", Value::String(key), Value()};
}
Operation Write(const std::string& key, int v) {
  return {"write", Value::String(key), Value::Int(v)};
}
Operation Cas(const std::string& key, int from, int to) {
  return {"cas", Value::String(key),
          Value::MakeList({Value::Int(from), Value::Int(to)})};
}

std::string Bulk(const std::string& s) {
  std::string out;
  resp::AppendBulk(&out, s);
  return out;
}

}  // namespace

TEST_CASE("raftkv client: reads map replies to outcomes", "[raftkv]") {
  FakeServer server([](const std::vector<std::string>& c) -> std::string {
    REQUIRE(c.size() == 2);
    REQUIRE(c[0] == "GET");
    if (c[1] == "r/a") return Bulk("42");
    if (c[1] == "r/absent") return "$-1\r\n";
    if (c[1] == "r/err") return "-ERR no such thing\r\n";
    if (c[1] == "r/timeout") return "-TIMEOUT outcome unknown\r\n";
    if (c[1] == "r/silent") return kSilent;
    if (c[1] == "r/close") return kClose;
    return ":7\r\n";  // not a reply GET has
  });
  RaftkvClient client = ClientFor(server.port());

  Completion ok = client.Invoke(Read("a"));
  CHECK(ok.type == Outcome::kOk);
  CHECK(ok.value == Value::Int(42));

  Completion absent = client.Invoke(Read("absent"));
  CHECK(absent.type == Outcome::kOk);
  CHECK(absent.value.is_null());

  Completion err = client.Invoke(Read("err"));
  CHECK(err.type == Outcome::kFail);
  CHECK(err.error == "ERR no such thing");

  Completion server_timeout = client.Invoke(Read("timeout"));
  CHECK(server_timeout.type == Outcome::kInfo);
  CHECK(server_timeout.error == "timeout");

  Completion silent = client.Invoke(Read("silent"));
  CHECK(silent.type == Outcome::kInfo);
  CHECK(silent.error == "timeout");

  // The timed-out connection was dropped: the next read gets its own reply.
  Completion again = client.Invoke(Read("a"));
  CHECK(again.type == Outcome::kOk);
  CHECK(again.value == Value::Int(42));

  Completion closed = client.Invoke(Read("close"));
  CHECK(closed.type == Outcome::kFail);

  Completion odd = client.Invoke(Read("odd"));
  CHECK(odd.type == Outcome::kFail);

  CHECK(client.Invoke(Read("a")).type == Outcome::kOk);
}

TEST_CASE("raftkv client: writes tell the truth about uncertainty",
          "[raftkv]") {
  FakeServer server([](const std::vector<std::string>& c) -> std::string {
    REQUIRE(c.size() == 3);
    REQUIRE(c[0] == "SET");
    const std::string& v = c[2];
    if (v == "1") return "+OK\r\n";
    if (v == "2") return "-NOLEADER term 7\r\n";
    if (v == "3") return "-LOCKED held by x\r\n";
    if (v == "4") return "-ERR wrong number of arguments\r\n";
    if (v == "5") return "-TIMEOUT outcome unknown\r\n";
    if (v == "6") return "-SHUTDOWN\r\n";
    if (v == "7") return kSilent;
    if (v == "8") return kClose;
    if (v == "9") return "-WEIRD something new\r\n";
    return ":1\r\n";  // not a reply SET has
  });
  RaftkvClient client = ClientFor(server.port());
  struct Case {
    int value;
    Outcome outcome;
    std::string error;
  };
  const std::vector<Case> cases = {
      {1, Outcome::kOk, ""},
      {2, Outcome::kFail, "NOLEADER term 7"},
      {3, Outcome::kFail, "LOCKED held by x"},
      {4, Outcome::kFail, "ERR wrong number of arguments"},
      {5, Outcome::kInfo, "timeout"},
      {6, Outcome::kInfo, "SHUTDOWN"},
      {7, Outcome::kInfo, "timeout"},
      {8, Outcome::kInfo, "connection closed: closed by peer"},
      {9, Outcome::kInfo, "WEIRD something new"},
      {10, Outcome::kInfo, "unexpected reply"},
  };
  for (const Case& c : cases) {
    INFO("value " << c.value);
    Completion done = client.Invoke(Write("k", c.value));
    CHECK(done.type == c.outcome);
    CHECK(done.error == c.error);
    CHECK(done.value == Value::Int(c.value));  // the argument, always
  }
  // What the server saw: the key and the value as decimal text.
  auto seen = server.commands();
  REQUIRE(seen.size() == cases.size());
  CHECK(seen[0] == std::vector<std::string>{"SET", "r/k", "1"});
}

TEST_CASE("raftkv client: nothing sent is a fail", "[raftkv]") {
  RaftkvClient client = ClientFor(DeadPort());
  Completion w = client.Invoke(Write("k", 1));
  CHECK(w.type == Outcome::kFail);
  CHECK(w.error.rfind("connect: ", 0) == 0);
  Completion c = client.Invoke(Cas("k", 1, 2));
  CHECK(c.type == Outcome::kFail);
  Completion r = client.Invoke(Read("k"));
  CHECK(r.type == Outcome::kFail);
  // Unsupported shapes are refused before sending.
  Completion bad_key =
      client.Invoke({"write", Value::MakeList({}), Value::Int(1)});
  CHECK(bad_key.type == Outcome::kFail);
  Completion bad_f = client.Invoke({"frob", Value::String("k"), Value()});
  CHECK(bad_f.type == Outcome::kFail);
}

TEST_CASE("raftkv client: cas", "[raftkv]") {
  FakeServer server([](const std::vector<std::string>& c) -> std::string {
    REQUIRE(c.size() == 4);
    REQUIRE(c[0] == "CAS");
    return c[2] == "1" ? ":1\r\n" : ":0\r\n";
  });
  RaftkvClient client = ClientFor(server.port());
  Completion swapped = client.Invoke(Cas("k", 1, 2));
  CHECK(swapped.type == Outcome::kOk);
  Completion mismatch = client.Invoke(Cas("k", 5, 6));
  CHECK(mismatch.type == Outcome::kFail);
  CHECK(mismatch.error == "mismatch");
  // raftkv's CAS never matches an absent key: a cas from null is refused
  // without sending anything.
  Completion from_null = client.Invoke(
      {"cas", Value::String("k"), Value::MakeList({Value(), Value::Int(3)})});
  CHECK(from_null.type == Outcome::kFail);
  auto seen = server.commands();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::vector<std::string>{"CAS", "r/k", "1", "2"});
}

TEST_CASE("raftkv client: one NOTLEADER redirect, writes only", "[raftkv]") {
  FakeServer leader([](const std::vector<std::string>& c) -> std::string {
    if (c[0] == "CAS") return ":1\r\n";
    return "+OK\r\n";
  });
  const std::string redirect =
      "-NOTLEADER 2 127.0.0.1:" + std::to_string(leader.port()) + "\r\n";
  FakeServer follower([&](const std::vector<std::string>& c) -> std::string {
    if (c[0] == "GET") return Bulk("9");
    return redirect;
  });
  RaftkvClient client = ClientFor(follower.port());
  CHECK(client.Invoke(Write("k", 1)).type == Outcome::kOk);
  CHECK(client.Invoke(Cas("k", 1, 2)).type == Outcome::kOk);
  CHECK(client.Invoke(Write("k", 3)).type == Outcome::kOk);
  Completion read = client.Invoke(Read("k"));
  CHECK(read.type == Outcome::kOk);
  CHECK(read.value == Value::Int(9));
  CHECK(follower.commands().size() == 4);
  auto at_leader = leader.commands();
  REQUIRE(at_leader.size() == 3);  // no GET went to the leader
  CHECK(at_leader[1][0] == "CAS");

  // A leader that redirects again: fail (the second NOTLEADER is final).
  std::string bounce;
  FakeServer a([&](const std::vector<std::string>&) { return bounce; });
  FakeServer b([&](const std::vector<std::string>&) {
    return "-NOTLEADER 1 127.0.0.1:" + std::to_string(a.port()) + "\r\n";
  });
  bounce = "-NOTLEADER 2 127.0.0.1:" + std::to_string(b.port()) + "\r\n";
  RaftkvClient pingpong = ClientFor(a.port());
  Completion twice = pingpong.Invoke(Write("k", 4));
  CHECK(twice.type == Outcome::kFail);
  CHECK(twice.error.rfind("NOTLEADER 1 ", 0) == 0);
  CHECK(a.commands().size() == 1);
  CHECK(b.commands().size() == 1);

  // A redirect to a leader that is down: nothing reached it, fail.
  const std::string dead =
      "-NOTLEADER 3 127.0.0.1:" + std::to_string(DeadPort()) + "\r\n";
  FakeServer lost([&](const std::vector<std::string>&) { return dead; });
  RaftkvClient to_dead = ClientFor(lost.port());
  CHECK(to_dead.Invoke(Write("k", 5)).type == Outcome::kFail);
  // A redirect without an address: fail.
  FakeServer unnamed([](const std::vector<std::string>&) {
    return std::string("-NOTLEADER 0\r\n");
  });
  RaftkvClient to_none = ClientFor(unnamed.port());
  CHECK(to_none.Invoke(Write("k", 6)).type == Outcome::kFail);
}

TEST_CASE("raftkv helpers: addresses and STATUS", "[raftkv]") {
  auto hp = ParseHostPort("10.77.4.1:6379");
  REQUIRE(hp);
  CHECK(hp->host == "10.77.4.1");
  CHECK(hp->port == 6379);
  CHECK_FALSE(ParseHostPort("10.77.4.1"));
  CHECK_FALSE(ParseHostPort(":6379"));
  CHECK_FALSE(ParseHostPort("h:0"));
  CHECK_FALSE(ParseHostPort("h:65536"));
  CHECK_FALSE(ParseHostPort("h:12x"));

  auto f = ParseStatusFields(
      "id:3\r\nrole:leader\nterm:12\nleader:3\n"
      "leader_addr:10.0.0.3:6379\n# comment\nbogus\n");
  CHECK(StatusField(f, "role") == "leader");
  CHECK(StatusField(f, "term") == "12");
  CHECK(StatusField(f, "leader_addr") == "10.0.0.3:6379");
  CHECK(StatusField(f, "missing").empty());
  CHECK(f.size() == 5);

  CHECK(RaftkvClient::KeyFor(Value::Int(3)) == "r/3");
  CHECK(RaftkvClient::KeyFor(Value::String("x")) == "r/x");
  CHECK(RaftkvClient::KeyFor(Value()) == "r/_");
  CHECK(RaftkvClient::KeyFor(Value::Bool(true)).empty());
}

TEST_CASE(
    "raftkv client: a connection closed while idle is replaced "
    "before sending",
    "[raftkv]") {
  // Every reply is followed by closing the connection, like a node that was
  // killed and restarted between two operations.
  FakeServer server([](const std::vector<std::string>&) -> std::string {
    return "+OK\r\n" + kClose;
  });
  RaftkvClient client = ClientFor(server.port());
  for (int v = 1; v <= 3; ++v) {
    INFO("write " << v);
    REQUIRE(client.Invoke(Write("k", v)).type == Outcome::kOk);
    // Wait until the server has closed that connection.
    while (server.closed() < v) std::this_thread::yield();
  }
  // Each write found its old connection closed and used a new one: no
  // write was sent into a dead connection (which would have been info).
  CHECK(server.commands().size() == 3);
}

TEST_CASE("raftkv client: acquire, renew, release map to LOCK/RENEW/UNLOCK",
          "[raftkv]") {
  std::atomic<int> token{41};
  FakeServer server([&](const std::vector<std::string>& cmd) -> std::string {
    if (cmd[0] == "LOCK") {
      if (cmd[1] == "busy") return "-LOCKED held by someone\r\n";
      return ":" + std::to_string(++token) + "\r\n";
    }
    if (cmd[0] == "RENEW") {
      return cmd[3] == "42" ? "+OK\r\n" : "-NOTOWNER lease expired\r\n";
    }
    if (cmd[0] == "UNLOCK") {
      return cmd[3] == "42" ? "+OK\r\n" : "-NOTOWNER not the holder\r\n";
    }
    return "-ERR unknown\r\n";
  });
  RaftkvClient c = ClientFor(server.port());

  Completion a = c.Invoke({"acquire", Value::String("L"), Value::Int(700)});
  REQUIRE(a.type == Outcome::kOk);
  CHECK(a.value == Value::Int(42));
  CHECK(c.Invoke({"renew", Value::String("L"), Value::Int(42)}).type ==
        Outcome::kOk);
  Completion r = c.Invoke({"release", Value::String("L"), Value::Int(42)});
  CHECK(r.type == Outcome::kOk);

  // A second acquire is a fresh owner and gets a fresh token.
  Completion b = c.Invoke({"acquire", Value::String("L"), Value::Int(700)});
  REQUIRE(b.type == Outcome::kOk);
  CHECK(b.value == Value::Int(43));
  Completion lost = c.Invoke({"renew", Value::String("L"), Value::Int(43)});
  CHECK(lost.type == Outcome::kFail);
  CHECK(lost.error.rfind("not-held", 0) == 0);
  Completion gone = c.Invoke({"release", Value::String("L"), Value::Int(43)});
  CHECK(gone.type == Outcome::kFail);

  Completion busy = c.Invoke({"acquire", Value::String("busy"), Value()});
  CHECK(busy.type == Outcome::kFail);
  CHECK(busy.error.rfind("LOCKED", 0) == 0);
  // Release of a lock this client never acquired: nothing is sent.
  Completion never = c.Invoke({"release", Value::String("x"), Value::Int(1)});
  CHECK(never.type == Outcome::kFail);

  auto cmds = server.commands();
  REQUIRE(cmds.size() == 7);
  CHECK(cmds[0][0] == "LOCK");
  CHECK(cmds[0][1] == "L");
  CHECK(cmds[0][3] == "700");
  CHECK(cmds[1] ==
        std::vector<std::string>{"RENEW", "L", cmds[0][2], "42", "700"});
  CHECK(cmds[2] == std::vector<std::string>{"UNLOCK", "L", cmds[0][2], "42"});
  CHECK(cmds[3][2] != cmds[0][2]);  // a fresh owner per acquisition
  CHECK(cmds[4][2] == cmds[3][2]);
  CHECK(cmds[6][0] == "LOCK");
  CHECK(cmds[6][3] == "1000");  // the default TTL when the op gives none
}

TEST_CASE("raftkv client: an unanswered LOCK is info", "[raftkv]") {
  FakeServer server([](const std::vector<std::string>&) { return kSilent; });
  RaftkvClient c = ClientFor(server.port(), 200);
  Completion a = c.Invoke({"acquire", Value::String("L"), Value::Int(500)});
  CHECK(a.type == Outcome::kInfo);
  CHECK(a.error == "timeout");
}

namespace {

Value Micro(const char* f, Value k, Value v) {
  return Value::MakeList({Value::String(f), std::move(k), std::move(v)});
}

resp::Value RespBulk(const std::string& s) {
  resp::Value v;
  v.kind = resp::Value::Kind::kBulk;
  v.str = s;
  return v;
}
resp::Value RespOk() {
  resp::Value v;
  v.kind = resp::Value::Kind::kSimple;
  v.str = "OK";
  return v;
}
resp::Value RespArray(std::vector<resp::Value> items) {
  resp::Value v;
  v.kind = resp::Value::Kind::kArray;
  v.array = std::move(items);
  return v;
}

}  // namespace

TEST_CASE("raftkv client: txn values to TXN and back", "[raftkv][txn]") {
  // Elements: canonical decimal integers come back as integers.
  CHECK(RaftkvClient::DecodeElement("12") == Value::Int(12));
  CHECK(RaftkvClient::DecodeElement("-3") == Value::Int(-3));
  CHECK(RaftkvClient::DecodeElement("0") == Value::Int(0));
  CHECK(RaftkvClient::DecodeElement("012") == Value::String("012"));
  CHECK(RaftkvClient::DecodeElement("+1") == Value::String("+1"));
  CHECK(RaftkvClient::DecodeElement("1x") == Value::String("1x"));
  CHECK(RaftkvClient::DecodeElement("") == Value::String(""));
  CHECK(RaftkvClient::DecodeElement("99999999999999999999") ==
        Value::String("99999999999999999999"));

  const Value txn = Value::MakeList({
      Micro("append", Value::Int(1), Value::Int(5)),
      Micro("r", Value::Int(1), Value()),
      Micro("w", Value::String("k"), Value::String("s")),
      Micro("r", Value::Int(2), Value()),
      Micro("r", Value::String("k"), Value()),
  });
  std::string error;
  auto cmd = RaftkvClient::TxnCommand(txn, &error);
  REQUIRE(cmd);
  CHECK(*cmd == std::vector<std::string>{"TXN", "APPEND", "t/1", "5", "R",
                                         "t/1", "-", "W", "t/k", "s", "R",
                                         "t/2", "-", "R", "t/k", "-"});

  resp::Value null_reply;  // kNull
  const resp::Value reply = RespArray(
      {RespOk(), RespArray({RespBulk("3"), RespBulk("5"), RespBulk("x")}),
       RespOk(), null_reply, RespBulk("s")});
  auto lists = RaftkvClient::TxnResult(txn, reply, /*list_reads=*/true);
  REQUIRE(lists);
  CHECK(*lists ==
        Value::MakeList({
            txn.as_list()[0],
            Micro("r", Value::Int(1),
                  Value::MakeList(
                      {Value::Int(3), Value::Int(5), Value::String("x")})),
            txn.as_list()[2],
            Micro("r", Value::Int(2), Value::MakeList({})),  // absent: []
            Micro("r", Value::String("k"), Value::String("s")),
        }));
  auto regs = RaftkvClient::TxnResult(txn, reply, /*list_reads=*/false);
  REQUIRE(regs);
  CHECK(regs->as_list()[3] == Micro("r", Value::Int(2), Value()));  // null

  // Replies that do not fit the transaction.
  CHECK_FALSE(RaftkvClient::TxnResult(txn, RespArray({RespOk()}), true));
  CHECK_FALSE(RaftkvClient::TxnResult(
      txn,
      RespArray({RespBulk("1"), null_reply, RespOk(), null_reply, null_reply}),
      true));
  CHECK_FALSE(RaftkvClient::TxnResult(txn, RespOk(), true));

  // Malformed transactions are refused before sending.
  for (const Value& bad : {
           Value::MakeList({}),
           Value::Int(3),
           Value::MakeList({Value::MakeList({Value::String("r")})}),
           Value::MakeList({Micro("x", Value::Int(1), Value::Int(1))}),
           Value::MakeList({Micro("w", Value::MakeList({}), Value::Int(1))}),
           Value::MakeList({Micro("append", Value::Int(1), Value())}),
       }) {
    INFO(bad.ToJson());
    CHECK_FALSE(RaftkvClient::TxnCommand(bad, &error));
  }
}

TEST_CASE("raftkv client: txn outcomes and redirect", "[raftkv][txn]") {
  FakeServer leader([](const std::vector<std::string>& c) -> std::string {
    REQUIRE(c[0] == "TXN");
    if (c[2] == "t/wrongtype") return "-WRONGTYPE APPEND to a string\r\n";
    if (c[2] == "t/timeout") return "-TIMEOUT outcome unknown\r\n";
    if (c[2] == "t/partial") return "-PARTIAL some applied\r\n";
    if (c[2] == "t/silent") return kSilent;
    if (c[2] == "t/odd") return "+OK\r\n";
    // [r k] -> the list [1, 2]; anything else +OK per micro-op.
    std::string out = "*" + std::to_string((c.size() - 1) / 3) + "\r\n";
    for (std::size_t i = 1; i + 2 < c.size(); i += 3)
      out += c[i] == "R" ? "*2\r\n$1\r\n1\r\n$1\r\n2\r\n" : "+OK\r\n";
    return out;
  });
  const std::string redirect =
      "-NOTLEADER 2 127.0.0.1:" + std::to_string(leader.port()) + "\r\n";
  FakeServer follower(
      [&](const std::vector<std::string>&) { return redirect; });
  RaftkvClient c = ClientFor(follower.port());
  auto txn = [](const char* key) {
    return Operation{"txn", Value(),
                     Value::MakeList({
                         Micro("append", Value::String(key), Value::Int(3)),
                         Micro("r", Value::String(key), Value()),
                     })};
  };
  Completion ok = c.Invoke(txn("k"));
  REQUIRE(ok.type == Outcome::kOk);
  CHECK(ok.value.as_list()[1] ==
        Micro("r", Value::String("k"),
              Value::MakeList({Value::Int(1), Value::Int(2)})));
  CHECK(leader.commands()[0] ==
        std::vector<std::string>{"TXN", "APPEND", "t/k", "3", "R", "t/k", "-"});

  Completion wrong = c.Invoke(txn("wrongtype"));
  CHECK(wrong.type == Outcome::kFail);
  CHECK(wrong.value == txn("wrongtype").value);
  CHECK(c.Invoke(txn("timeout")).type == Outcome::kInfo);
  CHECK(c.Invoke(txn("partial")).type == Outcome::kInfo);
  Completion silent = c.Invoke(txn("silent"));
  CHECK(silent.type == Outcome::kInfo);
  CHECK(silent.error == "timeout");
  CHECK(c.Invoke(txn("odd")).type == Outcome::kInfo);  // unexpected reply

  // Nothing sent (no server): fail. Malformed: fail, nothing sent.
  RaftkvClient dead = ClientFor(DeadPort());
  CHECK(dead.Invoke(txn("k")).type == Outcome::kFail);
  std::size_t before = follower.commands().size();
  CHECK(c.Invoke({"txn", Value(), Value::MakeList({})}).type == Outcome::kFail);
  CHECK(follower.commands().size() == before);
}

namespace {

RaftkvClient CollectionClient(int port, const std::string& workload) {
  RaftkvClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.op_timeout_ms = 300;
  o.workload = workload;
  o.accounts = 3;
  o.total = 10;
  return RaftkvClient(o);
}

Operation Transfer(int from, int to, int amount) {
  return {"transfer", Value(),
          Value::MakeObject({{"from", Value::Int(from)},
                             {"to", Value::Int(to)},
                             {"amount", Value::Int(amount)}})};
}

}  // namespace

TEST_CASE("raftkv client: set adds and reads through TXN", "[raftkv][set]") {
  std::vector<std::string> set;
  FakeServer server([&](const std::vector<std::string>& c) -> std::string {
    REQUIRE(c.size() == 4);
    REQUIRE(c[0] == "TXN");
    REQUIRE(c[2] == "c/set");
    if (c[1] == "APPEND") {
      if (c[3] == "99") return "-TIMEOUT outcome unknown\r\n";
      set.push_back(c[3]);
      return "*1\r\n+OK\r\n";
    }
    if (set.empty()) return "*1\r\n$-1\r\n";
    std::string out = "*1\r\n*" + std::to_string(set.size()) + "\r\n";
    for (const std::string& e : set) out += Bulk(e);
    return out;
  });
  RaftkvClient c = CollectionClient(server.port(), "set");
  Completion empty = c.Invoke({"read", Value(), Value()});
  CHECK(empty.type == Outcome::kOk);
  CHECK(empty.value == Value::MakeList({}));
  CHECK(c.Invoke({"add", Value(), Value::Int(4)}).type == Outcome::kOk);
  CHECK(c.Invoke({"add", Value(), Value::Int(7)}).type == Outcome::kOk);
  CHECK(c.Invoke({"add", Value(), Value::Int(99)}).type == Outcome::kInfo);
  Completion read = c.Invoke({"read", Value(), Value()});
  CHECK(read.type == Outcome::kOk);
  CHECK(read.value == Value::MakeList({Value::Int(4), Value::Int(7)}));
  CHECK(c.Invoke({"add", Value(), Value::MakeList({})}).type == Outcome::kFail);
  CHECK(c.Invoke({"cas", Value(), Value()}).type == Outcome::kFail);
}

TEST_CASE("raftkv client: counter adds with INCRBY, reads through TXN",
          "[raftkv][counter]") {
  long counter = 0;
  bool exists = false;
  FakeServer server([&](const std::vector<std::string>& c) -> std::string {
    if (c[0] == "INCRBY") {
      REQUIRE(c.size() == 3);
      REQUIRE(c[1] == "c/counter");
      counter += std::stol(c[2]);
      exists = true;
      return ":" + std::to_string(counter) + "\r\n";
    }
    REQUIRE(c == std::vector<std::string>{"TXN", "R", "c/counter", "-"});
    return exists ? "*1\r\n" + Bulk(std::to_string(counter)) : "*1\r\n$-1\r\n";
  });
  RaftkvClient c = CollectionClient(server.port(), "counter");
  Completion zero = c.Invoke({"read", Value(), Value()});
  CHECK(zero.type == Outcome::kOk);
  CHECK(zero.value == Value::Int(0));
  Completion add = c.Invoke({"add", Value(), Value::Int(3)});
  CHECK(add.type == Outcome::kOk);
  CHECK(add.value == Value::Int(3));
  c.Invoke({"add", Value(), Value::Int(2)});
  CHECK(c.Invoke({"read", Value(), Value()}).value == Value::Int(5));
}

TEST_CASE("raftkv client: bank initialises once, transfers, reads",
          "[raftkv][bank]") {
  std::map<std::string, long> accounts;
  int inits = 0;
  bool fail_init = true;
  FakeServer server([&](const std::vector<std::string>& c) -> std::string {
    if (c[0] == "MSETNX") {
      ++inits;
      if (fail_init) {
        fail_init = false;
        return "-NOLEADER term 3\r\n";
      }
      if (!accounts.empty()) return ":0\r\n";
      for (std::size_t i = 1; i + 1 < c.size(); i += 2)
        accounts[c[i]] = std::stol(c[i + 1]);
      return ":1\r\n";
    }
    if (c[0] == "XFER") {
      REQUIRE(c.size() == 4);
      long amount = std::stol(c[3]);
      if (accounts.at(c[1]) < amount) return ":0\r\n";
      accounts[c[1]] -= amount;
      accounts[c[2]] += amount;
      return ":1\r\n";
    }
    REQUIRE(c[0] == "TXN");
    std::string out = "*" + std::to_string((c.size() - 1) / 3) + "\r\n";
    for (std::size_t i = 2; i < c.size(); i += 3)
      out += Bulk(std::to_string(accounts.at(c[i])));
    return out;
  });
  {
    RaftkvClient c = CollectionClient(server.port(), "bank");
    // The first init fails without effect: so does the op, unsent.
    Completion first = c.Invoke(Transfer(0, 1, 1));
    CHECK(first.type == Outcome::kFail);
    CHECK(first.error.rfind("bank init: ", 0) == 0);
    CHECK(accounts.empty());
    Completion read = c.Invoke({"read", Value(), Value()});
    REQUIRE(read.type == Outcome::kOk);
    // 10 over 3 accounts: 3 each, the remainder on account 0.
    CHECK(read.value == Value::MakeObject({{"0", Value::Int(4)},
                                           {"1", Value::Int(3)},
                                           {"2", Value::Int(3)}}));
    CHECK(server.commands()[1] == std::vector<std::string>{"MSETNX", "b/0", "4",
                                                           "b/1", "3", "b/2",
                                                           "3"});
    CHECK(c.Invoke(Transfer(0, 2, 4)).type == Outcome::kOk);
    Completion broke = c.Invoke(Transfer(0, 1, 1));
    CHECK(broke.type == Outcome::kFail);
    CHECK(broke.error == "insufficient funds");
    CHECK(inits == 2);  // no init after the first reply
    CHECK(c.Invoke({"transfer", Value(), Value::Int(1)}).type ==
          Outcome::kFail);
  }  // closes c's connection: the fake server serves one at a time
  // Another client's init is a no-op that still counts as done.
  RaftkvClient other = CollectionClient(server.port(), "bank");
  Completion again = other.Invoke({"read", Value(), Value()});
  INFO(again.error);
  REQUIRE(again.type == Outcome::kOk);
  CHECK(again.value == Value::MakeObject({{"0", Value::Int(0)},
                                          {"1", Value::Int(3)},
                                          {"2", Value::Int(7)}}));
  CHECK(inits == 3);
}

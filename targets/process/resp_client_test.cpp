// Tests of the process target's resp client: template expansion and the
// reply -> outcome table (no server), then the default commands against a
// real redis-server (and redis-sentinel) started here on 127.0.0.1, on free
// ports. Needs the Debian package redis-server (redis-server,
// redis-sentinel).
#include "targets/process/resp_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "targets/raftkv/resp_conn.h"

namespace {

using faultline::checkers::Value;
using faultline::harness::Completion;
using faultline::harness::Operation;
using faultline::harness::Outcome;
using faultline::targets::process::DefaultRespCommands;
using faultline::targets::process::ExpandRespCommand;
using faultline::targets::process::MakeRespClient;
using faultline::targets::process::RespClientOptions;
using faultline::targets::process::RespKeyText;
using faultline::targets::process::RespNoEffect;
using faultline::targets::process::RespOutcome;
using faultline::targets::process::RespPlaceholders;
using faultline::targets::raftkv::CallError;
using faultline::targets::raftkv::CallResult;
using faultline::targets::raftkv::RespConn;
namespace resp = faultline::raftkv::resp;
using Kind = resp::Value::Kind;
using Clock = std::chrono::steady_clock;

CallResult Reply(Kind kind, std::string str = "", std::int64_t n = 0) {
  CallResult r;
  r.sent = true;
  r.reply.kind = kind;
  r.reply.str = std::move(str);
  r.reply.integer = n;
  return r;
}

CallResult Failed(CallError e, bool sent) {
  CallResult r;
  r.error = e;
  r.sent = sent;
  r.detail = "detail";
  return r;
}

Operation Op(std::string f, Value key, Value value = Value::Null()) {
  Operation op;
  op.f = std::move(f);
  op.key = std::move(key);
  op.value = std::move(value);
  return op;
}

Value Pair(Value a, Value b) { return Value::MakeList({a, b}); }

}  // namespace

TEST_CASE("resp templates: placeholders, escapes, other braces",
          "[process][resp]") {
  const std::map<std::string, std::string> values = {
      {"key", "k1"}, {"value", "\"v\""}, {"owner", "o-1"}};
  auto argv = ExpandRespCommand(
      {"SET", "r/{key}", "{value}", "{{key}}", "{ip}", "t={token}", "{"},
      values);
  CHECK(argv == std::vector<std::string>{"SET", "r/k1", "\"v\"", "{key}",
                                         "{ip}", "t=", "{"});
  // Lua table braces survive, escaped or not.
  CHECK(ExpandRespCommand({"return {{1}}", "return {1}"}, {}) ==
        std::vector<std::string>{"return {1}", "return {1}"});
  CHECK(RespPlaceholders().size() == 7);
  CHECK(RespKeyText(Value::Null()) == "_");
  CHECK(RespKeyText(Value::Int(7)) == "7");
  CHECK(RespKeyText(Value::String("a")) == "a");
  CHECK(RespKeyText(Value::MakeList({})).empty());
}

TEST_CASE("resp defaults cover register and lock", "[process][resp]") {
  auto reg = DefaultRespCommands("register");
  CHECK(reg.size() == 3);
  CHECK(reg.at("read") == std::vector<std::string>{"GET", "r/{key}"});
  CHECK(reg.count("cas") == 1);
  auto lock = DefaultRespCommands("lock");
  CHECK(lock.size() == 3);
  CHECK(lock.at("acquire")[0] == "EVAL");
  CHECK(DefaultRespCommands("election").empty());
}

TEST_CASE("resp outcomes: reads", "[process][resp]") {
  const Value arg = Value::Null();
  auto c = RespOutcome("read", Reply(Kind::kBulk, "5"), arg);
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value == Value::Int(5));
  c = RespOutcome("read", Reply(Kind::kBulk, "\"x\""), arg);
  CHECK(c.value == Value::String("x"));
  c = RespOutcome("read", Reply(Kind::kBulk, "not json"), arg);
  CHECK(c.value == Value::String("not json"));
  c = RespOutcome("read", Reply(Kind::kNull), arg);
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value.is_null());
  CHECK(RespOutcome("read", Reply(Kind::kError, "READONLY x"), arg).type ==
        Outcome::kFail);
  CHECK(RespOutcome("read", Reply(Kind::kError, "WEIRD x"), arg).type ==
        Outcome::kFail);
  CHECK(RespOutcome("read", Failed(CallError::kClosed, true), arg).type ==
        Outcome::kFail);
  c = RespOutcome("read", Failed(CallError::kTimeout, true), arg);
  CHECK(c.type == Outcome::kInfo);
  CHECK(c.error == "timeout");
}

TEST_CASE("resp outcomes: updates", "[process][resp]") {
  const Value v = Value::Int(3);
  CHECK(RespOutcome("write", Reply(Kind::kSimple, "OK"), v).type ==
        Outcome::kOk);
  CHECK(RespOutcome("write", Reply(Kind::kInteger, "", 1), v).type ==
        Outcome::kOk);
  CHECK(RespOutcome("write", Reply(Kind::kBulk, "x"), v).type ==
        Outcome::kInfo);
  CHECK(RespOutcome("write", Reply(Kind::kError, "READONLY no"), v).type ==
        Outcome::kFail);
  CHECK(RespOutcome("write", Reply(Kind::kError, "NOTLEADER 2 a:1"), v).type ==
        Outcome::kFail);
  CHECK(RespOutcome("write", Reply(Kind::kError, "TIMEOUT x"), v).type ==
        Outcome::kInfo);
  CHECK(RespOutcome("write", Failed(CallError::kConnect, false), v).type ==
        Outcome::kFail);
  CHECK(RespOutcome("write", Failed(CallError::kIo, false), v).type ==
        Outcome::kFail);
  CHECK(RespOutcome("write", Failed(CallError::kClosed, true), v).type ==
        Outcome::kInfo);
  auto t = RespOutcome("write", Failed(CallError::kTimeout, true), v);
  CHECK(t.type == Outcome::kInfo);
  CHECK(t.error == "timeout");
  CHECK(t.value == v);

  const Value cas = Pair(Value::Int(1), Value::Int(2));
  CHECK(RespOutcome("cas", Reply(Kind::kInteger, "", 1), cas).type ==
        Outcome::kOk);
  auto m = RespOutcome("cas", Reply(Kind::kInteger, "", 0), cas);
  CHECK(m.type == Outcome::kFail);
  CHECK(m.error == "mismatch");
  CHECK(RespOutcome("cas", Reply(Kind::kInteger, "", 2), cas).type ==
        Outcome::kInfo);
}

TEST_CASE("resp outcomes: locks", "[process][resp]") {
  const Value ttl = Value::Null();
  auto c = RespOutcome("acquire", Reply(Kind::kInteger, "", 9), ttl);
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value == Value::Int(9));
  CHECK(RespOutcome("acquire", Reply(Kind::kInteger, "", 0), ttl).error ==
        "held");
  CHECK(RespOutcome("acquire", Reply(Kind::kNull), ttl).type == Outcome::kFail);
  CHECK(RespOutcome("acquire", Reply(Kind::kError, "LOCKED by x"), ttl).type ==
        Outcome::kFail);
  CHECK(RespOutcome("acquire", Reply(Kind::kSimple, "OK"), ttl).type ==
        Outcome::kInfo);
  const Value token = Value::Int(9);
  for (const char* f : {"renew", "release"}) {
    CHECK(RespOutcome(f, Reply(Kind::kInteger, "", 1), token).type ==
          Outcome::kOk);
    CHECK(RespOutcome(f, Reply(Kind::kSimple, "OK"), token).type ==
          Outcome::kOk);
    CHECK(RespOutcome(f, Reply(Kind::kInteger, "", 0), token).error ==
          "not-held");
    CHECK(RespOutcome(f, Reply(Kind::kError, "NOTOWNER x"), token).error ==
          "not-held");
  }
  CHECK(RespNoEffect("NOSCRIPT"));
  CHECK_FALSE(RespNoEffect("TIMEOUT"));
}

namespace {

// A port nothing listens on right now (bound, read, closed).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string Program(const char* name) {
  std::string path = faultline::harness::FindSystemTool(name);
  if (path.empty()) {
    FAIL(name << " not found: install the Debian package redis-server "
                 "(apt-get install redis-server)");
  }
  return path;
}

// A redis-server or redis-sentinel started by this test, in its own
// directory; killed by pid when the test ends.
class Server {
 public:
  Server(const std::string& program, const std::string& conf_text) {
    dir_ = std::filesystem::temp_directory_path() /
           ("faultline-resp-" + std::to_string(::getpid()) + "-" +
            std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    port_ = FreePort();
    const std::string conf = (dir_ / "server.conf").string();
    std::ofstream(conf) << "port " << port_ << "\nbind 127.0.0.1\n"
                        << "save \"\"\nappendonly no\ndir " << dir_.string()
                        << "\n"
                        << conf_text;
    faultline::harness::SpawnOptions so;
    so.log_path = (dir_ / "server.log").string();
    auto pid = faultline::harness::Spawn({Program(program.c_str()), conf}, so);
    REQUIRE(pid.ok());
    pid_ = *pid;
    // Wait until it answers PING (it refuses connections until then).
    RespConn conn("127.0.0.1", port_);
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (true) {
      CallResult r =
          conn.Call({"PING"}, Clock::now() + std::chrono::milliseconds(500));
      if (r.error == CallError::kNone) break;
      REQUIRE(Clock::now() < until);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGCONT);
      faultline::harness::TerminateProcess(pid_, SIGTERM,
                                           std::chrono::seconds(3));
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

RespClientOptions NodeOptions(int port, const std::string& workload) {
  RespClientOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.commands = DefaultRespCommands(workload);
  o.op_timeout_ms = 1000;
  return o;
}

}  // namespace

TEST_CASE("resp client on redis-server: register", "[process][resp][redis]") {
  Server redis("redis-server", "");
  auto client = MakeRespClient(NodeOptions(redis.port(), "register"));
  const Value key = Value::Int(1);
  Completion c = client->Invoke(Op("read", key));
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value.is_null());
  CHECK(client->Invoke(Op("write", key, Value::Int(5))).type == Outcome::kOk);
  c = client->Invoke(Op("read", key));
  CHECK(c.type == Outcome::kOk);
  CHECK(c.value == Value::Int(5));
  c = client->Invoke(Op("cas", key, Pair(Value::Int(4), Value::Int(6))));
  CHECK(c.type == Outcome::kFail);
  CHECK(c.error == "mismatch");
  CHECK(
      client->Invoke(Op("cas", key, Pair(Value::Int(5), Value::Int(6)))).type ==
      Outcome::kOk);
  CHECK(client->Invoke(Op("read", key)).value == Value::Int(6));
  // Strings go as JSON text; text that is not JSON reads back as a string.
  const Value skey = Value::String("s");
  CHECK(client->Invoke(Op("write", skey, Value::String("a b"))).type ==
        Outcome::kOk);
  CHECK(client->Invoke(Op("read", skey)).value == Value::String("a b"));
  RespConn raw("127.0.0.1", redis.port());
  auto set = raw.Call({"SET", "r/raw", "plain"},
                      Clock::now() + std::chrono::seconds(1));
  REQUIRE(set.error == CallError::kNone);
  CHECK(client->Invoke(Op("read", Value::String("raw"))).value ==
        Value::String("plain"));
  // A cas of an absent key matches "null".
  CHECK(
      client
          ->Invoke(Op("cas", Value::Int(2), Pair(Value::Null(), Value::Int(1))))
          .type == Outcome::kOk);
  CHECK(client->Invoke(Op("read", Value::Int(2))).value == Value::Int(1));
  // No command for an op, or a key of another shape: fail, nothing sent.
  CHECK(client->Invoke(Op("acquire", key)).type == Outcome::kFail);
  CHECK(client->Invoke(Op("read", Value::MakeList({}))).type == Outcome::kFail);
}

TEST_CASE("resp client on redis-server: lock", "[process][resp][redis]") {
  Server redis("redis-server", "");
  auto a = MakeRespClient(NodeOptions(redis.port(), "lock"));
  auto b = MakeRespClient(NodeOptions(redis.port(), "lock"));
  const Value lock = Value::String("L");
  Completion c = a->Invoke(Op("acquire", lock, Value::Int(10000)));
  REQUIRE(c.type == Outcome::kOk);
  REQUIRE(c.value.is_int());
  const std::int64_t t1 = c.value.as_int();
  CHECK(t1 > 0);
  c = b->Invoke(Op("acquire", lock, Value::Int(10000)));
  CHECK(c.type == Outcome::kFail);
  CHECK(c.error == "held");
  CHECK(a->Invoke(Op("renew", lock, Value::Int(t1))).type == Outcome::kOk);
  // b never held it: not-held without asking; a with a wrong token too.
  CHECK(b->Invoke(Op("release", lock, Value::Int(t1))).type == Outcome::kFail);
  CHECK(a->Invoke(Op("release", lock, Value::Int(t1 + 1))).type ==
        Outcome::kFail);
  CHECK(a->Invoke(Op("release", lock, Value::Int(t1))).type == Outcome::kOk);
  // Released: a's renew reaches the server and is refused.
  c = a->Invoke(Op("renew", lock, Value::Int(t1)));
  CHECK(c.type == Outcome::kFail);
  CHECK(c.error == "not-held");
  c = b->Invoke(Op("acquire", lock));  // lock_ttl_ms
  REQUIRE(c.type == Outcome::kOk);
  CHECK(c.value.as_int() > t1);
  RespConn raw("127.0.0.1", redis.port());
  auto pttl =
      raw.Call({"PTTL", "lock:L"}, Clock::now() + std::chrono::seconds(1));
  REQUIRE(pttl.error == CallError::kNone);
  CHECK(pttl.reply.integer > 0);
  CHECK(pttl.reply.integer <= 1000);
}

TEST_CASE("resp client: a paused server is info timeout, refused is fail",
          "[process][resp][redis]") {
  Server redis("redis-server", "");
  auto options = NodeOptions(redis.port(), "register");
  options.op_timeout_ms = 300;
  auto client = MakeRespClient(options);
  const Value key = Value::Int(1);
  REQUIRE(client->Invoke(Op("write", key, Value::Int(1))).type == Outcome::kOk);
  REQUIRE(::kill(redis.pid(), SIGSTOP) == 0);
  Completion w = client->Invoke(Op("write", key, Value::Int(2)));
  Completion r = client->Invoke(Op("read", key));
  REQUIRE(::kill(redis.pid(), SIGCONT) == 0);
  CHECK(w.type == Outcome::kInfo);
  CHECK(w.error == "timeout");
  CHECK(r.type == Outcome::kInfo);
  CHECK(r.error == "timeout");
  // The paused write went through once the server resumed.
  auto after = options;
  after.op_timeout_ms = 2000;
  CHECK(MakeRespClient(after)->Invoke(Op("read", key)).value == Value::Int(2));

  auto refused = MakeRespClient(NodeOptions(FreePort(), "register"));
  CHECK(refused->Invoke(Op("write", key, Value::Int(3))).type ==
        Outcome::kFail);
  CHECK(refused->Invoke(Op("read", key)).type == Outcome::kFail);
}

TEST_CASE("resp client: route sentinel finds the primary",
          "[process][resp][redis]") {
  Server redis("redis-server", "");
  Server sentinel("redis-sentinel", "sentinel monitor m1 127.0.0.1 " +
                                        std::to_string(redis.port()) + " 1\n");
  RespClientOptions o;
  o.route = "sentinel";
  o.master = "m1";
  // The first sentinel is down: the second one answers.
  o.sentinels = {"127.0.0.1:" + std::to_string(FreePort()),
                 "127.0.0.1:" + std::to_string(sentinel.port())};
  o.commands = DefaultRespCommands("register");
  o.op_timeout_ms = 2000;
  auto client = MakeRespClient(o);
  const Value key = Value::Int(1);
  CHECK(client->Invoke(Op("write", key, Value::Int(4))).type == Outcome::kOk);
  CHECK(client->Invoke(Op("read", key)).value == Value::Int(4));
  // A master name no sentinel knows: no primary, nothing sent -> fail.
  o.master = "other";
  Completion c = MakeRespClient(o)->Invoke(Op("write", key, Value::Int(5)));
  CHECK(c.type == Outcome::kFail);
  CHECK(c.error.find("no primary") != std::string::npos);
  // The primary resigns (REPLICAOF a dead port): the client finds no
  // master and fails the write without effect.
  RespConn raw("127.0.0.1", redis.port());
  auto demote = raw.Call({"REPLICAOF", "127.0.0.1", std::to_string(FreePort())},
                         Clock::now() + std::chrono::seconds(1));
  REQUIRE(demote.error == CallError::kNone);
  c = client->Invoke(Op("write", key, Value::Int(6)));
  CHECK(c.type == Outcome::kFail);
  CHECK(raw.Call({"GET", "r/1"}, Clock::now() + std::chrono::seconds(1))
            .reply.str == "4");
}

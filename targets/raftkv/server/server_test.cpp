// In-process tests of the raftkv driver: real sockets on loopback, real
// files in a temporary directory, one thread per node (each Server is
// single-threaded; Server::RequestStop stops them all).
#include "targets/raftkv/server/server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include "targets/raftkv/server/server_impl.h"
#include "targets/raftkv/server/test_client.h"

namespace srv = faultline::raftkv::server;
namespace raft = faultline::raftkv::raft;
using srv::testing::TestClient;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/raftkv-server-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A port nothing listens on right now (bind to 0, read it, close).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Runs servers on threads; stops and joins them on destruction.
class Cluster {
 public:
  void Add(srv::Options o) {
    auto s = std::make_unique<srv::Server>(std::move(o));
    std::string err = s->Start();
    REQUIRE(err == "");
    servers_.push_back(std::move(s));
  }
  void Run() {
    srv::Server::ResetStop();
    rcs_.assign(servers_.size(), -1);
    for (std::size_t i = 0; i < servers_.size(); ++i)
      threads_.emplace_back([this, i] { rcs_[i] = servers_[i]->Run(); });
  }
  // Stops every server; returns their exit codes.
  std::vector<int> Stop() {
    srv::Server::RequestStop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    servers_.clear();
    return rcs_;
  }
  ~Cluster() {
    if (!threads_.empty()) Stop();
  }
  srv::Server& at(std::size_t i) { return *servers_[i]; }

 private:
  std::vector<std::unique_ptr<srv::Server>> servers_;
  std::vector<std::thread> threads_;
  std::vector<int> rcs_;
};

std::string Field(const std::string& status, const std::string& name) {
  std::string key = name + ":";
  std::size_t p = status.find(key);
  if (p == std::string::npos) return "<absent>";
  p += key.size();
  return status.substr(p, status.find("\r\n", p) - p);
}

bool Await(const std::function<bool()>& cond, int timeout_ms = 10000) {
  raft::Nanos end = srv::MonotonicNow() + raft::Nanos{timeout_ms} * 1'000'000;
  while (!cond()) {
    if (srv::MonotonicNow() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

std::string Status(TestClient& c) {
  auto v = c.Call({"STATUS"});
  return v ? v->str : "";
}

srv::Options SingleNode(const std::string& dir) {
  srv::Options o;
  o.id = 1;
  o.peers[1] = srv::Peer{1, {"127.0.0.1", 0}, {"127.0.0.1", 0}};
  o.listen = {"127.0.0.1", 0};
  o.data_dir = dir;
  o.heartbeat_ms = 10;
  o.election_ms = 100;
  o.follower_lease_ms = 50;
  o.request_timeout_ms = 3000;
  return o;
}

// A reply rendered recursively: arrays as [a,b], elements as CallStr does.
std::string Render(const std::optional<faultline::raftkv::resp::Value>& v) {
  if (!v || v->kind != faultline::raftkv::resp::Value::Kind::kArray)
    return TestClient::Str(v);
  std::string s = "[";
  for (std::size_t i = 0; i < v->array.size(); ++i) {
    if (i > 0) s += ",";
    s += Render(v->array[i]);
  }
  return s + "]";
}

// Starts a 3-node cluster in `c` (ports in peer/client[1..3]); returns the
// leader's number once elected and known to every follower.
int StartThree(Cluster& c, const std::string& dir, int* peer, int* client,
               raft::Unsafe unsafe = raft::Unsafe::kNone) {
  for (int i = 1; i <= 3; ++i) {
    peer[i] = FreePort();
    client[i] = FreePort();
  }
  for (int i = 1; i <= 3; ++i) {
    srv::Options o = SingleNode(dir + "/n" + std::to_string(i));
    o.id = i;
    o.peers.clear();
    for (int j = 1; j <= 3; ++j)
      o.peers[j] = srv::Peer{static_cast<raft::NodeId>(j),
                             {"127.0.0.1", peer[j]},
                             {"127.0.0.1", client[j]}};
    o.listen = {"127.0.0.1", client[i]};
    o.unsafe = unsafe;
    c.Add(o);
  }
  c.Run();
  int leader = 0;
  REQUIRE(Await([&] {
    for (int i = 1; i <= 3; ++i) {
      TestClient t("127.0.0.1", client[i]);
      if (Field(Status(t), "role") == "leader") leader = i;
    }
    return leader != 0;
  }));
  REQUIRE(Await([&] {
    for (int i = 1; i <= 3; ++i) {
      TestClient t("127.0.0.1", client[i]);
      if (Field(Status(t), "leader") != std::to_string(leader)) return false;
    }
    return true;
  }));
  return leader;
}

}  // namespace

TEST_CASE("server: three nodes answer TXN atomically", "[txn]") {
  TempDir dir;
  int peer[4], client[4];
  Cluster c;
  int leader = StartThree(c, dir.path, peer, client);
  int follower = leader % 3 + 1;
  TestClient l("127.0.0.1", client[leader]);
  TestClient f("127.0.0.1", client[follower]);
  REQUIRE(l.ok());
  REQUIRE(f.ok());

  CHECK(Render(l.Call({"TXN", "r", "x",      "-", "append", "x", "1", "R",
                       "x",   "-", "APPEND", "x", "2",      "W", "y", "a",
                       "R",   "y", "-",      "R", "z",      "-"})) ==
        "[nil,+OK,[$1],+OK,+OK,$a,nil]");
  CHECK(Render(l.Call({"TXN", "R", "x", "-", "R", "y", "-"})) ==
        "[[$1,$2],$a]");
  // A list is visible to GET on every node, as an array.
  for (int i = 1; i <= 3; ++i) {
    TestClient t("127.0.0.1", client[i]);
    CHECK(Render(t.Call({"GET", "x"})) == "[$1,$2]");
  }
  // Writes go to the leader.
  CHECK(f.CallStr({"TXN", "W", "y", "b"}) ==
        "-NOTLEADER " + std::to_string(leader) +
            " 127.0.0.1:" + std::to_string(client[leader]));
  // APPEND to a string refuses the whole transaction.
  CHECK(l.CallStr({"TXN", "APPEND", "q", "1", "APPEND", "y", "2"})
            .rfind("-WRONGTYPE ", 0) == 0);
  CHECK(l.CallStr({"GET", "q"}) == "nil");
  CHECK(l.CallStr({"SET", "x", "s"}) == "+OK");  // replaces the list
  CHECK(Render(l.Call({"TXN", "R", "x", "-"})) == "[$s]");
  // Malformed.
  CHECK(l.CallStr({"TXN"}).rfind("-ERR TXN needs", 0) == 0);
  CHECK(l.CallStr({"TXN", "R", "x"}).rfind("-ERR TXN needs", 0) == 0);
  CHECK(l.CallStr({"TXN", "X", "x", "-"}).rfind("-ERR TXN op", 0) == 0);
  CHECK(c.Stop() == std::vector<int>{0, 0, 0});
}

TEST_CASE("server: --unsafe txn-not-atomic uses one entry per micro-op",
          "[txn]") {
  TempDir dir;
  int peer[4], client[4];
  Cluster c;
  int leader =
      StartThree(c, dir.path, peer, client, raft::Unsafe::kTxnNotAtomic);
  TestClient l("127.0.0.1", client[leader]);
  REQUIRE(l.ok());
  CHECK(Field(Status(l), "unsafe") == "txn-not-atomic");
  auto applied = [&] { return std::stoull(Field(Status(l), "applied")); };
  std::uint64_t before = applied();
  // The same reply as the atomic TXN...
  CHECK(Render(l.Call({"TXN", "r", "x", "-", "append", "x", "1", "R", "x", "-",
                       "W", "y", "a", "R", "y", "-"})) ==
        "[nil,+OK,[$1],+OK,$a]");
  // ... but five log entries.
  CHECK(applied() == before + 5);
  // A failing first part is that part's error (no effect); a later one is
  // -PARTIAL (earlier parts took effect).
  CHECK(l.CallStr({"TXN", "APPEND", "y", "1", "W", "q", "1"})
            .rfind("-WRONGTYPE ", 0) == 0);
  CHECK(l.CallStr({"GET", "q"}) == "nil");
  CHECK(l.CallStr({"TXN", "W", "q", "1", "APPEND", "y", "1"})
            .rfind("-PARTIAL ", 0) == 0);
  CHECK(l.CallStr({"GET", "q"}) == "$1");

  // Another client's write lands between the parts of a transaction: the
  // second read sees it, which an atomic TXN never could.
  TestClient other("127.0.0.1", client[leader]);
  REQUIRE(other.ok());
  bool interleaved = false;
  for (int attempt = 0; attempt < 50 && !interleaved; ++attempt) {
    std::string v = std::to_string(attempt);
    std::string batch;
    for (int i = 0; i < 20; ++i)
      batch += faultline::raftkv::resp::EncodeCommand(
          {"SET", "k", v + "-" + std::to_string(i)});
    REQUIRE(l.Send({"TXN", "R", "k", "-", "R", "k", "-", "R", "k", "-"}));
    REQUIRE(other.SendRaw(batch));
    auto reply = l.Read();
    for (int i = 0; i < 20; ++i)
      REQUIRE(TestClient::Str(other.Read()) == "+OK");
    REQUIRE(reply);
    REQUIRE(reply->array.size() == 3);
    interleaved = reply->array[0] != reply->array[2];
  }
  CHECK(interleaved);
  CHECK(c.Stop() == std::vector<int>{0, 0, 0});
}

TEST_CASE("server: one node serves every command and recovers on restart") {
  TempDir dir;
  int port = 0;
  {
    Cluster c;
    srv::Options o = SingleNode(dir.path + "/n1");
    o.snapshot_entries = 20;
    c.Add(o);
    port = c.at(0).ClientPort();
    c.Run();
    TestClient cl("127.0.0.1", port);
    REQUIRE(cl.ok());
    REQUIRE(Await([&] { return Field(Status(cl), "role") == "leader"; }));

    CHECK(cl.CallStr({"PING"}) == "+PONG");
    CHECK(cl.CallStr({"GET", "k"}) == "nil");
    CHECK(cl.CallStr({"SET", "k", "v1"}) == "+OK");
    CHECK(cl.CallStr({"GET", "k"}) == "$v1");
    CHECK(cl.CallStr({"CAS", "k", "nope", "v2"}) == ":0");
    CHECK(cl.CallStr({"CAS", "k", "v1", "v2"}) == ":1");
    CHECK(cl.CallStr({"CAS", "absent", "", "x"}) == ":0");
    CHECK(cl.CallStr({"GET", "k"}) == "$v2");
    CHECK(cl.CallStr({"DEL", "k"}) == ":1");
    CHECK(cl.CallStr({"DEL", "k"}) == ":0");

    std::string tok = cl.CallStr({"LOCK", "L", "alice", "60000"});
    REQUIRE(tok.rfind(":", 0) == 0);
    std::string t = tok.substr(1);
    CHECK(std::stoull(t) > 0);
    CHECK(cl.CallStr({"LOCK", "L", "bob", "60000"}) == "-LOCKED held by alice");
    CHECK(cl.CallStr({"RENEW", "L", "bob", t, "60000"}).rfind("-NOTOWNER", 0) ==
          0);
    CHECK(cl.CallStr({"RENEW", "L", "alice", t, "60000"}) == "+OK");
    CHECK(cl.CallStr({"UNLOCK", "L", "alice", t}) == "+OK");
    CHECK(cl.CallStr({"UNLOCK", "L", "alice", t}).rfind("-NOTOWNER", 0) == 0);
    std::string tok2 = cl.CallStr({"LOCK", "L", "bob", "60000"});
    REQUIRE(tok2.rfind(":", 0) == 0);
    CHECK(std::stoull(tok2.substr(1)) > std::stoull(t));  // tokens only grow

    CHECK(cl.CallStr({"FSET", "res", "5", "a"}) == "+OK");
    CHECK(cl.CallStr({"FSET", "res", "3", "b"}) ==
          "-FENCED token 3 < highest 5");
    CHECK(cl.CallStr({"FSET", "res", "5", "c"}) == "+OK");
    CHECK(cl.CallStr({"GET", "res"}) == "$c");

    CHECK(cl.CallStr({"NOPE"}) == "-ERR unknown command 'NOPE'");
    CHECK(cl.CallStr({"GET"}).rfind("-ERR wrong number of arguments", 0) == 0);
    CHECK(cl.CallStr({"LOCK", "L", "x", "soon"}) ==
          "-ERR ttl_ms must be a positive integer");
    CHECK(cl.CallStr({"CONFIG", "GET", "save"}) == "*0");
    CHECK(cl.CallStr({"TRANSFER", "1"}) ==
          "-ERR TRANSFER needs the id of another member");

    // Lock expiry goes through the log: a short lease frees the lock.
    std::string tok3 = cl.CallStr({"LOCK", "short", "carol", "50"});
    REQUIRE(tok3.rfind(":", 0) == 0);
    CHECK(Await([&] {
      return cl.CallStr({"LOCK", "short", "dave", "60000"}).rfind(":", 0) == 0;
    }));

    // Pipelining: 200 commands in one write, answered in order.
    std::string batch;
    for (int i = 0; i < 100; ++i) {
      batch += faultline::raftkv::resp::EncodeCommand(
          {"SET", "p" + std::to_string(i), std::to_string(i)});
      batch += faultline::raftkv::resp::EncodeCommand(
          {"GET", "p" + std::to_string(i)});
    }
    REQUIRE(cl.SendRaw(batch));
    for (int i = 0; i < 100; ++i) {
      CHECK(TestClient::Str(cl.Read()) == "+OK");
      std::string g = TestClient::Str(cl.Read());
      // The GET was sent before the SET's reply: either value is allowed
      // by linearizability, but never another key's value.
      CHECK((g == "$" + std::to_string(i) || g == "nil"));
    }
    CHECK(cl.CallStr({"GET", "p99"}) == "$99");

    std::string st = Status(cl);
    CHECK(Field(st, "id") == "1");
    CHECK(Field(st, "leader") == "1");
    CHECK(Field(st, "read_mode") == "readindex");
    CHECK(Field(st, "unsafe") == "none");
    CHECK(std::stoull(Field(st, "applied")) >= 100);      // the SETs
    CHECK(std::stoull(Field(st, "snapshot_index")) > 0);  // every 20 entries
    CHECK(c.Stop() == std::vector<int>{0});
  }
  // Restart on the same directory: everything acknowledged is there.
  Cluster c;
  srv::Options o = SingleNode(dir.path + "/n1");
  c.Add(o);
  port = c.at(0).ClientPort();
  c.Run();
  TestClient cl("127.0.0.1", port);
  REQUIRE(Await([&] { return Field(Status(cl), "role") == "leader"; }));
  CHECK(cl.CallStr({"GET", "res"}) == "$c");
  CHECK(cl.CallStr({"GET", "p42"}) == "$42");
  CHECK(cl.CallStr({"GET", "k"}) == "nil");
  CHECK(cl.CallStr({"LOCK", "L", "eve", "60000"}) == "-LOCKED held by bob");
  CHECK(c.Stop() == std::vector<int>{0});
}

TEST_CASE("server: three nodes elect, redirect writes, read on followers") {
  for (raft::ReadMode mode :
       {raft::ReadMode::kReadIndex, raft::ReadMode::kFollowerLease}) {
    TempDir dir;
    int peer[4], client[4];
    for (int i = 1; i <= 3; ++i) {
      peer[i] = FreePort();
      client[i] = FreePort();
    }
    Cluster c;
    for (int i = 1; i <= 3; ++i) {
      srv::Options o = SingleNode(dir.path + "/n" + std::to_string(i));
      o.id = i;
      o.peers.clear();
      for (int j = 1; j <= 3; ++j)
        o.peers[j] = srv::Peer{static_cast<raft::NodeId>(j),
                               {"127.0.0.1", peer[j]},
                               {"127.0.0.1", client[j]}};
      o.listen = {"127.0.0.1", client[i]};
      o.read_mode = mode;
      c.Add(o);
    }
    c.Run();
    std::vector<std::unique_ptr<TestClient>> cl;
    cl.push_back(nullptr);
    for (int i = 1; i <= 3; ++i) {
      cl.push_back(std::make_unique<TestClient>("127.0.0.1", client[i]));
      REQUIRE(cl[i]->ok());
    }
    int leader = 0;
    REQUIRE(Await([&] {
      for (int i = 1; i <= 3; ++i)
        if (Field(Status(*cl[i]), "role") == "leader") leader = i;
      return leader != 0;
    }));
    int follower = leader % 3 + 1;
    // Followers learn the leader, then redirect writes to its client port.
    REQUIRE(Await([&] {
      return Field(Status(*cl[follower]), "leader") == std::to_string(leader);
    }));
    CHECK(cl[follower]->CallStr({"SET", "a", "1"}) ==
          "-NOTLEADER " + std::to_string(leader) +
              " 127.0.0.1:" + std::to_string(client[leader]));
    CHECK(Field(Status(*cl[follower]), "leader_addr") ==
          "127.0.0.1:" + std::to_string(client[leader]));
    for (int k = 0; k < 20; ++k)
      REQUIRE(cl[leader]->CallStr({"SET", "a", std::to_string(k)}) == "+OK");
    // A read on any node after the write was acknowledged sees it.
    for (int i = 1; i <= 3; ++i) CHECK(cl[i]->CallStr({"GET", "a"}) == "$19");
    if (mode == raft::ReadMode::kFollowerLease) {
      CHECK(Await([&] {
        return Field(Status(*cl[follower]), "follower_lease") == "valid";
      }));
      CHECK(cl[follower]->CallStr({"GET", "a"}) == "$19");
    }
    // Leadership transfer to a follower.
    CHECK(cl[leader]->CallStr({"TRANSFER", std::to_string(follower)}) == "+OK");
    CHECK(Await(
        [&] { return Field(Status(*cl[follower]), "role") == "leader"; }));
    CHECK(cl[follower]->CallStr({"SET", "a", "after"}) == "+OK");
    CHECK(cl[leader]->CallStr({"GET", "a"}) == "$after");
    CHECK(c.Stop() == std::vector<int>{0, 0, 0});
  }
}

TEST_CASE("server: --unsafe lock-token-per-term restarts tokens at 1") {
  TempDir dir;
  auto run = [&](const std::vector<std::string>& locks) {
    Cluster c;
    srv::Options o = SingleNode(dir.path + "/n1");
    o.unsafe = raft::Unsafe::kLockTokenPerTerm;
    c.Add(o);
    int port = c.at(0).ClientPort();
    c.Run();
    TestClient cl("127.0.0.1", port);
    REQUIRE(Await([&] { return Field(Status(cl), "role") == "leader"; }));
    CHECK(Field(Status(cl), "unsafe") == "lock-token-per-term");
    std::vector<std::string> tokens;
    for (const std::string& l : locks)
      tokens.push_back(cl.CallStr({"LOCK", l, "me", "60000"}));
    CHECK(c.Stop() == std::vector<int>{0});
    return tokens;
  };
  // A per-leadership counter: a new leadership (here: after a restart)
  // issues token 1 again, so fencing tokens go backwards.
  CHECK(run({"a", "b", "c"}) == std::vector<std::string>{":1", ":2", ":3"});
  CHECK(run({"d"}) == std::vector<std::string>{":1"});
}

TEST_CASE("server: --unsafe log-not-synced still writes; a restart recovers") {
  TempDir dir;
  auto run = [&](const std::vector<std::string>& cmd) {
    Cluster c;
    srv::Options o = SingleNode(dir.path + "/n1");
    o.unsafe = raft::Unsafe::kLogNotSynced;
    c.Add(o);
    int port = c.at(0).ClientPort();
    c.Run();
    TestClient cl("127.0.0.1", port);
    REQUIRE(Await([&] { return Field(Status(cl), "role") == "leader"; }));
    CHECK(Field(Status(cl), "unsafe") == "log-not-synced");
    std::string reply = cl.CallStr(cmd);
    CHECK(c.Stop() == std::vector<int>{0});
    return reply;
  };
  // Only the fsyncs are gone: without a power loss the page cache keeps
  // every write, so the restarted node has the value.
  CHECK(run({"SET", "k", "v1"}) == "+OK");
  CHECK(run({"GET", "k"}) == "$v1");
}

TEST_CASE("server: INCRBY, XFER and MSETNX, kept across a restart",
          "[collections]") {
  TempDir dir;
  {
    Cluster c;
    srv::Options o = SingleNode(dir.path + "/n1");
    o.snapshot_entries = 5;  // the values also pass through a snapshot
    c.Add(o);
    c.Run();
    TestClient cl("127.0.0.1", c.at(0).ClientPort());
    REQUIRE(cl.ok());
    REQUIRE(Await([&] { return Field(Status(cl), "role") == "leader"; }));
    CHECK(cl.CallStr({"INCRBY", "n", "3"}) == ":3");
    CHECK(cl.CallStr({"INCRBY", "n", "4"}) == ":7");
    CHECK(cl.CallStr({"INCRBY", "n", "x"}) ==
          "-ERR increment must be an integer");
    CHECK(cl.CallStr({"SET", "s", "abc"}) == "+OK");
    CHECK(cl.CallStr({"INCRBY", "s", "1"}).rfind("-ERR ", 0) == 0);
    CHECK(
        cl.CallStr({"XFER", "a", "b", "1"}).rfind("-ERR no such account", 0) ==
        0);
    CHECK(cl.CallStr({"MSETNX", "a", "6", "b", "4"}) == ":1");
    CHECK(cl.CallStr({"MSETNX", "a", "6", "b", "4"}) == ":0");
    CHECK(cl.CallStr({"XFER", "a", "b", "6"}) == ":1");
    CHECK(cl.CallStr({"XFER", "a", "b", "1"}) == ":0");  // insufficient
    CHECK(cl.CallStr({"XFER", "b", "a", "0"}) ==
          "-ERR amount must be a positive integer");
    CHECK(cl.CallStr({"XFER", "b", "b", "1"}) ==
          "-ERR XFER needs two different keys");
    CHECK(cl.CallStr({"MSETNX", "a"}) == "-ERR MSETNX needs key value pairs");
    CHECK(Render(cl.Call({"TXN", "R", "a", "-", "R", "b", "-"})) == "[$0,$10]");
    for (int i = 0; i < 10; ++i) cl.CallStr({"INCRBY", "n", "1"});
    CHECK(Await(
        [&] { return std::stoull(Field(Status(cl), "snapshot_index")) > 0; }));
    CHECK(c.Stop() == std::vector<int>{0});
  }
  Cluster c;
  c.Add(SingleNode(dir.path + "/n1"));
  c.Run();
  TestClient cl("127.0.0.1", c.at(0).ClientPort());
  REQUIRE(Await([&] { return Field(Status(cl), "role") == "leader"; }));
  CHECK(cl.CallStr({"GET", "n"}) == "$17");
  CHECK(cl.CallStr({"GET", "b"}) == "$10");
  CHECK(cl.CallStr({"MSETNX", "a", "6", "b", "4"}) == ":0");
  CHECK(c.Stop() == std::vector<int>{0});
}

#include "targets/raftkv/server/flags.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace srv = faultline::raftkv::server;
namespace raft = faultline::raftkv::raft;

namespace {

const std::vector<std::string> kBase = {
    "--id",       "2",
    "--peers",    "1=10.77.0.1:7001,2=10.77.0.2:7001,3=10.77.0.3:7001",
    "--data-dir", "/tmp/x"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> a = kBase;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// A temporary config file, removed at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/raftkv-flags-XXXXXX";
    int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    close(fd);
    path = tmpl;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST_CASE("flags: defaults and required flags") {
  srv::FlagsResult r = srv::ParseFlags(kBase);
  REQUIRE(r.ok);
  const srv::Options& o = r.options;
  CHECK(o.id == 2);
  CHECK(o.peers.size() == 3);
  CHECK(o.peers.at(3).raft == srv::HostPort{"10.77.0.3", 7001});
  // Client address defaults to the peer host with this node's listen port.
  CHECK(o.peers.at(3).client == srv::HostPort{"10.77.0.3", 6379});
  CHECK(o.listen == srv::HostPort{"127.0.0.1", 6379});
  CHECK(o.data_dir == "/tmp/x");
  CHECK(o.read_mode == raft::ReadMode::kReadIndex);
  CHECK(o.heartbeat_ms == 50);
  CHECK(o.election_ms == 500);
  CHECK(o.follower_lease_ms == 300);
  CHECK(o.lease_drift_bound == 0.001);
  CHECK(o.pre_vote);
  CHECK(o.check_quorum);
  CHECK(o.snapshot_entries == 10000);
  CHECK(o.request_timeout_ms == 5000);
  CHECK(o.max_append_entries == 256);
  CHECK(o.max_inflight == 64);
  CHECK(o.unsafe == raft::Unsafe::kNone);
  CHECK(o.log_level == srv::LogLevel::kInfo);

  CHECK(srv::ParseFlags({"--peers", "1=a:1", "--data-dir", "d"}).error ==
        "--id: required (this node's id, 1..9)");
  CHECK(srv::ParseFlags({"--id", "1", "--data-dir", "d"})
            .error.rfind("--peers: required", 0) == 0);
  CHECK(srv::ParseFlags({"--id", "1", "--peers", "1=a:1"})
            .error.rfind("--data-dir: required", 0) == 0);
}

TEST_CASE("flags: every flag, both spellings") {
  srv::FlagsResult r = srv::ParseFlags(With({
      "--listen=10.77.0.2:7379",
      "--read-mode",
      "follower-lease",
      "--heartbeat-ms=20",
      "--election-ms",
      "300",
      "--follower-lease-ms=100",
      "--lease-drift-bound",
      "0.2",
      "--no-pre-vote",
      "--no-check-quorum",
      "--snapshot-entries",
      "77",
      "--request-timeout-ms=1500",
      "--max-append-entries",
      "1",
      "--max-inflight=2",
      "--unsafe",
      "commit-old-terms",
      "--log-level=debug",
  }));
  REQUIRE(r.ok);
  const srv::Options& o = r.options;
  CHECK(o.listen == srv::HostPort{"10.77.0.2", 7379});
  CHECK(o.peers.at(1).client == srv::HostPort{"10.77.0.1", 7379});
  CHECK(o.read_mode == raft::ReadMode::kFollowerLease);
  CHECK(o.heartbeat_ms == 20);
  CHECK(o.election_ms == 300);
  CHECK(o.follower_lease_ms == 100);
  CHECK(o.lease_drift_bound == 0.2);
  CHECK_FALSE(o.pre_vote);
  CHECK_FALSE(o.check_quorum);
  CHECK(o.snapshot_entries == 77);
  CHECK(o.request_timeout_ms == 1500);
  CHECK(o.max_append_entries == 1);
  CHECK(o.max_inflight == 2);
  CHECK(o.unsafe == raft::Unsafe::kCommitOldTerms);
  CHECK(o.log_level == srv::LogLevel::kDebug);
}

TEST_CASE("flags: client addresses in --peers") {
  srv::FlagsResult r = srv::ParseFlags(
      {"--id", "1", "--peers",
       "1=127.0.0.1:7001/6381,2=127.0.0.1:7002/127.0.0.2:6382,3=h3:7003",
       "--data-dir", "d", "--listen", "127.0.0.1:6381"});
  REQUIRE(r.ok);
  CHECK(r.options.peers.at(1).client == srv::HostPort{"127.0.0.1", 6381});
  CHECK(r.options.peers.at(2).client == srv::HostPort{"127.0.0.2", 6382});
  CHECK(r.options.peers.at(3).client == srv::HostPort{"h3", 6381});
}

TEST_CASE("flags: bad values name the flag and what was expected") {
  using Case = std::pair<std::vector<std::string>, std::string>;
  for (const Case& c : std::vector<Case>{
           {{"--election-ms", "abc"},
            "--election-ms: expected an integer in [2, 600000], got 'abc'"},
           {{"--heartbeat-ms=0"},
            "--heartbeat-ms: expected an integer in [1, 60000], got '0'"},
           {{"--read-mode", "fast"},
            "--read-mode: expected readindex, lease or follower-lease, got "
            "'fast'"},
           {{"--listen", "nohost"},
            "--listen: expected HOST:PORT, got 'nohost'"},
           {{"--listen", "h:70000"},
            "--listen: expected HOST:PORT, got 'h:70000'"},
           {{"--log-level", "loud"},
            "--log-level: expected debug, info or warn, got 'loud'"},
           {{"--lease-drift-bound", "0.6"},
            "--lease-drift-bound: expected a number in [0, 0.5], got '0.6'"},
           {{"--lease-drift-bound=-0.1"},
            "--lease-drift-bound: expected a number in [0, 0.5], got '-0.1'"},
           {{"--lease-drift-bound", "0.1x"},
            "--lease-drift-bound: expected a number in [0, 0.5], got '0.1x'"},
           {{"--lease-drift-bound", "nan"},
            "--lease-drift-bound: expected a number in [0, 0.5], got 'nan'"},
           {{"--bogus", "1"}, "--bogus: unknown flag (see --help)"},
           {{"--election-ms"}, "--election-ms: expects a value"},
           {{"stray"}, "unexpected argument 'stray' (flags start with --)"},
           {{"--election-ms", "40"},
            "--election-ms: must be greater than --heartbeat-ms (40 <= 50)"},
           {{"--follower-lease-ms", "500"},
            "--follower-lease-ms: must be less than --election-ms (500 >= "
            "500)"},
       }) {
    srv::FlagsResult r = srv::ParseFlags(With(c.first));
    CHECK_FALSE(r.ok);
    CHECK(r.error == c.second);
  }
  srv::FlagsResult u = srv::ParseFlags(With({"--unsafe", "yolo"}));
  CHECK(u.error.rfind("--unsafe: expected none, vote-not-persisted", 0) == 0);
  srv::FlagsResult ns = srv::ParseFlags(With({"--unsafe", "log-not-synced"}));
  REQUIRE(ns.ok);
  CHECK(ns.options.unsafe == raft::Unsafe::kLogNotSynced);
  CHECK(std::string(raft::ToString(ns.options.unsafe)) == "log-not-synced");
  srv::FlagsResult tx = srv::ParseFlags(With({"--unsafe", "txn-not-atomic"}));
  REQUIRE(tx.ok);
  CHECK(tx.options.unsafe == raft::Unsafe::kTxnNotAtomic);
}

TEST_CASE("flags: bad --peers and --id") {
  auto err = [](const std::string& peers, const std::string& id = "1") {
    return srv::ParseFlags({"--id", id, "--peers", peers, "--data-dir", "d"})
        .error;
  };
  CHECK(err("1=a:1,1=b:2") == "--peers: member 1 is listed twice");
  CHECK(err("0=a:1") ==
        "--peers: expected id=host:port[/client] with id in 1..9, got '0=a:1'");
  CHECK(err("1=a") == "--peers: expected host:port for member 1, got 'a'");
  CHECK(err("1=a:1/x") ==
        "--peers: expected a client port or host:port after '/' for member 1, "
        "got 'x'");
  CHECK(err("1=a:1,2=b:2", "3") == "--id: 3 is not a member of --peers");
  CHECK(err("1=a:1", "10") == "--id: expected an id in 1..9, got '10'");
}

TEST_CASE("flags: config file, command line wins") {
  TempFile f(
      "# a raftkv node\n"
      "id = 3\n"
      "--peers = 1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003\n"
      "data-dir = /tmp/n3   # trailing comment\n"
      "\n"
      "election-ms = 800\n"
      "no-pre-vote\n"
      "no-check-quorum = false\n");
  srv::FlagsResult r =
      srv::ParseFlags({"--config", f.path, "--election-ms", "900"});
  REQUIRE(r.ok);
  CHECK(r.options.id == 3);
  CHECK(r.options.data_dir == "/tmp/n3");
  CHECK(r.options.election_ms == 900);
  CHECK_FALSE(r.options.pre_vote);
  CHECK(r.options.check_quorum);
}

TEST_CASE("flags: config file errors name file:line") {
  TempFile f("id = 1\n\nelection-ms = soon\n");
  srv::FlagsResult r = srv::ParseFlags({"--config=" + f.path});
  CHECK_FALSE(r.ok);
  CHECK(r.error == f.path +
                       ":3: election-ms: expected an integer in [2, 600000], "
                       "got 'soon'");
  TempFile g("colour = blue\n");
  CHECK(srv::ParseFlags({"--config", g.path}).error ==
        g.path + ":1: colour: unknown flag (see --help)");
  CHECK(srv::ParseFlags({"--config", "/nonexistent/raftkv.conf"}).error ==
        "--config /nonexistent/raftkv.conf: cannot read the file");
}

TEST_CASE("flags: --help") {
  srv::FlagsResult r = srv::ParseFlags({"--id", "x", "--help"});
  CHECK(r.help);
  CHECK(srv::Usage().find("--follower-lease-ms") != std::string::npos);
}

// SshRemote: unit tests of the command building (quoting, Start's argv,
// signal names; no network), checked by running the built lines through a
// real /bin/sh, plus hidden end-to-end cases ([.ssh-e2e]) that
// tests/e2e_ssh_remote.sh runs against sshd in network namespaces. The e2e
// cases read FAULTLINE_SSH_HOSTS (space-separated "ns=address" pairs),
// FAULTLINE_SSH_KEY and FAULTLINE_SSH_KNOWN_HOSTS.
#include "harness/cluster/ssh_remote.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/process/daemons.h"
#include "harness/process/process.h"

namespace fs = std::filesystem;
using namespace faultline::harness;

namespace {

// What /bin/sh makes of a command line: runs `LINE` with printf so each
// resulting word is printed between < and >.
std::string ShWords(const std::string& line) {
  CommandResult r =
      RunCommand({"/bin/sh", "-c",
                  "set -- " + line + "; for w; do printf '<%s>' \"$w\"; done"});
  REQUIRE(r.exit_code == 0);
  return r.out;
}

}  // namespace

TEST_CASE("ShellQuote leaves safe words and quotes the rest", "[ssh]") {
  CHECK(ShellQuote("abc") == "abc");
  CHECK(ShellQuote("/usr/bin/etcd") == "/usr/bin/etcd");
  CHECK(ShellQuote("--name=n1") == "--name=n1");
  CHECK(ShellQuote("10.77.62.2:2379") == "10.77.62.2:2379");
  CHECK(ShellQuote("") == "''");
  CHECK(ShellQuote("a b") == "'a b'");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  CHECK(ShellQuote("$HOME") == "'$HOME'");
  CHECK(ShellQuote("*") == "'*'");
  CHECK(ShellQuote("~") == "'~'");
}

TEST_CASE("BuildCommandLine survives a shell word for word", "[ssh]") {
  const std::vector<std::string> hostile = {
      "echo",      "",           "a b",   "it's",        "$(touch /tmp/pwned)",
      "`id`",      "; rm -rf x", "\"q\"", "back\\slash", "new\nline",
      "*",         "~root",      "$HOME", "a'b'c",       "-n",
      "tab\there", "!x",         "{a,b}", "#c",          "&&"};
  std::string expected;
  for (const std::string& w : hostile) expected += "<" + w + ">";
  CHECK(ShWords(BuildCommandLine(hostile)) == expected);
}

TEST_CASE("BuildStartArgv runs the daemon detached with its own pid", "[ssh]") {
  auto argv =
      BuildStartArgv({"sleep", "30"}, "/tmp/x/log", {"A=1", "B=x y"}, "/tmp");
  REQUIRE(argv);
  REQUIRE(argv->size() == 11);
  CHECK((*argv)[0] == "sh");
  CHECK((*argv)[4] == "/tmp/x/log");
  CHECK((*argv)[5] == "/tmp");
  CHECK((*argv)[6] == "2");
  CHECK((*argv)[7] == "A=1");
  CHECK((*argv)[8] == "B=x y");
  CHECK((*argv)[9] == "sleep");

  CHECK_FALSE(BuildStartArgv({}, "/tmp/log", {}, ""));
  CHECK_FALSE(BuildStartArgv({"x"}, "", {}, ""));
  CHECK_FALSE(BuildStartArgv({"x"}, "/tmp/log", {"NOEQUALS"}, ""));
  CHECK_FALSE(BuildStartArgv({"x"}, "/tmp/log", {"1A=b"}, ""));
  CHECK_FALSE(BuildStartArgv({"x"}, "/tmp/log", {"A;B=c"}, ""));
}

TEST_CASE("The start script, run by a local shell, execs with env and log",
          "[ssh]") {
  fs::path dir = fs::temp_directory_path() /
                 ("faultline-ssh-unit-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string log = (dir / "sub" / "d.log").string();
  auto argv = BuildStartArgv({"sh", "-c", "echo pid=$$ a=$A b=$B pwd=$(pwd)"},
                             log, {"A=1", "B=x y"}, "/");
  REQUIRE(argv);
  CommandResult r = RunCommand({"/bin/sh", "-c", BuildCommandLine(*argv)});
  REQUIRE(r.exit_code == 0);
  std::string pid = r.out.substr(0, r.out.find('\n'));
  // The daemon writes its line to the log after the pid is printed.
  std::string content;
  for (int i = 0; i < 200 && content.empty(); ++i) {
    std::ifstream in(log);
    std::getline(in, content);
    if (content.empty())
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(content == "pid=" + pid + " a=1 b=x y pwd=/");

  auto missing = BuildStartArgv({"no-such-program-xyz"}, log, {}, "");
  REQUIRE(missing);
  CommandResult m = RunCommand({"/bin/sh", "-c", BuildCommandLine(*missing)});
  CHECK(m.exit_code == 127);
  CHECK(m.out.empty());
  CHECK(m.err.find("not found") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("SignalName gives kill -s names", "[ssh]") {
  CHECK(SignalName(SIGKILL) == "KILL");
  CHECK(SignalName(SIGSTOP) == "STOP");
  CHECK(SignalName(SIGCONT) == "CONT");
  CHECK(SignalName(SIGTERM) == "TERM");
  CHECK(SignalName(0).empty());
  CHECK(SignalName(1000).empty());
}

TEST_CASE("An unreachable host is an ssh error, never an exit status",
          "[ssh]") {
  SshOptions o;
  o.host = "127.0.0.1";
  o.port = 1;  // nothing listens there
  o.connect_timeout = std::chrono::milliseconds(1000);
  o.connect_attempts = 2;
  SshRemote remote(o);
  CommandResult r = remote.Run({"true"});
  CHECK(r.exit_code == -1);
  CHECK(r.error.rfind("ssh:", 0) == 0);
  CHECK(remote.Alive(1234));  // unknown counts as alive
  CHECK_FALSE(remote.Connect());
}

// ---- end-to-end cases, run by tests/e2e_ssh_remote.sh ----------------------

namespace {

struct E2eNode {
  std::string netns;
  std::string address;
};

std::vector<E2eNode> E2eNodes() {
  std::vector<E2eNode> nodes;
  const char* hosts = std::getenv("FAULTLINE_SSH_HOSTS");
  REQUIRE(hosts != nullptr);  // set by tests/e2e_ssh_remote.sh
  std::istringstream in(hosts);
  std::string pair;
  while (in >> pair) {
    auto eq = pair.find('=');
    REQUIRE(eq != std::string::npos);
    nodes.push_back({pair.substr(0, eq), pair.substr(eq + 1)});
  }
  REQUIRE(nodes.size() >= 2);
  return nodes;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE(v != nullptr);
  return v;
}

SshOptions E2eOptions(const std::string& address) {
  SshOptions o;
  o.host = address;
  o.user = "root";
  o.key_path = Env("FAULTLINE_SSH_KEY");
  o.known_hosts = Env("FAULTLINE_SSH_KNOWN_HOSTS");
  o.host_key_policy = HostKeyPolicy::kAcceptNew;
  o.connect_timeout = std::chrono::milliseconds(3000);
  return o;
}

std::string ProcState(SshRemote& remote, pid_t pid) {
  CommandResult r =
      remote.Run({"cat", "/proc/" + std::to_string(pid) + "/stat"});
  REQUIRE(r.exit_code == 0);
  auto close = r.out.rfind(") ");
  REQUIRE(close != std::string::npos);
  return r.out.substr(close + 2, 1);
}

template <typename F>
bool Eventually(F f, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return f();
}

}  // namespace

TEST_CASE("ssh e2e: Run in the node's namespace, exit codes, stdin, timeout",
          "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  SshRemote remote(E2eOptions(nodes[0].address));
  REQUIRE(remote.Connect());

  CommandResult addr = remote.Run({"ip", "-br", "-4", "addr"});
  REQUIRE(addr.exit_code == 0);
  CHECK(addr.out.find(nodes[0].address + "/") != std::string::npos);
  CHECK(addr.out.find(nodes[1].address + "/") == std::string::npos);
  CommandResult ns = remote.Run({"sh", "-c", "ip netns identify $$"});
  CHECK(ns.out == nodes[0].netns + "\n");

  CommandResult code =
      remote.Run({"sh", "-c", "echo out; echo err >&2; exit 7"});
  CHECK(code.exit_code == 7);
  CHECK(code.out == "out\n");
  CHECK(code.err == "err\n");
  CHECK(code.error.empty());

  const std::vector<std::string> words = {"a b", "it's", "$HOME", "`id`", ""};
  std::vector<std::string> argv = {"printf", "<%s>"};
  argv.insert(argv.end(), words.begin(), words.end());
  CHECK(remote.Run(argv).out == "<a b><it's><$HOME><`id`><>");

  CommandOptions in;
  in.stdin_data = "line one\nline two\n";
  CHECK(remote.Run({"cat"}, in).out == in.stdin_data);

  CommandOptions quick;
  quick.timeout = std::chrono::milliseconds(500);
  auto t0 = std::chrono::steady_clock::now();
  CommandResult slow = remote.Run({"sleep", "31.4159"}, quick);
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(slow.exit_code == -1);
  CHECK(slow.error.find("timed out") != std::string::npos);
  CHECK(took < std::chrono::milliseconds(2500));
  // The remote sleep was killed with the channel.
  CHECK(Eventually(
      [&] {
        return remote.Run({"pgrep", "-f", "^sleep 31.4159"}).exit_code == 1;
      },
      std::chrono::milliseconds(3000)));

  // Sequential calls reuse one session.
  CHECK(remote.sessions_opened() == 1);
}

TEST_CASE("ssh e2e: concurrent calls use a bounded pool", "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  SshOptions o = E2eOptions(nodes[1].address);
  o.max_sessions = 3;
  SshRemote remote(o);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      CommandResult r = remote.Run(
          {"sh", "-c", "sleep 0.3; echo $1", "sh", std::to_string(i)});
      if (r.exit_code == 0 && r.out == std::to_string(i) + "\n") ++good;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(good == 6);
  CHECK(remote.sessions_opened() >= 1);
  CHECK(remote.sessions_opened() <= 3);
}

TEST_CASE("ssh e2e: Start a daemon, signal it, watch its liveness",
          "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  SshRemote remote(E2eOptions(nodes[0].address));
  const std::string log = "/tmp/faultline-ssh-e2e/" + nodes[0].netns + "/d.log";
  auto pid = remote.Start({"sh", "-c", "echo hello $GREETING; exec sleep 300"},
                          log, {"GREETING=from ssh"});
  REQUIRE(pid);
  // The pid is the program's own: the shell, then (exec) sleep.
  CHECK(Eventually(
      [&] {
        CommandResult r =
            remote.Run({"cat", "/proc/" + std::to_string(*pid) + "/cmdline"});
        return r.out == std::string(
                            "sleep\0"
                            "300\0",
                            10);
      },
      std::chrono::milliseconds(3000)));
  CHECK(remote.Alive(*pid));

  REQUIRE(remote.Signal(*pid, SIGSTOP));
  CHECK(Eventually([&] { return ProcState(remote, *pid) == "T"; },
                   std::chrono::milliseconds(2000)));
  REQUIRE(remote.Signal(*pid, SIGCONT));
  CHECK(Eventually([&] { return ProcState(remote, *pid) == "S"; },
                   std::chrono::milliseconds(2000)));
  REQUIRE(remote.Signal(*pid, SIGKILL));
  CHECK(Eventually([&] { return !remote.Alive(*pid); },
                   std::chrono::milliseconds(3000)));

  fs::path local = fs::temp_directory_path() /
                   ("faultline-ssh-e2e-" + std::to_string(::getpid())) /
                   "d.log";
  REQUIRE(remote.Download(log, local.string()));
  std::ifstream in(local);
  std::string line;
  std::getline(in, line);
  CHECK(line == "hello from ssh");
  fs::remove_all(local.parent_path());

  auto bad = remote.Start({"no-such-program-xyz"}, log, {});
  REQUIRE_FALSE(bad);
  INFO(bad.error());
  CHECK(bad.error().find("not found") != std::string::npos);
  CHECK_FALSE(remote.Signal(999999, SIGKILL));
}

TEST_CASE("ssh e2e: Upload and Download round trip binary data", "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  SshRemote remote(E2eOptions(nodes[1].address));
  fs::path dir = fs::temp_directory_path() /
                 ("faultline-ssh-e2e-rt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string data;
  for (int i = 0; i < 1 << 20; ++i)
    data += static_cast<char>((i * 7919) & 0xff);
  {
    std::ofstream out(dir / "up.bin", std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  const std::string remote_path =
      "/tmp/faultline-ssh-e2e/" + nodes[1].netns + "/deep/er/up.bin";
  REQUIRE(remote.Upload((dir / "up.bin").string(), remote_path));
  CommandResult size = remote.Run({"stat", "-c", "%s", remote_path});
  CHECK(size.out == std::to_string(data.size()) + "\n");
  REQUIRE(remote.Download(remote_path, (dir / "down.bin").string()));
  std::ifstream in(dir / "down.bin", std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  CHECK(back == data);
  CHECK_FALSE(remote.Download("/no/such/file", (dir / "x").string()));
  fs::remove_all(dir);
}

TEST_CASE("ssh e2e: host key policies", "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  fs::path dir = fs::temp_directory_path() /
                 ("faultline-ssh-e2e-kh-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string kh = (dir / "known_hosts").string();
  std::ofstream(kh).close();

  SshOptions strict = E2eOptions(nodes[0].address);
  strict.known_hosts = kh;
  strict.host_key_policy = HostKeyPolicy::kStrict;
  strict.connect_attempts = 1;
  auto refused = SshRemote(strict).Connect();
  REQUIRE_FALSE(refused);
  CHECK(refused.error().find("not in known_hosts") != std::string::npos);

  SshOptions accept = strict;
  accept.host_key_policy = HostKeyPolicy::kAcceptNew;
  REQUIRE(SshRemote(accept).Connect());
  CHECK(fs::file_size(kh) > 0);
  CHECK(SshRemote(strict).Connect());

  // node 1's entry is changed to node 0's key: a mismatch, even for
  // accept-new.
  SshOptions other = accept;
  other.host = nodes[1].address;
  REQUIRE(SshRemote(other).Connect());
  std::ifstream in(kh);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  in.close();
  {
    std::ofstream out(kh, std::ios::trunc);
    out << first << "\n"
        << second.substr(0, second.find(' ')) << first.substr(first.find(' '))
        << "\n";
  }
  auto mismatch = SshRemote(other).Connect();
  REQUIRE_FALSE(mismatch);
  CHECK(mismatch.error().find("MISMATCH") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("ssh e2e: Daemons runs, pauses and stops daemons on SSH nodes",
          "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  SshRemote r0(E2eOptions(nodes[0].address));
  SshRemote r1(E2eOptions(nodes[1].address));
  std::vector<Node> cluster(2);
  cluster[0].name = "n1";
  cluster[0].ip = nodes[0].address;
  cluster[0].remote = &r0;
  cluster[1].index = 1;
  cluster[1].name = "n2";
  cluster[1].ip = nodes[1].address;
  cluster[1].remote = &r1;
  Daemons daemons("ssh-e2e", nullptr);
  REQUIRE(daemons.Reset(cluster));
  for (const Node& n : cluster) {
    REQUIRE(daemons.Start(n, "sleeper", {"sleep", "301"},
                          "/tmp/faultline-ssh-e2e/daemons-" + n.name + ".log"));
  }
  pid_t p0 = daemons.Pid(cluster[0], "sleeper");
  REQUIRE(p0 > 0);
  CHECK(daemons.RunningNodes("sleeper").size() == 2);

  REQUIRE(daemons.Pause(cluster[0], "sleeper"));
  CHECK(ProcState(r0, p0) == "T");
  REQUIRE(daemons.Resume(cluster[0], "sleeper"));
  CHECK(ProcState(r0, p0) != "T");

  REQUIRE(daemons.Kill(cluster[0], "sleeper"));
  CHECK_FALSE(r0.Alive(p0));
  CHECK_FALSE(daemons.Running(cluster[0], "sleeper"));
  CHECK(daemons.Running(cluster[1], "sleeper"));

  pid_t p1 = daemons.Pid(cluster[1], "sleeper");
  REQUIRE(daemons.StopAll(std::chrono::milliseconds(2000)));
  CHECK_FALSE(r1.Alive(p1));
  CHECK(daemons.RunningNodes("sleeper").empty());
}

TEST_CASE("ssh e2e: a lost connection is an ssh error, then reconnects",
          "[.ssh-e2e]") {
  auto nodes = E2eNodes();
  SshRemote remote(E2eOptions(nodes[1].address));
  REQUIRE(remote.Run({"true"}).exit_code == 0);
  REQUIRE(remote.sessions_opened() == 1);
  // sshd's session process -> timeout -> sh: kill the session process.
  CommandResult cut = remote.Run(
      {"sh", "-c", "kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); sleep 5"});
  INFO(cut.error);
  CHECK(cut.exit_code == -1);
  CHECK(cut.error.rfind("ssh:", 0) == 0);
  CommandResult again = remote.Run({"echo", "back"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "back\n");
  CHECK(remote.sessions_opened() == 2);
}

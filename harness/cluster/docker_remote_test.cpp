// DockerRemote and the docker cluster provider: unit tests of the pure parts
// (docker failure detection, address choice, config keys) and of the argv
// handed to the docker CLI, checked with a stand-in `docker` script that
// prints the words it got. The real engine is exercised by
// tests/e2e_docker.sh.
#include "harness/cluster/docker_remote.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/cluster/docker_cluster.h"
#include "harness/cluster/remote_factory.h"
#include "harness/config/config.h"

namespace fs = std::filesystem;
using namespace faultline::harness;

namespace {

// A stand-in docker CLI: prints each argument as <word> on one line, copies
// its stdin after a line "stdin:", then answers as FAKE_DOCKER_MODE says.
// The stand-in scripts of this process, removed when the tests end.
struct FakeDir {
  fs::path path = fs::temp_directory_path() /
                  ("faultline-fake-docker-" + std::to_string(getpid()));
  ~FakeDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string FakeDocker(const std::string& mode) {
  static FakeDir dir;
  static int n = 0;
  fs::create_directories(dir.path);
  fs::path p = dir.path / ("docker" + std::to_string(++n));
  std::ofstream f(p);
  f << "#!/bin/sh\n"
       "for a in \"$@\"; do printf '<%s>' \"$a\"; done; echo\n"
       "case \"$*\" in *' -i '*) echo stdin:; cat;; esac\n";
  if (mode == "missing") {
    f << "echo 'Error response from daemon: No such container: c1' >&2\n"
         "exit 1\n";
  } else if (mode == "oci") {
    f << "echo 'OCI runtime exec failed: exec failed: unable to start "
         "container process' >&2\nexit 126\n";
  } else if (mode == "answer") {
    f << "echo 'iptables: Bad rule' >&2\nexit 1\n";
  } else if (mode == "pid") {
    f << ":\n";  // the argv line is the output; Start must refuse it
  }
  f.close();
  chmod(p.c_str(), 0755);
  return p.string();
}

DockerRemote Make(const std::string& mode, const std::string& host = "") {
  DockerOptions o;
  o.container = "c1";
  o.docker_host = host;
  o.docker = FakeDocker(mode);
  return DockerRemote(o);
}

}  // namespace

TEST_CASE("docker: failures of docker itself are told from answers",
          "[docker]") {
  CommandResult ok{0, "out", "", ""};
  CHECK_FALSE(IsDockerFailure(ok));
  CommandResult answer{1, "",
                       "iptables: Bad rule (does a matching rule "
                       "exist in that chain?).\n",
                       ""};
  CHECK_FALSE(IsDockerFailure(answer));
  CommandResult code125{125, "", "", ""};  // the command's own 125
  CHECK_FALSE(IsDockerFailure(code125));
  CommandResult missing{
      1, "", "Error response from daemon: No such container: c9\n", ""};
  CHECK(IsDockerFailure(missing));
  CommandResult stopped{
      1, "", "Error response from daemon: Container abc is not running\n", ""};
  CHECK(IsDockerFailure(stopped));
  CommandResult engine{
      1, "",
      "Cannot connect to the Docker daemon at unix:///x.sock. Is the docker "
      "daemon running?\n",
      ""};
  CHECK(IsDockerFailure(engine));
  CommandResult oci{126, "", "OCI runtime exec failed: exec failed\n", ""};
  CHECK(IsDockerFailure(oci));
  CommandResult local{-1, "", "", "timed out after 100 ms"};
  CHECK(IsDockerFailure(local));
}

TEST_CASE("docker: Run hands argv to docker exec word by word", "[docker]") {
  DockerRemote r = Make("ok", "unix:///run/x.sock");
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(2500);
  CommandResult res = r.Run({"echo", "a b", "$(id)", "'"}, o);
  REQUIRE(res.ok());
  CHECK(res.out ==
        "<--host><unix:///run/x.sock><exec><c1><timeout><-s><KILL><2.500>"
        "<echo><a b><$(id)><'>\n");

  // With stdin data: -i, and the data reaches docker's stdin.
  o.stdin_data = "hello";
  res = r.Run({"cat"}, o);
  REQUIRE(res.ok());
  CHECK(res.out ==
        "<--host><unix:///run/x.sock><exec><-i><c1><timeout><-s><KILL>"
        "<2.500><cat>\nstdin:\nhello");
}

TEST_CASE("docker: a docker failure is never the command's answer",
          "[docker]") {
  CommandResult missing = Make("missing").Run({"true"});
  CHECK(missing.exit_code == -1);
  CHECK(missing.error.rfind("docker: c1: Error response from daemon", 0) == 0);
  CommandResult oci = Make("oci").Run({"nosuch"});
  CHECK(oci.exit_code == -1);
  CHECK(oci.error.rfind("docker: c1: OCI runtime exec failed", 0) == 0);
  // The command's own failure stays an exit status.
  CommandResult answer = Make("answer").Run({"iptables", "-D", "INPUT"});
  CHECK(answer.exit_code == 1);
  CHECK(answer.error.empty());
  CHECK(answer.err == "iptables: Bad rule\n");

  // Alive: a docker failure answers "alive" (never declares a death).
  CHECK(Make("missing").Alive(42));
  CHECK_FALSE(Make("answer").Alive(42));  // exit 1: gone
  CHECK(Make("ok").Alive(42));
  CHECK_FALSE(Make("ok").Alive(0));
}

TEST_CASE("docker: Start, Signal, Upload, Download build their commands",
          "[docker]") {
  // Start runs BuildStartArgv's script, not under timeout(1); its first
  // output line must be a pid, else Start fails.
  auto started =
      Make("pid").Start({"raftkv", "--id", "1"}, "/tmp/x/r.log", {"A=1"});
  REQUIRE_FALSE(started.ok());
  CHECK(started.error().find("no pid in the output '<exec><c1><sh><-c>") !=
        std::string::npos);
  CHECK(started.error().find("<timeout>") == std::string::npos);
  CHECK(started.error().find("<sh></tmp/x/r.log><><1><A=1><raftkv><--id><1>") !=
        std::string::npos);
  CHECK_FALSE(Make("pid").Start({}, "/tmp/l", {}).ok());
  CHECK_FALSE(Make("pid").Start({"x"}, "/tmp/l", {"1BAD=2"}).ok());

  CHECK(Make("ok").Signal(7, SIGSTOP).ok());
  auto refused = Make("missing").Signal(7, SIGKILL);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().find("docker: c1") != std::string::npos);
  CHECK_FALSE(Make("ok").Signal(0, SIGKILL).ok());

  fs::path dir = fs::temp_directory_path() /
                 ("faultline-docker-files-" + std::to_string(getpid()));
  fs::create_directories(dir);
  { std::ofstream(dir / "in") << "payload"; }
  CHECK(Make("ok").Upload((dir / "in").string(), "/data/in").ok());
  CHECK_FALSE(Make("missing").Upload((dir / "in").string(), "/d").ok());
  CHECK_FALSE(Make("ok").Upload((dir / "absent").string(), "/d").ok());
  REQUIRE(Make("ok").Download("/var/log/x.log", (dir / "out/x").string()).ok());
  std::ifstream in(dir / "out/x");
  std::string got((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
  CHECK(got.find("<exec><c1><timeout><-s><KILL><120.000><cat><--><"
                 "/var/log/x.log>") == 0);
  fs::remove_all(dir);
}

TEST_CASE("docker cluster: the address comes from the chosen network",
          "[docker]") {
  const std::string one =
      R"({"fl":{"IPAddress":"10.77.74.2","Gateway":"10.77.74.1"}})";
  auto a = PickDockerAddress(one, "");
  REQUIRE(a.ok());
  CHECK(a->ip == "10.77.74.2");
  CHECK(a->gateway == "10.77.74.1");
  CHECK(PickDockerAddress(one, "fl").ok());
  auto wrong = PickDockerAddress(one, "other");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error() == "no IPv4 address on network other (networks: fl)");

  const std::string two =
      R"({"a":{"IPAddress":"10.1.0.2","Gateway":"10.1.0.1"},)"
      R"("b":{"IPAddress":"10.2.0.2","Gateway":"10.2.0.1"}})";
  auto ambiguous = PickDockerAddress(two, "");
  REQUIRE_FALSE(ambiguous.ok());
  CHECK(ambiguous.error().find("set cluster.network") != std::string::npos);
  auto b = PickDockerAddress(two, "b");
  REQUIRE(b.ok());
  CHECK(b->ip == "10.2.0.2");
  CHECK_FALSE(PickDockerAddress(R"({"none":{"IPAddress":""}})", "").ok());
  CHECK_FALSE(PickDockerAddress("not json", "").ok());

  ClusterSpec spec;
  CHECK(DockerContainerName(spec, 0) == "faultline-n1");
  spec.containers = {"x", "y"};
  CHECK(DockerContainerName(spec, 1) == "y");
}

TEST_CASE("docker cluster: config keys, errors and --cluster", "[docker]") {
  auto load = [](const std::string& text, const Overrides& o = {}) {
    return LoadConfigText(text, "d.yaml", o);
  };
  LoadResult r = load(
      "name: x\ncluster:\n  provider: docker\n  containers: [a, b, c]\n"
      "  docker_host: unix:///run/d.sock\n  network: fl-net\n");
  INFO(r.FormatErrors());
  REQUIRE(r.ok());
  CHECK(r.spec->cluster.provider == "docker");
  CHECK(r.spec->cluster.nodes == 3);  // from the list
  CHECK(r.spec->cluster.containers == std::vector<std::string>{"a", "b", "c"});
  CHECK(r.spec->cluster.docker_host == "unix:///run/d.sock");
  CHECK(r.spec->cluster.network == "fl-net");
  // Round trip through the stored config.yaml.
  LoadResult back = load(DescribeSpec(*r.spec));
  INFO(back.FormatErrors());
  REQUIRE(back.ok());
  CHECK(back.spec->cluster == r.spec->cluster);

  LoadResult mismatch = load(
      "name: x\ncluster:\n  provider: docker\n  nodes: 5\n"
      "  containers: [a, b, c]\n");
  REQUIRE(mismatch.errors.size() == 1);
  CHECK(mismatch.errors[0].line == 4);
  CHECK(mismatch.errors[0].column == 10);
  CHECK(mismatch.errors[0].message ==
        "cluster.nodes is 5 but 3 containers are listed");

  LoadResult netns = load("name: x\ncluster:\n  network: fl\n");
  REQUIRE(netns.errors.size() == 1);
  CHECK(netns.errors[0].line == 3);
  CHECK(netns.errors[0].message.find("key of the docker provider") !=
        std::string::npos);

  LoadResult host = load(
      "name: x\ncluster:\n  provider: docker\n  docker_host: /run/d.sock\n");
  REQUIRE(host.errors.size() == 1);
  CHECK(host.errors[0].line == 4);
  CHECK(host.errors[0].column == 16);
  CHECK(host.errors[0].hint.find("unix://") != std::string::npos);

  LoadResult twice =
      load("name: x\ncluster:\n  provider: docker\n  containers: [a, b, a]\n");
  REQUIRE(twice.errors.size() == 1);
  CHECK(twice.errors[0].line == 4);
  CHECK(twice.errors[0].column == 22);
  CHECK(twice.errors[0].message ==
        "cluster.containers[2]: container a is listed twice");

  LoadResult badname = load(
      "name: x\ncluster:\n  provider: docker\n  containers: [a, 'b;rm']\n");
  REQUIRE(badname.errors.size() == 1);
  CHECK(badname.errors[0].message ==
        "cluster.containers[1]: 'b;rm' is not a container name");

  LoadResult delay = load(
      "name: x\ncluster: {provider: docker, nodes: 3}\n"
      "nemesis: {faults: [pause, delay]}\n");
  CHECK(delay.ok());  // the daemon is copied into the containers

  Overrides o;
  o.cluster = "docker";
  o.nodes = 3;
  LoadResult flag = load("name: x\n", o);
  REQUIRE(flag.ok());
  CHECK(flag.spec->cluster.provider == "docker");
  CHECK(flag.spec->cluster.nodes == 3);
  CHECK(flag.spec->cluster.containers.empty());
  o.cluster = "kubernetes";
  LoadResult unknown = load("name: x\n", o);
  REQUIRE(unknown.errors.size() == 1);
  CHECK(unknown.errors[0].message ==
        "--cluster kubernetes: unknown cluster provider 'kubernetes'");
}

TEST_CASE("docker: the remote descriptor reaches the same container again",
          "[docker]") {
  DockerOptions o;
  o.container = "faultline-n2";
  o.docker_host = "unix:///run/d.sock";
  RemoteDescriptor d = DockerRemote(o).Descriptor();
  CHECK(d.kind == "docker");
  CHECK(d.container == "faultline-n2");
  CHECK(d.docker_host == "unix:///run/d.sock");
  const std::string json = RemoteDescriptorToJson(d);
  CHECK(json.find("\"container\":\"faultline-n2\"") != std::string::npos);
  CHECK(json.find("\"host\"") == std::string::npos);  // ssh fields left out
  auto back = RemoteDescriptorFromJson(json);
  REQUIRE(back.ok());
  CHECK(*back == d);

  // Without docker_host, the engine of $DOCKER_HOST at the time is kept.
  o.docker_host.clear();
  setenv("DOCKER_HOST", "unix:///run/e.sock", 1);
  CHECK(DockerRemote(o).Descriptor().docker_host == "unix:///run/e.sock");
  unsetenv("DOCKER_HOST");
  CHECK(DockerRemote(o).Descriptor().docker_host.empty());

  // OpenRemote checks the container: an engine that is not there fails.
  d.docker_host = "unix:///nonexistent/faultline-test.sock";
  auto opened = OpenRemote(d);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.error().rfind("docker: container faultline-n2", 0) == 0);
  d.container.clear();
  CHECK_FALSE(OpenRemote(d).ok());
}

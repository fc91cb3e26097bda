// Unit tests for PipeProcess: line I/O with deadlines, what the child
// inherits (descriptors, environment, process group), SIGPIPE safety, kill
// and reap, and LogTail.
#include "harness/process/pipe_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

using faultline::harness::LogTail;
using faultline::harness::PipeProcess;
using faultline::harness::PipeProcessOptions;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

Clock::time_point In(int ms) {
  return Clock::now() + std::chrono::milliseconds(ms);
}

std::unique_ptr<PipeProcess> StartPython(const std::string& code,
                                         PipeProcessOptions options = {}) {
  auto p = PipeProcess::Start({"python3", "-c", code}, options);
  if (!p.ok()) FAIL(p.error());
  return std::move(p.value());
}

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/pipe-process-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

}  // namespace

TEST_CASE("pipe process: echoes lines, EOF when stdin closes") {
  auto p = StartPython(
      "import sys\n"
      "for l in sys.stdin:\n"
      "  sys.stdout.write('got ' + l); sys.stdout.flush()\n");
  REQUIRE(p->WriteLine("one", In(5000)).ok());
  REQUIRE(p->WriteLine("two", In(5000)).ok());
  auto a = p->ReadLine(In(5000));
  REQUIRE(a.status == PipeProcess::ReadStatus::kLine);
  CHECK(a.line == "got one");
  auto b = p->ReadLine(In(5000));
  CHECK(b.line == "got two");
  auto t0 = Clock::now();
  auto none = p->ReadLine(In(200));
  CHECK(none.status == PipeProcess::ReadStatus::kTimeout);
  CHECK(Clock::now() - t0 >= std::chrono::milliseconds(200));
  p->CloseStdin();
  CHECK(p->ReadLine(In(5000)).status == PipeProcess::ReadStatus::kEof);
  auto status = p->WaitExit(In(5000));
  REQUIRE(status);
  CHECK(PipeProcess::DescribeStatus(*status) == "exited with status 0");
  CHECK_FALSE(p->running());
}

TEST_CASE(
    "pipe process: only fds 0-2 are inherited, env and cwd are set, own "
    "group") {
  TempDir dir;
  int leak = open("/dev/null", O_RDONLY);  // not close-on-exec
  REQUIRE(leak >= 3);
  PipeProcessOptions o;
  o.env = {"PIPE_TEST_A=1", "HOME=/elsewhere"};
  o.working_dir = dir.path;
  o.log_path = dir.path + "/err.log";
  auto p = StartPython(
      "import os, sys\n"
      "fds = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
      "print(fds, os.environ.get('PIPE_TEST_A'), os.environ['HOME'],\n"
      "      os.getpgid(0) == os.getpid(), os.getcwd(), flush=True)\n"
      "sys.stderr.write('to the log\\n')\n",
      o);
  auto r = p->ReadLine(In(5000));
  close(leak);
  REQUIRE(r.status == PipeProcess::ReadStatus::kLine);
  // listdir's own descriptor is the one above 2.
  CHECK(r.line == "[0, 1, 2, 3] 1 /elsewhere True " + dir.path);
  REQUIRE(p->WaitExit(In(5000)));
  CHECK(LogTail(o.log_path, p->log_offset()) == "to the log");
}

TEST_CASE(
    "pipe process: writing to a child that exited is an error, not "
    "SIGPIPE") {
  auto p = StartPython("pass");
  REQUIRE(p->WaitExit(In(5000)));
  std::size_t written = 99;
  auto s = p->WriteLine("hello", In(1000), &written);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error() == "stdin closed");
  CHECK(written == 0);
  sigset_t pending;
  sigpending(&pending);
  CHECK(sigismember(&pending, SIGPIPE) == 0);
}

TEST_CASE(
    "pipe process: with SIGPIPE ignored (as the CLI does) the same write "
    "is the same error") {
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &before);
  auto p = StartPython("pass");
  REQUIRE(p->WaitExit(In(5000)));
  std::size_t written = 99;
  auto s = p->WriteLine("hello", In(1000), &written);
  sigaction(SIGPIPE, &before, nullptr);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error() == "stdin closed");
  CHECK(written == 0);
}

TEST_CASE("pipe process: Kill kills and reaps the child and its group") {
  auto p = StartPython(
      "import subprocess, time\n"
      "c = subprocess.Popen(['sleep', '3600'])\n"
      "print(c.pid, flush=True)\n"
      "time.sleep(3600)\n");
  auto r = p->ReadLine(In(5000));
  REQUIRE(r.status == PipeProcess::ReadStatus::kLine);
  pid_t grandchild = std::stoi(r.line);
  pid_t pid = p->pid();
  auto status = p->Kill();
  REQUIRE(status);
  CHECK(PipeProcess::DescribeStatus(*status) == "killed by signal 9 (SIGKILL)");
  CHECK(kill(pid, 0) != 0);
  // The grandchild was killed too; it is reparented and reaped by init (or
  // a subreaper), so wait for it to disappear.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto rp = line.rfind(')');
    gone = !stat || rp == std::string::npos || line[rp + 2] == 'Z';
    if (!gone) usleep(10000);
  }
  CHECK(gone);
  CHECK_FALSE(p->Kill());  // idempotent
}

TEST_CASE("pipe process: a missing program or directory fails to start") {
  auto missing = PipeProcess::Start({"/nonexistent/prog"}, {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() ==
        "cannot start /nonexistent/prog: No such file or directory");
  PipeProcessOptions o;
  o.working_dir = "/nonexistent/dir";
  auto bad_dir = PipeProcess::Start({"true"}, o);
  REQUIRE_FALSE(bad_dir.ok());
  CHECK(bad_dir.error() ==
        "cannot start true: cannot enter /nonexistent/dir: No such file or "
        "directory");
  CHECK_FALSE(PipeProcess::Start({}, {}).ok());
}

TEST_CASE("pipe process: a line longer than max_line is an error") {
  PipeProcessOptions o;
  o.max_line = 10;
  auto p = StartPython("print('x' * 50, flush=True)", o);
  auto r = p->ReadLine(In(5000));
  CHECK(r.status == PipeProcess::ReadStatus::kTooLong);
  CHECK(r.line == std::string(10, 'x'));
}

TEST_CASE("LogTail: last lines from an offset") {
  TempDir dir;
  std::string path = dir.path + "/log";
  {
    std::ofstream out(path);
    out << "before\n";
  }
  std::uint64_t from = fs::file_size(path);
  {
    std::ofstream out(path, std::ios::app);
    for (int i = 1; i <= 8; ++i) out << "line " << i << "\n";
    out << "\n";
  }
  CHECK(LogTail(path, from, 3) == "line 6\nline 7\nline 8");
  CHECK(LogTail(path, from, 20) ==
        "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8");
  CHECK(LogTail(path, 0, 20).rfind("before\n", 0) == 0);
  CHECK(LogTail(path, from, 20, 15) == "line 7\nline 8");
  CHECK(LogTail(path, from, 20, 14) == "line 8");
  CHECK(LogTail(path + ".missing", 0).empty());
}

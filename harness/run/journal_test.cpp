// The journal: lines grouped into few write(2) calls, each event in the
// kernel within kFlushBound of its Append without anyone flushing, every
// event on disk after Close or destruction, dense indices and non-decreasing
// times in file order, the events read back as they were appended, write
// errors reported, and a SIGKILLed writer leaving a readable prefix.
#include "harness/run/journal.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "checkers/history_io.h"

namespace {

namespace fs = std::filesystem;
using faultline::checkers::Event;
using faultline::checkers::EventType;
using faultline::checkers::History;
using faultline::checkers::Value;
using faultline::harness::Journal;
using faultline::harness::kFlushBound;
using Clock = std::chrono::steady_clock;

struct TempFile {
  TempFile()
      : path(fs::temp_directory_path() /
             ("journal-test-" + std::to_string(getpid()) + "-" +
              std::to_string(counter++) + ".jsonl")) {}
  ~TempFile() { fs::remove(path); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  static inline int counter = 0;
  const fs::path path;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t Lines(const fs::path& p) {
  std::string text = Slurp(p);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Polls `done` until it holds or `limit` passes; true when it held.
template <typename F>
bool Await(F done, std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

Event Write(std::int64_t process, std::int64_t v) {
  Event e;
  e.process = process;
  e.type = EventType::kInvoke;
  e.f = "write";
  e.key = Value::String("k" + std::to_string(v % 8));
  e.value = Value::Int(v);
  e.node = "n1";
  return e;
}

// Every event of the file, which must read without an error; `warnings`
// gets the reader's warnings.
History ReadBack(const fs::path& p, std::vector<std::string>* warnings) {
  auto read = faultline::checkers::ParseJsonl(Slurp(p));
  INFO(faultline::checkers::ToString(read.error));
  REQUIRE(read.ok);
  if (warnings != nullptr) *warnings = read.warnings;
  return read.history;
}

void CheckDenseAndOrdered(const History& h) {
  for (std::size_t i = 0; i < h.size(); ++i) {
    REQUIRE(h[i].index == static_cast<std::int64_t>(i));
    REQUIRE(h[i].time.has_value());
    if (i > 0) REQUIRE(*h[i].time >= *h[i - 1].time);
  }
}

}  // namespace

TEST_CASE("journal: many appends take few writes, Close writes the rest") {
  TempFile f;
  std::atomic<int> calls{0};
  auto j = Journal::Open(f.path.string(), Clock::now(),
                         [&](int fd, const void* d, size_t n) {
                           ++calls;
                           return ::write(fd, d, n);
                         });
  REQUIRE(j.ok());
  constexpr int kEvents = 20000;
  for (int i = 0; i < kEvents; ++i) {
    auto stamp = (*j)->Append(Write(i % 4, i));
    REQUIRE(stamp.index == i);
  }
  CHECK((*j)->size() == kEvents);
  REQUIRE((*j)->Close().ok());
  INFO("write calls: " << calls.load());
  // One write per kFlushBound at most while appending (plus Close's): the
  // appends would have to take 20 s for this to fail.
  CHECK(calls.load() <= kEvents / 5);
  CHECK((*j)->writes() == static_cast<std::uint64_t>(calls.load()));
  std::vector<std::string> warnings;
  History h = ReadBack(f.path, &warnings);
  CHECK(warnings.empty());
  REQUIRE(h.size() == kEvents);
  CheckDenseAndOrdered(h);
  CHECK(h[123].value == Value::Int(123));
}

TEST_CASE("journal: an appended event reaches write(2) within the bound") {
  TempFile f;
  std::mutex mu;
  std::vector<Clock::time_point> written;
  auto j = Journal::Open(f.path.string(), Clock::now(),
                         [&](int fd, const void* d, size_t n) {
                           {
                             std::lock_guard<std::mutex> lock(mu);
                             written.push_back(Clock::now());
                           }
                           return ::write(fd, d, n);
                         });
  REQUIRE(j.ok());
  std::vector<double> late_ms;
  for (int i = 0; i < 20; ++i) {
    auto appended = Clock::now();
    (*j)->Append(Write(0, i));
    // Nobody flushes: the flusher alone must write it.
    REQUIRE(
        Await([&] { return Lines(f.path) == static_cast<std::size_t>(i + 1); },
              std::chrono::seconds(5)));
    std::lock_guard<std::mutex> lock(mu);
    REQUIRE(!written.empty());
    late_ms.push_back(
        std::chrono::duration<double, std::milli>(written.back() - appended)
            .count());
  }
  std::sort(late_ms.begin(), late_ms.end());
  INFO("append to write(2), ms: min " << late_ms.front() << " median "
                                      << late_ms[late_ms.size() / 2] << " max "
                                      << late_ms.back());
  const double bound = static_cast<double>(kFlushBound.count());
  // The bound plus a scheduling delay: 20 ms for the median, a second for
  // the worst on a loaded machine.
  CHECK(late_ms[late_ms.size() / 2] <= bound + 20);
  CHECK(late_ms.back() <= bound + 1000);
}

TEST_CASE("journal: destruction writes every event appended") {
  TempFile f;
  {
    auto j = Journal::Open(f.path.string(), Clock::now());
    REQUIRE(j.ok());
    for (int i = 0; i < 5000; ++i) (*j)->Append(Write(0, i));
  }  // no Flush, no Close
  History h = ReadBack(f.path, nullptr);
  CHECK(h.size() == 5000);
  CheckDenseAndOrdered(h);
}

TEST_CASE("journal: Flush writes at once") {
  TempFile f;
  auto j = Journal::Open(f.path.string(), Clock::now());
  REQUIRE(j.ok());
  (*j)->Append(Write(0, 1));
  (*j)->Append(Write(0, 2));
  REQUIRE((*j)->Flush().ok());
  CHECK(Lines(f.path) == 2);
}

TEST_CASE("journal: appends from many threads: dense indices, times in order") {
  TempFile f;
  auto j = Journal::Open(f.path.string(), Clock::now());
  REQUIRE(j.ok());
  constexpr int kThreads = 4, kEach = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) (*j)->Append(Write(t, i));
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE((*j)->Close().ok());
  History h = ReadBack(f.path, nullptr);
  REQUIRE(h.size() == kThreads * kEach);
  CheckDenseAndOrdered(h);
  std::vector<std::int64_t> next(kThreads, 0);
  for (const auto& e : h) {  // each thread's events in its own order
    REQUIRE(e.value == Value::Int(next[static_cast<std::size_t>(e.process)]++));
  }
}

TEST_CASE("journal: the events read back are the events appended") {
  TempFile f;
  History appended;
  {
    Event a = Write(3, 7);
    a.extra.emplace_back("phase", Value::String("final"));
    Event b = a;
    b.type = EventType::kOk;
    b.value = Value::MakeList({Value::Int(1), Value::String("x\n\"y\""),
                               Value::Null(), Value::Bool(true)});
    Event c;
    c.process = faultline::checkers::kNemesisProcess;
    c.type = EventType::kInfo;
    c.f = "start-partition";
    c.value = Value::MakeObject({{"kind", Value::String("halves")},
                                 {"nodes", Value::MakeList({Value::Int(1)})}});
    c.error = "timeout: no answer in 2000 ms";
    Event d = Write(4, -9000000000LL);
    d.type = EventType::kFail;
    d.key = Value::Null();
    d.error = "no-client";
    appended = {a, b, c, d};
  }
  auto j = Journal::Open(f.path.string(), Clock::now());
  REQUIRE(j.ok());
  for (auto& e : appended) {
    auto stamp = (*j)->Append(e);
    e.index = stamp.index;
    e.time = stamp.time;
  }
  REQUIRE((*j)->Close().ok());
  History h = ReadBack(f.path, nullptr);
  REQUIRE(h.size() == appended.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    INFO("event " << i);
    CHECK(faultline::checkers::ToJsonLine(h[i]) ==
          faultline::checkers::ToJsonLine(appended[i]));
    CHECK(h[i].value == appended[i].value);
    CHECK(h[i].key == appended[i].key);
    CHECK(h[i].extra == appended[i].extra);
    CHECK(faultline::checkers::LineOf(h[i]) ==
          faultline::checkers::LineOf(appended[i]));
  }
}

TEST_CASE("journal: a failed write is reported, nothing is written after it") {
  TempFile f;
  std::atomic<int> calls{0};
  auto j = Journal::Open(f.path.string(), Clock::now(),
                         [&](int fd, const void* d, size_t n) -> ssize_t {
                           if (++calls > 1) {
                             errno = ENOSPC;
                             return -1;
                           }
                           return ::write(fd, d, n);
                         });
  REQUIRE(j.ok());
  (*j)->Append(Write(0, 0));
  REQUIRE((*j)->Flush().ok());
  (*j)->Append(Write(0, 1));
  auto flushed = (*j)->Flush();
  REQUIRE_FALSE(flushed.ok());
  CHECK(flushed.error().find("cannot write history") != std::string::npos);
  CHECK(flushed.error().find(strerror(ENOSPC)) != std::string::npos);
  CHECK((*j)->Append(Write(0, 2)).index == 2);  // indices go on
  CHECK_FALSE((*j)->status().ok());
  CHECK_FALSE((*j)->Close().ok());
  CHECK(calls.load() == 2);  // the third line was not tried
  CHECK(Lines(f.path) == 1);
}

TEST_CASE("journal: a SIGKILLed writer leaves a readable prefix") {
  TempFile f;
  // The child's count of events appended, shared with this process.
  void* shared =
      mmap(nullptr, sizeof(std::atomic<std::int64_t>), PROT_READ | PROT_WRITE,
           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  auto* appended = new (shared) std::atomic<std::int64_t>(0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto j = Journal::Open(f.path.string(), Clock::now());
    if (!j.ok()) _exit(3);
    for (std::int64_t i = 0;; ++i) {
      Event e = Write(i % 16, i);
      e.value = Value::String(std::string(static_cast<std::size_t>(i % 300),
                                          'v'));  // lines of many lengths
      (*j)->Append(e);
      appended->store(i + 1);
      // A burst, then about 20k events/s, so the file stays small.
      if (i > 20000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  struct Reap {  // the child never outlives the case
    pid_t pid;
    ~Reap() {
      if (pid > 0 && kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
  } reap{child};
  // Mid-stream: the child is appending; what it had appended a moment ago
  // reaches the file with nobody flushing; then SIGKILL.
  REQUIRE(Await([&] { return appended->load() >= 20000; },
                std::chrono::seconds(20)));
  const std::int64_t before = appended->load();
  REQUIRE(
      Await([&] { return Lines(f.path) >= static_cast<std::size_t>(before); },
            std::chrono::seconds(5)));
  REQUIRE(kill(child, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  reap.pid = 0;
  CHECK(WIFSIGNALED(status));
  const std::int64_t at_kill = appended->load();
  munmap(shared, sizeof(std::atomic<std::int64_t>));

  std::vector<std::string> warnings;
  History h = ReadBack(f.path, &warnings);
  // Complete lines only, but for at most one cut last line.
  CHECK(warnings.size() <= 1);
  for (const auto& w : warnings) {
    CHECK(w.find("truncated last line") != std::string::npos);
  }
  CHECK(static_cast<std::int64_t>(h.size()) >= before);
  CHECK(static_cast<std::int64_t>(h.size()) <= at_kill + 1);
  CheckDenseAndOrdered(h);
  for (const auto& e : h) {
    REQUIRE(e.value.is_string());
  }
}

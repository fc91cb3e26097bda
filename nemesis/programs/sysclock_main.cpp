// faultline-clock: moves this machine's real CLOCK_REALTIME for the
// system-clock faults and puts it back (nemesis/clock/sysclock_tool.h has the
// usage, the state file and the output; docs/faults.md "System clocks").
// Steps are relative and atomic: clock_adjtime(CLOCK_REALTIME,
// ADJ_SETOFFSET|ADJ_NANO), so no read-modify-write error. Needs
// CAP_SYS_TIME (root). Every process on the machine (every container and
// network namespace too) sees the change.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nemesis/clock/sysclock_tool.h"

namespace {

using faultline::nemesis::SysclockArgs;
using faultline::nemesis::SysclockState;

std::int64_t Ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// REALTIME - MONOTONIC now; MONOTONIC read on both sides of REALTIME.
std::int64_t OffsetNow() {
  std::int64_t m1 = Ns(CLOCK_MONOTONIC);
  std::int64_t r = Ns(CLOCK_REALTIME);
  std::int64_t m2 = Ns(CLOCK_MONOTONIC);
  return r - (m1 + (m2 - m1) / 2);
}

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

std::string ReadAll(const std::string& path, bool* exists) {
  std::ifstream in(path);
  *exists = static_cast<bool>(in);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

int Die(const std::string& what) {
  std::fprintf(stderr, "faultline-clock: %s: %s\n", what.c_str(),
               std::strerror(errno));
  return 1;
}

bool Step(std::int64_t step_ns) {
  if (step_ns == 0) return true;
  auto split = faultline::nemesis::SplitStep(step_ns);
  timex tx{};
  tx.modes = ADJ_SETOFFSET | ADJ_NANO;
  tx.time.tv_sec = static_cast<time_t>(split.sec);
  tx.time.tv_usec = static_cast<suseconds_t>(split.nsec);  // ns (ADJ_NANO)
  return clock_adjtime(CLOCK_REALTIME, &tx) >= 0;
}

// The valid state of this boot, if any (a stale one is removed).
std::optional<SysclockState> LoadState(const std::string& path) {
  bool exists = false;
  std::string text = ReadAll(path, &exists);
  if (!exists) return std::nullopt;
  auto st = faultline::nemesis::ParseSysclockState(text);
  if (!st || st->boot_id != BootId()) {
    std::fprintf(stderr,
                 "faultline-clock: %s is stale or unreadable (another boot?); "
                 "removing it without a step\n",
                 path.c_str());
    ::unlink(path.c_str());
    return std::nullopt;
  }
  return st;
}

// The state of this boot; records the baseline first when there is none
// (write a temporary file, fsync, link: never overwrites).
std::optional<SysclockState> EnsureState(const std::string& path) {
  if (auto st = LoadState(path)) return st;
  SysclockState st{OffsetNow(), BootId()};
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return std::nullopt;
  std::string text = faultline::nemesis::FormatSysclockState(st);
  bool ok = ::write(fd, text.data(), text.size()) ==
                static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (ok && ::link(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    if (errno == EEXIST) {  // recorded meanwhile: that baseline wins
      ::unlink(tmp.c_str());
      return LoadState(path);
    }
  }
  ::unlink(tmp.c_str());
  if (!ok) return std::nullopt;
  return st;
}

void Print(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// Back to the baseline, then the state file goes. Idempotent.
int Reset(const std::string& path) {
  auto st = LoadState(path);
  if (!st) {
    Print("reset offset_ns=0 stepped_ns=0 baseline=0");
    return 0;
  }
  const std::int64_t step =
      faultline::nemesis::StepToNs(OffsetNow(), st->baseline_ns);
  if (!Step(step)) return Die("clock_adjtime");
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return Die("unlink " + path);
  Print("reset offset_ns=" + std::to_string(OffsetNow() - st->baseline_ns) +
        " stepped_ns=" + std::to_string(step) + " baseline=1");
  return 0;
}

int Show(const std::string& path) {
  auto st = LoadState(path);
  const std::int64_t now = OffsetNow();
  Print("show offset_ns=" + std::to_string(st ? now - st->baseline_ns : 0) +
        " baseline=" + (st ? "1" : "0") + " raw_ns=" + std::to_string(now) +
        " boot_id=" + BootId());
  return 0;
}

int Bump(const SysclockArgs& a) {
  auto st = EnsureState(a.state);
  if (!st) return Die("recording the baseline in " + a.state);
  if (!Step(a.delta_ms * 1'000'000)) return Die("clock_adjtime");
  Print("bump offset_ns=" + std::to_string(OffsetNow() - st->baseline_ns));
  return 0;
}

// Flips up and back every period until the duration ends or a signal
// (SIGTERM, SIGINT, SIGHUP) comes; then the clock is reset in any case.
int Strobe(const SysclockArgs& a) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  auto st = EnsureState(a.state);
  if (!st) return Die("recording the baseline in " + a.state);
  const std::int64_t start = Ns(CLOCK_MONOTONIC);
  const std::int64_t period = a.period_ms * 1'000'000;
  const std::int64_t end = start + a.duration_ms * 1'000'000;
  std::string why = "duration";
  for (std::int64_t k = 0;; ++k) {
    const std::int64_t due = start + k * period;
    if (due >= end) break;
    std::int64_t left = due - Ns(CLOCK_MONOTONIC);
    if (left > 0) {
      timespec ts{static_cast<time_t>(left / 1'000'000'000),
                  static_cast<long>(left % 1'000'000'000)};
      int sig = sigtimedwait(&set, nullptr, &ts);
      if (sig > 0) {
        why = "signal";
        break;
      }
      if (sig < 0 && errno == EINTR) {
        --k;  // retry the same flip
        continue;
      }
    }
    const std::int64_t target =
        st->baseline_ns + faultline::nemesis::StrobeTargetNs(k, a.delta_ms);
    if (!Step(faultline::nemesis::StepToNs(OffsetNow(), target))) {
      int e = errno;
      (void)Reset(a.state);
      errno = e;
      return Die("clock_adjtime");
    }
    Print("flip k=" + std::to_string(k) + " at_ms=" +
          std::to_string((Ns(CLOCK_MONOTONIC) - start) / 1'000'000) +
          " up=" + (k % 2 == 0 ? "1" : "0") +
          " offset_ns=" + std::to_string(OffsetNow() - st->baseline_ns));
  }
  std::printf("end why=%s\n", why.c_str());
  return Reset(a.state);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = faultline::nemesis::ParseSysclockArgs(args);
  if (!parsed.args) {
    std::fprintf(stderr,
                 "faultline-clock: %s\nusage: faultline-clock show|reset "
                 "--state FILE\n       faultline-clock bump --state FILE "
                 "DELTA_MS\n       faultline-clock strobe --state FILE "
                 "DELTA_MS PERIOD_MS DURATION_MS\n",
                 parsed.error.c_str());
    return 254;
  }
  const SysclockArgs& a = *parsed.args;
  if (a.command == "show") return Show(a.state);
  if (a.command == "reset") return Reset(a.state);
  if (a.command == "bump") return Bump(a);
  return Strobe(a);
}

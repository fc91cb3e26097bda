#include "harness/clock/clock.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "harness/ledger/ledger.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "harness/run/store.h"

namespace faultline::harness {
namespace {

double RealNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Up to 6 decimals, trailing zeros cut: "2", "1.5", "0.001".
std::string Short(double v) {
  std::string s = Fixed(v, 6);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// A zombie counts as dead: it will never touch its files again (a
// SIGKILLed member whose parent, the controller, is gone stays one until
// init reaps it).
bool Alive(int pid) {
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  auto paren = line.rfind(')');
  return !(paren != std::string::npos && paren + 2 < line.size() &&
           line[paren + 2] == 'Z');
}

// The pid in "<prefix><digits>", or -1.
int PidAfter(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size()) return -1;
  long long pid = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    pid = pid * 10 + (name[i] - '0');
    if (pid > 4'194'304) return -1;  // above PID_MAX_LIMIT
  }
  return pid > 0 ? static_cast<int>(pid) : -1;
}

}  // namespace

FakeClock FakeClock::Skewed(double now, double step_s, double new_rate) const {
  return FakeClock{now, At(now) + step_s, new_rate};
}

FakeClock FakeClock::Reset(double now, bool keep_offset) const {
  return FakeClock{now, keep_offset ? At(now) : now, 1.0};
}

std::string FaketimeSpec(const FakeClock& clock, double now) {
  if (clock.rate == 1.0) {
    const double off = clock.OffsetAt(now);
    if (std::fabs(off) < 5e-7) return "+0 x1";
    return (off < 0 ? "" : "+") + Fixed(off, 6) + " x1";
  }
  return "@" + Fixed(clock.At(now), 6) + " x" + Short(clock.rate);
}

std::vector<std::string> FaketimeEnv(const std::string& library,
                                     const std::string& file,
                                     bool fake_monotonic) {
  std::vector<std::string> env = {
      "LD_PRELOAD=" + library,
      "FAKETIME_TIMESTAMP_FILE=" + file,
      "FAKETIME_NO_CACHE=1",
      "FAKETIME_FMT=%s",
  };
  if (!fake_monotonic) env.push_back("FAKETIME_DONT_FAKE_MONOTONIC=1");
  return env;
}

std::vector<int> FaketimeShmPids(const std::vector<std::string>& names) {
  std::vector<int> pids;
  for (const auto& n : names) {
    int pid = PidAfter(n, "faketime_shm_");
    if (pid < 0) pid = PidAfter(n, "sem.faketime_sem_");
    if (pid > 0) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

Status RemoveStaleFaketimeShm(std::vector<std::string>* log,
                              const std::string& shm_dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(shm_dir, ec))
    names.push_back(e.path().filename().string());
  if (ec) return Fail("cannot list " + shm_dir + ": " + ec.message());
  std::string errors;
  for (int pid : FaketimeShmPids(names)) {
    if (Alive(pid)) continue;
    bool removed = false;
    for (const char* prefix : {"/faketime_shm_", "/sem.faketime_sem_"}) {
      std::string path = shm_dir;
      path.append(prefix).append(std::to_string(pid));
      std::error_code rm;
      if (std::filesystem::remove(path, rm)) removed = true;
      if (rm)
        errors += (errors.empty() ? "" : "; ") + path + ": " + rm.message();
    }
    if (removed && log)
      log->push_back("removed libfaketime leftovers of dead pid " +
                     std::to_string(pid) + " in " + shm_dir);
  }
  if (!errors.empty()) return Fail(errors);
  return Ok();
}

Status RemoveStaleFaketimeShmOn(Remote& remote, const std::string& shm_dir) {
  // ${f##*_} is the pid of faketime_shm_<pid> and sem.faketime_sem_<pid>;
  // an unmatched glob leaves "*", which is not a number.
  static const char* const kScript =
      "cd \"$1\" 2>/dev/null || exit 0\n"
      "for f in faketime_shm_* sem.faketime_sem_*; do\n"
      "  p=${f##*_}\n"
      "  case \"$p\" in ''|*[!0-9]*) continue ;; esac\n"
      "  [ -e \"/proc/$p\" ] || rm -f -- \"$f\" || exit 1\n"
      "done\n";
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(10000);
  auto r = remote.Run({"sh", "-c", kScript, "sh", shm_dir}, o);
  if (!r.ok())
    return Fail("cannot remove libfaketime leftovers in " + shm_dir + ": " +
                DescribeResult(r));
  return Ok();
}

std::string FindFaketimeShim() {
  const char* env = std::getenv("FAULTLINE_FAKETIME_SHIM");
  return FindCompanion(env == nullptr ? "" : env, kFaketimeShimName,
                       {.access = Access::kRead, .search_path = false});
}

std::vector<std::string> PreloadFirst(std::vector<std::string> env,
                                      const std::string& library) {
  static const std::string kKey = "LD_PRELOAD=";
  for (auto& entry : env) {
    if (entry.rfind(kKey, 0) != 0) continue;
    const std::string list = entry.substr(kKey.size());
    if (list == library || list.rfind(library + ":", 0) == 0) return env;
    entry = kKey + library + (list.empty() ? "" : ":" + list);
    return env;
  }
  env.push_back(kKey + library);
  return env;
}

Result<std::unique_ptr<ClockControl>> ClockControl::Create(Options options,
                                                           Ledger* ledger) {
  if (options.library.empty()) options.library = kFaketimeLibrary;
  if (access(options.library.c_str(), R_OK) != 0)
    return Fail("clock: " + options.library +
                " not found; install the Debian package libfaketime "
                "(scripts/install-deps.sh)");
  if (options.dir.empty() || options.dir.front() != '/')
    return Fail(
        "clock: the faketime directory must be an absolute path, got '" +
        options.dir + "'");
  long seq = 0;
  if (options.on_nodes) {
    return std::unique_ptr<ClockControl>(
        new ClockControl(std::move(options), ledger, seq));
  }
  if (ledger != nullptr) {
    LedgerEntry e;
    e.kind = "faketime";
    e.name = options.dir;
    seq = ledger->Record(e);
    if (seq < 0)
      return Fail("clock: cannot write the fault ledger " + ledger->path());
  }
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec)
    return Fail("clock: cannot create " + options.dir + ": " + ec.message());
  return std::unique_ptr<ClockControl>(
      new ClockControl(std::move(options), ledger, seq));
}

ClockControl::ClockControl(Options options, Ledger* ledger, long seq)
    : options_(std::move(options)), ledger_(ledger), seq_(seq) {}

ClockControl::~ClockControl() = default;

std::string ClockControl::FilePath(const Node& node) const {
  return options_.dir + "/" + node.name + ".faketime";
}

Status ClockControl::WriteLocked(const Node& node, const FakeClock& clock,
                                 double now) {
  if (torn_down_) return Fail("clock: already torn down");
  const std::string content = FaketimeSpec(clock, now) + "\n";
  Status s = Ok();
  if (options_.on_nodes && node.remote != nullptr) {
    // The node's process reads the file on the node (SSH): write it there,
    // also atomically (the directory is inside the node's run directory).
    CommandOptions o;
    o.stdin_data = content;
    o.timeout = std::chrono::milliseconds(10000);
    auto r = node.remote->Run(
        {"sh", "-c",
         "mkdir -p \"$1\" && cat > \"$2.tmp\" && mv -f \"$2.tmp\" \"$2\"", "sh",
         options_.dir, FilePath(node)},
        o);
    if (!r.ok())
      s = Fail("cannot write " + FilePath(node) +
               " on the node: " + (r.error.empty() ? r.err : r.error));
  } else {
    s = WriteFileAtomic(FilePath(node), content);
  }
  if (!s.ok()) return Fail("clock: " + node.name + ": " + s.error());
  clocks_[node.name] = clock;
  if (options_.on_nodes && node.remote != nullptr)
    remotes_[node.name] = node.remote;
  return Ok();
}

Result<std::vector<std::string>> ClockControl::Env(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = RealNow();
  auto it = clocks_.find(node.name);
  FakeClock clock = it != clocks_.end() ? it->second : FakeClock{now, now, 1};
  // A fresh process: restate the clock from now, so an "@" line names the
  // time the process starts at rather than an older change.
  clock = clock.Skewed(now, 0, clock.rate);
  Status s = WriteLocked(node, clock, now);
  if (!s.ok()) return Fail(s.error());
  return FaketimeEnv(options_.library, FilePath(node), options_.fake_monotonic);
}

Result<double> ClockControl::Skew(const Node& node, long long offset_ms,
                                  double rate) {
  if (rate < kMinClockRate || rate > kMaxClockRate)
    return Fail("clock: rate " + Short(rate) + " is outside " +
                Short(kMinClockRate) + ".." + Short(kMaxClockRate));
  if (offset_ms < -kMaxClockOffsetMs || offset_ms > kMaxClockOffsetMs)
    return Fail("clock: offset " + std::to_string(offset_ms) +
                " ms is outside +/- 1 day");
  std::lock_guard<std::mutex> lock(mu_);
  const double now = RealNow();
  auto it = clocks_.find(node.name);
  FakeClock clock = it != clocks_.end() ? it->second : FakeClock{now, now, 1};
  clock = clock.Skewed(now, static_cast<double>(offset_ms) / 1000.0, rate);
  Status s = WriteLocked(node, clock, now);
  if (!s.ok()) return Fail(s.error());
  return clock.OffsetAt(now) * 1000.0;
}

Result<double> ClockControl::Reset(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  const double now = RealNow();
  auto it = clocks_.find(node.name);
  FakeClock clock = it != clocks_.end() ? it->second : FakeClock{now, now, 1};
  clock = clock.Reset(now, options_.fake_monotonic);
  Status s = WriteLocked(node, clock, now);
  if (!s.ok()) return Fail(s.error());
  return clock.OffsetAt(now) * 1000.0;
}

double ClockControl::OffsetMs(const Node& node) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = clocks_.find(node.name);
  if (it == clocks_.end()) return 0;
  return it->second.OffsetAt(RealNow()) * 1000.0;
}

Status ClockControl::Teardown() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string errors;
  if (!torn_down_ && !options_.on_nodes) {
    std::error_code ec;
    std::filesystem::remove_all(options_.dir, ec);
    if (ec) errors = options_.dir + ": " + ec.message();
  }
  Status shm = RemoveStaleFaketimeShm(nullptr);
  if (!shm.ok()) errors += (errors.empty() ? "" : "; ") + shm.error();
  for (const auto& [name, remote] : remotes_) {
    Status on_node = RemoveStaleFaketimeShmOn(*remote);
    if (!on_node.ok())
      errors += (errors.empty() ? "" : "; ") + name + ": " + on_node.error();
  }
  if (!errors.empty()) return Fail("clock: teardown: " + errors);
  if (!torn_down_ && ledger_ != nullptr && seq_ > 0) ledger_->MarkHealed(seq_);
  torn_down_ = true;
  return Ok();
}

ClockSkewable::~ClockSkewable() = default;

void ClockSkewable::EnableClock(std::unique_ptr<ClockControl> clock) {
  clock_ = std::move(clock);
}

Result<std::vector<std::string>> ClockSkewable::ClockEnv(const Node& node) {
  if (!clock_) return std::vector<std::string>{};
  return clock_->Env(node);
}

Status ClockSkewable::TeardownClock() {
  if (!clock_) return Ok();
  return clock_->Teardown();
}

}  // namespace faultline::harness

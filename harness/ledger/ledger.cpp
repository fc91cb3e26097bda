#include "harness/ledger/ledger.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "harness/clock/clock.h"
#include "harness/cluster/netns.h"
#include "harness/cluster/remote_factory.h"
#include "harness/ledger/ledger_mount.h"
#include "harness/ledger/ledger_names.h"
#include "harness/ledger/ledger_remote.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

std::string ToJsonLine(const LedgerEntry& e) {
  Json j = Json::object();
  j["seq"] = e.seq;
  j["kind"] = e.kind;
  if (!e.name.empty()) j["name"] = e.name;
  if (!e.netns.empty()) j["netns"] = e.netns;
  if (!e.node.empty()) j["node"] = e.node;
  if (e.pid != 0) j["pid"] = e.pid;
  if (e.start_time != 0) j["start_time"] = e.start_time;
  if (e.ref != 0) j["ref"] = e.ref;
  if (!e.remote.empty())
    j["remote"] = Json::parse(RemoteDescriptorToJson(e.remote));
  j["unix_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  return j.dump() + "\n";
}

// Parses one line; false when it is not a ledger entry.
bool FromJsonLine(const std::string& line, LedgerEntry* out) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string() ||
      !j.contains("seq") || !j["seq"].is_number_integer())
    return false;
  LedgerEntry e;
  e.seq = j["seq"].get<long>();
  e.kind = j["kind"].get<std::string>();
  auto str = [&](const char* k, std::string* dst) {
    if (j.contains(k) && j[k].is_string()) *dst = j[k].get<std::string>();
  };
  str("name", &e.name);
  str("netns", &e.netns);
  str("node", &e.node);
  if (j.contains("pid") && j["pid"].is_number_integer())
    e.pid = j["pid"].get<pid_t>();
  if (j.contains("start_time") && j["start_time"].is_number_integer())
    e.start_time = j["start_time"].get<unsigned long long>();
  if (j.contains("ref") && j["ref"].is_number_integer())
    e.ref = j["ref"].get<long>();
  if (j.contains("remote") && j["remote"].is_object()) {
    auto remote = RemoteDescriptorFromJson(j["remote"].dump());
    if (!remote) return false;
    e.remote = std::move(*remote);
  }
  *out = std::move(e);
  return true;
}

bool WriteAll(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t w = write(fd, data.data() + off, data.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(w);
  }
  return true;
}

bool WaitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool NetnsExists(const std::string& name) {
  std::error_code ec;
  return !name.empty() && fs::exists("/run/netns/" + name, ec);
}

bool LinkExists(const std::string& name) {
  std::error_code ec;
  return !name.empty() && fs::exists("/sys/class/net/" + name, ec);
}

void Log(std::vector<std::string>* log, std::string line) {
  if (log) log->push_back(std::move(line));
}

// Runs a system tool; "" netns = host namespace.
Result<CommandResult> RunTool(std::string_view tool,
                              std::vector<std::string> args,
                              const std::string& netns = "") {
  std::string path = FindSystemTool(tool);
  if (path.empty()) return Fail(std::string(tool) + " not found");
  args.insert(args.begin(), path);
  CommandOptions options;
  options.timeout = std::chrono::milliseconds(15000);
  options.netns = netns;
  return RunCommand(args, options);
}

bool StartTimeMatches(const LedgerEntry& e) {
  if (e.pid <= 0) return false;
  auto st = ProcessStartTime(e.pid);
  return st.has_value() && *st == e.start_time;
}

// SIGKILLs every process in the namespace and waits until none is left.
Status KillNetnsPids(const std::string& ns, std::vector<std::string>* log) {
  if (!NetnsExists(ns)) return Ok();
  std::vector<pid_t> pids;
  auto list = [&]() -> bool {
    pids.clear();
    auto r = RunTool("ip", {"netns", "pids", ns});
    if (!r.ok() || !r->ok()) return false;
    std::istringstream in(r->out);
    long pid;
    while (in >> pid)
      if (pid > 0) pids.push_back(static_cast<pid_t>(pid));
    return true;
  };
  if (!list()) {
    if (!NetnsExists(ns)) return Ok();
    return Fail("cannot list processes in netns " + ns);
  }
  for (pid_t pid : pids) {
    kill(pid, SIGKILL);
    Log(log, "SIGKILL pid " + std::to_string(pid) + " in netns " + ns);
  }
  bool gone = WaitUntil(
      [&] {
        // ProcessAlive reaps our own children, so zombies do not linger.
        bool any = false;
        for (pid_t pid : pids) any = ProcessAlive(pid) || any;
        if (any) return false;
        return list() && pids.empty();
      },
      std::chrono::milliseconds(5000));
  if (!gone) return Fail("processes still alive in netns " + ns);
  return Ok();
}

Status DeleteLink(const std::string& name, std::vector<std::string>* log) {
  if (!LinkExists(name)) {
    Log(log, "link " + name + " already gone");
    return Ok();
  }
  auto r = RunTool("ip", {"link", "del", name});
  if (!r.ok()) return Fail(r.error());
  if (!WaitUntil([&] { return !LinkExists(name); },
                 std::chrono::milliseconds(5000)))
    return Fail("ip link del " + name + ": " + DescribeResult(*r));
  Log(log, "ip link del " + name);
  return Ok();
}

int Rank(const std::string& kind) {
  static const std::map<std::string, int> kRanks = {
      {"stop", 0},     {"iptables", 1}, {"process", 2}, {"faketime", 3},
      {"sysclock", 3}, {"mount", 3},    {"disk", 3},    {"veth", 4},
      {"netns", 5},    {"hostrule", 6}, {"bridge", 7},  {"dir", 8}};
  auto it = kRanks.find(kind);
  return it == kRanks.end() ? 9 : it->second;
}

// Reads what can be read; `bad` gets the 1-based numbers of unparseable
// lines other than a torn last line.
std::vector<LedgerEntry> ReadLenient(std::istream& in, std::vector<int>* bad) {
  std::vector<LedgerEntry> out;
  std::string line;
  std::vector<int> unparsed;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    LedgerEntry e;
    if (FromJsonLine(line, &e)) {
      e.line = n;
      out.push_back(std::move(e));
    } else {
      unparsed.push_back(n);
    }
  }
  // A torn last line (a write cut short by a crash) is expected.
  if (!unparsed.empty() && unparsed.back() == n) unparsed.pop_back();
  if (bad) *bad = unparsed;
  return out;
}

LedgerEntry HealedEntry(long seq) {
  LedgerEntry e;
  e.kind = "healed";
  e.ref = seq;
  return e;
}

// Removes the index files in `index_dir` that list the ledger at `path`.
void Unlist(const std::string& index_dir, const std::string& path,
            std::vector<std::string>* log) {
  std::error_code ec;
  if (!fs::is_directory(index_dir, ec)) return;
  for (const auto& item : fs::directory_iterator(index_dir, ec)) {
    if (!item.is_regular_file(ec)) continue;
    std::ifstream in(item.path());
    std::string listed;
    std::getline(in, listed);
    if (listed.empty() || !fs::equivalent(listed, path, ec)) continue;
    if (fs::remove(item.path(), ec))
      Log(log, "run " + item.path().filename().string() +
                   " removed from the active index " + index_dir);
  }
}

}  // namespace

std::string DefaultActiveIndexDir() { return "/run/faultline/active"; }

Ledger::Ledger(std::string path, std::string index_file, int fd)
    : path_(std::move(path)), index_file_(std::move(index_file)), fd_(fd) {}

Ledger::~Ledger() {
  if (fd_ >= 0) close(fd_);
}

Result<std::unique_ptr<Ledger>> Ledger::Create(const std::string& path,
                                               const std::string& run_id,
                                               const std::string& index_dir) {
  if (run_id.empty() || run_id.find('/') != std::string::npos ||
      run_id == "." || run_id == "..")
    return Fail("ledger: invalid run id '" + run_id + "'");
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return Fail("ledger: bad path " + path + ": " + ec.message());
  if (abs.has_parent_path()) fs::create_directories(abs.parent_path(), ec);
  int fd = open(abs.c_str(),
                O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return Fail("ledger: cannot open " + abs.string() + ": " + strerror(errno));
  std::string index_file;
  if (!index_dir.empty()) {
    fs::create_directories(index_dir, ec);
    index_file = (fs::path(index_dir) / run_id).string();
    std::string tmp = index_file + ".tmp";
    int ifd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    bool ok = ifd >= 0 && WriteAll(ifd, abs.string() + "\n") && fsync(ifd) == 0;
    if (ifd >= 0) close(ifd);
    if (!ok || rename(tmp.c_str(), index_file.c_str()) != 0) {
      int e = errno;
      close(fd);
      unlink(tmp.c_str());
      return Fail("ledger: cannot list run in " + index_dir + ": " +
                  strerror(e));
    }
  }
  return std::unique_ptr<Ledger>(new Ledger(abs.string(), index_file, fd));
}

Result<std::unique_ptr<Ledger>> Ledger::Append(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0)
    return Fail("ledger: cannot open " + path +
                " to record the heal: " + strerror(errno));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() != '\n') {
    // A write cut short by a crash: its resource was never created (Record
    // returns only after the fsync), and a new line must not be glued to it.
    const auto nl = text.rfind('\n');
    text.resize(nl == std::string::npos ? 0 : nl + 1);
    if (ftruncate(fd, static_cast<off_t>(text.size())) != 0) {
      const int e = errno;
      close(fd);
      return Fail("ledger: cannot cut the torn last line of " + path + ": " +
                  strerror(e));
    }
  }
  long last = 0;
  std::istringstream lines(text);
  for (const auto& e : ReadLenient(lines, nullptr))
    last = std::max(last, e.seq);
  std::unique_ptr<Ledger> ledger(new Ledger(path, "", fd));
  ledger->next_seq_ = last + 1;
  return ledger;
}

long Ledger::Record(LedgerEntry entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return -1;
  entry.seq = next_seq_;
  if (!WriteAll(fd_, ToJsonLine(entry)) || fsync(fd_) != 0) return -1;
  return next_seq_++;
}

void Ledger::MarkHealed(long seq) {
  if (seq <= 0) return;
  Record(HealedEntry(seq));
}

void Ledger::Close() {
  LedgerEntry e;
  e.kind = "closed";
  Record(std::move(e));
  std::lock_guard<std::mutex> lock(mu_);
  if (!index_file_.empty()) {
    unlink(index_file_.c_str());
    index_file_.clear();
  }
}

Result<std::vector<LedgerEntry>> ReadLedger(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Fail("ledger: cannot read " + path);
  std::vector<int> bad;
  auto entries = ReadLenient(in, &bad);
  if (!bad.empty())
    return Fail("ledger: " + path + ": line " + std::to_string(bad.front()) +
                " is not a ledger entry");
  return entries;
}

namespace {

// UndoLedgerEntry for an entry of the controller's own host (no `remote`).
Status UndoLocalEntry(const LedgerEntry& e, std::vector<std::string>* log) {
  const std::string who = e.node.empty() ? "" : " (" + e.node + ")";
  if (e.kind == "stop" || e.kind == "process") {
    const bool is_stop = e.kind == "stop";
    if (!StartTimeMatches(e)) {
      Log(log, "pid " + std::to_string(e.pid) + who +
                   " gone or reused; nothing to " +
                   (is_stop ? "continue" : "kill"));
      return Ok();
    }
    if (is_stop) {
      kill(e.pid, SIGCONT);
      Log(log, "SIGCONT pid " + std::to_string(e.pid) + who);
      return Ok();
    }
    kill(e.pid, SIGKILL);
    Log(log, "SIGKILL pid " + std::to_string(e.pid) + who);
    if (!WaitUntil([&] { return !ProcessAlive(e.pid); },
                   std::chrono::milliseconds(5000)))
      return Fail("pid " + std::to_string(e.pid) + " survived SIGKILL");
    return Ok();
  }
  if (e.kind == "iptables") {
    if (!NetnsExists(e.netns)) {
      Log(log, "netns " + e.netns + " gone; no iptables rules to remove");
      return Ok();
    }
    // Only the fault's own chain and the rules that jump to it or carry its
    // comment (ledger_names.h).
    Status s = HealIptablesTag(
        [&](const std::vector<std::string>& args) {
          auto r = RunTool("iptables", args, e.netns);
          if (r.ok()) return *r;
          CommandResult failed;
          failed.error = r.error();
          return failed;
        },
        e.name, "netns " + e.netns + who, log);
    if (!s.ok() && !NetnsExists(e.netns)) return Ok();  // gone meanwhile
    return s;
  }
  if (e.kind == "netns") {
    if (!NetnsExists(e.name)) {
      Log(log, "netns " + e.name + " already gone");
      return Ok();
    }
    Status killed = KillNetnsPids(e.name, log);
    if (!killed.ok()) return killed;
    auto r = RunTool("ip", {"netns", "del", e.name});
    if (!r.ok()) return Fail(r.error());
    if (NetnsExists(e.name))
      return Fail("ip netns del " + e.name + ": " + DescribeResult(*r));
    Log(log, "ip netns del " + e.name);
    return Ok();
  }
  if (e.kind == "veth" || e.kind == "bridge") return DeleteLink(e.name, log);
  if (e.kind == "hostrule") {
    const std::vector<std::string> rule = {"FORWARD", "-i", e.name,  "-o",
                                           e.name,    "-j", "ACCEPT"};
    for (int i = 0; i < 16; ++i) {
      std::vector<std::string> check = {"-w", "-C"};
      check.insert(check.end(), rule.begin(), rule.end());
      auto c = RunTool("iptables", check);
      if (!c.ok()) return Fail(c.error());
      if (!c->ok()) {
        if (i == 0)
          Log(log, "host FORWARD rule for " + e.name + " already gone");
        return Ok();
      }
      std::vector<std::string> del = {"-w", "-D"};
      del.insert(del.end(), rule.begin(), rule.end());
      auto d = RunTool("iptables", del);
      if (!d.ok()) return Fail(d.error());
      if (!d->ok()) return Fail("iptables -D FORWARD: " + DescribeResult(*d));
      Log(log,
          "iptables -D FORWARD -i " + e.name + " -o " + e.name + " -j ACCEPT");
    }
    return Fail("host FORWARD rule for " + e.name + " keeps reappearing");
  }
  // dir and faketime names were checked (RefusalReason): faultline-* only.
  if (e.kind == "dir") {
    std::filesystem::path p(e.name);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return Ok();
    std::filesystem::remove_all(p, ec);
    if (ec) return Fail("cannot remove " + e.name + ": " + ec.message());
    Log(log, "rm -r " + e.name);
    return Ok();
  }
  if (e.kind == "faketime") {
    // The clock fault's node files (harness/clock/clock.h), then what
    // libfaketime leaves in /dev/shm for processes that did not exit normally.
    std::filesystem::path p(e.name);
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) {
      std::filesystem::remove_all(p, ec);
      if (ec) return Fail("cannot remove " + e.name + ": " + ec.message());
      Log(log, "rm -r " + e.name);
    }
    return RemoveStaleFaketimeShm(log);
  }
  if (e.kind == "disk") {
    Log(log, "disk fault " + e.name + who +
                 ": ends with its file system (the mount entry)");
    return Ok();
  }
  if (e.kind == "mount") {
    // Only a faultline-lazyfs mount at exactly that path (ledger_mount.h).
    std::ifstream in("/proc/self/mounts");
    std::string mounts((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
    return UnmountLazyfs(
        [](const std::vector<std::string>& argv) {
          std::vector<std::string> args(argv.begin() + 1, argv.end());
          auto r = RunTool(argv.front(), args);
          if (r.ok()) return *r;
          CommandResult failed;
          failed.error = r.error();
          return failed;
        },
        mounts, e.name, who, log);
  }
  if (e.kind == "healed" || e.kind == "closed") return Ok();
  Log(log, "unknown ledger entry kind '" + e.kind + "' (seq " +
               std::to_string(e.seq) + "); skipped");
  return Ok();
}

// "seq 4 (line 4, iptables)" for messages.
std::string EntryName(const LedgerEntry& e) {
  std::string s = "ledger entry seq " + std::to_string(e.seq) + " (";
  if (e.line > 0) s += "line " + std::to_string(e.line) + ", ";
  return s + e.kind + ")";
}

Status UndoWith(const LedgerEntry& e, RemoteCache& remotes,
                std::vector<std::string>* log) {
  if (const std::string why = RefusalReason(e); !why.empty())
    return Fail("refused " + EntryName(e) + ": " + why + "; left alone");
  if (!e.remote.empty()) return UndoRemoteLedgerEntry(e, remotes, log);
  return UndoLocalEntry(e, log);
}

}  // namespace

Status UndoLedgerEntry(const LedgerEntry& e, std::vector<std::string>* log) {
  RemoteCache remotes;
  return UndoWith(e, remotes, log);
}

Status HealLedger(const std::string& path, std::vector<std::string>* log,
                  const std::string& index_dir) {
  std::ifstream in(path);
  if (!in) return Fail("ledger: cannot read " + path);
  std::vector<int> bad;
  auto entries = ReadLenient(in, &bad);
  for (int line : bad)
    Log(log, "ledger line " + std::to_string(line) + " unreadable; skipped");
  std::set<long> healed;
  for (const auto& e : entries)
    if (e.kind == "healed") healed.insert(e.ref);
  std::vector<LedgerEntry> todo;
  for (const auto& e : entries)
    if (!healed.count(e.seq) && Rank(e.kind) < 9) todo.push_back(e);
  std::vector<long> undone;
  Status s =
      todo.empty() ? Ok() : UndoLedgerEntries(std::move(todo), log, &undone);
  // What was undone is marked healed, as the run marks it: a later heal
  // leaves it alone.
  if (!undone.empty()) {
    auto ledger = Ledger::Append(path);
    if (!ledger) {
      Log(log, "error: " + ledger.error());
      return Fail("heal " + path + ": " + ledger.error() +
                  (s.ok() ? "" : "; " + s.error()));
    }
    for (long seq : undone)
      if ((*ledger)->Record(HealedEntry(seq)) < 0)
        return Fail("heal " + path + ": cannot append to the ledger");
  }
  if (!s.ok()) return Fail("heal " + path + ": " + s.error());
  if (!index_dir.empty()) Unlist(index_dir, path, log);
  return Ok();
}

Status UndoLedgerEntries(std::vector<LedgerEntry> todo,
                         std::vector<std::string>* log,
                         std::vector<long>* undone) {
  todo.erase(
      std::remove_if(todo.begin(), todo.end(),
                     [](const LedgerEntry& e) { return Rank(e.kind) >= 9; }),
      todo.end());
  // Safe order by kind; within a kind, newest first.
  std::stable_sort(todo.begin(), todo.end(),
                   [](const LedgerEntry& a, const LedgerEntry& b) {
                     if (Rank(a.kind) != Rank(b.kind))
                       return Rank(a.kind) < Rank(b.kind);
                     return a.seq > b.seq;
                   });
  std::string errors;
  auto note = [&](const Status& st) {
    if (!st.ok()) {
      Log(log, "error: " + st.error());
      if (!errors.empty()) errors += "; ";
      errors += st.error();
    }
  };
  bool killed_namespaces = false;
  RemoteCache remotes;
  for (const auto& e : todo) {
    // Before veths go: kill every process in the namespaces.
    if (!killed_namespaces && Rank(e.kind) > Rank("process")) {
      killed_namespaces = true;
      for (const auto& n : todo)
        if (n.kind == "netns" && RefusalReason(n).empty())
          note(KillNetnsPids(n.name, log));
    }
    Status st = UndoWith(e, remotes, log);
    note(st);
    if (st.ok() && undone != nullptr) undone->push_back(e.seq);
  }
  if (!errors.empty()) return Fail(errors);
  return Ok();
}

Status HealAll(const std::string& index_dir, std::vector<std::string>* log) {
  std::error_code ec;
  if (!fs::exists(index_dir, ec)) {
    Log(log, "no active runs (" + index_dir + " does not exist)");
    return Ok();
  }
  std::string errors;
  for (const auto& item : fs::directory_iterator(index_dir, ec)) {
    if (!item.is_regular_file(ec)) continue;
    const std::string index_file = item.path().string();
    if (index_file.size() > 4 &&
        index_file.compare(index_file.size() - 4, 4, ".tmp") == 0)
      continue;
    std::ifstream in(index_file);
    std::string ledger_path;
    std::getline(in, ledger_path);
    Log(log, "run " + item.path().filename().string() + ": " + ledger_path);
    if (ledger_path.empty() || !fs::exists(ledger_path, ec)) {
      Log(log, "ledger missing; dropping index entry");
      fs::remove(item.path(), ec);
      continue;
    }
    Status s = HealLedger(ledger_path, log);
    if (!s.ok()) {
      if (!errors.empty()) errors += "; ";
      errors += s.error();
      continue;  // keep the index entry so a later heal retries
    }
    fs::remove(item.path(), ec);
  }
  if (ec) return Fail("cannot list " + index_dir + ": " + ec.message());
  if (!errors.empty()) return Fail(errors);
  return Ok();
}

}  // namespace faultline::harness

#include "harness/cluster/netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "harness/process/find_program.h"
#include "harness/process/process.h"

namespace faultline::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Subnet {
  std::uint32_t net = 0;  // host byte order
  int len = 0;
  std::uint32_t size() const { return std::uint32_t{1} << (32 - len); }
  std::uint32_t mask() const {
    return len == 0 ? 0 : ~std::uint32_t{0} << (32 - len);
  }
};

std::string FormatIp(std::uint32_t ip) {
  return std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 255) +
         "." + std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
}

bool ParseCidr(const std::string& text, Subnet* out) {
  auto slash = text.find('/');
  if (slash == std::string::npos) return false;
  in_addr addr{};
  if (inet_pton(AF_INET, text.substr(0, slash).c_str(), &addr) != 1)
    return false;
  const std::string len_text = text.substr(slash + 1);
  if (len_text.empty() || len_text.size() > 2 ||
      len_text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  out->net = ntohl(addr.s_addr);
  out->len = std::atoi(len_text.c_str());
  return out->len >= 0 && out->len <= 32;
}

bool IsPrivate(const Subnet& s) {
  auto within = [&](std::uint32_t net, int len) {
    Subnet p{net, len};
    return s.len >= len && (s.net & p.mask()) == net;
  };
  return within(0x0A000000u, 8) || within(0xAC100000u, 12) ||
         within(0xC0A80000u, 16);
}

bool Overlaps(const Subnet& a, const Subnet& b) {
  Subnet shorter = a.len < b.len ? a : b;
  return (a.net & shorter.mask()) == (b.net & shorter.mask());
}

// Host IPv4 addresses with their prefixes ("ip -o -4 addr show").
Result<std::vector<std::pair<std::string, Subnet>>> HostAddresses(
    const std::string& ip_tool) {
  auto r = RunCommand({ip_tool, "-o", "-4", "addr", "show"});
  if (!r.ok()) return Fail("ip addr show: " + r.err + r.error);
  std::vector<std::pair<std::string, Subnet>> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string w, dev, cidr;
    words >> w >> dev;
    while (words >> w)
      if (w == "inet" && (words >> cidr)) break;
    Subnet s;
    if (!cidr.empty() && ParseCidr(cidr, &s)) out.emplace_back(dev, s);
  }
  return out;
}

// An exclusive flock on /run/faultline/netns-setup.lock for its lifetime.
class SetupLock {
 public:
  SetupLock() {
    std::error_code ec;
    fs::create_directories("/run/faultline", ec);
    fd_ = open("/run/faultline/netns-setup.lock", O_RDWR | O_CREAT | O_CLOEXEC,
               0644);
    if (fd_ < 0) {
      error_ = std::string("cannot open /run/faultline/netns-setup.lock: ") +
               strerror(errno);
      return;
    }
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      error_ = std::string("cannot lock /run/faultline/netns-setup.lock: ") +
               strerror(errno);
      return;
    }
  }
  ~SetupLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  SetupLock(const SetupLock&) = delete;
  SetupLock& operator=(const SetupLock&) = delete;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

bool LinkExists(const std::string& name) {
  std::error_code ec;
  return fs::exists("/sys/class/net/" + name, ec);
}

bool NetnsExists(const std::string& name) {
  std::error_code ec;
  return fs::exists("/run/netns/" + name, ec);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Describe(const CommandResult& r) {
  std::string msg = Trim(!r.error.empty() ? r.error : r.err);
  if (msg.empty()) msg = "exit " + std::to_string(r.exit_code);
  auto nl = msg.find('\n');
  return nl == std::string::npos ? msg : msg.substr(0, nl);
}

class NetnsCluster : public Cluster {
 public:
  NetnsCluster(Ledger& ledger, std::string controller_ip)
      : ledger_(ledger), controller_ip_(std::move(controller_ip)) {}
  ~NetnsCluster() override = default;

  const std::vector<Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return controller_ip_; }

  Status Destroy() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<LedgerEntry> todo = created_;
    for (const auto& remote : remotes_) {
      auto started = remote->TakeStarted();
      todo.insert(todo.end(), started.begin(), started.end());
    }
    if (todo.empty()) return Ok();
    std::vector<std::string> log;
    Status s = UndoLedgerEntries(todo, &log);
    if (!s.ok()) {
      // Keep what was not undone for a later Destroy (or faultline heal);
      // undoing is idempotent, so keeping everything is safe.
      created_ = todo;
      return Fail("netns teardown: " + s.error());
    }
    for (const auto& e : todo) ledger_.MarkHealed(e.seq);
    created_.clear();
    return Ok();
  }

  // Records `entry` in the ledger (before the caller creates the resource)
  // and remembers it for Destroy.
  Status Plan(LedgerEntry entry) {
    long seq = ledger_.Record(entry);
    if (seq < 0) return Fail("cannot write the fault ledger " + ledger_.path());
    entry.seq = seq;
    std::lock_guard<std::mutex> lock(mu_);
    created_.push_back(std::move(entry));
    return Ok();
  }

  std::vector<Node> nodes_;
  std::vector<std::unique_ptr<NetnsRemote>> remotes_;

 private:
  Ledger& ledger_;
  std::string controller_ip_;
  std::mutex mu_;
  std::vector<LedgerEntry> created_;
};

}  // namespace

// NetnsRemote keeps the ledger entries of what it started, so the cluster
// can mark them healed on Destroy.
std::vector<LedgerEntry> NetnsRemote::TakeStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LedgerEntry> out;
  out.swap(started_);
  return out;
}

std::string ShortRunId(const std::string& run_id) {
  bool simple =
      !run_id.empty() && run_id.size() <= 8 &&
      run_id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") ==
          std::string::npos;
  if (simple) return run_id;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : run_id) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[9];
  snprintf(buf, sizeof buf, "%08x",
           static_cast<unsigned>((h ^ (h >> 32)) & 0xffffffffu));
  return buf;
}

NetnsRemote::NetnsRemote(std::string netns, std::string node_name,
                         Ledger* ledger)
    : netns_(std::move(netns)),
      node_name_(std::move(node_name)),
      ledger_(ledger) {}

CommandResult NetnsRemote::Run(const std::vector<std::string>& argv,
                               const CommandOptions& options) {
  CommandOptions in_ns = options;
  in_ns.netns = netns_;
  return RunCommand(argv, in_ns);
}

Result<pid_t> NetnsRemote::Start(const std::vector<std::string>& argv,
                                 const std::string& log_path,
                                 const std::vector<std::string>& env) {
  SpawnOptions options;
  options.netns = netns_;
  options.log_path = log_path;
  options.env = env;
  auto pid = Spawn(argv, options);
  if (!pid.ok()) return pid;
  if (ledger_) {
    LedgerEntry e;
    e.kind = "process";
    e.node = node_name_;
    e.netns = netns_;
    e.pid = *pid;
    e.start_time = ProcessStartTime(*pid).value_or(0);
    long seq = ledger_->Record(e);
    if (seq < 0) {
      TerminateProcess(*pid, SIGKILL, std::chrono::milliseconds(1000));
      return Fail("cannot write the fault ledger " + ledger_->path());
    }
    e.seq = seq;
    std::lock_guard<std::mutex> lock(mu_);
    started_.push_back(std::move(e));
  }
  return pid;
}

Status NetnsRemote::Signal(pid_t pid, int sig) {
  if (pid <= 0) return Fail("signal: invalid pid " + std::to_string(pid));
  if (kill(pid, sig) != 0)
    return Fail("kill(" + std::to_string(pid) + ", " + std::to_string(sig) +
                "): " + strerror(errno));
  return Ok();
}

namespace {
Status CopyFile(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::path dst(to);
  if (dst.has_parent_path()) fs::create_directories(dst.parent_path(), ec);
  fs::copy_file(from, dst, fs::copy_options::overwrite_existing, ec);
  if (ec) return Fail("copy " + from + " -> " + to + ": " + ec.message());
  return Ok();
}
}  // namespace

Status NetnsRemote::Upload(const std::string& local,
                           const std::string& remote) {
  return CopyFile(local, remote);
}

Status NetnsRemote::Download(const std::string& remote,
                             const std::string& local) {
  return CopyFile(remote, local);
}

Result<std::unique_ptr<Cluster>> CreateNetnsCluster(
    const ClusterSpec& spec, const std::string& run_id, Ledger& ledger,
    const NetnsOptions& options) {
  // Preconditions, checked before anything is created.
  if (spec.provider != "netns")
    return Fail("netns cluster: provider is '" + spec.provider + "'");
  if (geteuid() != 0)
    return Fail("netns cluster: needs root (network namespaces, iptables)");
  const std::string ip = FindSystemTool("ip");
  const std::string iptables = FindSystemTool("iptables");
  if (ip.empty()) return Fail("netns cluster: `ip` (iproute2) not found");
  if (iptables.empty() || FindSystemTool("iptables-restore").empty())
    return Fail("netns cluster: `iptables`/`iptables-restore` not found");
  Subnet subnet;
  if (!ParseCidr(spec.subnet, &subnet))
    return Fail("netns cluster: subnet '" + spec.subnet +
                "' is not a.b.c.d/len");
  if (subnet.len < 16 || subnet.len > 29 || !IsPrivate(subnet) ||
      (subnet.net & ~subnet.mask()) != 0)
    return Fail("netns cluster: subnet " + spec.subnet +
                " must be a private IPv4 network /16../29 (host bits zero)");
  if (spec.nodes < 1 || spec.nodes > 99 ||
      static_cast<std::uint32_t>(spec.nodes) + 3 > subnet.size())
    return Fail("netns cluster: " + std::to_string(spec.nodes) +
                " nodes do not fit in " + spec.subnet);
  // Check-then-create under one host-wide lock, so two runs starting at the
  // same moment cannot both find the subnet free (two clusters on one
  // subnet would route one run's clients to the other's nodes). Held until
  // this function returns: by then the bridge has its address and the next
  // run's check sees it.
  SetupLock setup_lock;
  if (!setup_lock.ok()) return Fail("netns cluster: " + setup_lock.error());
  auto host = HostAddresses(ip);
  if (!host.ok()) return Fail("netns cluster: " + host.error());
  for (const auto& [dev, addr] : *host)
    if (Overlaps(addr, subnet))
      return Fail("netns cluster: subnet " + spec.subnet +
                  " overlaps address " + FormatIp(addr.net) + "/" +
                  std::to_string(addr.len) + " on " + dev);

  const std::string id = ShortRunId(run_id);
  const std::string bridge = "flb-" + id;
  auto ns_name = [&](int i) { return "fl-" + id + "-n" + std::to_string(i); };
  auto veth_name = [&](int i) { return "flv-" + id + "-" + std::to_string(i); };
  for (int i = 1; i <= spec.nodes; ++i)
    if (NetnsExists(ns_name(i)))
      return Fail("netns cluster: namespace " + ns_name(i) +
                  " already exists (leftover run? try `faultline heal`)");
  // Veths of an earlier run with this id may still be going away.
  auto deadline = Clock::now() + options.leftover_wait;
  for (;;) {
    std::string leftover = LinkExists(bridge) ? bridge : "";
    for (int i = 1; i <= spec.nodes && leftover.empty(); ++i)
      if (LinkExists(veth_name(i))) leftover = veth_name(i);
    if (leftover.empty()) break;
    if (Clock::now() >= deadline)
      return Fail("netns cluster: interface " + leftover +
                  " already exists (leftover run? try `faultline heal`)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  bool forward_rule = options.force_forward_rule;
  if (!forward_rule) {
    auto r = RunCommand({iptables, "-w", "-S", "FORWARD"});
    if (!r.ok())
      return Fail("netns cluster: iptables -S FORWARD: " + Describe(r));
    forward_rule = r.out.rfind("-P FORWARD ACCEPT", 0) != 0;
  }

  const std::string len = "/" + std::to_string(subnet.len);
  const std::string controller_ip = FormatIp(subnet.net + subnet.size() - 2);
  auto cluster = std::make_unique<NetnsCluster>(ledger, controller_ip);
  auto fail = [&](const std::string& what) -> Error {
    Status undo = cluster->Destroy();
    std::string msg = "netns cluster: " + what;
    if (!undo.ok()) msg += " (and cleanup failed: " + undo.error() + ")";
    return Fail(msg);
  };
  auto run = [&](std::vector<std::string> argv,
                 const std::string& netns = "") -> Status {
    CommandOptions o;
    o.netns = netns;
    o.timeout = std::chrono::milliseconds(15000);
    auto r = RunCommand(argv, o);
    if (r.ok()) return Ok();
    std::string cmd;
    for (std::size_t k = 1; k < argv.size(); ++k) cmd += " " + argv[k];
    return Fail(fs::path(argv[0]).filename().string() + cmd +
                (netns.empty() ? "" : " (in " + netns + ")") + ": " +
                Describe(r));
  };
  auto plan = [&](const std::string& kind, const std::string& name,
                  const std::string& node) {
    LedgerEntry e;
    e.kind = kind;
    e.name = name;
    e.node = node;
    return cluster->Plan(std::move(e));
  };
  // Stops at the first failure; `steps` are run in order.
  auto all = [](std::initializer_list<std::function<Status()>> steps) {
    for (const auto& step : steps) {
      Status s = step();
      if (!s.ok()) return s;
    }
    return Ok();
  };

  Status s = all({
      [&] { return plan("bridge", bridge, ""); },
      [&] {
        return run({ip, "link", "add", bridge, "type", "bridge"});
      },
      [&] {
        return run({ip, "addr", "add", controller_ip + len, "dev", bridge});
      },
      [&] {
        return run({ip, "link", "set", bridge, "up"});
      },
  });
  if (!s.ok()) return fail(s.error());
  if (forward_rule) {
    s = all({
        [&] { return plan("hostrule", bridge, ""); },
        [&] {
          return run({iptables, "-w", "-I", "FORWARD", "-i", bridge, "-o",
                      bridge, "-j", "ACCEPT"});
        },
    });
    if (!s.ok()) return fail(s.error());
  }
  for (int i = 1; i <= spec.nodes; ++i) {
    const std::string ns = ns_name(i), veth = veth_name(i);
    const std::string node = "n" + std::to_string(i);
    const std::string node_ip =
        FormatIp(subnet.net + static_cast<std::uint32_t>(i));
    s = all({
        [&] { return plan("netns", ns, node); },
        [&] {
          return run({ip, "netns", "add", ns});
        },
        [&] { return plan("veth", veth, node); },
        [&] {
          return run({ip, "link", "add", veth, "type", "veth", "peer", "name",
                      "eth0", "netns", ns});
        },
        [&] {
          return run({ip, "link", "set", veth, "master", bridge, "up"});
        },
        [&] {
          return run({ip, "addr", "add", node_ip + len, "dev", "eth0"}, ns);
        },
        [&] {
          return run({ip, "link", "set", "eth0", "up"}, ns);
        },
        [&] {
          return run({ip, "link", "set", "lo", "up"}, ns);
        },
    });
    if (!s.ok()) return fail(s.error());
    auto remote = std::make_unique<NetnsRemote>(ns, node, &ledger);
    Node n;
    n.index = i - 1;
    n.name = node;
    n.ip = node_ip;
    n.netns = ns;
    n.remote = remote.get();
    cluster->nodes_.push_back(n);
    cluster->remotes_.push_back(std::move(remote));
  }
  return std::unique_ptr<Cluster>(std::move(cluster));
}

}  // namespace faultline::harness

namespace faultline::harness {
namespace {

// Runs `fn` on a fresh thread that first enters `netns` (sockets it creates
// stay in that namespace); the caller's thread is never moved.
template <typename Fn>
Status InNetns(const std::string& netns, Fn&& fn) {
  Status result = Ok();
  std::thread t([&] {
    if (!netns.empty()) {
      std::string path = "/run/netns/" + netns;
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        result = Fail("cannot enter netns " + netns + ": " + strerror(e));
        return;
      }
      close(fd);
    }
    fn();
  });
  t.join();
  return result;
}

bool MakeAddr(const std::string& ip, int port, sockaddr_in* addr) {
  *addr = sockaddr_in{};
  addr->sin_family = AF_INET;
  addr->sin_port = htons(static_cast<std::uint16_t>(port));
  return inet_pton(AF_INET, ip.c_str(), &addr->sin_addr) == 1;
}

}  // namespace

Result<int> ListenTcpIn(const std::string& netns, const std::string& ip,
                        int port) {
  sockaddr_in addr;
  if (!MakeAddr(ip, port, &addr)) return Fail("bad address " + ip);
  int fd = -1;
  std::string error;
  Status entered = InNetns(netns, [&] {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(fd, 128) != 0) {
      error = strerror(errno);
      if (fd >= 0) close(fd);
      fd = -1;
    }
  });
  if (!entered.ok()) return Fail(entered.error());
  if (fd < 0)
    return Fail("listen on " + ip + ":" + std::to_string(port) + ": " + error);
  return fd;
}

bool TcpReachableFrom(const std::string& netns, const std::string& ip, int port,
                      std::chrono::milliseconds timeout) {
  sockaddr_in addr;
  if (!MakeAddr(ip, port, &addr)) return false;
  int fd = -1;
  Status entered = InNetns(netns, [&] {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  });
  if (!entered.ok() || fd < 0) return false;
  bool connected = false;
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc == 0) {
    connected = true;
  } else if (errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    auto deadline = Clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - Clock::now())
                      .count();
      if (left <= 0) break;
      int r = poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        connected = err == 0;
      }
      break;
    }
  }
  close(fd);
  return connected;
}

}  // namespace faultline::harness

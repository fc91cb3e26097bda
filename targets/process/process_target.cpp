#include "targets/process/process_target.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "harness/cluster/upload.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "targets/etcd/etcd_client.h"
#include "targets/etcd/http.h"
#include "targets/process/exec_client.h"
#include "targets/process/resp_client.h"

namespace faultline::targets::process {
namespace {

using Clock = std::chrono::steady_clock;
using harness::Fail;
using harness::Node;
using harness::NodeStatus;
using harness::Ok;
using harness::ProcessDef;
using harness::Result;

constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kProbeTimeout = std::chrono::milliseconds(500);
constexpr auto kSetupTimeout = std::chrono::milliseconds(300000);

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

int SignalNumber(const std::string& name) {
  if (name == "INT") return SIGINT;
  if (name == "QUIT") return SIGQUIT;
  if (name == "HUP") return SIGHUP;
  if (name == "KILL") return SIGKILL;
  return SIGTERM;
}

// Whether ip:port accepts a TCP connection within `timeout`.
bool Accepting(const std::string& ip, int port,
               std::chrono::milliseconds timeout) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) == 1;
  if (ok) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
    int r = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      r = poll(&p, 1, static_cast<int>(timeout.count()));
      int err = 0;
      socklen_t len = sizeof err;
      ok = r == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
           err == 0;
    } else {
      ok = r == 0;
    }
  }
  close(fd);
  return ok;
}

std::string Lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The roles systems report, in the history's three words.
std::string NormalizeRole(const std::string& raw) {
  const std::string r = Lower(raw);
  if (r == "leader" || r == "master" || r == "primary") return "leader";
  if (r == "follower" || r == "replica" || r == "slave" || r == "secondary" ||
      r == "learner" || r == "observer")
    return "follower";
  if (r == "candidate" || r == "pre-candidate" || r == "precandidate")
    return "candidate";
  return r;
}

std::string Tail(std::string s, std::size_t n) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > n) s = "..." + s.substr(s.size() - n);
  return s;
}

// The number of port `p` (a name of `ports`, or one of their numbers as
// text), 0 when the config declares none such (the loader rejects that).
int PortOf(const harness::ProcessSpec& spec, const std::string& p) {
  for (const auto& [name, number] : spec.ports) {
    if (name == p || std::to_string(number) == p) return number;
  }
  return 0;
}

// The longest ready_timeout of the processes: how long a node may take to
// become ready.
std::chrono::milliseconds LongestReadyTimeout(
    const harness::ProcessSpec& spec) {
  int longest = 0;
  for (const ProcessDef& d : spec.processes)
    longest = std::max(longest, d.ready_timeout_ms);
  return std::chrono::milliseconds(longest);
}

std::string Upper(std::string s) {
  for (char& c : s) {
    c = c == '-'
            ? '_'
            : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

}  // namespace

ProcessTarget::ProcessTarget(const harness::ProcessSpec& spec,
                             const harness::WorkloadSpec& workload,
                             harness::Ledger* ledger,
                             const std::string& work_dir,
                             std::string controller_dir, bool local_nodes)
    : DaemonTarget(spec.system,
                   spec.processes.empty() ? std::string("server")
                                          : spec.processes.front().name,
                   ledger, work_dir),
      spec_(spec),
      workload_(workload),
      controller_dir_(std::move(controller_dir)),
      local_nodes_(local_nodes) {
  std::vector<std::string> argv = spec_.client.command;
  health_ = std::make_shared<ExecHealth>(CommandForMessages(argv));
}

ProcessTarget::~ProcessTarget() = default;

std::string ProcessTarget::version() {
  if (spec_.version.empty()) return spec_.system;
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  std::vector<std::string> argv = spec_.version;
  if (argv[0].find('/') == std::string::npos) {
    std::string found = harness::FindCompanion("", argv[0]);
    if (!found.empty()) argv[0] = found;
  }
  auto r = harness::RunCommand(argv, options);
  std::string line = r.out.empty() ? r.err : r.out;
  line = line.substr(0, line.find('\n'));
  if (line.empty()) return spec_.system + " unknown";
  return line;
}

harness::TemplateContext ProcessTarget::ContextOf(const Node& node) const {
  harness::TemplateContext ctx;
  ctx.nodes = peers_;
  ctx.self = node.index;
  ctx.ports = spec_.ports;
  ctx.lists = spec_.lists;
  ctx.dir = NodeDir(node);
  ctx.data = ctx.dir + "/data";
  ctx.config_dir = spec_.config_dir;
  return ctx;
}

std::vector<const ProcessDef*> ProcessTarget::Taking(const char* kind) const {
  std::vector<const ProcessDef*> out;
  for (const ProcessDef& d : spec_.processes) {
    if (Has(d.faults, kind)) out.push_back(&d);
  }
  return out;
}

harness::Status ProcessTarget::Setup(harness::Cluster& cluster) {
  const auto& nodes = cluster.nodes();
  if (auto reset = ResetNodes(nodes, 9); !reset) return reset;
  peers_.clear();
  for (const Node& n : nodes) peers_.push_back({n.name, n.ip});
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_once_.clear();
    killed_.clear();
  }
  status_clients_.clear();
  if (spec_.status_client) {
    for (const Node& n : nodes)
      status_clients_[n.name] = std::make_unique<StatusClient>();
  }
  const std::string who = spec_.system;
  for (const Node& node : nodes) {
    const harness::TemplateContext ctx = ContextOf(node);
    auto rm = node.remote->Run({"rm", "-rf", ctx.dir});
    auto mk = node.remote->Run({"mkdir", "-p", ctx.data});
    if (!rm.ok() || !mk.ok()) {
      return Fail(who + ": cannot prepare " + ctx.dir + " on " + node.name +
                  ": " + harness::DescribeResult(rm.ok() ? mk : rm));
    }
    // Clock faults on ssh and docker nodes: the faketime shim StartOne
    // preloads goes to the node's directory (the controller's copy is not
    // there).
    if (!local_nodes_ && clock() != nullptr && !Taking("clock").empty()) {
      const std::string shim = harness::FindFaketimeShim();
      if (!shim.empty()) {
        if (auto up = harness::UploadExecutable(
                *node.remote, node.name, shim,
                ctx.dir + "/" + harness::kFaketimeShimName);
            !up)
          return Fail(who + ": " + up.error());
      }
    }
    for (const harness::ProcessFileSpec& f : spec_.files) {
      const std::string path = harness::ExpandTemplate(f.path, ctx);
      const std::string local =
          (std::filesystem::temp_directory_path() /
           ("faultline-process-" + std::to_string(getpid()) + "-" + node.name))
              .string();
      {
        std::ofstream out(local, std::ios::trunc | std::ios::binary);
        out << harness::ExpandTemplate(f.content, ctx);
        if (!out.flush()) return Fail(who + ": cannot write " + local);
      }
      auto parent = node.remote->Run(
          {"mkdir", "-p", std::filesystem::path(path).parent_path().string()});
      auto up = node.remote->Upload(local, path);
      std::remove(local.c_str());
      if (!up)
        return Fail(who + ": " + node.name + ": file " + path + ": " +
                    up.error());
    }
    for (const auto& command : spec_.setup) {
      harness::CommandOptions options;
      options.timeout = kSetupTimeout;
      const auto argv = harness::ExpandAll(command, ctx);
      auto r = node.remote->Run(argv, options);
      if (!r.ok()) {
        return Fail(who + ": setup on " + node.name + ": `" +
                    CommandForMessages(argv) + "` failed: " +
                    Tail(harness::DescribeResult(r) + "\n" + r.out, 600));
      }
    }
  }
  return Ok();
}

harness::Status ProcessTarget::StartOne(const Node& node,
                                        const ProcessDef& def) {
  if (daemons_.Running(node, def.name)) return Ok();
  harness::TemplateContext ctx = ContextOf(node);
  ctx.log = ctx.dir + "/" + def.name + ".log";
  std::vector<std::string> argv = harness::ExpandAll(def.argv, ctx);
  bool bootstrap = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bootstrap = node.index == 0 && started_once_.count(node.name) == 0;
  }
  if (bootstrap) {
    for (const auto& a : harness::ExpandAll(def.bootstrap_args, ctx))
      argv.push_back(a);
  }
  // A bare program name: beside faultline first on netns nodes (raftkv and
  // the other companions are built there), then PATH.
  if (local_nodes_ && argv[0].find('/') == std::string::npos) {
    std::string found = harness::FindCompanion("", argv[0]);
    if (!found.empty()) argv[0] = found;
  }
  std::vector<std::string> env;
  for (const auto& [k, v] : def.env) {
    env.push_back(k + "=" + harness::ExpandTemplate(v, ctx));
  }
  if (Has(def.faults, "clock")) {
    auto clock = ClockEnv(node);  // {} unless clock faults are on
    if (!clock.ok()) return Fail(name() + ": " + clock.error());
    if (!clock->empty()) {
      // Harmless for programs without jemalloc, and needed by those with
      // it (harness/clock/clock.h, "the Redis shim"). On ssh and docker
      // nodes: the copy Setup uploaded.
      std::string shim = harness::FindFaketimeShim();
      if (!shim.empty() && !local_nodes_)
        shim = ctx.dir + "/" + harness::kFaketimeShimName;
      if (!shim.empty())
        *clock = harness::PreloadFirst(std::move(*clock), shim);
    }
    env.insert(env.end(), clock->begin(), clock->end());
  }
  // The working directory through coreutils' env, which execs the program
  // in place (same pid), on every kind of node.
  const std::string cwd =
      def.cwd.empty() ? ctx.dir : harness::ExpandTemplate(def.cwd, ctx);
  std::vector<std::string> full = {"env", "-C", cwd, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return daemons_.Start(node, def.name, full, ctx.log, env);
}

harness::Status ProcessTarget::Start(const Node& node) {
  if (daemons_.Find(node.name) == nullptr) {
    return Fail(name() + ": unknown node " + node.name);
  }
  for (const ProcessDef& def : spec_.processes) {
    if (auto s = StartOne(node, def); !s) return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_once_.insert(node.name);
    killed_.erase(node.name);
  }
  if (spec_.start != "sequential") return Ok();
  // Sequential: the next node starts only once this one is ready (a
  // Galera node joins a cluster that already has a primary component).
  const auto timeout = LongestReadyTimeout(spec_);
  return PollUntilHealthy(timeout, kPollInterval, [&]() -> Result<std::string> {
    for (const ProcessDef& def : spec_.processes) {
      if (!daemons_.Running(node, def.name)) {
        return Fail(name() + ": " + node.name + ": " + def.name +
                    " exited at start; its log ends:\n" +
                    LogTail(node, def.name));
      }
      std::string p = ReadyProblem(node, def);
      if (!p.empty()) return node.name + " " + p;
    }
    return std::string();
  });
}

std::string ProcessTarget::LogTail(const Node& node,
                                   const std::string& process) {
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(5000);
  auto r = node.remote->Run(
      {"tail", "-c", "1500", NodeDir(node) + "/" + process + ".log"}, options);
  std::string text = Tail(r.out, 1500);
  return text.empty() ? "(empty)" : text;
}

std::string ProcessTarget::ReadyProblem(const Node& node,
                                        const ProcessDef& def) {
  const harness::ProcessReadySpec& r = def.ready;
  auto port_of = [&](const std::string& p) { return PortOf(spec_, p); };
  if (r.kind == "tcp") {
    const int port = port_of(r.port);
    if (!Accepting(node.ip, port, kProbeTimeout))
      return def.name + " does not accept on port " + std::to_string(port);
  } else if (r.kind == "command") {
    harness::TemplateContext ctx = ContextOf(node);
    ctx.log = ctx.dir + "/" + def.name + ".log";
    harness::CommandOptions options;
    options.timeout = std::chrono::milliseconds(5000);
    auto res = node.remote->Run(harness::ExpandAll(r.command, ctx), options);
    if (!res.ok())
      return def.name +
             " ready command: " + Tail(harness::DescribeResult(res), 200);
  } else if (r.kind == "http") {
    etcd::HttpSession http;
    const std::string url =
        "http://" + node.ip + ":" + std::to_string(port_of(r.port)) + r.path;
    auto reply = http.Get(url, kProbeTimeout.count());
    if (reply.transport != etcd::Transport::kOk)
      return def.name + ": GET " + url + ": " + reply.error;
    if (reply.status != r.status)
      return def.name + ": GET " + url + " answered " +
             std::to_string(reply.status);
  }
  return "";
}

harness::Status ProcessTarget::AwaitHealthy(std::chrono::milliseconds timeout) {
  timeout = std::max(timeout, LongestReadyTimeout(spec_));
  const std::vector<Node> nodes = daemons_.nodes();
  return PollUntilHealthy(timeout, kPollInterval, [&]() -> Result<std::string> {
    bool any = false;
    bool leader_seen = false, role_seen = false;
    for (const Node& node : nodes) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (killed_.count(node.name) != 0 ||
            started_once_.count(node.name) == 0)
          continue;
      }
      any = true;
      for (const ProcessDef& def : spec_.processes) {
        if (!daemons_.EverStarted(node, def.name)) continue;
        if (!daemons_.Running(node, def.name)) {
          return Fail(name() + ": " + node.name + ": " + def.name +
                      " is not running (it exited); its log ends:\n" +
                      LogTail(node, def.name));
        }
        std::string p = ReadyProblem(node, def);
        if (!p.empty()) return node.name + " " + p;
      }
      if (spec_.has_status()) {
        NodeStatus s = Inspect(node);
        if (!s.reachable) {
          return node.name + (spec_.status_client ? " does not answer f: status"
                                                  : " status command fails");
        }
        role_seen = role_seen || !s.role.empty();
        leader_seen = leader_seen || s.role == "leader";
      }
    }
    if (!any) return Fail(name() + ": no node is running");
    if (role_seen && !leader_seen) return std::string("no node reports leader");
    return std::string();
  });
}

harness::Status ProcessTarget::Kill(const Node& node) {
  for (const ProcessDef* d : Taking("kill")) {
    if (auto s = daemons_.Kill(node, d->name); !s) return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  killed_.insert(node.name);
  return Ok();
}

harness::Status ProcessTarget::Pause(const Node& node) {
  for (const ProcessDef* d : Taking("pause")) {
    if (auto s = daemons_.Pause(node, d->name); !s) return s;
  }
  return Ok();
}

harness::Status ProcessTarget::Resume(const Node& node) {
  harness::Status result = Ok();
  for (const ProcessDef* d : Taking("pause")) {
    if (auto s = daemons_.Resume(node, d->name); !s && result) result = s;
  }
  return result;
}

bool ProcessTarget::Running(const Node& node) {
  auto kill = Taking("kill");
  if (kill.empty()) return daemons_.Running(node, spec_.processes.front().name);
  for (const ProcessDef* d : kill) {
    if (!daemons_.Running(node, d->name)) return false;
  }
  return true;
}

std::string ProcessTarget::AskStatusClient(const Node& node) {
  auto it = status_clients_.find(node.name);
  if (it == status_clients_.end()) return "";
  StatusClient& sc = *it->second;
  std::lock_guard<std::mutex> lock(sc.mu);
  if (!sc.client) {
    harness::WorkloadSpec w = workload_;
    w.op_timeout_ms = spec_.status_timeout_ms;
    auto opened = OpenProcessClient(spec_, w, ClientKindOf(workload_.name),
                                    peers_, node.index, nullptr,
                                    ClientLog(node.name + "-status.log"));
    if (!opened.ok()) return "";
    sc.client = std::move(opened.value());
  }
  harness::Completion c =
      sc.client->Invoke({"status", checkers::Value(), checkers::Value()});
  if (c.type != harness::Outcome::kOk || !c.value.is_object()) {
    sc.client.reset();  // a fresh process for the next question
    return "";
  }
  return c.value.ToJson();
}

std::string ProcessTarget::StatusText(const Node& node) {
  if (spec_.status_client) return AskStatusClient(node);
  harness::TemplateContext ctx = ContextOf(node);
  harness::CommandOptions options;
  options.timeout = std::chrono::milliseconds(spec_.status_timeout_ms);
  auto r = node.remote->Run(harness::ExpandAll(spec_.status, ctx), options);
  return r.ok() ? r.out : "";
}

NodeStatus ProcessTarget::Inspect(const Node& node) {
  NodeStatus status;
  if (!spec_.has_status()) return status;
  const Node* n = daemons_.Find(node.name);
  if (n == nullptr) return status;
  nlohmann::json j = nlohmann::json::parse(StatusText(*n), nullptr, false);
  if (!j.is_object()) return status;
  status.reachable = true;
  if (auto it = j.find("role"); it != j.end() && it->is_string())
    status.role = NormalizeRole(it->get<std::string>());
  if (auto it = j.find("term"); it != j.end() && it->is_number_integer())
    status.term = it->get<long long>();
  auto name_of = [&](auto pred) {
    for (const Node& m : daemons_.nodes()) {
      if (pred(m)) return m.name;
    }
    return std::string();
  };
  if (auto it = j.find("leader"); it != j.end() && it->is_string()) {
    const std::string v = it->get<std::string>();
    status.leader = name_of([&](const Node& m) { return m.name == v; });
  } else if (auto id = j.find("leader_id");
             id != j.end() && id->is_number_integer()) {
    const long long v = id->get<long long>();
    status.leader = name_of([&](const Node& m) { return m.index + 1 == v; });
  } else if (auto ad = j.find("leader_address");
             ad != j.end() && ad->is_string()) {
    std::string v = ad->get<std::string>();
    v = v.substr(0, v.find(':'));
    status.leader = name_of([&](const Node& m) { return m.ip == v; });
  }
  if (auto it = j.find("commit"); it != j.end() && it->is_number_integer())
    status.commit = it->get<long long>();
  if (auto it = j.find("last_index"); it != j.end() && it->is_number_integer())
    status.last_index = it->get<long long>();
  return status;
}

harness::Status ProcessTarget::Teardown(const std::string& log_dir) {
  // The status clients end first: their logs move with the others below.
  for (auto& [name, sc] : status_clients_) {
    std::lock_guard<std::mutex> lock(sc->mu);
    sc->client.reset();
  }
  // Each process first gets its own stop signal and grace, then whatever
  // is left the usual TERM, grace, KILL.
  int longest = 0;
  for (const ProcessDef& d : spec_.processes) {
    longest = std::max(longest, d.stop_grace_ms);
    if (d.stop_signal == "TERM") continue;
    for (const Node& node : daemons_.nodes()) {
      const pid_t pid = daemons_.Pid(node, d.name);
      if (pid == 0) continue;
      if (daemons_.Paused(node, d.name)) (void)daemons_.Resume(node, d.name);
      (void)node.remote->Signal(pid, SignalNumber(d.stop_signal));
    }
  }
  for (const ProcessDef& d : spec_.processes) {
    if (d.stop_signal == "TERM") continue;
    const auto until =
        Clock::now() + std::chrono::milliseconds(d.stop_grace_ms);
    for (const Node& node : daemons_.nodes()) {
      while (daemons_.Running(node, d.name) && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::vector<harness::Daemons::DaemonFiles> logs;
  for (const ProcessDef& d : spec_.processes) {
    std::vector<std::string> files = {d.name + ".log"};
    // Extra logs inside the node's directory ({dir}/..., {data}/...).
    for (const std::string& t : d.logs) {
      harness::TemplateContext ctx;
      ctx.dir = "";
      ctx.data = "data";
      ctx.ports = spec_.ports;
      std::string rel = harness::ExpandTemplate(t, ctx);
      while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
      if (!rel.empty()) files.push_back(rel);
    }
    logs.emplace_back(d.name, files);
  }
  auto stopped = StopAndCollect(
      std::chrono::milliseconds(std::max(longest, 1000)),
      [this] { return TeardownClock(); }, log_dir, logs, {"data"});
  // The exec clients' logs go next to the node logs: <run>/clients.
  if (!controller_dir_.empty() && !log_dir.empty()) {
    std::error_code ec;
    const auto from = std::filesystem::path(controller_dir_) / "clients";
    if (std::filesystem::exists(from, ec)) {
      const auto to = std::filesystem::path(log_dir).parent_path() / "clients";
      std::filesystem::create_directories(to, ec);
      for (const auto& e : std::filesystem::directory_iterator(from, ec)) {
        std::filesystem::rename(e.path(), to / e.path().filename(), ec);
        if (ec) std::filesystem::copy(e.path(), to / e.path().filename(), ec);
      }
      std::filesystem::remove_all(from, ec);
    }
  }
  return stopped;
}

std::string ProcessTarget::Fatal() { return health_->Fatal(); }

Result<std::unique_ptr<harness::Client>> ProcessTarget::OpenClient(
    const Node& node, const std::string& workload) {
  const Node* n = daemons_.Find(node.name);
  if (n == nullptr) return Fail(name() + ": unknown node " + node.name);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++clients_opened_;
  }
  // One log per node: the stderr of every client bound to it, appended.
  return OpenProcessClient(spec_, workload_, workload, peers_, n->index,
                           health_, ClientLog(n->name + ".log"));
}

std::string ProcessTarget::ClientLog(const std::string& file) const {
  if (controller_dir_.empty()) return "";
  std::error_code ec;
  std::filesystem::create_directories(controller_dir_ + "/clients", ec);
  return controller_dir_ + "/clients/" + file;
}

Result<std::unique_ptr<harness::Client>> OpenProcessClient(
    const harness::ProcessSpec& spec, const harness::WorkloadSpec& w,
    const std::string& workload,
    const std::vector<harness::TemplatePeer>& nodes, int index,
    std::shared_ptr<ExecHealth> health, const std::string& log_path) {
  const harness::ProcessClientSpec& c = spec.client;
  // Transactions (f "txn") and the collections (set, bank, counter) only
  // through exec clients: the resp and etcd protocols have no vocabulary
  // for them.
  const bool exec_only = workload == "list-append" ||
                         workload == "rw-register" || workload == "set" ||
                         workload == "bank" || workload == "counter";
  const bool exec = c.protocol != "etcd" && c.protocol != "resp";
  if (exec_only && !exec) {
    return Fail(spec.system + ": workload '" + workload +
                "' needs client protocol exec (the " + c.protocol +
                " client speaks register and lock only)");
  }
  if (workload != "register" && workload != "lock" && !exec_only) {
    return Fail(spec.system + ": no client for workload '" + workload +
                "' (supported: register, lock; list-append, rw-register, "
                "set, bank and counter with client protocol exec)");
  }
  if (index < 0 || static_cast<std::size_t>(index) >= nodes.size())
    return Fail(spec.system + ": no node " + std::to_string(index + 1));
  const harness::TemplatePeer& n = nodes[static_cast<std::size_t>(index)];
  harness::TemplateContext ctx;
  ctx.nodes = nodes;
  ctx.self = index;
  ctx.ports = spec.ports;
  ctx.lists = spec.lists;
  ctx.config_dir = spec.config_dir;
  auto port_of = [&](const std::string& p) { return PortOf(spec, p); };
  if (c.protocol == "etcd") {
    etcd::EtcdClientOptions o;
    o.ip = n.ip;
    o.port = port_of(c.port);
    o.op_timeout_ms = w.op_timeout_ms;
    o.lock_ttl_ms = w.ttl_ms;
    o.acquire_timeout_ms = w.op_timeout_ms;
    return std::unique_ptr<harness::Client>(
        std::make_unique<etcd::EtcdClient>(o));
  }
  if (c.protocol == "resp") {
    RespClientOptions o;
    o.host = n.ip;
    o.port = port_of(c.port);
    o.route = c.route;
    o.master = c.master;
    if (c.route == "sentinel") {
      const int sp = port_of(c.sentinel_port);
      o.sentinels.push_back(n.ip + ":" + std::to_string(sp));
      for (const harness::TemplatePeer& m : nodes) {
        if (m.name != n.name)
          o.sentinels.push_back(m.ip + ":" + std::to_string(sp));
      }
    }
    // The node's placeholders are expanded here; the operation's words
    // ({key} ...) stay for the client to fill in per operation.
    harness::TemplateContext words = ctx;
    for (const char* word :
         {"key", "value", "old", "new", "ttl", "token", "owner"})
      words.extra[word] = std::string("{") + word + "}";
    for (const auto& [f, argv] : c.commands)
      o.commands[f] = harness::ExpandAll(argv, words);
    // Commands the config leaves out keep their defaults.
    for (auto& [f, argv] : DefaultRespCommands(workload))
      o.commands.emplace(f, argv);
    o.op_timeout_ms = w.op_timeout_ms;
    o.lock_ttl_ms = w.ttl_ms;
    return MakeRespClient(std::move(o));
  }
  ExecClientOptions o;
  o.argv = harness::ExpandAll(c.command, ctx);
  o.working_dir = c.cwd;
  o.workload = workload;
  o.node = n.name;
  o.op_timeout_ms = w.op_timeout_ms;
  o.start_timeout_ms = c.start_timeout_ms;
  o.lock_ttl_ms = w.ttl_ms;
  o.accounts = w.accounts;
  o.total = w.total;
  o.log_path = log_path;
  std::string list;
  for (const harness::TemplatePeer& m : nodes)
    list += (list.empty() ? "" : ",") + m.name + "=" + m.ip;
  o.env = {"FAULTLINE_PROTOCOL=" + std::to_string(kExecProtocol),
           "FAULTLINE_WORKLOAD=" + workload,
           "FAULTLINE_NODE=" + n.name,
           "FAULTLINE_NODE_ID=" + std::to_string(index + 1),
           "FAULTLINE_NODE_IP=" + n.ip,
           "FAULTLINE_NODES=" + list,
           "FAULTLINE_OP_TIMEOUT_MS=" + std::to_string(w.op_timeout_ms)};
  if (workload == "bank") {
    o.env.push_back("FAULTLINE_ACCOUNTS=" + std::to_string(w.accounts));
    o.env.push_back("FAULTLINE_TOTAL=" + std::to_string(w.total));
  }
  for (const auto& [pn, number] : spec.ports)
    o.env.push_back("FAULTLINE_PORT_" + Upper(pn) + "=" +
                    std::to_string(number));
  for (const auto& [k, v] : c.env)
    o.env.push_back(k + "=" + harness::ExpandTemplate(v, ctx));
  return OpenExecClient(o, std::move(health));
}

}  // namespace faultline::targets::process

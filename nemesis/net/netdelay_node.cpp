#include "nemesis/net/netdelay_node.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/cluster/netns.h"
#include "harness/cluster/remote_factory.h"
#include "harness/cluster/upload.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "nemesis/net/delay.h"
#include "nemesis/net/iptables_chain.h"

    namespace faultline::nemesis {
  namespace {

  using harness::Fail;
  using harness::Status;
  using std::chrono::milliseconds;

  constexpr milliseconds kBindLimit{5000};
  constexpr milliseconds kStopLimit{3000};

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

  std::string LastLineOf(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
      text.pop_back();
    auto nl = text.rfind('\n');
    return nl == std::string::npos ? text : text.substr(nl + 1);
  }

  std::string QueueFile(pid_t pid) {
    return "/proc/" + std::to_string(pid) + "/net/netfilter/nfnetlink_queue";
  }

  }  // namespace

  std::string DelayRules(const std::vector<std::string>& sources, int queue) {
    std::vector<std::string> rules;
    for (const auto& ip : sources)
      rules.push_back("-s " + ip + "/32 -j NFQUEUE --queue-num " +
                      std::to_string(queue) + " --queue-bypass");
    return ChainBatch(kDelayChain, rules);
  }

  std::string DescribeNetdelayCheck(int exit_code, const std::string& err) {
    // glibc's loader: "PROG: error while loading shared libraries: LIB:
    // cannot open shared object file: No such file or directory".
    const std::string marker = "error while loading shared libraries: ";
    auto at = err.find(marker);
    if (at != std::string::npos) {
      std::string lib = err.substr(at + marker.size());
      lib = lib.substr(0, lib.find(':'));
      return "the node lacks " + lib +
             ", which faultline-netdelay loads (install it there: Debian "
             "packages libnetfilter-queue1, libnfnetlink0, libmnl0)";
    }
    std::string line = LastLineOf(err);
    return "faultline-netdelay --help exited " + std::to_string(exit_code) +
           (line.empty() ? "" : ": " + line);
  }

  std::string NetdelayNodes::BinaryPath() const {
    return harness::FindCompanion(binary_, "faultline-netdelay");
  }

  bool NetdelayNodes::Remote(const harness::Node& node) const {
    return node.netns.empty() && node.remote != nullptr &&
           !node.remote->SharesControllerPids();
  }

  std::string NetdelayNodes::RemoteDir(const harness::Node& node) const {
    return node_dir_ + "/netdelay-" + node.name;
  }

  std::string NetdelayNodes::LocalLog(const harness::Node& node) const {
    return (std::filesystem::path(ledger_.path()).parent_path() /
            ("netdelay-" + node.name + ".log"))
        .string();
  }

  Status NetdelayNodes::Prepare(const std::vector<harness::Node>& nodes) {
    const std::string binary = BinaryPath();
    for (const auto& node : nodes) {
      if (!Remote(node)) continue;
      if (binary.empty())
        return Fail(
            "faultline-netdelay not found (it is built next to faultline; "
            "needs libnetfilter-queue-dev)");
      if (Status s = PrepareOne(node, binary); !s.ok()) return s;
    }
    return harness::Ok();
  }

  // Uploads the binary to the node and runs `--help` there once.
  Status NetdelayNodes::PrepareOne(const harness::Node& node,
                                   const std::string& binary) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (copies_.count(node.name) != 0) return harness::Ok();
    }
    if (node_dir_.empty() || node_dir_.front() != '/')
      return Fail("faultline-netdelay on " + node.name +
                  ": no run directory on the node to copy it to");
    const std::string copy = RemoteDir(node) + "/faultline-netdelay";
    if (Status up = harness::UploadExecutable(*node.remote, node.name, binary,
                                              copy, milliseconds(15000));
        !up.ok())
      return up;
    harness::CommandOptions o;
    o.timeout = milliseconds(15000);
    auto help = node.remote->Run({copy, "--help"}, o);
    if (!help.ok())
      return Fail("faultline-netdelay cannot run on " + node.name + ": " +
                  (help.error.empty()
                       ? DescribeNetdelayCheck(help.exit_code, help.err)
                       : help.error));
    std::lock_guard<std::mutex> lock(mu_);
    copies_[node.name] = copy;
    return harness::Ok();
  }

  std::string NetdelayNodes::LastLogLine(const harness::Node& node) const {
    if (!Remote(node)) return LastLineOf(ReadFile(LocalLog(node)));
    harness::CommandOptions o;
    o.timeout = milliseconds(10000);
    auto r = node.remote->Run(
        {"tail", "-n", "1", RemoteDir(node) + "/netdelay.log"}, o);
    return r.ok() ? LastLineOf(r.out) : "(its log cannot be read)";
  }

  Status NetdelayNodes::Start(const harness::Node& node,
                              const std::vector<std::string>& args, int queue,
                              Daemon* out) {
    *out = Daemon{};
    const bool remote = Remote(node);
    std::string path;
    if (remote) {
      const std::string binary = BinaryPath();
      if (binary.empty())
        return Fail("faultline-netdelay not found on the controller");
      if (Status s = PrepareOne(node, binary); !s.ok()) return s;
      std::lock_guard<std::mutex> lock(mu_);
      path = copies_[node.name];
    } else {
      path = BinaryPath();
      if (path.empty()) return Fail("faultline-netdelay not found");
    }
    std::vector<std::string> argv = {path};
    argv.insert(argv.end(), args.begin(), args.end());

    harness::LedgerEntry proc;
    proc.kind = "process";
    proc.node = node.name;
    if (remote) {
      auto pid =
          node.remote->Start(argv, RemoteDir(node) + "/netdelay.log", {});
      if (!pid.ok()) return Fail("starting faultline-netdelay: " + pid.error());
      out->pid = *pid;
      auto start_time = harness::RemoteProcessStartTime(*node.remote, *pid);
      if (!start_time.ok()) {
        // Gone already (or the node stopped answering): its log says why.
        if (!node.remote->Alive(*pid))
          return Fail("faultline-netdelay exited: " + LastLogLine(node));
        return Fail("faultline-netdelay start time: " + start_time.error());
      }
      proc.pid = *pid;
      proc.start_time = *start_time;
      proc.remote = node.remote->Descriptor();
    } else {
      harness::SpawnOptions so;
      so.netns = node.netns;
      so.log_path = LocalLog(node);
      auto pid = harness::Spawn(argv, so);
      if (!pid.ok()) return Fail("starting faultline-netdelay: " + pid.error());
      out->pid = *pid;
      proc.netns = node.netns;
      proc.pid = *pid;
      proc.start_time = harness::ProcessStartTime(*pid).value_or(0);
    }
    out->proc_seq = ledger_.Record(proc);
    if (out->proc_seq < 0)
      return Fail("cannot write the fault ledger " + ledger_.path());

    // Bound when the daemon's namespace lists the queue.
    const auto deadline = std::chrono::steady_clock::now() + kBindLimit;
    for (;;) {
      std::string listing;
      if (remote) {
        harness::CommandOptions o;
        o.timeout = milliseconds(10000);
        auto r = node.remote->Run({"cat", QueueFile(out->pid)}, o);
        if (r.ok()) listing = r.out;
      } else {
        listing = ReadFile(QueueFile(out->pid));
      }
      if (QueueBound(listing, queue)) return harness::Ok();
      const bool alive = remote ? node.remote->Alive(out->pid)
                                : harness::ProcessAlive(out->pid);
      if (!alive)
        return Fail("faultline-netdelay exited: " + LastLogLine(node));
      if (std::chrono::steady_clock::now() > deadline)
        return Fail("faultline-netdelay did not bind NFQUEUE " +
                    std::to_string(queue) + " within 5 s");
      std::this_thread::sleep_for(milliseconds(10));
    }
  }

  Status NetdelayNodes::Stop(const harness::Node& node, Daemon& d) {
    if (d.pid <= 0) return harness::Ok();
    if (!Remote(node)) {
      if (!harness::TerminateProcess(d.pid, SIGTERM, kStopLimit))
        return Fail("faultline-netdelay pid " + std::to_string(d.pid) + " in " +
                    node.netns + " did not exit");
    } else {
      // SIGTERM lets it accept what it holds; a process already gone counts
      // as stopped. SIGKILL when it does not exit in time.
      auto gone_within = [&](milliseconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (node.remote->Alive(d.pid)) {
          if (std::chrono::steady_clock::now() > deadline) return false;
          std::this_thread::sleep_for(milliseconds(20));
        }
        return true;
      };
      (void)node.remote->Signal(d.pid, SIGTERM);
      if (!gone_within(kStopLimit)) {
        (void)node.remote->Signal(d.pid, SIGKILL);
        if (!gone_within(milliseconds(1000)))
          return Fail("faultline-netdelay pid " + std::to_string(d.pid) +
                      " on " + node.name + " did not exit");
      }
      // Its log, beside the netns nodes' (best effort: the run goes on).
      (void)node.remote->Download(RemoteDir(node) + "/netdelay.log",
                                  LocalLog(node));
    }
    if (d.proc_seq >= 0) ledger_.MarkHealed(d.proc_seq);
    d = Daemon{};
    return harness::Ok();
  }

}  // namespace faultline::nemesis

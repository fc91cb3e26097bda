#include "nemesis/clock/sysclock.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "harness/cluster/netns.h"
#include "harness/cluster/remote_factory.h"
#include "harness/cluster/upload.h"
#include "harness/process/find_program.h"
#include "harness/process/process.h"
#include "nemesis/clock/sysclock_tool.h"

    namespace faultline::nemesis {
  namespace {

  using checkers::Value;
  using harness::Fail;
  using harness::Result;
  using harness::Status;

  std::string Trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // offset_ns of the tool's last output line, in ms.
  Result<double> OffsetMs(const std::string& out) {
    std::string text = Trim(out);
    auto nl = text.rfind('\n');
    auto kv =
        ParseSysclockLine(nl == std::string::npos ? text : text.substr(nl + 1));
    auto it = kv.find("offset_ns");
    if (it == kv.end()) return Fail("faultline-clock said '" + text + "'");
    try {
      return static_cast<double>(std::stoll(it->second)) / 1e6;
    } catch (const std::exception&) {
      return Fail("faultline-clock said '" + text + "'");
    }
  }

  }  // namespace

  Result<std::unique_ptr<SystemClock>> SystemClock::Create(
      const std::vector<harness::Node>& nodes, Options options,
      harness::Ledger& ledger) {
    const std::string binary =
        harness::FindCompanion(options.binary, "faultline-clock");
    if (binary.empty())
      return Fail(
          "system clock: faultline-clock not found (it is built next to "
          "faultline)");
    options.binary = binary;
    std::string own;
    std::ifstream("/proc/sys/kernel/random/boot_id") >> own;
    std::vector<Kernel> kernels;
    for (const harness::Node& node : nodes) {
      if (node.remote == nullptr || node.remote->Descriptor().empty())
        return Fail("system clock: node " + node.name +
                    " is not a host of its own (ssh)");
      auto r = node.remote->Run({"cat", "/proc/sys/kernel/random/boot_id"});
      const std::string id = Trim(r.out);
      if (!r.ok() || id.empty())
        return Fail("system clock: cannot read the boot id of " + node.name +
                    ": " + harness::DescribeResult(r));
      auto same =
          std::find_if(kernels.begin(), kernels.end(),
                       [&](const Kernel& k) { return k.boot_id == id; });
      if (same == kernels.end()) {
        kernels.push_back(Kernel{id, {node.index}, id == own, 0, 0, 0});
      } else {
        same->nodes.push_back(node.index);
      }
    }
    auto clock = std::unique_ptr<SystemClock>(
        new SystemClock(nodes, options, ledger, std::move(kernels)));
    for (const Kernel& k : clock->kernels_) {
      const harness::Node& anchor = nodes[static_cast<std::size_t>(k.nodes[0])];
      const std::string copy = clock->ToolPath();
      if (auto up = harness::UploadExecutable(*anchor.remote, anchor.name,
                                              binary, copy);
          !up)
        return Fail("system clock: " + up.error());
    }
    return clock;
  }

  SystemClock::SystemClock(std::vector<harness::Node> nodes, Options options,
                           harness::Ledger & ledger,
                           std::vector<Kernel> kernels)
      : nodes_(std::move(nodes)),
        options_(std::move(options)),
        ledger_(ledger),
        kernels_(std::move(kernels)) {}

  SystemClock::~SystemClock() = default;

  std::string SystemClock::StatePath() const {
    return options_.node_dir + "/sysclock.state";
  }
  std::string SystemClock::ToolPath() const {
    return options_.node_dir + "/faultline-clock";
  }

  std::vector<int> SystemClock::KernelOf(int node) const {
    for (const Kernel& k : kernels_)
      if (std::find(k.nodes.begin(), k.nodes.end(), node) != k.nodes.end())
        return k.nodes;
    return {};
  }

  bool SystemClock::SharesController(int node) const {
    for (const Kernel& k : kernels_)
      if (std::find(k.nodes.begin(), k.nodes.end(), node) != k.nodes.end())
        return k.controller;
    return false;
  }

  std::vector<std::size_t> SystemClock::KernelsOf(const std::vector<int>& nodes)
      const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < kernels_.size(); ++i)
      for (int n : nodes)
        if (std::find(kernels_[i].nodes.begin(), kernels_[i].nodes.end(), n) !=
            kernels_[i].nodes.end()) {
          out.push_back(i);
          break;
        }
    return out;
  }

  Status SystemClock::RecordLocked(Kernel & k) {
    if (k.seq > 0) return harness::Ok();
    const harness::Node& anchor = nodes_[static_cast<std::size_t>(k.nodes[0])];
    harness::LedgerEntry e;
    e.kind = "sysclock";
    e.name = StatePath();
    e.node = anchor.name;
    e.remote = anchor.remote->Descriptor();
    long seq = ledger_.Record(e);
    if (seq < 0) return Fail("cannot write the fault ledger " + ledger_.path());
    k.seq = seq;
    return harness::Ok();
  }

  Result<double> SystemClock::RunLocked(Kernel & k,
                                        const std::vector<std::string>& args) {
    const harness::Node& anchor = nodes_[static_cast<std::size_t>(k.nodes[0])];
    std::vector<std::string> argv = {ToolPath(), args[0], "--state",
                                     StatePath()};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    harness::CommandOptions o;
    o.timeout = std::chrono::milliseconds(15000);
    auto r = anchor.remote->Run(argv, o);
    if (!r.ok())
      return Fail("faultline-clock " + args[0] + " on " + anchor.name + ": " +
                  harness::DescribeResult(r));
    return OffsetMs(r.out);
  }

  SystemClock::Move SystemClock::Describe(
      const std::vector<std::size_t>& ks,
      const std::map<std::size_t, double>& offsets) const {
    Move m;
    for (std::size_t i : ks) {
      const Kernel& k = kernels_[i];
      m.kernels.push_back(k.nodes);
      m.controller_moved = m.controller_moved || k.controller;
      for (int n : k.nodes) {
        m.moved.push_back(n);
        if (auto it = offsets.find(i); it != offsets.end())
          m.offset_ms[n] = it->second;
      }
    }
    std::sort(m.moved.begin(), m.moved.end());
    return m;
  }

  Result<SystemClock::Move> SystemClock::Bump(const std::vector<int>& chosen,
                                              long long delta_ms) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto ks = KernelsOf(chosen);
    std::map<std::size_t, double> offsets;
    for (std::size_t i : ks) {
      if (Status s = RecordLocked(kernels_[i]); !s.ok()) return Fail(s.error());
      auto off = RunLocked(kernels_[i], {"bump", std::to_string(delta_ms)});
      if (!off.ok()) return Fail(off.error());
      offsets[i] = *off;
    }
    return Describe(ks, offsets);
  }

  Result<SystemClock::Move> SystemClock::StartStrobe(
      const std::vector<int>& chosen, long long delta_ms, long long period_ms,
      long long duration_ms) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto ks = KernelsOf(chosen);
    std::map<std::size_t, double> offsets;
    for (std::size_t i : ks) {
      Kernel& k = kernels_[i];
      if (k.strobe_pid != 0) return Fail("system clock: a strobe still runs");
      if (Status s = RecordLocked(k); !s.ok()) return Fail(s.error());
      const harness::Node& anchor =
          nodes_[static_cast<std::size_t>(k.nodes[0])];
      auto pid = anchor.remote->Start(
          {ToolPath(), "strobe", "--state", StatePath(),
           std::to_string(delta_ms), std::to_string(period_ms),
           std::to_string(duration_ms)},
          options_.node_dir + "/sysclock-strobe.log", {});
      if (!pid.ok())
        return Fail("system clock: strobe on " + anchor.name + ": " +
                    pid.error());
      k.strobe_pid = *pid;
      auto start_time = harness::RemoteProcessStartTime(*anchor.remote, *pid);
      harness::LedgerEntry e;  // a strobe that already ended needs no entry
      e.kind = "process";
      e.node = anchor.name;
      e.pid = *pid;
      e.start_time = start_time.ok() ? *start_time : 0;
      e.remote = anchor.remote->Descriptor();
      if (start_time.ok()) k.strobe_seq = ledger_.Record(e);
      offsets[i] = static_cast<double>(delta_ms);  // its first flip: up
    }
    return Describe(ks, offsets);
  }

  void SystemClock::StopStrobeLocked(Kernel & k, Value::List * flips) {
    if (k.strobe_pid == 0) return;
    const harness::Node& anchor = nodes_[static_cast<std::size_t>(k.nodes[0])];
    (void)anchor.remote->Signal(k.strobe_pid, SIGTERM);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (anchor.remote->Alive(k.strobe_pid) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (k.strobe_seq > 0 && !anchor.remote->Alive(k.strobe_pid))
      ledger_.MarkHealed(k.strobe_seq);
    k.strobe_pid = 0;
    k.strobe_seq = 0;
    auto log =
        anchor.remote->Run({"cat", options_.node_dir + "/sysclock-strobe.log"});
    std::size_t at = 0;
    while (flips != nullptr && at < log.out.size()) {
      auto nl = log.out.find('\n', at);
      if (nl == std::string::npos) nl = log.out.size();
      auto kv = ParseSysclockLine(log.out.substr(at, nl - at));
      at = nl + 1;
      if (kv["what"] != "flip") continue;
      try {
        flips->push_back(Value::MakeObject(
            {{"at_ms", Value::Int(std::stoll(kv["at_ms"]))},
             {"up", Value::Bool(kv["up"] == "1")},
             {"clock_ms",
              Value::Double(static_cast<double>(std::stoll(kv["offset_ns"])) /
                            1e6)},
             {"node", Value::String(anchor.name)}}));
      } catch (const std::exception&) {
      }
    }
  }

  Value SystemClock::StopStrobes() {
    std::lock_guard<std::mutex> lock(mu_);
    Value::List flips;
    for (Kernel& k : kernels_) StopStrobeLocked(k, &flips);
    return Value::MakeList(std::move(flips));
  }

  Status SystemClock::ResetLocked(Kernel & k, double* offset_ms) {
    StopStrobeLocked(k, nullptr);
    *offset_ms = 0;
    if (k.seq == 0) return harness::Ok();  // never moved since the last reset
    auto off = RunLocked(k, {"reset"});
    if (!off.ok()) return Fail(off.error());
    *offset_ms = *off;
    ledger_.MarkHealed(k.seq);
    k.seq = 0;
    return harness::Ok();
  }

  Result<std::map<int, double>> SystemClock::Reset(
      const std::vector<int>& nodes) {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<int, double> out;
    std::string errors;
    for (std::size_t i : KernelsOf(nodes)) {
      double off = 0;
      if (Status s = ResetLocked(kernels_[i], &off); !s.ok()) {
        errors += (errors.empty() ? "" : "; ") + s.error();
        continue;
      }
      for (int n : kernels_[i].nodes) out[n] = off;
    }
    if (!errors.empty()) return Fail(errors);
    return out;
  }

  Status SystemClock::ResetAll() {
    std::vector<int> all;
    for (const harness::Node& n : nodes_) all.push_back(n.index);
    auto r = Reset(all);
    if (!r.ok()) return Fail(r.error());
    return harness::Ok();
  }

}  // namespace faultline::nemesis

#include "cli/registry.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "checkers/collections/bank.h"
#include "checkers/collections/counter.h"
#include "checkers/collections/set.h"
#include "checkers/leader_per_term.h"
#include "checkers/linearizable.h"
#include "checkers/mutex_fencing.h"
#include "checkers/txn/txn.h"
#include "harness/clock/clock.h"
#include "harness/cluster/netns.h"
#include "harness/process/find_program.h"
#include "nemesis/clock/sysclock.h"
#include "nemesis/netns_nemesis.h"
#include "targets/etcd/etcd_target.h"
#include "targets/process/process_target.h"
#include "targets/raftkv/raftkv_target.h"
#include "targets/redis/redis_target.h"
#include "targets/zookeeper/zk_target.h"
#include "workloads/collections.h"
#include "workloads/election.h"
#include "workloads/lock.h"
#include "workloads/register.h"
#include "workloads/txn.h"

namespace faultline::cli {

namespace {

harness::Result<std::unique_ptr<harness::Target>> MakeTargetOnly(
    const harness::TestSpec& spec, harness::Ledger* ledger,
    const std::string& work_dir, const std::string& controller_dir) {
  if (spec.target.name == "process") {
    return std::unique_ptr<harness::Target>(
        std::make_unique<targets::process::ProcessTarget>(
            spec.target.process, spec.workload, ledger, work_dir,
            controller_dir, spec.cluster.provider == "netns"));
  }
  if (spec.target.name == "etcd") {
    return std::unique_ptr<harness::Target>(
        std::make_unique<targets::etcd::EtcdTarget>(
            spec.target.etcd, spec.workload, ledger, work_dir));
  }
  if (spec.target.name == "raftkv") {
    return std::unique_ptr<harness::Target>(
        std::make_unique<targets::raftkv::RaftkvTarget>(
            spec.target.raftkv, spec.workload, ledger, work_dir,
            FindTargetBinary(spec)));
  }
  if (spec.target.name == "zookeeper") {
    return std::unique_ptr<harness::Target>(
        std::make_unique<targets::zookeeper::ZookeeperTarget>(
            spec.target.zookeeper, spec.workload, ledger, work_dir,
            FindTargetBinary(spec)));
  }
  if (spec.target.name == "redis") {
    return std::unique_ptr<harness::Target>(
        std::make_unique<targets::redis::RedisTarget>(
            spec.target.redis, spec.workload, ledger, work_dir,
            FindTargetBinary(spec)));
  }
  return harness::Fail("unknown target " + spec.target.name);
}

}  // namespace

// With clock faults, the target runs its processes under a ClockControl
// whose files live in <work_dir>/faketime (harness/clock/clock.h).
harness::Result<std::unique_ptr<harness::Target>> MakeTarget(
    const harness::TestSpec& spec, harness::Ledger* ledger,
    const std::string& work_dir, const std::string& controller_dir) {
  auto target = MakeTargetOnly(spec, ledger, work_dir, controller_dir);
  const auto& faults = spec.nemesis.faults;
  const bool clock_faults =
      std::find(faults.begin(), faults.end(), "clock") != faults.end() ||
      std::find(faults.begin(), faults.end(), "strobe") != faults.end();
  // clock_mode system moves the nodes' real clocks (nemesis/clock/sysclock.h):
  // the target runs as it is.
  if (!target.ok() || !clock_faults || spec.nemesis.clock_mode == "system")
    return target;
  auto* skewable = dynamic_cast<harness::ClockSkewable*>(target->get());
  if (skewable == nullptr)
    return harness::Fail("the clock fault cannot fake the clocks of " +
                         spec.target.name);
  harness::ClockControl::Options options;
  options.dir = std::filesystem::absolute(work_dir).string() + "/faketime";
  options.fake_monotonic = spec.nemesis.clock_monotonic;
  options.on_nodes = spec.cluster.provider == "ssh" ||
                     spec.cluster.provider == "docker";  // files on the nodes
  auto clock = harness::ClockControl::Create(options, ledger);
  if (!clock.ok()) return harness::Fail(clock.error());
  skewable->EnableClock(std::move(clock.value()));
  return target;
}

harness::Result<std::unique_ptr<harness::Workload>> MakeWorkload(
    const harness::TestSpec& spec) {
  if (spec.workload.name == "register") {
    return workloads::MakeRegisterWorkload(spec.workload);
  }
  if (spec.workload.name == "lock") {
    return workloads::MakeLockWorkload(spec.workload);
  }
  if (spec.workload.name == "election") {
    return workloads::MakeElectionWorkload(spec.workload);
  }
  if (spec.workload.name == "list-append") {
    return workloads::MakeListAppendWorkload(spec.workload);
  }
  if (spec.workload.name == "rw-register") {
    return workloads::MakeRwRegisterWorkload(spec.workload);
  }
  if (spec.workload.name == "set") {
    return workloads::MakeSetWorkload(spec.workload);
  }
  if (spec.workload.name == "bank") {
    return workloads::MakeBankWorkload(spec.workload);
  }
  if (spec.workload.name == "counter") {
    return workloads::MakeCounterWorkload(spec.workload);
  }
  return harness::Fail("unknown workload " + spec.workload.name);
}

namespace {
// The longest a fault lasts (nemesis.duration and the entries' own).
double LongestFaultS(const harness::NemesisSpec& n) {
  double longest = n.duration_s;
  for (const auto& e : n.entries)
    longest = std::max(longest, e.duration_s.value_or(n.duration_s));
  return longest;
}
}  // namespace

harness::Result<std::unique_ptr<harness::Nemesis>> MakeNemesis(
    const harness::TestSpec& spec, harness::Cluster& cluster,
    harness::Target& target, harness::Ledger& ledger,
    const std::string& node_dir, nemesis::disk::LazyfsNodes* disk) {
  auto nemesis =
      std::make_unique<nemesis::NetnsNemesis>(cluster, target, ledger);
  nemesis->SetDisk(disk);
  if (auto* skewable = dynamic_cast<harness::ClockSkewable*>(&target))
    nemesis->SetClock(skewable->clock());
  const auto& faults = spec.nemesis.faults;
  const bool clock_faults =
      std::find(faults.begin(), faults.end(), "clock") != faults.end() ||
      std::find(faults.begin(), faults.end(), "strobe") != faults.end();
  if (spec.nemesis.clock_mode == "system" && clock_faults) {
    nemesis::SystemClock::Options options;
    options.node_dir = node_dir;
    auto clock = nemesis::SystemClock::Create(cluster.nodes(), options, ledger);
    if (!clock.ok()) return harness::Fail(clock.error());
    // A strobe left alone ends 2 s after the longest fault would.
    nemesis->SetSystemClock(
        std::move(clock.value()),
        static_cast<long long>(LongestFaultS(spec.nemesis) * 1000) + 2000);
  }
  nemesis->SetNodeDir(node_dir);
  const bool netdelay =
      std::any_of(faults.begin(), faults.end(), [](const std::string& f) {
        return f == "delay" || f == "kill-voter" || f == "figure8";
      });
  if (netdelay &&
      (spec.cluster.provider == "ssh" || spec.cluster.provider == "docker")) {
    if (auto s = nemesis->PrepareNetdelay(); !s.ok())
      return harness::Fail(s.error());
  }
  return std::unique_ptr<harness::Nemesis>(std::move(nemesis));
}

namespace {

std::string Executable(const std::string& b) {
  if (b.find('/') != std::string::npos) {
    return access(b.c_str(), X_OK) == 0 ? b : "";
  }
  return harness::FindSystemTool(b);
}

}  // namespace

namespace {
// target: process on netns nodes: the first program (a process's argv[0],
// the exec client's command[0]) that is neither beside faultline nor on
// PATH, as "`name` (where)"; "" when every one is found. Programs written
// as templates, and every program on ssh and docker nodes, are not checked
// here (the start fails with the node's own error).
std::string MissingProcessProgram(const harness::TestSpec& spec) {
  const harness::ProcessSpec& p = spec.target.process;
  auto missing = [](const std::string& program) {
    if (program.empty() || program.find('{') != std::string::npos) return false;
    if (program.find('/') != std::string::npos)
      return access(program.c_str(), X_OK) != 0;
    return harness::FindCompanion("", program).empty();
  };
  if (spec.cluster.provider == "netns") {
    for (std::size_t i = 0; i < p.processes.size(); ++i) {
      const auto& argv = p.processes[i].argv;
      if (!argv.empty() && missing(argv[0]))
        return "`" + argv[0] + "` (target.processes[" + std::to_string(i) +
               "].argv[0])";
    }
  }
  if (p.client.protocol == "exec" && !p.client.command.empty()) {
    const std::string& c = p.client.command[0];
    if (c.find('/') == std::string::npos ? missing(c)
        : c[0] == '/'                    ? access(c.c_str(), X_OK) != 0
                      : access((p.client.cwd + "/" + c).c_str(), X_OK) != 0)
      return "`" + c + "` (target.client.command[0])";
  }
  return "";
}
}  // namespace

std::string FindTargetBinary(const harness::TestSpec& spec) {
  if (spec.target.name == "process") {
    return MissingProcessProgram(spec).empty() ? "process" : "";
  }
  // provider: docker: etcd, Redis and ZooKeeper run from the containers'
  // own packages, so their binary is the configured name or path as the
  // container resolves it. raftkv is the controller's, copied to each node.
  if (spec.cluster.provider == "docker") {
    if (spec.target.name == "etcd") return spec.target.etcd.binary;
    if (spec.target.name == "redis") return spec.target.redis.binary;
    if (spec.target.name == "zookeeper") return spec.target.zookeeper.java;
  }
  if (spec.target.name == "etcd") return Executable(spec.target.etcd.binary);
  if (spec.target.name == "redis") return Executable(spec.target.redis.binary);
  if (spec.target.name == "zookeeper") {
    return Executable(spec.target.zookeeper.java);
  }
  if (spec.target.name == "raftkv") {
    const std::string& b = spec.target.raftkv.binary;
    // A bare name is looked up beside faultline first: both are built into
    // the same build directory.
    if (b.find('/') == std::string::npos) return harness::FindCompanion("", b);
    return Executable(b);
  }
  return "";
}

std::string InstallHint(const harness::TestSpec& spec) {
  if (spec.target.name == "redis") {
    return "apt-get install redis-server redis-sentinel (or set "
           "target.binary and target.sentinel_binary)";
  }
  if (spec.target.name == "zookeeper") {
    return "apt-get install zookeeper libzookeeper-mt-dev "
           "openjdk-17-jre-headless "
           "(or set target.java)";
  }
  if (spec.target.name == "process") {
    return "cannot find " + MissingProcessProgram(spec) +
           " beside faultline or on PATH; install it, or write its full path";
  }
  if (spec.target.name == "raftkv") {
    return "build it with scripts/build.sh (it is written next to "
           "build/faultline), or set target.binary";
  }
  return "run scripts/install-deps.sh (Debian package etcd-server)";
}

namespace {

const char kMutexFencingLine[] =
    "lock histories: no overlapping holds, fencing tokens unique and "
    "increasing, no stale write accepted by a fenced resource, no corrupted "
    "unfenced one (docs/history-locks.md)";
const char kLeaderPerTermLine[] =
    "leader observations: at most one leader per term; says how long two "
    "nodes both believed they led";

}  // namespace

std::vector<Described> CheckerDescriptions() {
  return {
      {"linearizable",
       "every operation appears to take effect at one instant inside its "
       "interval (Wing & Gong search per key, bounded: unknown when out of "
       "time or memory)"},
      {"stats",
       "ok/fail/info counts and latency quantiles per operation; unknown "
       "when nothing succeeded"},
      {checkers::kMutexFencingChecker, kMutexFencingLine},
      {checkers::kLeaderPerTermChecker, kLeaderPerTermLine},
      {checkers::txn::kListAppendChecker,
       "transactions of appends and whole-list reads: dependency cycles and "
       "named anomalies against workload.consistency_model; unknown past "
       "its time or memory bound"},
      {checkers::txn::kRwRegisterChecker,
       "transactions of unique writes and reads: checked like list-append "
       "from reads-from and write-follows-read orders"},
      {checkers::collections::kSetChecker,
       "unique adds and whole-set reads: no acknowledged element lost, "
       "none unexpected or duplicated; stale ones reported"},
      {checkers::collections::kBankChecker,
       "every read of all balances sums to workload.total over exactly "
       "the configured accounts, none negative"},
      {checkers::collections::kCounterChecker,
       "every read lies between the acknowledged and the attempted sums "
       "of the increments"},
  };
}

std::vector<Described> CheckModelDescriptions() {
  static const std::vector<Described> kModels = {
      {"register",
       "one value per key, initially null: read and write (linearizable)"},
      {"cas-register",
       "one value per key, initially null: read, write and cas [old new], "
       "which sets new only when the value is old (linearizable)"},
      {"kv",
       "one string per key, a missing key reads \"\": get, put and append "
       "(linearizable)"},
      {"mutex",
       "one lock per key, initially free: acquire succeeds only when free, "
       "release only when held (linearizable)"},
  };
  std::vector<Described> out;
  for (const std::string& name : checkers::LinearizableModelNames()) {
    auto it =
        std::find_if(kModels.begin(), kModels.end(),
                     [&name](const Described& d) { return d.name == name; });
    out.push_back({name, it != kModels.end()
                             ? it->description
                             : std::string("(no description)")});
  }
  out.push_back({checkers::kMutexFencingChecker,
                 std::string("the checker: ") + kMutexFencingLine});
  out.push_back({checkers::kLeaderPerTermChecker,
                 std::string("the checker: ") + kLeaderPerTermLine});
  out.push_back({checkers::txn::kListAppendChecker,
                 "transactions of appends to and whole reads of lists: "
                 "dependency cycles and named anomalies (G0 .. G2-item) "
                 "against --consistency-model (docs/transactions.md)"});
  out.push_back({checkers::txn::kRwRegisterChecker,
                 "transactions of unique writes and reads of registers: "
                 "checked like list-append (docs/transactions.md)"});
  out.push_back({checkers::collections::kSetChecker,
                 "adds of unique elements and reads of the whole set: lost, "
                 "stale, unexpected and duplicate elements "
                 "(docs/transactions.md)"});
  out.push_back({checkers::collections::kBankChecker,
                 "transfers between accounts and reads of every balance: "
                 "the total holds and no balance is negative "
                 "(docs/transactions.md)"});
  out.push_back({checkers::collections::kCounterChecker,
                 "increments and reads: each read lies between the "
                 "acknowledged and the attempted sums (docs/transactions.md)"});
  return out;
}

}  // namespace faultline::cli

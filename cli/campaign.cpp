#include "cli/campaign.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "cli/cmd_report.h"
#include "cli/registry.h"
#include "harness/cluster/docker_cluster.h"
#include "harness/cluster/netns.h"
#include "harness/cluster/ssh_cluster.h"
#include "harness/config/config.h"
#include "harness/ledger/ledger.h"
#include "harness/process/find_program.h"
#include "harness/run/interpreter.h"
#include "harness/run/journal.h"
#include "harness/run/store.h"
#include "nemesis/schedule/schedule.h"
#include "reports/junit.h"
#include "reports/results.h"

namespace faultline::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string IsoNow() {
  auto now =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Console plus the run's own log file, for the duration of one run.
class RunLogger {
 public:
  explicit RunLogger(const std::string& log_path) {
    previous_ = spdlog::default_logger();
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    console->set_pattern("%^%H:%M:%S %L%$ %v");
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path);
    file->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l [%t] %v");
    auto logger = std::make_shared<spdlog::logger>(
        "faultline", spdlog::sinks_init_list{console, file});
    logger->set_level(spdlog::level::info);
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~RunLogger() { spdlog::set_default_logger(previous_); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

// The live status line: rewritten in place on a terminal, a log line every
// 10 s otherwise. `nodes_up` (may be empty) adds "nodes up N/M".
std::function<void(const std::string&)> StatusPrinter(
    std::function<std::string()> nodes_up) {
  bool tty = isatty(STDOUT_FILENO) != 0;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  return [tty, last, nodes_up](const std::string& status) {
    bool due = tty || Clock::now() - *last >= std::chrono::seconds(10);
    if (!due) return;
    std::string line = status;
    if (nodes_up) line += "  " + nodes_up();
    if (tty) {
      std::printf("\r\033[K%s", line.c_str());
      std::fflush(stdout);
    } else {
      *last = Clock::now();
      spdlog::info("{}", line);
    }
  };
}

// "nodes up N/M" as the target sees its processes (Target::Running).
std::function<std::string()> NodesUp(harness::Cluster* cluster,
                                     harness::Target* target) {
  return [cluster, target] {
    const auto& nodes = cluster->nodes();
    std::size_t up = 0;
    for (const auto& node : nodes) up += target->Running(node) ? 1 : 0;
    return "nodes up " + std::to_string(up) + "/" +
           std::to_string(nodes.size());
  };
}

// A tmpfs scratch directory for the run when /dev/shm is usable, else one
// inside the run directory. The name starts with "faultline-" (the ledger's
// `dir` undo removes only such directories).
std::string WorkDir(const std::string& run_dir, const std::string& run_id) {
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm/faultline-" + run_id;
  return run_dir + "/faultline-work";
}

}  // namespace

std::string Preflight(const harness::TestSpec& spec) {
  if (spec.cluster.provider == "netns") {
    if (geteuid() != 0) {
      return "the netns cluster needs root (network namespaces, veth, "
             "iptables); run faultline as root";
    }
    for (const char* tool : {"ip", "iptables", "iptables-restore"}) {
      if (harness::FindSystemTool(tool).empty()) {
        return std::string("'") + tool +
               "' is missing; install iproute2 and iptables "
               "(scripts/install-deps.sh)";
      }
    }
  }
  if (spec.cluster.provider == "docker" &&
      harness::FindSystemTool("docker").empty()) {
    return "the docker CLI is missing; install docker.io (the cluster's "
           "containers must already run, docs/docker.md)";
  }
  if (spec.cluster.provider == "ssh" && !spec.cluster.key.empty() &&
      access(spec.cluster.key.c_str(), R_OK) != 0) {
    return "cannot read the ssh key " + spec.cluster.key +
           " (cluster.key); check the path and its permissions";
  }
  if (FindTargetBinary(spec).empty()) {
    return "the " + spec.target.name + " binary is not installed; " +
           InstallHint(spec);
  }
  return "";
}

CampaignResult RunCampaign(const harness::TestSpec& spec,
                           const CampaignOptions& options) {
  CampaignResult result;
  auto t_begin = Clock::now();
  auto run_dir = harness::CreateRunDir(spec.store_dir, spec.name);
  if (!run_dir.ok()) {
    std::fprintf(stderr, "faultline run: %s\n", run_dir.error().c_str());
    return result;
  }
  const std::string dir = std::filesystem::absolute(run_dir->path).string();
  result.run_dir = dir;
  RunLogger logger(dir + "/" + harness::kLogFile);
  spdlog::info("run {} of {} (seed {}), stored in {}", run_dir->run_id,
               spec.name, spec.seed, dir);

  reports::RunSummary summary;
  DescribeRun(spec, summary);
  summary.run_dir = dir;
  summary.started_at = IsoNow();
  (void)harness::WriteFileAtomic(dir + "/" + harness::kConfigFile,
                                 summary.config_yaml);

  auto workload = MakeWorkload(spec);
  if (!workload.ok()) {
    spdlog::error("{}", workload.error());
    return result;
  }

  std::string index_dir = options.index_dir.empty()
                              ? harness::DefaultActiveIndexDir()
                              : options.index_dir;
  auto ledger = harness::Ledger::Create(dir + "/" + harness::kLedgerFile,
                                        run_dir->run_id, index_dir);
  if (!ledger.ok()) {
    spdlog::error("{}", ledger.error());
    return result;
  }

  // The target's scratch space (etcd data dirs, ~62 MB of WAL per member):
  // tmpfs when there is one, so 5 members do not wait seconds for the disk
  // to preallocate WALs. Killing a process loses nothing from tmpfs, so
  // process faults see the same durability. Recorded in the ledger first,
  // so `heal` removes it after a crash.
  std::string work_dir = WorkDir(dir, run_dir->run_id);
  harness::LedgerEntry work_entry;
  work_entry.kind = "dir";
  work_entry.name = work_dir;
  long work_seq = (*ledger)->Record(work_entry);

  // --- setup ---------------------------------------------------------------
  auto t_setup = Clock::now();
  std::unique_ptr<harness::Cluster> cluster;
  std::unique_ptr<harness::Target> target;
  std::unique_ptr<harness::Nemesis> nemesis;
  std::string setup_error;
  // Where the target keeps its files: the controller's scratch directory
  // for netns nodes, the run's directory on each node for ssh and docker.
  std::string target_dir = work_dir;
  if (spec.cluster.provider == "ssh") {
    auto c = harness::CreateSshCluster(spec.cluster, run_dir->run_id, **ledger);
    if (!c.ok()) {
      setup_error = "cluster: " + c.error();
    } else {
      target_dir = (*c)->node_work_dir();
      cluster = std::move(c.value());
    }
  } else if (spec.cluster.provider == "docker") {
    // provider: docker: the target's files live in the containers (their
    // /dev/shm is 64 MB); the docker cluster creates and removes them.
    const std::string node_dir = "/tmp/faultline-" + run_dir->run_id;
    auto c = harness::OpenDockerCluster(spec.cluster, node_dir, **ledger);
    if (!c.ok()) {
      setup_error = "cluster: " + c.error();
    } else {
      target_dir = node_dir;
      cluster = std::move(c.value());
    }
  } else {
    auto c =
        harness::CreateNetnsCluster(spec.cluster, run_dir->run_id, **ledger);
    if (!c.ok()) {
      setup_error = "cluster: " + c.error();
    } else {
      cluster = std::move(c.value());
    }
  }
  if (cluster) {
    auto t = MakeTarget(spec, ledger->get(), target_dir);
    if (!t.ok()) {
      setup_error = t.error();
    } else {
      target = std::move(t.value());
      summary.target_version = target->version();
      auto s = target->Setup(*cluster);
      for (const auto& node : cluster->nodes()) {
        if (!s.ok()) break;
        s = target->Start(node);
      }
      if (s.ok()) s = target->AwaitHealthy(std::chrono::seconds(60));
      if (!s.ok()) setup_error = spec.target.name + ": " + s.error();
    }
  }
  if (setup_error.empty()) {
    auto n = MakeNemesis(spec, *cluster, *target, **ledger, target_dir);
    if (n.ok()) {
      nemesis = std::move(n.value());
    } else {
      setup_error = "nemesis: " + n.error();
    }
  }
  if (setup_error.empty()) {
    spdlog::info("cluster of {} nodes healthy after {:.2f} s ({})",
                 spec.cluster.nodes, Seconds(t_setup, Clock::now()),
                 summary.target_version);
  }
  summary.phases.push_back({"setup", Seconds(t_setup, Clock::now())});

  // --- workload and faults ---------------------------------------------------
  std::unique_ptr<harness::Journal> journal;
  if (setup_error.empty()) {
    auto j =
        harness::Journal::Open(dir + "/" + harness::kHistoryFile, Clock::now());
    if (!j.ok()) {
      setup_error = j.error();
    } else {
      journal = std::move(j.value());
    }
  }
  if (setup_error.empty()) {
    nemesis::FaultSchedule schedule(spec.nemesis, spec.seed);
    harness::InterpreterConfig ic;
    ic.spec = &spec;
    ic.cluster = cluster.get();
    ic.target = target.get();
    ic.nemesis = spec.nemesis.faults.empty() ? nullptr : nemesis.get();
    ic.workload = workload->get();
    ic.journal = journal.get();
    ic.next_fault = [&schedule] {
      return schedule.Next().value_or(harness::FaultPlan{});
    };
    ic.abort = options.abort;
    ic.on_status = StatusPrinter(NodesUp(cluster.get(), target.get()));
    auto report = harness::RunInterpreter(ic);
    if (isatty(STDOUT_FILENO)) std::printf("\n");
    double first_op = Seconds(t_begin, report.first_invoke);
    spdlog::info(
        "workload done: {} invocations ({} ok, {} fail, {} info) in {:.1f} s, "
        "{:.0f} ops/s; first operation {:.2f} s after start; {} faults "
        "applied, {} healed",
        report.invocations, report.ok, report.fail, report.info,
        report.workload_s,
        static_cast<double>(report.invocations) /
            std::max(report.workload_s, 1e-9),
        first_op, report.faults_started, report.faults_healed);
    summary.phases.push_back({"workload", report.workload_s});
    summary.phases.push_back({"final", report.final_s});
    summary.problems = report.problems;
    summary.aborted = report.aborted;
  } else {
    spdlog::error("setup failed: {}", setup_error);
    summary.problems.push_back("setup failed: " + setup_error);
  }

  // --- teardown (always) -----------------------------------------------------
  auto t_teardown = Clock::now();
  bool clean = true;  // everything the run created is gone
  auto note = [&](const char* what, const harness::Status& s) {
    if (s.ok()) return;
    clean = false;
    summary.problems.push_back(std::string(what) + ": " + s.error());
  };
  if (nemesis) note("heal", nemesis->HealAll());
  if (target)
    note("teardown", target->Teardown(dir + "/" + harness::kNodesDir));
  if (cluster) note("cluster", cluster->Destroy());
  std::error_code ec;
  std::filesystem::remove_all(work_dir, ec);
  if (ec) {
    note("scratch", harness::Fail(work_dir + ": " + ec.message()));
  } else if (work_seq > 0) {
    (*ledger)->MarkHealed(work_seq);
  }
  if (clean) {
    (*ledger)->Close();  // no longer listed for `faultline heal --all`
  } else {
    spdlog::error(
        "the run could not remove everything it created; run "
        "`faultline heal {}`",
        dir);
  }
  double teardown_s = Seconds(t_teardown, Clock::now());
  spdlog::info("teardown done in {:.2f} s", teardown_s);
  summary.phases.push_back({"teardown", teardown_s});

  // --- check -----------------------------------------------------------------
  if (journal) {
    auto t_check = Clock::now();
    harness::CheckOptions co;
    co.deadline = Clock::now() +
                  std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(spec.checker.timeout_s));
    co.threads = spec.checker.threads;
    co.memory_limit_bytes =
        static_cast<std::size_t>(spec.checker.memory_limit_mb) * 1024 * 1024;
    const checkers::History history = journal->Snapshot();
    summary.verdicts = CheckRunHistory(**workload, history, co);
    summary.phases.push_back({"check", Seconds(t_check, Clock::now())});
  } else {
    checkers::Verdict v;
    v.checker = "run";
    v.validity = checkers::Validity::kUnknown;
    v.summary = "the test did not run: " + setup_error;
    summary.verdicts.push_back(v);
  }

  (void)harness::WriteFileAtomic(dir + "/" + harness::kResultsFile,
                                 reports::ResultsJson(summary));
  (void)harness::WriteFileAtomic(dir + "/" + harness::kJunitFile,
                                 reports::JunitXml(summary));
  std::string report = WriteRunReport(
      summary, journal ? journal->Snapshot() : checkers::History{});
  UpdateStoreIndex(spec.store_dir);
  std::printf("\n%s\n%s",
              reports::TextSummary(summary, /*per_checker=*/false).c_str(),
              reports::SummaryTable(summary, report).c_str());
  std::printf("stored in %s\n", dir.c_str());
  // A cluster that never came up is no verdict about the system.
  result.exit_code = setup_error.empty() ? reports::RunExitCode(summary) : 255;
  return result;
}

}  // namespace faultline::cli

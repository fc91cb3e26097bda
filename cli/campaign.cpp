#include "cli/campaign.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "cli/build_info.h"
#include "cli/cmd_report.h"
#include "cli/commands.h"
#include "cli/history_input.h"
#include "cli/refusal.h"
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
#include "nemesis/disk/lazyfs_nodes.h"
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

// Console plus the run's own log file, for the duration of one run. The
// console (stderr) shows warnings and up at verbosity -1, info at 0, debug
// at 1, in colour only when `color`; the file always gets info and up,
// never in colour.
class RunLogger {
 public:
  RunLogger(const std::string& log_path, int verbosity, bool color) {
    previous_ = spdlog::default_logger();
    auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(
        color ? spdlog::color_mode::always : spdlog::color_mode::never);
    console->set_pattern("%^%H:%M:%S %L%$ %v");
    const spdlog::level::level_enum console_level =
        verbosity < 0   ? spdlog::level::warn
        : verbosity > 0 ? spdlog::level::debug
                        : spdlog::level::info;
    console->set_level(console_level);
    auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_path);
    file->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l [%t] %v");
    file->set_level(spdlog::level::info);
    auto logger = std::make_shared<spdlog::logger>(
        "faultline", spdlog::sinks_init_list{console, file});
    logger->set_level(std::min(console_level, spdlog::level::info));
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
    spdlog::debug("console log: level {}, colour {}; {} gets info and up",
                  spdlog::level::to_string_view(console_level),
                  color ? "on" : "off", log_path);
  }
  ~RunLogger() { spdlog::set_default_logger(previous_); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

// The live status line on a terminal's stdout, and the log lines that
// interrupt it. Show rewrites the line in place ("\r\033[K", cut to the
// terminal's width so it never wraps); a log line written through
// UnderStatusSink first clears it, then the line is drawn again below the
// log line, all under one mutex, so no log line is ever glued to the end of
// the status text. End moves below the last status (a newline) and stops
// drawing. Disabled (no terminal, or --quiet/--json: `status_line` false),
// it draws nothing and leaves log lines alone.
class StatusLine {
 public:
  explicit StatusLine(bool enabled) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }

  void Show(const std::string& text) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    text_ = Cut(text);
    shown_ = true;
    Draw();
  }

  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    if (shown_) {
      std::fputs("\n", stdout);
      std::fflush(stdout);
    }
    shown_ = false;
  }

  // Runs `write` (a log line to stderr) with the status line out of its way.
  template <typename F>
  void Around(F&& write) {
    std::lock_guard<std::mutex> lock(mu_);
    if (shown_) {
      std::fputs("\r\033[K", stdout);
      std::fflush(stdout);
    }
    write();
    if (shown_) Draw();
  }

 private:
  void Draw() {
    std::fputs(("\r\033[K" + text_).c_str(), stdout);
    std::fflush(stdout);
  }
  static std::string Cut(std::string text) {
    winsize ws{};
    std::size_t width = 100;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
      width = ws.ws_col;
    if (text.size() >= width) text.resize(width - 1);
    return text;
  }

  const bool enabled_;
  std::mutex mu_;
  bool shown_ = false;
  std::string text_;
};

// A console sink that writes each log line with the status line cleared
// first and drawn again after (StatusLine::Around).
class UnderStatusSink : public spdlog::sinks::sink {
 public:
  UnderStatusSink(std::shared_ptr<spdlog::sinks::sink> inner,
                  std::shared_ptr<StatusLine> status)
      : inner_(std::move(inner)), status_(std::move(status)) {
    set_level(inner_->level());
  }
  void log(const spdlog::details::log_msg& msg) override {
    if (!inner_->should_log(msg.level)) return;
    status_->Around([&] {
      inner_->log(msg);
      inner_->flush();
    });
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override {
    inner_->set_pattern(pattern);
  }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
  std::shared_ptr<StatusLine> status_;
};

// Puts every console sink of the default logger (every sink but the run's
// log file) under `status`. Called before any other thread of the run logs.
void PutConsoleUnderStatus(const std::shared_ptr<StatusLine>& status) {
  if (!status->enabled()) return;
  for (auto& sink : spdlog::default_logger()->sinks()) {
    if (std::dynamic_pointer_cast<spdlog::sinks::basic_file_sink_mt>(sink))
      continue;
    sink = std::make_shared<UnderStatusSink>(sink, status);
  }
}

// The interpreter's status: drawn in place on the status line when it is
// enabled; otherwise a log line every 10 s, and the first "waiting for"
// line at once. `nodes_up` (may be empty) adds "nodes up N/M".
std::function<void(const std::string&)> StatusPrinter(
    std::shared_ptr<StatusLine> status, std::function<std::string()> nodes_up) {
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  auto waiting_logged = std::make_shared<bool>(false);
  return [status, last, waiting_logged, nodes_up](const std::string& text) {
    std::string line = text;
    if (nodes_up) line += "  " + nodes_up();
    if (status->enabled()) {
      status->Show(line);
      return;
    }
    bool waiting = text.find("waiting for") != std::string::npos;
    bool due = Clock::now() - *last >= std::chrono::seconds(10) ||
               (waiting && !*waiting_logged);
    if (!due) return;
    *last = Clock::now();
    *waiting_logged = *waiting_logged || waiting;
    spdlog::info("{}", line);
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

namespace {

// Puts the lazy file system over every node's data directory, after the
// target's Setup and before its first Start; the target's Teardown takes
// it down again (keeping what the disks held in `keep_dir`).
harness::Status MountDisks(harness::Target& target, harness::Cluster& cluster,
                           nemesis::disk::LazyfsNodes& disk,
                           const std::string& keep_dir) {
  auto* durable = dynamic_cast<harness::DurableData*>(&target);
  if (durable == nullptr)
    return harness::Fail("the " + target.name() +
                         " target cannot keep its data on the disk faults' "
                         "file system");
  durable->SetBeforeClean(
      [&disk, keep_dir] { return disk.UnmountAll(keep_dir); });
  for (const auto& node : cluster.nodes())
    if (auto s = disk.Mount(node, durable->DataDir(node)); !s.ok()) return s;
  return harness::Ok();
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
  if (harness::UsesDiskFaults(spec.nemesis)) {
    if (harness::FindCompanion("", "faultline-lazyfs").empty())
      return "the disk faults need faultline-lazyfs, which is built beside "
             "faultline when libfuse3-dev is installed "
             "(scripts/install-deps.sh), and it is not there";
    if (spec.cluster.provider == "netns" &&
        access("/dev/fuse", R_OK | W_OK) != 0)
      return "the disk faults need /dev/fuse (a FUSE file system over each "
             "node's data directory), and this machine has none: load the "
             "fuse module, or remove the disk faults";
  }
  if (FindTargetBinary(spec).empty()) {
    return "the " + spec.target.name + " binary is not installed; " +
           InstallHint(spec);
  }
  return "";
}

namespace {

// The phase of a run a moment falls in, from the phases' start times.
std::string PhaseAt(
    Clock::time_point t,
    const std::vector<std::pair<std::string, Clock::time_point>>& starts) {
  std::string phase = starts.empty() ? "setup" : starts.front().first;
  for (const auto& [name, start] : starts) {
    if (t >= start) phase = name;
  }
  return phase;
}

// A run refused before its cluster existed: removes what it made (the run
// directory, its active-index entry) when nothing is left on any host, and
// says why on stderr. Returns the exit code (254) and the run directory
// kept ("" when removed).
CampaignResult Refuse(const harness::TestSpec& spec, const std::string& why,
                      const harness::RunDir& run, harness::Ledger* ledger,
                      const std::string& index_dir) {
  CampaignResult result;
  result.exit_code = kExitUsage;
  std::string note;
  if (spec.cluster.provider == "netns") {
    note =
        HolderNote(RunsHoldingSubnet(index_dir, spec.cluster.subnet, run.path));
  }
  bool clean = ledger == nullptr || LedgerAllHealed(ledger->path());
  if (clean) {
    if (ledger != nullptr) ledger->Close();
    auto removed = harness::RemoveRunDir(run);
    if (!removed.ok()) {
      result.run_dir = run.path;
      std::fprintf(stderr, "faultline run: %s\n", removed.error().c_str());
    }
  } else {
    // Something of the run may be left: keep its ledger where `heal`
    // looks for it.
    (void)harness::PointLatestAt(run);
    result.run_dir = run.path;
  }
  std::fprintf(stderr, "faultline run: %s: refused: %s\n", spec.name.c_str(),
               why.c_str());
  if (!note.empty()) std::fprintf(stderr, "  %s\n", note.c_str());
  if (clean) {
    std::fprintf(stderr,
                 "  Nothing was started and no run directory was kept.\n");
  } else {
    std::fprintf(stderr,
                 "  Some of what it set up may be left: run `faultline heal "
                 "%s`.\n",
                 run.path.c_str());
  }
  return result;
}

}  // namespace

CampaignResult RunCampaign(const harness::TestSpec& spec,
                           const CampaignOptions& options) {
  CampaignResult result;
  SignalWatcher* signals = options.signals;
  const std::atomic<bool>* abort = signals ? signals->abort() : nullptr;
  auto interrupted = [abort] { return abort != nullptr && abort->load(); };
  auto t_begin = Clock::now();
  std::vector<std::pair<std::string, Clock::time_point>> phase_starts = {
      {"setup", t_begin}};
  auto run_dir = harness::CreateRunDir(spec.store_dir, spec.name);
  if (!run_dir.ok()) {
    std::fprintf(stderr, "faultline run: %s: refused: %s\n", spec.name.c_str(),
                 run_dir.error().c_str());
    result.exit_code = kExitUsage;
    return result;
  }
  const std::string dir = std::filesystem::absolute(run_dir->path).string();
  run_dir->path = dir;
  RunLogger logger(dir + "/" + harness::kLogFile, options.verbosity,
                   options.color);
  // The live status line (stdout on a terminal, unless --quiet or --json):
  // log lines clear it before they are written.
  auto status_line = std::make_shared<StatusLine>(options.status_line &&
                                                  isatty(STDOUT_FILENO) != 0);
  PutConsoleUnderStatus(status_line);
  spdlog::info("faultline {} (commit {}): run {} of {} (seed {}) in {}",
               BuildVersion(), BuildCommit(), run_dir->run_id, spec.name,
               spec.seed, dir);

  // Logs the first signal once, in faultline.log too: which and when.
  bool interrupt_logged = false;
  auto log_interrupt = [&](const std::string& next) {
    if (interrupt_logged || signals == nullptr || !interrupted()) return;
    interrupt_logged = true;
    SignalNote n = signals->first();
    spdlog::warn("interrupted by {} at {} ({:.1f} s after the start); {}",
                 n.name, n.at, std::max(0.0, Seconds(t_begin, n.when)), next);
  };

  reports::RunSummary summary;
  DescribeRun(spec, summary);
  summary.run_dir = dir;
  summary.started_at = IsoNow();
  (void)harness::WriteFileAtomic(dir + "/" + harness::kConfigFile,
                                 summary.config_yaml);

  auto workload = MakeWorkload(spec);
  if (!workload.ok())
    return Refuse(spec, workload.error(), *run_dir, nullptr, "");

  std::string index_dir = options.index_dir.empty()
                              ? harness::DefaultActiveIndexDir()
                              : options.index_dir;
  auto ledger = harness::Ledger::Create(dir + "/" + harness::kLedgerFile,
                                        run_dir->run_id, index_dir);
  if (!ledger.ok()) {
    return Refuse(spec, ledger.error(), *run_dir, nullptr, index_dir);
  }
  if (signals) {
    signals->set_heal_hint(
        "faultline heal " + dir +
        (options.index_dir.empty() ? "" : " --index-dir " + index_dir));
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
  auto remove_work_dir = [&]() -> harness::Status {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
    if (ec) return harness::Fail(work_dir + ": " + ec.message());
    if (work_seq > 0) (*ledger)->MarkHealed(work_seq);
    return harness::Ok();
  };

  // --- setup ---------------------------------------------------------------
  auto t_setup = Clock::now();
  std::unique_ptr<harness::Cluster> cluster;
  std::unique_ptr<harness::Target> target;
  std::unique_ptr<harness::Nemesis> nemesis;
  std::string setup_error;
  std::string client_failure;  // the target's clients stopped the run
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
  if (!cluster) {
    // Refused before anything of the run existed outside its directory: the
    // environment or the config is in the way (subnet in use, SSH
    // authentication failed, containers not running). Nothing is kept.
    harness::Status removed = remove_work_dir();
    if (!removed.ok()) spdlog::error("scratch: {}", removed.error());
    if (signals) signals->set_heal_hint("-");
    return Refuse(spec, setup_error, *run_dir, ledger->get(), index_dir);
  }
  // Disk faults: every node must take the lazy file system (a FUSE mount
  // over its data directory); a node that cannot is refused before anything
  // starts on it.
  std::unique_ptr<nemesis::disk::LazyfsNodes> disk;
  const std::string disk_keep = dir + "/disk";
  if (harness::UsesDiskFaults(spec.nemesis)) {
    disk = std::make_unique<nemesis::disk::LazyfsNodes>(
        **ledger, spec.nemesis.disk_namespace);
    disk->SetNodeDir(target_dir);
    disk->SetWritebackMs(spec.nemesis.disk_writeback_ms);
    if (auto s = disk->Prepare(cluster->nodes()); !s.ok()) {
      if (auto d = cluster->Destroy(); !d.ok())
        spdlog::error("cluster: {}", d.error());
      harness::Status removed = remove_work_dir();
      if (!removed.ok()) spdlog::error("scratch: {}", removed.error());
      if (signals) signals->set_heal_hint("-");
      return Refuse(spec, "disk faults: " + s.error(), *run_dir, ledger->get(),
                    index_dir);
    }
  }
  // The run now has something to show and to heal: `latest` is this run.
  if (auto s = harness::PointLatestAt(*run_dir); !s.ok()) {
    spdlog::warn("{}", s.error());
  }
  {
    auto t = MakeTarget(spec, ledger->get(), target_dir, work_dir);
    if (!t.ok()) {
      setup_error = t.error();
    } else {
      target = std::move(t.value());
      summary.target_version = target->version();
      auto s = target->Setup(*cluster);
      if (s.ok() && disk && !interrupted())
        s = MountDisks(*target, *cluster, *disk, disk_keep);
      for (const auto& node : cluster->nodes()) {
        if (!s.ok() || interrupted()) break;
        s = target->Start(node);
      }
      if (s.ok() && !interrupted()) {
        s = target->AwaitHealthy(std::chrono::seconds(60));
      }
      if (!s.ok()) setup_error = spec.target.name + ": " + s.error();
    }
  }
  if (setup_error.empty() && !interrupted()) {
    auto n =
        MakeNemesis(spec, *cluster, *target, **ledger, target_dir, disk.get());
    if (n.ok()) {
      nemesis = std::move(n.value());
    } else {
      setup_error = "nemesis: " + n.error();
    }
  }
  if (setup_error.empty() && !interrupted()) {
    spdlog::info("cluster of {} nodes healthy after {:.2f} s ({})",
                 spec.cluster.nodes, Seconds(t_setup, Clock::now()),
                 summary.target_version);
  }
  summary.phases.push_back({"setup", Seconds(t_setup, Clock::now())});
  // Interrupted before the workload started: no history, nothing tested.
  const bool interrupted_in_setup = setup_error.empty() && interrupted();
  log_interrupt("the workload does not start; tearing down");

  // --- workload and faults ---------------------------------------------------
  std::unique_ptr<harness::Journal> journal;
  std::string history_error;  // the history file is not whole: why
  if (setup_error.empty() && !interrupted_in_setup) {
    auto j =
        harness::Journal::Open(dir + "/" + harness::kHistoryFile, Clock::now());
    if (!j.ok()) {
      setup_error = j.error();
    } else {
      journal = std::move(j.value());
    }
  }
  if (journal) {
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
    ic.abort = abort;
    ic.on_abort = [&] {
      log_interrupt(fmt::format(
          "stopping the workload, healing every fault, reading every key "
          "once more (at most {:.0f} s), then teardown",
          ic.interrupted_final_s.count()));
    };
    ic.on_status =
        StatusPrinter(status_line, NodesUp(cluster.get(), target.get()));
    auto t_workload = Clock::now();
    phase_starts.push_back({"workload", t_workload});
    auto report = harness::RunInterpreter(ic);
    status_line->End();
    // Every event is in the file, fsynced, before the teardown; the checks
    // read it back.
    if (auto s = journal->Close(); !s.ok()) history_error = s.error();
    phase_starts.push_back(
        {"final",
         t_workload + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(report.workload_s))});
    double first_op = Seconds(t_begin, report.first_invoke);
    // The same counts as the summary's stats row (reports::StatsRowSummary):
    // the workload's operations, then the final and observer reads apart.
    std::string apart = fmt::format(
        "; final reads: {} ({} ok, {} fail, {} info)", report.final_invocations,
        report.final_ok, report.final_fail, report.final_info);
    if (report.observations > 0) {
      apart += fmt::format("; observer reads: {} (not counted above)",
                           report.observations);
    }
    spdlog::info(
        "workload done: {} invocations ({} ok, {} fail, {} info) in {:.1f} s, "
        "{:.0f} ops/s; first operation {:.2f} s after start; {} faults "
        "applied, {} healed{}",
        report.invocations, report.ok, report.fail, report.info,
        report.workload_s,
        static_cast<double>(report.invocations) /
            std::max(report.workload_s, 1e-9),
        first_op, report.faults_started, report.faults_healed, apart);
    summary.phases.push_back({"workload", report.workload_s});
    summary.phases.push_back({"final", report.final_s});
    summary.problems = report.problems;
    if (!history_error.empty()) summary.problems.push_back(history_error);
    summary.aborted = report.aborted;
    if (!report.client_failure.empty()) {
      summary.problems.push_back("the run stopped early: " +
                                 report.client_failure);
      client_failure = report.client_failure;
    }
  } else if (!setup_error.empty()) {
    spdlog::error("setup failed: {}", setup_error);
    summary.problems.push_back("setup failed: " + setup_error);
  }

  // --- teardown (always) -----------------------------------------------------
  auto t_teardown = Clock::now();
  phase_starts.push_back({"teardown", t_teardown});
  log_interrupt("tearing down");
  bool clean = true;  // everything the run created is gone
  auto note = [&](const char* what, const harness::Status& s) {
    if (s.ok()) return;
    clean = false;
    summary.problems.push_back(std::string(what) + ": " + s.error());
  };
  if (nemesis) note("heal", nemesis->HealAll());
  if (target)
    note("teardown", target->Teardown(dir + "/" + harness::kNodesDir));
  // Teardown unmounted the disks (its before-clean hook); what a failed
  // setup left mounted goes now.
  if (disk) note("disk", disk->UnmountAll(disk_keep));
  note("cluster", cluster->Destroy());
  note("scratch", remove_work_dir());
  if (clean) {
    (*ledger)->Close();  // no longer listed for `faultline heal --all`
    if (signals) signals->set_heal_hint("-");
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
  auto t_check = Clock::now();
  phase_starts.push_back({"check", t_check});
  // The run's events, read back from history.jsonl (the journal keeps no
  // copy), for the checkers, the evidence and the report.
  checkers::History history;
  if (journal) {
    harness::CheckOptions co;
    co.deadline = Clock::now() +
                  std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(spec.checker.timeout_s));
    co.threads = spec.checker.threads;
    co.memory_limit_bytes =
        static_cast<std::size_t>(spec.checker.memory_limit_mb) * 1024 * 1024;
    auto read = ReadWrittenHistory(journal->path());
    if (read.ok()) {
      history = std::move(*read);
      summary.verdicts = CheckRunHistory(**workload, history, co);
    } else {
      history_error = read.error();
      summary.problems.push_back(history_error);
    }
    // A run whose history is not whole, or whose clients gave up, is
    // never valid, whatever the checkers said of what was recorded.
    auto never_valid = [&](const std::string& why) {
      checkers::Verdict v;
      v.checker = "run";
      v.validity = checkers::Validity::kUnknown;
      v.summary = why;
      summary.verdicts.push_back(v);
    };
    if (!history_error.empty()) {
      never_valid("the history is not whole: " + history_error);
    }
    if (!client_failure.empty()) {
      never_valid("the run stopped early: " + client_failure);
    }
    // Was the run able to find anything? (results.json, report, summary)
    summary.evidence = reports::ComputeEvidence(history);
    // What the disks held is kept only for a run that did not end valid.
    if (disk &&
        reports::OverallValidity(summary) == checkers::Validity::kValid) {
      std::error_code ec;
      std::filesystem::remove_all(disk_keep, ec);
    } else if (disk) {
      spdlog::info("the nodes' disks (synced at the end) are kept in {}",
                   disk_keep);
    }
    summary.phases.push_back({"check", Seconds(t_check, Clock::now())});
  } else {
    checkers::Verdict v;
    v.checker = "run";
    v.validity = checkers::Validity::kUnknown;
    v.summary = interrupted_in_setup
                    ? "the test did not run: interrupted during setup"
                    : "the test did not run: " + setup_error;
    summary.verdicts.push_back(v);
  }

  // A signal at any point makes the run interrupted: its exit code is
  // 128 + the signal's number whatever the verdict of what it recorded.
  if (signals != nullptr && interrupted()) {
    SignalNote n = signals->first();
    summary.aborted = true;
    summary.interruption.signal = n.name;
    summary.interruption.at = n.at;
    summary.interruption.after_s = std::max(0.0, Seconds(t_begin, n.when));
    summary.interruption.during = PhaseAt(n.when, phase_starts);
    bool finals_ok = std::none_of(
        summary.problems.begin(), summary.problems.end(),
        [](const std::string& p) { return p.rfind("final ", 0) == 0; });
    summary.interruption.note =
        !journal ? "the workload never started"
        : finals_ok
            ? "faults were healed and every final read done before the "
              "teardown"
            : "faults were healed; some final reads did not succeed in time "
              "(see problems)";
  }

  (void)harness::WriteFileAtomic(dir + "/" + harness::kResultsFile,
                                 reports::ResultsJson(summary));
  (void)harness::WriteFileAtomic(dir + "/" + harness::kJunitFile,
                                 reports::JunitXml(summary));
  std::string report = WriteRunReport(summary, history);
  UpdateStoreIndex(spec.store_dir);
  if (options.json_summary) {
    // stdout holds only the document; the run directory is in it.
    std::fputs(reports::ResultsJson(summary).c_str(), stdout);
    std::fflush(stdout);
  } else {
    std::printf("\n%s\n%s",
                reports::TextSummary(summary, /*per_checker=*/false).c_str(),
                reports::SummaryTable(summary, report).c_str());
    std::printf("stored in %s\n", dir.c_str());
  }
  // A cluster that never came up is no verdict about the system; an
  // interrupted run exits 128 + its signal (reports::RunExitCode).
  result.exit_code = setup_error.empty() || summary.aborted
                         ? reports::RunExitCode(summary)
                         : kExitInternal;
  result.run_dir = dir;
  return result;
}

}  // namespace faultline::cli

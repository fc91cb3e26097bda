// ProcessTarget: any system described in the config (`target: process`,
// docs/targets/process.md). Per node it runs the configured processes (a
// server and any sidecars), each from an argv template (never a shell),
// waits for each to be ready (a TCP port, a command, an HTTP status), asks
// an optional status command who leads, and opens clients speaking one of
// three protocols: exec (a program in any language, JSON lines;
// docs/exec-protocol.md), resp (any Redis-protocol server, commands from
// the config) or etcd (the etcd v3 API).
//
// Faults act on the processes whose `faults` list names them: Kill and
// Pause/Resume on those with kill / pause (through Daemons, so the ledger
// and `faultline heal` treat them exactly like the built-in targets'), the
// clock on those with clock (libfaketime in their environment). Start
// starts every process of the node that is not running.
//
// Thread-safety: as Target (harness/interfaces/target.h). The client
// factory's ExecHealth is shared by every exec client of the run.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "harness/clock/clock.h"
#include "harness/config/spec.h"
#include "harness/config/template.h"
#include "harness/process/daemon_target.h"

namespace faultline::targets::process {

class ExecHealth;

class ProcessTarget : public harness::DaemonTarget,
                      public harness::ClockSkewable,
                      public harness::ClientHealth {
 public:
  // `work_dir`: the node-side directory (as for every DaemonTarget);
  // `controller_dir`: a directory on the controller for the exec clients'
  // logs (moved next to the node logs at Teardown; "" = no client logs).
  ProcessTarget(const harness::ProcessSpec& spec,
                const harness::WorkloadSpec& workload, harness::Ledger* ledger,
                const std::string& work_dir, std::string controller_dir,
                bool local_nodes);
  ~ProcessTarget() override;

  std::string name() const override { return spec_.system; }
  std::string version() override;
  harness::Status Setup(harness::Cluster& cluster) override;
  harness::Status Start(const harness::Node& node) override;
  harness::Status AwaitHealthy(std::chrono::milliseconds timeout) override;
  harness::Status Kill(const harness::Node& node) override;
  harness::Status Pause(const harness::Node& node) override;
  harness::Status Resume(const harness::Node& node) override;
  bool Running(const harness::Node& node) override;
  harness::NodeStatus Inspect(const harness::Node& node) override;
  harness::Status Teardown(const std::string& log_dir) override;
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node& node, const std::string& workload) override;
  // The exec clients' verdict on themselves: "" while they behave.
  std::string Fatal() override;

  // The template context of `node` (the current process's log left empty).
  harness::TemplateContext ContextOf(const harness::Node& node) const;

 private:
  // The processes of `spec_` whose faults list has `kind`.
  std::vector<const harness::ProcessDef*> Taking(const char* kind) const;
  // "" when `def` on `node` is ready; else what is missing.
  std::string ReadyProblem(const harness::Node& node,
                           const harness::ProcessDef& def);
  // The last bytes of a process's log on its node, for error messages.
  std::string LogTail(const harness::Node& node, const std::string& process);
  harness::Status StartOne(const harness::Node& node,
                           const harness::ProcessDef& def);
  // The node's own view as the JSON text its status command printed, or
  // its status client answered; "" when it gave none in status.timeout.
  std::string StatusText(const harness::Node& node);
  // f: status on the node's status client (opened on first use, and again
  // after a question it did not answer).
  std::string AskStatusClient(const harness::Node& node);
  // The path of client log `file` in <controller_dir>/clients (created),
  // "" without a controller_dir (no client logs).
  std::string ClientLog(const std::string& file) const;

  const harness::ProcessSpec spec_;
  const harness::WorkloadSpec workload_;
  const std::string controller_dir_;
  const bool local_nodes_;  // netns: programs beside faultline are found
  std::vector<harness::TemplatePeer> peers_;

  std::mutex mu_;
  std::set<std::string> started_once_;  // nodes started at least once
  std::set<std::string> killed_;        // nodes whose kill-able processes
                                        // were killed and not restarted
  int clients_opened_ = 0;
  std::shared_ptr<ExecHealth> health_;

  // status.client: one exec client per node, kept for status questions
  // (never counted in health_: it is not a worker). Its mutex serialises
  // the questions on that node; the map itself is filled in Setup.
  struct StatusClient {
    std::mutex mu;
    std::unique_ptr<harness::Client> client;
  };
  std::map<std::string, std::unique_ptr<StatusClient>> status_clients_;
};

// The client a workload of that name drives: "lock" for election, else the
// name itself (OpenProcessClient takes "register" and "lock", and with the
// exec protocol "list-append", "rw-register", "set", "bank" and "counter").
inline std::string ClientKindOf(const std::string& workload) {
  return workload == "election" ? "lock" : workload;
}

// The client of `spec` bound to nodes[index] for `workload` ("register",
// "lock"; "list-append", "rw-register", "set", "bank", "counter" with the
// exec protocol), outside a run as well (faultline client-test): exec
// clients get the FAULTLINE_* environment of docs/exec-protocol.md (for
// bank also FAULTLINE_ACCOUNTS and FAULTLINE_TOTAL, from `w`) and append
// their stderr to `log_path` ("" = nowhere); `health` may be null.
harness::Result<std::unique_ptr<harness::Client>> OpenProcessClient(
    const harness::ProcessSpec& spec, const harness::WorkloadSpec& w,
    const std::string& workload,
    const std::vector<harness::TemplatePeer>& nodes, int index,
    std::shared_ptr<ExecHealth> health, const std::string& log_path);

}  // namespace faultline::targets::process

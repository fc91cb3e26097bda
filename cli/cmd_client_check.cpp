// faultline client-test CONFIG --address IP: drives the client of a
// `target: process` config against a node that is already running, and
// checks every answer's shape and the ok/fail/info rules with the
// sequences of cli/client_checks.h (docs/exec-protocol.md, "Checking a
// client"): register, lock, the transactions (list-append, rw-register)
// and the collections (set, bank, counter), plus status with
// target.status.client. Prints one line per check; exit 0 when all pass, 1
// when one fails (or the client cannot be opened), 254 for a bad config or
// usage (a workload the config's client protocol has no vocabulary for).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli/client_checks.h"
#include "cli/commands.h"
#include "harness/config/config.h"
#include "targets/process/exec_client.h"
#include "targets/process/process_target.h"

namespace faultline::cli {
namespace {

struct ClientTestOptions {
  std::string config;
  std::string address;
  int node_id = 1;
  std::string workload;  // "" = the config's
};

int DoClientTest(const ClientTestOptions& o) {
  auto loaded = harness::LoadConfigFile(o.config);
  if (!loaded.ok()) {
    std::fputs(loaded.FormatErrors().c_str(), stderr);
    return kExitUsage;
  }
  const harness::TestSpec& spec = *loaded.spec;
  if (spec.target.name != "process") {
    std::fprintf(stderr,
                 "%s: client-test checks the client of a `target: process` "
                 "config; target.name is %s, whose client is built in\n",
                 o.config.c_str(), spec.target.name.c_str());
    return kExitUsage;
  }
  const std::string workload =
      o.workload.empty() ? targets::process::ClientKindOf(spec.workload.name)
                         : o.workload;
  const bool exec_only = workload == "list-append" ||
                         workload == "rw-register" || workload == "set" ||
                         workload == "bank" || workload == "counter";
  if (workload != "register" && workload != "lock" && !exec_only) {
    std::fprintf(stderr,
                 "--workload must be register, lock, list-append, "
                 "rw-register, set, bank or counter, got %s\n",
                 workload.c_str());
    return kExitUsage;
  }
  const std::string& protocol = spec.target.process.client.protocol;
  if (exec_only && protocol != "exec") {
    std::fprintf(stderr,
                 "%s: the %s workload needs an exec client; the %s client "
                 "runs register and lock only\n",
                 o.config.c_str(), workload.c_str(), protocol.c_str());
    return kExitUsage;
  }
  // The live node, with the id the client is told (other nodes unknown).
  std::vector<harness::TemplatePeer> nodes;
  for (int i = 1; i <= o.node_id; ++i)
    nodes.push_back({"n" + std::to_string(i), i == o.node_id ? o.address : ""});
  std::printf("client-test: %s, %s workload, against %s (n%d), protocol %s\n",
              o.config.c_str(), workload.c_str(), o.address.c_str(), o.node_id,
              spec.target.process.client.protocol.c_str());
  auto open = [&]() {
    return targets::process::OpenProcessClient(
        spec.target.process, spec.workload, workload, nodes, o.node_id - 1,
        nullptr, "/dev/stderr");
  };
  ClientChecks checks(stdout);
  auto a = open();
  checks.Expect(a.ok(), a.ok() ? "the client starts (and answers the hello)"
                               : "the client starts: " + a.error());
  if (!a.ok()) {
    std::printf("1 of 1 checks failed\n");
    return 1;
  }
  std::mt19937_64 rng(
      static_cast<std::uint64_t>(getpid()) ^
      static_cast<std::uint64_t>(
          std::chrono::system_clock::now().time_since_epoch().count()));
  // Fresh keys and values: a system used before still has unused ones.
  const auto key = static_cast<std::int64_t>(1'000'000 + rng() % 1'000'000);
  const auto value = static_cast<std::int64_t>(rng() % 1'000'000'000);
  if (workload == "register") {
    RegisterChecks(**a, checks, key, value);
  } else if (workload == "list-append") {
    ListAppendChecks(**a, checks, key, value);
  } else if (workload == "rw-register") {
    RwRegisterChecks(**a, checks, key, value);
  } else if (workload == "set") {
    SetChecks(**a, checks, 1'000'000'000 + value);
  } else if (workload == "counter") {
    CounterChecks(**a, checks);
  } else if (workload == "bank") {
    BankChecks(**a, checks, spec.workload.accounts, spec.workload.total);
  } else {
    auto b = open();
    checks.Expect(b.ok(), "a second client starts");
    if (b.ok()) {
      LockChecks(**a, **b, checks,
                 "client-test-" + std::to_string(rng() % 1000000),
                 spec.workload.ttl_ms);
    }
  }
  if (spec.target.process.status_client) StatusChecks(**a, checks);
  std::printf("%d of %d checks %s\n", checks.total() - checks.failed(),
              checks.total(),
              checks.failed() == 0 ? "passed" : "passed; the others FAILED");
  return checks.failed() == 0 ? 0 : 1;
}

}  // namespace

void AddClientTestCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<ClientTestOptions>();
  auto* cmd = root.add_subcommand(
      "client-test", "Check a process target's client against a running node");
  cmd->add_option("config", o->config, "YAML config with target: process")
      ->required();
  cmd->add_option("--address", o->address,
                  "The running node's address (its ports are the config's)")
      ->required();
  cmd->add_option("--node-id", o->node_id,
                  "The node's 1-based id, as the client is told (default 1)")
      ->check(CLI::Range(1, 9));
  cmd->add_option("--workload", o->workload,
                  "register, lock, list-append, rw-register, set, bank or "
                  "counter (default: the config's workload)");
  cmd->footer(
      "Starts the config's client (exec, resp or etcd) bound to the node, "
      "runs a short fixed\nsequence of operations and checks each answer: "
      "its shape, and that fail means the\noperation did not happen. The "
      "client's stderr goes to this stderr.\nExit code 0 when every check "
      "passes, 1 when one fails, 254 for a bad config.\n\nExamples:\n"
      "  faultline client-test my-system.yaml --address 127.0.0.1\n"
      "  faultline client-test my-system.yaml --address 10.0.0.2 "
      "--workload lock\n"
      "  faultline client-test my-system.yaml --address 10.0.0.2 "
      "--workload list-append");
  cmd->callback([o, &exit_code] { exit_code = DoClientTest(*o); });
}

}  // namespace faultline::cli

// faultline client-test CONFIG --address IP: drives the client of a
// `target: process` config against a node that is already running, and
// checks every answer's shape and the ok/fail/info rules
// (docs/exec-protocol.md, "Checking a client"):
//   register  a fresh key reads null; a write is read back; a cas with a
//             wrong expected value fails and changes nothing (a fail must
//             mean "certainly did not happen"); a right cas is read back;
//   lock      acquire gives an integer token; a second client is refused;
//             renew and release of the hold succeed; a second release
//             fails; the next acquire's token is larger;
//   status    (with target.status.client) f: status answers ok with an
//             object whose "role" is a string, and "term", when present,
//             an integer.
// Prints one line per check; exit 0 when all pass, 1 when one fails (or the
// client cannot be opened), 254 for a bad config or usage.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "harness/config/config.h"
#include "targets/process/exec_client.h"
#include "targets/process/process_target.h"

namespace faultline::cli {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;

struct ClientTestOptions {
  std::string config;
  std::string address;
  int node_id = 1;
  std::string workload;  // "" = the config's
};

const char* Word(Outcome o) {
  return o == Outcome::kOk ? "ok" : o == Outcome::kFail ? "fail" : "info";
}

class Checks {
 public:
  // Invokes `op` on `client`, prints it and its answer, and checks `want`
  // (a description of the right answer; `good` says whether it was).
  Completion Do(harness::Client& client, const Operation& op) {
    const auto t0 = std::chrono::steady_clock::now();
    Completion c = client.Invoke(op);
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    std::printf("  %-7s %-8s %-26s -> %s %s%s (%.1f ms)\n", "", op.f.c_str(),
                (op.key.ToJson() + " " + op.value.ToJson()).c_str(),
                Word(c.type),
                c.type == Outcome::kOk ? c.value.ToJson().c_str() : "",
                c.error.empty() ? "" : (" " + c.error).c_str(), ms);
    return c;
  }
  void Expect(bool good, const std::string& what) {
    std::printf("  %-7s %s\n", good ? "PASS" : "FAIL", what.c_str());
    if (!good) ++failed_;
    ++total_;
  }
  int failed() const { return failed_; }
  int total() const { return total_; }

 private:
  int failed_ = 0;
  int total_ = 0;
};

void RegisterChecks(harness::Client& c, Checks& k, std::int64_t key,
                    std::int64_t v) {
  const Value K = Value::Int(key);
  auto read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value.is_null(),
           "a fresh key reads ok null");
  auto write = k.Do(c, {"write", K, Value::Int(v)});
  k.Expect(write.type == Outcome::kOk, "a write answers ok");
  read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(v),
           "the write is read back");
  auto cas = k.Do(
      c,
      {"cas", K, Value::MakeList({Value::Int(v + 1000), Value::Int(v + 1)})});
  k.Expect(cas.type == Outcome::kFail,
           "a cas with a wrong expected value answers fail");
  read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(v),
           "that cas changed nothing (fail means it did not happen)");
  cas =
      k.Do(c, {"cas", K, Value::MakeList({Value::Int(v), Value::Int(v + 2)})});
  k.Expect(cas.type == Outcome::kOk,
           "a cas with the right expected value answers ok");
  read = k.Do(c, {"read", K, Value()});
  k.Expect(read.type == Outcome::kOk && read.value == Value::Int(v + 2),
           "the cas is read back");
}

void LockChecks(harness::Client& a, harness::Client& b, Checks& k,
                const std::string& lock, int ttl_ms) {
  const Value L = Value::String(lock);
  auto first = k.Do(a, {"acquire", L, Value::Int(ttl_ms)});
  const bool has_token = first.type == Outcome::kOk && first.value.is_int();
  k.Expect(has_token, "acquire answers ok with an integer token");
  if (!has_token) return;
  auto other = k.Do(b, {"acquire", L, Value::Int(ttl_ms)});
  k.Expect(other.type == Outcome::kFail,
           "a second client's acquire of the held lock answers fail");
  auto renew = k.Do(a, {"renew", L, first.value});
  k.Expect(renew.type == Outcome::kOk, "renew of the hold answers ok");
  auto release = k.Do(a, {"release", L, first.value});
  k.Expect(release.type == Outcome::kOk, "release of the hold answers ok");
  release = k.Do(a, {"release", L, first.value});
  k.Expect(release.type == Outcome::kFail,
           "a second release answers fail (not held)");
  auto again = k.Do(b, {"acquire", L, Value::Int(ttl_ms)});
  k.Expect(again.type == Outcome::kOk && again.value.is_int() &&
               again.value.as_int() > first.value.as_int(),
           "the next acquire's token is larger");
  if (again.type == Outcome::kOk) (void)b.Invoke({"release", L, again.value});
}

void StatusChecks(harness::Client& c, Checks& k) {
  auto st = k.Do(c, {"status", Value(), Value()});
  const Value* role = st.value.is_object() ? st.value.Find("role") : nullptr;
  const Value* term = st.value.is_object() ? st.value.Find("term") : nullptr;
  k.Expect(st.type == Outcome::kOk && role != nullptr && role->is_string(),
           "status answers ok with an object with a string \"role\"");
  k.Expect(term == nullptr || term->is_int(),
           "the status's \"term\", if any, is an integer");
}

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
  if (workload != "register" && workload != "lock") {
    std::fprintf(stderr, "--workload must be register or lock, got %s\n",
                 workload.c_str());
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
  Checks checks;
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
  if (workload == "register") {
    const auto key = static_cast<std::int64_t>(1'000'000 + rng() % 1'000'000);
    const auto value = static_cast<std::int64_t>(rng() % 1'000'000'000);
    RegisterChecks(**a, checks, key, value);
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
                  "register or lock (default: the config's workload)");
  cmd->footer(
      "Starts the config's client (exec, resp or etcd) bound to the node, "
      "runs a short fixed\nsequence of operations and checks each answer: "
      "its shape, and that fail means the\noperation did not happen. The "
      "client's stderr goes to this stderr.\nExit code 0 when every check "
      "passes, 1 when one fails, 254 for a bad config.\n\nExamples:\n"
      "  faultline client-test my-system.yaml --address 127.0.0.1\n"
      "  faultline client-test my-system.yaml --address 10.0.0.2 "
      "--workload lock");
  cmd->callback([o, &exit_code] { exit_code = DoClientTest(*o); });
}

}  // namespace faultline::cli

// Fakes shared by the nemesis unit tests (test code only, never linked into
// the tool): a scratch directory, a cluster of named nodes that starts
// nothing, and a target whose "servers" are `sleep` processes.
#pragma once

#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/cluster/cluster.h"
#include "harness/interfaces/target.h"
#include "harness/process/process.h"

namespace faultline::nemesis::testing {

// A fresh directory /tmp/<prefix>-XXXXXX, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "faultline-nemesis") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Nodes n1..nN at <prefix>.1..<prefix>.N, controller <prefix>.254; no
// namespaces and nothing started (Destroy does nothing). `nodes` may be
// edited by a test before use (e.g. to give nodes a netns name).
class ListCluster : public harness::Cluster {
 public:
  explicit ListCluster(int n, const std::string& prefix = "10.78.0")
      : prefix_(prefix) {
    for (int i = 0; i < n; ++i) {
      harness::Node node;
      node.index = i;
      node.name = "n" + std::to_string(i + 1);
      node.ip = prefix + "." + std::to_string(i + 1);
      nodes_.push_back(node);
    }
  }
  const std::vector<harness::Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return prefix_ + ".254"; }
  harness::Status Destroy() override { return harness::Ok(); }

  std::vector<harness::Node>& mutable_nodes() { return nodes_; }

 private:
  std::string prefix_;
  std::vector<harness::Node> nodes_;
};

// One `sleep 600` per node of `c`, started at construction and SIGKILLed at
// destruction; Kill/Pause/Resume signal it. Inspect reports `roles` (node ->
// the term it leads in; every other node is a follower). Kill and Pause of
// the node named `fail_on` fail without signalling. `paused` counts Pause
// minus Resume calls.
class SleepTarget : public harness::Target {
 public:
  explicit SleepTarget(const harness::Cluster& c) {
    for (const harness::Node& n : c.nodes()) REQUIRE(Start(n).ok());
  }
  ~SleepTarget() override {
    for (auto& [name, pid] : pids)
      harness::TerminateProcess(pid, SIGKILL, std::chrono::milliseconds(1000));
  }
  std::string name() const override { return "sleep"; }
  std::string version() override { return "sleep 1"; }
  harness::Status Setup(harness::Cluster&) override { return harness::Ok(); }
  harness::Status Start(const harness::Node& n) override {
    auto pid = harness::Spawn({"sleep", "600"}, {});
    if (!pid.ok()) return harness::Fail(pid.error());
    pids[n.name] = *pid;
    return harness::Ok();
  }
  harness::Status AwaitHealthy(std::chrono::milliseconds) override {
    return harness::Ok();
  }
  harness::Status Kill(const harness::Node& n) override {
    if (fail_on == n.name) return harness::Fail("injected failure");
    harness::TerminateProcess(pids[n.name], SIGKILL,
                              std::chrono::milliseconds(1000));
    return harness::Ok();
  }
  harness::Status Pause(const harness::Node& n) override {
    if (fail_on == n.name) return harness::Fail("injected failure");
    ++paused;
    kill(pids[n.name], SIGSTOP);
    return harness::Ok();
  }
  harness::Status Resume(const harness::Node& n) override {
    --paused;
    kill(pids[n.name], SIGCONT);
    return harness::Ok();
  }
  bool Running(const harness::Node& n) override {
    return harness::ProcessAlive(pids[n.name]);
  }
  harness::NodeStatus Inspect(const harness::Node& n) override {
    harness::NodeStatus st;
    st.reachable = true;
    auto it = roles.find(n.name);
    st.role = it == roles.end() ? "follower" : "leader";
    if (it != roles.end()) st.term = it->second;
    return st;
  }
  harness::Status Teardown(const std::string&) override {
    return harness::Ok();
  }
  harness::Result<std::unique_ptr<harness::Client>> OpenClient(
      const harness::Node&, const std::string&) override {
    return harness::Fail("no clients");
  }

  std::map<std::string, pid_t> pids;
  std::map<std::string, long long> roles;  // node -> the term it leads in
  std::string fail_on;
  int paused = 0;
};

}  // namespace faultline::nemesis::testing

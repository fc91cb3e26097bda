// Unit tests for OpenProcessClient: which workloads each client protocol
// takes, and what an exec client is told (the hello and FAULTLINE_*), with
// the scripted python3 client in testdata/fake_client.py.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "targets/process/process_target.h"

namespace {

using faultline::checkers::Value;
using faultline::harness::Outcome;
using faultline::harness::ProcessSpec;
using faultline::harness::TemplatePeer;
using faultline::harness::WorkloadSpec;
using faultline::targets::process::OpenProcessClient;
namespace fs = std::filesystem;

const std::string kFake =
    (fs::path(__FILE__).parent_path() / "testdata" / "fake_client.py").string();

ProcessSpec ExecSpec() {
  ProcessSpec spec;
  spec.system = "fake";
  spec.client.protocol = "exec";
  spec.client.command = {"python3", kFake, "good"};
  return spec;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("process clients: a bank exec client is told accounts and total") {
  const std::string log =
      (fs::temp_directory_path() /
       ("process-client-test-" + std::to_string(getpid()) + ".log"))
          .string();
  WorkloadSpec w;
  w.accounts = 4;
  w.total = 10;
  const std::vector<TemplatePeer> nodes = {{"n1", "127.0.0.1"}};
  auto c = OpenProcessClient(ExecSpec(), w, "bank", nodes, 0, nullptr, log);
  REQUIRE(c.ok());
  auto read = (*c)->Invoke({"read", Value(), Value()});
  CHECK(read.type == Outcome::kOk);
  CHECK(read.value == Value::MakeObject({{"0", Value::Int(4)},
                                         {"1", Value::Int(2)},
                                         {"2", Value::Int(2)},
                                         {"3", Value::Int(2)}}));
  // The hello's numbers and the environment's agree.
  CHECK(ReadFile(log).find("bank hello 4 10 env 4 10") != std::string::npos);
  c.value().reset();
  fs::remove(log);
}

TEST_CASE("process clients: the collections need the exec protocol") {
  const std::vector<TemplatePeer> nodes = {{"n1", "127.0.0.1"}};
  for (const char* workload : {"set", "bank", "counter"}) {
    INFO(workload);
    ProcessSpec spec = ExecSpec();
    spec.client.protocol = "resp";
    spec.client.port = "client";
    spec.ports = {{"client", 6379}};
    auto resp = OpenProcessClient(spec, WorkloadSpec{}, workload, nodes, 0,
                                  nullptr, "");
    REQUIRE_FALSE(resp.ok());
    CHECK(resp.error() == "fake: workload '" + std::string(workload) +
                              "' needs client protocol exec (the resp client "
                              "speaks register and lock only)");
    spec.client.protocol = "etcd";
    CHECK_FALSE(
        OpenProcessClient(spec, WorkloadSpec{}, workload, nodes, 0, nullptr, "")
            .ok());
    auto exec = OpenProcessClient(ExecSpec(), WorkloadSpec{}, workload, nodes,
                                  0, nullptr, "");
    CHECK(exec.ok());
  }
  auto unknown = OpenProcessClient(ExecSpec(), WorkloadSpec{}, "queue", nodes,
                                   0, nullptr, "");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().find("no client for workload 'queue'") !=
        std::string::npos);
}

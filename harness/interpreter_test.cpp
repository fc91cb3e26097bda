// The interpreter against an in-memory register (a fake target: pure logic
// only), checking the history it writes: well-formed, fresh process after
// info, nemesis start/stop pairs, final reads last, and linearizable.
#include "harness/interpreter.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "checkers/history_io.h"
#include "checkers/linearizable.h"

namespace {

using namespace faultline::harness;
using faultline::checkers::EventType;
using faultline::checkers::Value;

class MemoryRegister {
 public:
  Completion Apply(const Operation& op, int n) {
    std::lock_guard<std::mutex> lock(mu_);
    Value& cell = cells_[op.key.as_string()];
    // Every 5th op is indeterminate: every other one of those takes effect.
    bool indeterminate = n % 5 == 4;
    bool applies = !indeterminate || n % 10 == 4;
    Completion c{Outcome::kOk, op.value, ""};
    if (op.f == "read") {
      c.value = cell;
      if (indeterminate) c = {Outcome::kFail, Value(), "fake-read-error"};
      return c;
    }
    if (applies) cell = op.value;
    if (indeterminate) c = {Outcome::kInfo, op.value, "timeout"};
    return c;
  }

 private:
  std::mutex mu_;
  std::map<std::string, Value> cells_;
};

class FakeClient : public Client {
 public:
  explicit FakeClient(MemoryRegister* r) : r_(r) {}
  Completion Invoke(const Operation& op) noexcept override {
    return r_->Apply(op, n_++);
  }

 private:
  MemoryRegister* r_;
  int n_ = 0;
};

class FakeCluster : public Cluster {
 public:
  FakeCluster() {
    for (int i = 0; i < 2; ++i) {
      nodes_.push_back(Node{i, "n" + std::to_string(i + 1), "", "", nullptr});
    }
  }
  const std::vector<Node>& nodes() const override { return nodes_; }
  std::string controller_ip() const override { return ""; }
  Status Destroy() override { return Ok(); }

 private:
  std::vector<Node> nodes_;
};

class FakeTarget : public Target {
 public:
  std::string name() const override { return "fake"; }
  std::string version() override { return "fake 1"; }
  Status Setup(Cluster&) override { return Ok(); }
  Status Start(const Node&) override { return Ok(); }
  Status AwaitHealthy(std::chrono::milliseconds) override { return Ok(); }
  Status Kill(const Node&) override { return Ok(); }
  Status Pause(const Node&) override { return Ok(); }
  Status Resume(const Node&) override { return Ok(); }
  bool Running(const Node&) override { return true; }
  NodeStatus Inspect(const Node&) override { return {}; }
  Status Teardown(const std::string&) override { return Ok(); }
  Result<std::unique_ptr<Client>> OpenClient(const Node&,
                                             const std::string&) override {
    return std::unique_ptr<Client>(std::make_unique<FakeClient>(&reg_));
  }

 private:
  MemoryRegister reg_;
};

class FakeNemesis : public Nemesis {
 public:
  Result<Value> Start(const FaultStep& s) override {
    ++starts;
    return Value::MakeObject({{"kind", Value::String(s.kind)}});
  }
  Result<Value> Stop() override {
    ++stops;
    return Value::MakeObject({{"healed", Value::Bool(true)}});
  }
  Status HealAll() override {
    ++heal_alls;
    return Ok();
  }
  int starts = 0, stops = 0, heal_alls = 0;
};

class Writes : public WorkerGenerator {
 public:
  explicit Writes(int worker) : worker_(worker) {}
  Operation Next() override {
    ++n_;
    std::string key = "k" + std::to_string(n_ % 2);
    if (n_ % 3 == 0) return {"read", Value::String(key), Value()};
    return {"write", Value::String(key), Value::Int(n_ * 100 + worker_)};
  }

 private:
  int worker_;
  std::int64_t n_ = 0;
};

class FakeWorkload : public Workload {
 public:
  std::string name() const override { return "register"; }
  std::unique_ptr<WorkerGenerator> ForWorker(int w, std::uint64_t) override {
    return std::make_unique<Writes>(w);
  }
  std::vector<Operation> FinalOps() override {
    return {{"read", Value::String("k0"), Value()},
            {"read", Value::String("k1"), Value()}};
  }
  std::vector<faultline::checkers::Verdict> Check(
      const faultline::checkers::History&, const CheckOptions&) override {
    return {};
  }
};

}  // namespace

TEST_CASE("interpreter writes an honest, well-formed, checkable history") {
  auto path = std::filesystem::temp_directory_path() /
              ("interp-test-" + std::to_string(getpid()) + ".jsonl");
  TestSpec spec;
  spec.time_limit_s = 1.0;
  spec.recovery_s = 0;
  spec.workload.concurrency = 3;
  spec.workload.rate = 600;
  spec.nemesis.interval_s = 0.15;
  spec.nemesis.duration_s = 0.15;
  FakeCluster cluster;
  FakeTarget target;
  FakeNemesis nemesis;
  FakeWorkload workload;
  auto journal = Journal::Open(path.string(), std::chrono::steady_clock::now());
  REQUIRE(journal.ok());
  InterpreterConfig c;
  c.spec = &spec;
  c.cluster = &cluster;
  c.target = &target;
  c.nemesis = &nemesis;
  c.workload = &workload;
  c.journal = journal->get();
  c.next_fault = [] { return FaultStep{"partition", "halves", 1}; };
  InterpreterReport report = RunInterpreter(c);

  CHECK_FALSE(report.aborted);
  CHECK(report.invocations > 100);
  CHECK(report.info > 0);
  CHECK(nemesis.starts >= 2);
  CHECK(nemesis.stops == nemesis.starts);
  CHECK(nemesis.heal_alls >= 1);
  CHECK(report.problems.empty());

  auto history = (*journal)->Snapshot();
  journal->reset();  // closes the file
  // The file on disk is the same history and reads back cleanly.
  FILE* f = std::fopen(path.string().c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  std::filesystem::remove(path);
  auto read = faultline::checkers::ParseJsonl(text);
  REQUIRE(read.ok);
  REQUIRE(read.history.size() == history.size());
  CHECK_FALSE(faultline::checkers::CheckWellFormed(read.history, "register"));

  std::set<std::int64_t> crashed;
  std::int64_t last_time = 0;
  std::size_t last_nemesis = 0;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const auto& e = history[i];
    CHECK(e.index == static_cast<std::int64_t>(i));
    CHECK(*e.time >= last_time);
    last_time = *e.time;
    if (e.is_nemesis()) {
      last_nemesis = i;
      continue;
    }
    if (e.is_invoke()) CHECK(crashed.count(e.process) == 0);
    if (e.type == EventType::kInfo) crashed.insert(e.process);
  }
  // The final reads come after the last fault, one ok read per key.
  int final_ok = 0;
  for (std::size_t i = last_nemesis + 1; i < history.size(); ++i) {
    if (history[i].type == EventType::kOk && history[i].f == "read") ++final_ok;
  }
  CHECK(final_ok >= 2);

  faultline::checkers::LinearizableOptions lin;
  lin.model = "register";
  auto verdict = faultline::checkers::CheckLinearizable(history, lin);
  CHECK(verdict.validity == faultline::checkers::Validity::kValid);
}

TEST_CASE("DeriveSeed separates streams and is stable") {
  CHECK(DeriveSeed(1, 0) == DeriveSeed(1, 0));
  CHECK(DeriveSeed(1, 0) != DeriveSeed(1, 1));
  CHECK(DeriveSeed(1, 0) != DeriveSeed(2, 0));
}

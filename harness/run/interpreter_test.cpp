// The interpreter against an in-memory register (a fake target: pure logic
// only), checking the history it writes: well-formed, fresh process after
// info, nemesis start/stop pairs, final reads last, and linearizable.
#include "harness/run/interpreter.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "checkers/history_io.h"
#include "checkers/linearizable.h"
#include "harness/run/fault_group.h"
#include "harness/run/store.h"

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

// One run of the interpreter against the fakes, its history journaled to a
// file of its own: a case sets `spec` (recovery is 0), swaps in its own
// target, nemesis, workload or plan, calls Run() and reads `history` (and
// the closed file at `path`, removed with the fixture).
class InterpreterRun {
 public:
  InterpreterRun() { spec.recovery_s = 0; }
  ~InterpreterRun() { std::filesystem::remove(path); }
  InterpreterRun(const InterpreterRun&) = delete;
  InterpreterRun& operator=(const InterpreterRun&) = delete;

  InterpreterReport Run() {
    auto journal =
        Journal::Open(path.string(), std::chrono::steady_clock::now());
    REQUIRE(journal.ok());
    InterpreterConfig c;
    c.spec = &spec;
    c.cluster = &cluster;
    c.target = target;
    c.nemesis = nemesis;
    c.workload = workload;
    c.journal = journal->get();
    c.next_fault = next_fault;
    c.abort = abort;
    c.on_abort = on_abort;
    c.interrupted_final_s = interrupted_final_s;
    c.on_status = on_status;
    InterpreterReport report = RunInterpreter(c);
    REQUIRE((*journal)->Close().ok());
    journal->reset();
    // The history is the file, as campaign reads it back.
    auto text = ReadFile(path.string());
    REQUIRE(text.ok());
    auto read = faultline::checkers::ParseJsonl(*text);
    REQUIRE(read.ok);
    REQUIRE(read.warnings.empty());
    history = std::move(read.history);
    return report;
  }

  // A run of `seconds` with `workers` workers that invoke `rate` ops/s.
  void Workers(double seconds, int workers, double rate) {
    spec.time_limit_s = seconds;
    spec.workload.concurrency = workers;
    spec.workload.rate = rate;
  }

  // Runs ~0.3 s, one worker, with `plan` as every plan of `faults`.
  void RunPlans(Nemesis& faults, FaultPlan plan) {
    Workers(0.3, 1, 50);
    spec.nemesis.interval_s = 0.05;
    nemesis = &faults;
    next_fault = [plan] { return plan; };
    Run();
  }

  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("interp-test-" + std::to_string(getpid()) + ".jsonl");
  TestSpec spec;
  FakeCluster cluster;
  FakeTarget fake_target;
  FakeWorkload fake_workload;
  Target* target = &fake_target;
  Nemesis* nemesis = nullptr;  // no faults
  Workload* workload = &fake_workload;
  std::function<FaultPlan()> next_fault;
  const std::atomic<bool>* abort = nullptr;
  std::function<void()> on_abort;
  std::chrono::duration<double> interrupted_final_s{10.0};
  std::function<void(const std::string&)> on_status;
  faultline::checkers::History history;
};

// A client whose every operation fails (a cluster that never answers).
class FailingClient : public Client {
 public:
  Completion Invoke(const Operation& op) noexcept override {
    return {Outcome::kFail, op.value, "refused"};
  }
};

class FailingTarget : public FakeTarget {
 public:
  Result<std::unique_ptr<Client>> OpenClient(const Node&,
                                             const std::string&) override {
    return std::unique_ptr<Client>(std::make_unique<FailingClient>());
  }
};

// Sets `flag` after `delay`, from another thread (a signal, in the CLI).
class SetLater {
 public:
  SetLater(std::atomic<bool>& flag, std::chrono::milliseconds delay)
      : thread_([&flag, delay] {
          std::this_thread::sleep_for(delay);
          flag = true;
        }) {}
  ~SetLater() { thread_.join(); }
  SetLater(const SetLater&) = delete;
  SetLater& operator=(const SetLater&) = delete;

 private:
  std::thread thread_;
};

}  // namespace

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: an interrupted run heals, then reads every key "
                 "within its bound") {
  Workers(60, 2, 200);   // far longer than the test
  spec.recovery_s = 30;  // an uninterrupted pause would take 30 s
  spec.nemesis.interval_s = 0.05;
  spec.nemesis.duration_s = 60;
  FakeNemesis faults;
  nemesis = &faults;
  next_fault = [] { return FaultPlan{{FaultStep{"pause", "one", 1}}, 60}; };
  std::atomic<bool> flag{false};
  abort = &flag;
  int aborts_noticed = 0;
  on_abort = [&] { ++aborts_noticed; };
  auto t0 = std::chrono::steady_clock::now();
  InterpreterReport report;
  {
    SetLater later(flag, std::chrono::milliseconds(300));
    report = Run();
  }
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  CHECK(report.aborted);
  CHECK(aborts_noticed == 1);
  CHECK(faults.heal_alls >= 1);
  // 0.3 s of workload, a pause of at most 2 s, the reads: far below 30 s.
  CHECK(took < 6.0);
  CHECK(report.final_s >= 1.9);
  // The final reads come after the heal (the last nemesis event), one ok
  // read per key.
  std::size_t last_nemesis = 0;
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (history[i].is_nemesis()) last_nemesis = i;
  }
  std::set<std::string> read_ok;
  for (std::size_t i = last_nemesis + 1; i < history.size(); ++i) {
    const auto& e = history[i];
    if (e.type == EventType::kOk && e.f == "read") {
      read_ok.insert(e.key.as_string());
    }
  }
  CHECK(read_ok == std::set<std::string>{"k0", "k1"});
  CHECK(report.problems.empty());
}

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: after an interrupt, final reads that never "
                 "succeed stop at the bound") {
  Workers(60, 1, 100);
  spec.recovery_s = 0;
  FailingTarget failing;
  target = &failing;
  interrupted_final_s = std::chrono::milliseconds(500);
  std::atomic<bool> flag{false};
  abort = &flag;
  auto t0 = std::chrono::steady_clock::now();
  InterpreterReport report;
  {
    SetLater later(flag, std::chrono::milliseconds(100));
    report = Run();
  }
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  CHECK(report.aborted);
  // Unbounded final reads would run on to the 60 s time limit; bounded
  // ones end about 1.2 s in (the interrupt, 500 ms of reads, teardown).
  // 5 s leaves room for a loaded 2-core machine, where 2 s did not.
  CHECK(took < 5.0);
  REQUIRE(report.problems.size() == 2);
  CHECK(report.problems[0] == "final read of \"k0\" never succeeded");
}

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter writes an honest, well-formed, checkable "
                 "history") {
  Workers(1.0, 3, 600);
  spec.nemesis.interval_s = 0.15;
  spec.nemesis.duration_s = 0.15;
  FakeNemesis faults;
  nemesis = &faults;
  next_fault = [] {
    return FaultPlan{{FaultStep{"partition", "halves", 1}}, 0.15};
  };
  InterpreterReport report = Run();

  CHECK_FALSE(report.aborted);
  CHECK(report.invocations > 100);
  CHECK(report.info > 0);
  CHECK(faults.starts >= 2);
  CHECK(faults.stops == faults.starts);
  CHECK(faults.heal_alls >= 1);
  CHECK(report.problems.empty());

  // The file on disk is the same history and reads back cleanly.
  FILE* f = std::fopen(path.string().c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
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

namespace {

// n1 leads term 3; n2 follows it; an "n3" would be unreachable.
class ObservedTarget : public FakeTarget {
 public:
  NodeStatus Inspect(const Node& node) override {
    ++inspections;
    if (node.name == "n1") return {true, "leader", 3, "n1"};
    if (unreachable_n2) return {};
    return {true, "follower", 3, "n1"};
  }
  std::atomic<int> inspections{0};
  bool unreachable_n2 = false;
};

// Skips every third generated op, delays the others a little and tags them.
class TaggingClient : public StatefulClient {
 public:
  explicit TaggingClient(std::unique_ptr<Client> inner)
      : inner_(std::move(inner)) {}
  PreparedOp Prepare(const Operation& g) noexcept override {
    PreparedOp p;
    p.op = g;
    p.skip = ++n_ % 3 == 0;
    p.delay = std::chrono::milliseconds(1);
    p.extra = {{"tag", Value::Int(n_)}};
    return p;
  }
  Completion Invoke(const Operation& op) noexcept override {
    return inner_->Invoke(op);
  }

 private:
  std::unique_ptr<Client> inner_;
  std::int64_t n_ = 0;
};

class TaggingWorkload : public FakeWorkload {
 public:
  std::vector<Operation> FinalOps() override { return {}; }
  std::unique_ptr<Client> WrapClient(std::unique_ptr<Client> inner) override {
    return std::make_unique<TaggingClient>(std::move(inner));
  }
};

// Holds like the lock workload's: "take" (paced by the rate), four "step"s
// of 50 ms each and a "give", the steps and the give unpaced.
class HoldSteps : public WorkerGenerator {
 public:
  Operation Next() override {
    static const char* const kCycle[] = {"take", "step", "step",
                                         "step", "step", "give"};
    return {kCycle[n_++ % 6], Value::String("lock"), Value()};
  }

 private:
  std::size_t n_ = 0;
};

class HoldingClient : public StatefulClient {
 public:
  PreparedOp Prepare(const Operation& g) noexcept override {
    PreparedOp p;
    p.op = g;
    p.paced = g.f == "take";
    if (g.f == "step") p.delay = std::chrono::milliseconds(50);
    return p;
  }
  Completion Invoke(const Operation& op) noexcept override {
    return {Outcome::kOk, op.value, ""};
  }
};

class HoldingWorkload : public FakeWorkload {
 public:
  std::unique_ptr<WorkerGenerator> ForWorker(int, std::uint64_t) override {
    return std::make_unique<HoldSteps>();
  }
  std::vector<Operation> FinalOps() override { return {}; }
  std::unique_ptr<Client> WrapClient(std::unique_ptr<Client>) override {
    return std::make_unique<HoldingClient>();
  }
};

}  // namespace

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: leader observer and stateful clients") {
  Workers(0.5, 2, 200);
  spec.workload.observe_ms = 20;
  ObservedTarget observed;
  observed.unreachable_n2 = GENERATE(false, true);
  target = &observed;
  TaggingWorkload tagging;
  workload = &tagging;
  InterpreterReport report = Run();

  // About 0.5 s / 20 ms = 25 rounds per node; allow for a slow machine.
  CHECK(report.observations >= 10);
  CHECK(report.observations == observed.inspections.load());
  int observe_ok = 0, observe_fail = 0, tagged = 0;
  std::set<std::int64_t> tags;
  for (const auto& e : history) {
    if (e.f == "observe") {
      REQUIRE((e.node == "n1" || e.node == "n2"));
      CHECK(e.process == ObserverProcess(e.node == "n1" ? 0 : 1));
      if (e.type == EventType::kOk) {
        ++observe_ok;
        REQUIRE(e.value.Find("term") != nullptr);
        CHECK(*e.value.Find("term") == Value::Int(3));
        CHECK(*e.value.Find("leader") == Value::String("n1"));
      }
      if (e.type == EventType::kFail) {
        ++observe_fail;
        CHECK(e.node == "n2");
        CHECK(e.error == "unreachable");
      }
      continue;
    }
    if (e.is_nemesis()) continue;
    const Value* tag = e.FindExtra("tag");
    REQUIRE(tag != nullptr);  // invoke and completion both carry it
    ++tagged;
    CHECK(tag->as_int() % 3 != 0);  // skipped ops were never recorded
    tags.insert(tag->as_int());
  }
  CHECK(tagged > 10);
  CHECK(observe_ok > 0);
  CHECK((observe_fail > 0) == observed.unreachable_n2);
  // Observers never interleave two operations of one process.
  CHECK_FALSE(faultline::checkers::CheckWellFormed(history, ""));

  auto verdicts = CheckObservations(history);
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].validity == faultline::checkers::Validity::kValid);
}

TEST_CASE("CheckObservations: nothing to say without observe events") {
  faultline::checkers::History h;
  CHECK(CheckObservations(h).empty());
}

namespace {

// Stacks faults like NetnsNemesis; "loss" fails to start.
class StackingNemesis : public Nemesis {
 public:
  Result<Value> Start(const FaultStep& s) override {
    if (s.kind == "loss") return Fail("injected");
    active.push_back(s.kind);
    return Value::MakeObject({{"kind", Value::String(s.kind)}});
  }
  Result<Value> Stop() override {
    if (active.empty())
      return Value::MakeObject({{"kind", Value::String("none")}});
    std::string kind = active.back();
    active.pop_back();
    return Value::MakeObject({{"kind", Value::String(kind)}});
  }
  Status HealAll() override {
    active.clear();
    return Ok();
  }
  std::vector<std::string> active;
};

}  // namespace

TEST_CASE_METHOD(InterpreterRun,
                 "a combined plan starts in order and heals newest first") {
  Workers(0.6, 1, 50);
  spec.nemesis.interval_s = 0.05;
  StackingNemesis stacking;
  nemesis = &stacking;
  next_fault = [] {
    return FaultPlan{
        {FaultStep{"partition", "halves", 1}, FaultStep{"loss", "all", 2},
         FaultStep{"pause", "one", 3}},
        10.0};
  };
  InterpreterReport report = Run();
  CHECK(stacking.active.empty());
  std::vector<std::string> nemesis_infos;
  for (const auto& e : history)
    if (e.is_nemesis() && e.type == EventType::kInfo)
      nemesis_infos.push_back(e.f + (e.error.empty() ? "" : "!"));
  // The run ends inside the 10 s step: the nemesis thread heals what it
  // started, newest first; the failed start is recorded with its error.
  CHECK(nemesis_infos == std::vector<std::string>{
                             "start-partition", "start-loss!", "start-pause",
                             "stop-pause", "stop-partition"});
  CHECK(report.faults_started == 2);
  CHECK(report.faults_healed == 2);
  REQUIRE(report.problems.size() == 1);
  CHECK(report.problems[0].find("start-loss") != std::string::npos);
}

namespace {

// Acts on node n2 for any drawn selector, on step.nodes for "same"; a
// "kill" fails to start. Keeps every step it was given.
class SameNemesis : public Nemesis {
 public:
  Result<Value> Start(const FaultStep& s) override {
    steps.push_back(s);
    if (s.kind == "kill") return Fail("injected");
    Value::List nodes;
    if (s.selector == kSameNodes) {
      for (const std::string& n : s.nodes) nodes.push_back(Value::String(n));
    } else {
      nodes.push_back(Value::String("n2"));
    }
    ++active;
    return Value::MakeObject({{"kind", Value::String(s.kind)},
                              {"selector", Value::String(s.selector)},
                              {"nodes", Value::MakeList(std::move(nodes))}});
  }
  Result<Value> Stop() override {
    if (active > 0) --active;
    return Value::MakeObject({{"kind", Value::String("x")}});
  }
  Status HealAll() override {
    active = 0;
    return Ok();
  }
  std::vector<FaultStep> steps;
  int active = 0;
};

}  // namespace

TEST_CASE("NodesActedOn and BindSame read the first fault's nodes") {
  Value started = Value::MakeObject(
      {{"kind", Value::String("clock")},
       {"nodes", Value::MakeList({Value::String("n2"), Value::String("n3")})}});
  CHECK(NodesActedOn(started) == std::vector<std::string>{"n2", "n3"});
  CHECK_FALSE(
      NodesActedOn(Value::MakeObject({{"kind", Value::String("partition")},
                                      {"shape", Value::String("one")}})));
  CHECK_FALSE(NodesActedOn(
      Value::MakeObject({{"nodes", Value::MakeList({Value::Int(1)})}})));
  CHECK_FALSE(
      NodesActedOn(Value::MakeObject({{"nodes", Value::MakeList({})}})));

  FaultStep step{"partition", kSameNodes, 9};
  auto bound = BindSame(step, &started);
  REQUIRE(bound.ok());
  CHECK(bound->nodes == std::vector<std::string>{"n2", "n3"});
  CHECK(bound->selector == kSameNodes);
  auto none = BindSame(step, nullptr);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().find("did not start") != std::string::npos);
  Value shape = Value::MakeObject(
      {{"kind", Value::String("partition")}, {"shape", Value::String("one")}});
  auto nameless = BindSame(step, &shape);
  REQUIRE_FALSE(nameless.ok());
  CHECK(nameless.error().find("names no nodes") != std::string::npos);
}

TEST_CASE_METHOD(InterpreterRun,
                 "same: later faults of a plan act on the first fault's "
                 "nodes") {
  SameNemesis same;
  RunPlans(same, FaultPlan{{FaultStep{"clock", "follower", 1},
                            FaultStep{"partition", kSameNodes, 2},
                            FaultStep{"pause", kSameNodes, 3}},
                           10.0});
  REQUIRE(same.steps.size() >= 3);
  CHECK(same.steps[0].nodes.empty());
  CHECK(same.steps[1].kind == "partition");
  CHECK(same.steps[1].nodes == std::vector<std::string>{"n2"});
  CHECK(same.steps[2].nodes == std::vector<std::string>{"n2"});
  // The history names the bound nodes in the invocation and the start.
  int bound_invokes = 0;
  for (const auto& e : history) {
    if (!e.is_nemesis() || e.f != "start-partition") continue;
    const Value* nodes = e.value.Find("nodes");
    REQUIRE(nodes != nullptr);
    CHECK(nodes->ToJson() == "[\"n2\"]");
    if (e.type == EventType::kInvoke) ++bound_invokes;
  }
  CHECK(bound_invokes >= 1);
  CHECK(same.active == 0);
}

TEST_CASE_METHOD(InterpreterRun,
                 "same: a first fault that did not start leaves no nodes to "
                 "share") {
  SameNemesis same;
  RunPlans(same, FaultPlan{{FaultStep{"kill", "leader", 1},
                            FaultStep{"partition", kSameNodes, 2}},
                           10.0});
  // Only the kill reached the nemesis; the partition is an info event
  // with the reason, and no fault is left active.
  REQUIRE_FALSE(same.steps.empty());
  for (const FaultStep& s : same.steps) CHECK(s.kind == "kill");
  bool partition_info = false;
  for (const auto& e : history) {
    if (e.is_nemesis() && e.f == "start-partition" &&
        e.type == EventType::kInfo) {
      partition_info = true;
      CHECK(e.error.find("did not start") != std::string::npos);
    }
  }
  CHECK(partition_info);
  CHECK(same.active == 0);
}

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: rate pacing goes between holds, not into them") {
  // 2 workers at 4 ops/s: a pacing wait of up to 1 s before every paced op.
  // Paced inside the hold, four steps would add about 2 s to its 200 ms.
  Workers(2.5, 2, 4);
  HoldingWorkload holding;
  workload = &holding;
  Run();
  std::map<std::int64_t, std::int64_t> taken;  // process -> take ok time
  std::vector<double> holds_ms;
  for (const auto& e : history) {
    if (e.is_nemesis() || !e.time) continue;
    if (e.f == "take" && e.type == EventType::kOk) taken[e.process] = *e.time;
    if (e.f == "give" && e.type == EventType::kInvoke &&
        taken.count(e.process) != 0) {
      holds_ms.push_back(static_cast<double>(*e.time - taken[e.process]) / 1e6);
      taken.erase(e.process);
    }
  }
  REQUIRE(holds_ms.size() >= 2);
  for (double ms : holds_ms) {
    CAPTURE(ms);
    CHECK(ms >= 199.0);  // the four 50 ms steps
    CHECK(ms < 240.0);   // and no pacing wait among them
  }
}

namespace {

// Writes take `write_ms` each (a node that stopped answering); reads are
// quick.
class SlowWriteClient : public Client {
 public:
  explicit SlowWriteClient(int write_ms) : write_ms_(write_ms) {}
  Completion Invoke(const Operation& op) noexcept override {
    if (op.f == "write")
      std::this_thread::sleep_for(std::chrono::milliseconds(write_ms_));
    return {Outcome::kOk, op.f == "read" ? Value() : op.value, ""};
  }

 private:
  int write_ms_;
};

class SlowWriteTarget : public FakeTarget {
 public:
  Result<std::unique_ptr<Client>> OpenClient(const Node&,
                                             const std::string&) override {
    return std::unique_ptr<Client>(std::make_unique<SlowWriteClient>(1500));
  }
};

// Its second client takes 1.5 s for each operation; every other one answers
// info, once that one is busy (waiting up to 2 s for it). After an info its
// clients are Fatal.
class GivingUpTarget : public FakeTarget, public ClientHealth {
 public:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool slow_busy = false;
    std::atomic<bool> gave{false};
  };
  class InfoClient : public Client {
   public:
    explicit InfoClient(Shared* s) : s_(s) {}
    Completion Invoke(const Operation& op) noexcept override {
      std::unique_lock<std::mutex> lock(s_->mu);
      s_->cv.wait_for(lock, std::chrono::seconds(2),
                      [this] { return s_->slow_busy; });
      s_->gave = true;
      return {Outcome::kInfo, op.value, "broken"};
    }

   private:
    Shared* s_;
  };
  class SlowClient : public Client {
   public:
    explicit SlowClient(Shared* s) : s_(s) {}
    Completion Invoke(const Operation& op) noexcept override {
      {
        std::lock_guard<std::mutex> lock(s_->mu);
        s_->slow_busy = true;
      }
      s_->cv.notify_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      return {Outcome::kOk, op.f == "read" ? Value() : op.value, ""};
    }

   private:
    Shared* s_;
  };
  Result<std::unique_ptr<Client>> OpenClient(const Node&,
                                             const std::string&) override {
    if (opened_++ == 1)
      return std::unique_ptr<Client>(std::make_unique<SlowClient>(&shared_));
    return std::unique_ptr<Client>(std::make_unique<InfoClient>(&shared_));
  }
  std::string Fatal() override {
    return shared_.gave ? "the client broke" : "";
  }

 private:
  std::atomic<int> opened_{0};
  Shared shared_;
};

// Starts every fault on node n2 and says so, as the real nemesis does.
class NodesNemesis : public FakeNemesis {
 public:
  Result<Value> Start(const FaultStep& s) override {
    ++starts;
    return Value::MakeObject(
        {{"kind", Value::String(s.kind)},
         {"nodes", Value::MakeList({Value::String("n2")})}});
  }
};

// The status lines a run printed, from any thread.
struct StatusLog {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(line);
    };
  }
};

}  // namespace

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: past the time limit the status says how many "
                 "operations it waits for") {
  SlowWriteTarget slow;
  target = &slow;
  Workers(0.4, 2, 0);  // both workers are in a 1.5 s write at 0.4 s
  StatusLog status;
  on_status = status.Sink();
  InterpreterReport report = Run();
  REQUIRE_FALSE(status.lines.empty());
  const std::string want =
      "time limit reached, waiting for 2 outstanding operations";
  CHECK(status.lines.front().rfind(want, 0) == 0);
  // Once they completed nothing more is printed: at most the first line and
  // one a second later (1.5 s - 0.4 s).
  CHECK(status.lines.size() <= 2);
  CHECK(report.invocations == 2);
  CHECK(report.ok == 2);
  CHECK(report.final_invocations == 2);  // one read per key, counted apart
  CHECK(report.final_ok == 2);
}

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: when the clients stop the run the status says "
                 "so, not that the time limit was reached") {
  GivingUpTarget giving_up;
  target = &giving_up;
  Workers(5.0, 2, 0);
  StatusLog status;
  on_status = status.Sink();
  InterpreterReport report = Run();
  CHECK(report.client_failure == "the client broke");
  REQUIRE_FALSE(status.lines.empty());
  CHECK(status.lines.front().rfind(
            "clients stopped the run, waiting for 1 outstanding operation",
            0) == 0);
  CHECK(report.workload_s < 4.0);  // stopped long before the time limit
}

TEST_CASE_METHOD(InterpreterRun,
                 "interpreter: the status names the fault in force, its "
                 "targets and since when; counts match the history") {
  Workers(1.6, 1, 100);
  spec.nemesis.interval_s = 0.1;
  NodesNemesis faults;
  nemesis = &faults;
  next_fault = [] { return FaultPlan{{FaultStep{"pause", "one", 1}}, 60}; };
  StatusLog status;
  on_status = status.Sink();
  InterpreterReport report = Run();
  REQUIRE_FALSE(status.lines.empty());
  const std::string& line = status.lines.front();  // at about 1 s
  INFO(line);
  CHECK(line.find("fault: pause n2 since 0.") != std::string::npos);
  // The report's counts are the history's, final reads ("phase": "final")
  // and the rest apart.
  std::int64_t ok = 0, fail = 0, info = 0, final_ops = 0, final_marked = 0;
  for (const auto& e : history) {
    if (e.is_nemesis() || e.is_invoke()) continue;
    const Value* phase = e.FindExtra("phase");
    if (phase != nullptr) {
      ++final_ops;
      final_marked += phase->as_string() == "final" ? 1 : 0;
      continue;
    }
    ok += e.type == EventType::kOk ? 1 : 0;
    fail += e.type == EventType::kFail ? 1 : 0;
    info += e.type == EventType::kInfo ? 1 : 0;
  }
  CHECK(ok == report.ok);
  CHECK(fail == report.fail);
  CHECK(info == report.info);
  CHECK(ok + fail + info == report.invocations);
  CHECK(final_ops == report.final_invocations);
  CHECK(final_marked == final_ops);
  CHECK(final_ops >= 2);
}

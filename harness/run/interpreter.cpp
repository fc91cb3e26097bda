#include "harness/run/interpreter.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "checkers/leader_per_term.h"
#include "harness/run/fault_group.h"

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;
using checkers::Event;
using checkers::EventType;
using checkers::Value;

// Interruptible waiting shared by every thread of one run.
class StopLatch {
 public:
  explicit StopLatch(const std::atomic<bool>* abort) : abort_(abort) {}
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  bool stopped() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_ || Aborted();
  }
  bool Aborted() const { return abort_ != nullptr && abort_->load(); }
  // Waits until `until` or until stopped; returns false when stopped.
  bool WaitUntil(Clock::time_point until) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopped_ && !Aborted()) {
      auto now = Clock::now();
      if (now >= until) return true;
      // Wake at least every 100 ms to notice an abort flag set by a signal.
      cv_.wait_until(lock,
                     std::min(until, now + std::chrono::milliseconds(100)));
    }
    return false;
  }

 private:
  const std::atomic<bool>* abort_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

EventType ToEventType(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return EventType::kOk;
    case Outcome::kFail:
      return EventType::kFail;
    case Outcome::kInfo:
      break;
  }
  return EventType::kInfo;
}

struct Counters {
  // The workload's operations; the final ones are counted apart.
  std::atomic<std::int64_t> invocations{0}, ok{0}, fail{0}, info{0};
  std::atomic<std::int64_t> final_invocations{0}, final_ok{0}, final_fail{0},
      final_info{0};
  std::atomic<std::int64_t> first_invoke_ns{-1};
  std::atomic<std::int64_t> observations{0};
  // Workload operations invoked and not yet completed; `idle` is notified
  // when it drops to 0.
  std::mutex flight_mu;
  std::condition_variable idle;
  std::int64_t in_flight = 0;
  std::mutex fault_mu;
  std::string current_fault;  // "" when none
  Clock::time_point fault_since{};
};

// "partition n1|n2,n3", "pause n3": a started fault and what it acts on,
// from the nemesis's start value (components, else nodes), else its
// selector.
std::string FaultLabel(const std::string& kind, const std::string& selector,
                       const Value& started) {
  auto names = [](const Value& list) {
    std::string out;
    if (!list.is_list()) return out;
    for (const Value& n : list.as_list())
      if (n.is_string()) out += (out.empty() ? "" : ",") + n.as_string();
    return out;
  };
  std::string targets;
  if (const Value* c = started.Find("components"); c && c->is_list()) {
    for (const Value& comp : c->as_list())
      targets += (targets.empty() ? "" : "|") + names(comp);
  } else if (const Value* n = started.Find("nodes")) {
    targets = names(*n);
  }
  return kind + " " + (targets.empty() ? selector : targets);
}

class Run {
 public:
  explicit Run(const InterpreterConfig& c) : c_(c), latch_(c.abort) {}

  InterpreterReport Go() {
    InterpreterReport report;
    const auto& spec = *c_.spec;
    next_process_ = spec.workload.concurrency;
    auto started = Clock::now();
    auto deadline =
        started + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(spec.time_limit_s));

    std::vector<std::thread> workers;
    workers.reserve(static_cast<std::size_t>(spec.workload.concurrency));
    for (int w = 0; w < spec.workload.concurrency; ++w) {
      workers.emplace_back([this, w] { Worker(w); });
    }
    std::vector<std::thread> observers;
    if (spec.workload.observe_ms > 0) {
      const auto& nodes = c_.cluster->nodes();
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        observers.emplace_back([this, i] { Observer(i); });
      }
    }
    std::thread nemesis;
    if (c_.nemesis != nullptr && c_.next_fault) {
      nemesis = std::thread([this, &report] { NemesisLoop(report); });
    }
    // The main thread keeps time and reports status.
    auto next_status = Clock::now() + std::chrono::seconds(1);
    while (latch_.WaitUntil(std::min(deadline, next_status))) {
      if (Clock::now() >= deadline) break;
      Status(started);
      next_status += std::chrono::seconds(1);
    }
    report.aborted = latch_.Aborted();
    if (report.aborted) NoticeAbort();
    // Operations still outstanding at the time limit: the status says at
    // once how many the run waits for, then every second until none is left.
    {
      std::unique_lock<std::mutex> lock(counters_.flight_mu);
      waiting_ = counters_.in_flight > 0;
    }
    if (waiting_) Status(started);
    latch_.Stop();
    while (waiting_) {
      std::unique_lock<std::mutex> lock(counters_.flight_mu);
      if (counters_.idle.wait_for(lock, std::chrono::seconds(1),
                                  [this] { return counters_.in_flight == 0; }))
        break;
      lock.unlock();
      Status(started);
    }
    for (auto& t : workers) t.join();
    for (auto& t : observers) t.join();
    if (nemesis.joinable()) nemesis.join();
    if (c_.nemesis != nullptr) {
      auto healed = c_.nemesis->HealAll();
      if (!healed.ok()) report.problems.push_back("heal: " + healed.error());
    }
    report.workload_s =
        std::chrono::duration<double>(Clock::now() - started).count();

    auto final_started = Clock::now();
    {
      std::lock_guard<std::mutex> lock(client_failure_mu_);
      report.client_failure = client_failure_;
    }
    if (report.client_failure.empty()) FinalPhase(report);
    report.final_s =
        std::chrono::duration<double>(Clock::now() - final_started).count();

    report.observations = counters_.observations;
    report.invocations = counters_.invocations;
    report.ok = counters_.ok;
    report.fail = counters_.fail;
    report.info = counters_.info;
    report.final_invocations = counters_.final_invocations;
    report.final_ok = counters_.final_ok;
    report.final_fail = counters_.final_fail;
    report.final_info = counters_.final_info;
    report.aborted = report.aborted || latch_.Aborted();
    if (counters_.first_invoke_ns >= 0) {
      report.first_invoke = c_.journal->start() +
                            std::chrono::nanoseconds(counters_.first_invoke_ns);
    }
    return report;
  }

 private:
  const Node& NodeFor(std::int64_t n) const {
    const auto& nodes = c_.cluster->nodes();
    return nodes[static_cast<std::size_t>(n) % nodes.size()];
  }

  std::unique_ptr<Client> Open(const Node& node) {
    auto client = c_.target->OpenClient(node, c_.workload->client_kind());
    if (!client.ok()) {
      spdlog::warn("cannot open client on {}: {}", node.name, client.error());
      return c_.workload->WrapClient(nullptr);
    }
    return c_.workload->WrapClient(std::move(client.value()));
  }

  // Records the invocation, performs it, records the completion. A final
  // operation carries "phase": "final" and is counted apart.
  Outcome InvokeOne(Client* client, std::int64_t process, const Node& node,
                    const Operation& op,
                    std::vector<std::pair<std::string, Value>> extra = {},
                    bool final_op = false) {
    if (final_op) extra.emplace_back("phase", Value::String("final"));
    if (!final_op) {
      std::lock_guard<std::mutex> lock(counters_.flight_mu);
      ++counters_.in_flight;
    }
    Event inv;
    inv.process = process;
    inv.type = EventType::kInvoke;
    inv.f = op.f;
    inv.key = op.key;
    inv.value = op.value;
    inv.node = node.name;
    inv.extra = std::move(extra);
    const Journal::Stamp written = c_.journal->Append(inv);
    std::int64_t expected = -1;
    counters_.first_invoke_ns.compare_exchange_strong(expected, written.time);
    ++(final_op ? counters_.final_invocations : counters_.invocations);

    Completion done;
    if (client == nullptr) {
      done = {Outcome::kFail, op.value, "no-client"};
    } else {
      done = client->Invoke(op);
    }
    Event comp = inv;
    comp.type = ToEventType(done.type);
    comp.value = done.type == Outcome::kOk ? done.value : op.value;
    comp.error = done.error;
    c_.journal->Append(comp);
    switch (done.type) {
      case Outcome::kOk:
        ++(final_op ? counters_.final_ok : counters_.ok);
        break;
      case Outcome::kFail:
        ++(final_op ? counters_.final_fail : counters_.fail);
        break;
      case Outcome::kInfo:
        ++(final_op ? counters_.final_info : counters_.info);
        break;
    }
    if (!final_op) {
      std::lock_guard<std::mutex> lock(counters_.flight_mu);
      if (--counters_.in_flight == 0) counters_.idle.notify_all();
    }
    return done.type;
  }

  void Worker(int w) {
    const auto& spec = *c_.spec;
    auto gen = c_.workload->ForWorker(w, DeriveSeed(spec.seed, 1000 + w));
    std::mt19937_64 rng(DeriveSeed(spec.seed, 5000 + w));
    // Stagger: each worker draws delays uniform in [0, 2*mean], mean chosen
    // so all workers together invoke `rate` operations per second.
    double mean_s = spec.workload.rate > 0
                        ? spec.workload.concurrency / spec.workload.rate
                        : 0.0;
    std::uniform_real_distribution<double> jitter(0.0, 2.0 * mean_s);
    std::int64_t process = w;
    const Node* node = &NodeFor(w);
    auto client = Open(*node);
    auto next = Clock::now();
    while (!latch_.stopped()) {
      Operation op = gen->Next();
      std::vector<std::pair<std::string, Value>> extra;
      bool paced = true;
      std::chrono::milliseconds delay{0};
      if (auto* stateful = dynamic_cast<StatefulClient*>(client.get())) {
        PreparedOp p = stateful->Prepare(op);
        if (p.skip) continue;  // nothing is invoked: no pacing delay owed
        paced = p.paced;
        delay = p.delay;
        op = std::move(p.op);
        extra = std::move(p.extra);
      }
      if (mean_s > 0 && paced) {
        // After a slow op (e.g. a timeout) do not burst to catch up: the
        // next delay counts from now.
        next = std::max(next, Clock::now()) +
               std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(jitter(rng)));
        if (!latch_.WaitUntil(next)) break;
      }
      if (delay.count() > 0 && !latch_.WaitUntil(Clock::now() + delay)) break;
      if (InvokeOne(client.get(), process, *node, op, std::move(extra)) ==
          Outcome::kInfo) {
        if (ClientsGaveUp()) break;
        // The op may still be in flight: this process never invokes again.
        process = next_process_.fetch_add(1);
        client = Open(*node);
      }
      if (client == nullptr) client = Open(*node);
      if (ClientsGaveUp()) break;
    }
  }

  // Leader observer of node `i`: every observe_ms asks the node for its own
  // view (Target::Inspect) and records it as an `observe` operation of the
  // process ObserverProcess(i). Unreachable is `fail` (asking has no
  // effect), so the process id stays the same for the whole run.
  void Observer(std::size_t i) {
    const Node& node = c_.cluster->nodes()[i];
    const auto period = std::chrono::milliseconds(c_.spec->workload.observe_ms);
    auto next = Clock::now();
    while (latch_.WaitUntil(next)) {
      Event inv;
      inv.process = ObserverProcess(static_cast<int>(i));
      inv.type = EventType::kInvoke;
      inv.f = "observe";
      inv.node = node.name;
      c_.journal->Append(inv);
      NodeStatus st = c_.target->Inspect(node);
      Event comp = inv;
      if (st.reachable) {
        comp.type = EventType::kOk;
        comp.value = Value::MakeObject(
            {{"role", Value::String(st.role)},
             {"term", st.term >= 0 ? Value::Int(st.term) : Value::Null()},
             {"leader",
              st.leader.empty() ? Value::Null() : Value::String(st.leader)}});
      } else {
        comp.type = EventType::kFail;
        comp.error = "unreachable";
      }
      c_.journal->Append(comp);
      ++counters_.observations;
      next = std::max(next + period, Clock::now());
    }
  }

  void RecordNemesis(const std::string& f, EventType type, Value value,
                     const std::string& error) {
    Event e;
    e.process = checkers::kNemesisProcess;
    e.type = type;
    e.f = f;
    e.value = std::move(value);
    e.error = error;
    c_.journal->Append(std::move(e));
  }

  void NemesisLoop(InterpreterReport& report) {
    const auto& n = c_.spec->nemesis;
    auto secs = [](double s) {
      return std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(s));
    };
    while (latch_.WaitUntil(Clock::now() + secs(n.interval_s))) {
      FaultPlan plan = c_.next_fault();
      // Start the plan's faults in order; the nemesis stacks them, so one
      // Stop per started fault heals them newest first.
      std::vector<std::string> started_kinds;
      std::string current;
      // The start value of the group's first fault, for `same` selectors
      // (harness/run/fault_group.h); unset when it did not start.
      std::optional<Value> first_started;
      for (std::size_t i = 0; i < plan.faults.size(); ++i) {
        FaultStep step = plan.faults[i];
        std::string start_f = "start-" + step.kind;
        Result<FaultStep> bound = step;
        if (step.selector == kSameNodes)
          bound = BindSame(step, first_started ? &*first_started : nullptr);
        Value::Object arg_fields = {{"selector", Value::String(step.selector)}};
        if (bound.ok() && !bound->nodes.empty()) {
          Value::List names;
          for (const std::string& name : bound->nodes)
            names.push_back(Value::String(name));
          arg_fields.emplace_back("nodes", Value::MakeList(std::move(names)));
        }
        Value arg = Value::MakeObject(std::move(arg_fields));
        RecordNemesis(start_f, EventType::kInvoke, arg, "");
        // A fault whose `same` could not be bound never reaches the
        // nemesis; its info event carries the reason.
        auto started = bound.ok() ? c_.nemesis->Start(*bound)
                                  : Result<Value>(Fail(bound.error()));
        if (i == 0 && started.ok()) first_started = started.value();
        if (!started.ok()) {
          spdlog::warn("nemesis {} {} failed: {}", start_f, step.selector,
                       started.error());
          report.problems.push_back(start_f + ": " + started.error());
          RecordNemesis(start_f, EventType::kInfo, arg, started.error());
          continue;
        }
        ++report.faults_started;
        spdlog::info("fault: {} {}", start_f, started.value().ToJson());
        RecordNemesis(start_f, EventType::kInfo, started.value(), "");
        started_kinds.push_back(step.kind);
        current += (current.empty() ? "" : " + ") +
                   FaultLabel(step.kind, step.selector, started.value());
      }
      if (started_kinds.empty()) continue;
      {
        std::lock_guard<std::mutex> lock(counters_.fault_mu);
        counters_.current_fault = current;
        counters_.fault_since = Clock::now();
      }
      latch_.WaitUntil(Clock::now() + secs(plan.duration_s));
      for (auto kind = started_kinds.rbegin(); kind != started_kinds.rend();
           ++kind) {
        std::string stop_f = "stop-" + *kind;
        RecordNemesis(stop_f, EventType::kInvoke, Value(), "");
        auto stopped = c_.nemesis->Stop();
        if (stopped.ok()) {
          ++report.faults_healed;
          spdlog::info("healed: {} {}", stop_f, stopped.value().ToJson());
          RecordNemesis(stop_f, EventType::kInfo, stopped.value(), "");
        } else {
          spdlog::warn("nemesis {} failed: {}", stop_f, stopped.error());
          report.problems.push_back(stop_f + ": " + stopped.error());
          RecordNemesis(stop_f, EventType::kInfo, Value(), stopped.error());
        }
      }
      {
        std::lock_guard<std::mutex> lock(counters_.fault_mu);
        counters_.current_fault.clear();
      }
    }
  }

  // Recovery pause, health wait, then every final operation. Once the run
  // is interrupted (before or during this phase) all of it must end within
  // interrupted_final_s of that moment, and the pause is at most
  // kInterruptedRecovery.
  void FinalPhase(InterpreterReport& report) {
    static constexpr std::chrono::duration<double> kInterruptedRecovery{2.0};
    const auto& spec = *c_.spec;
    const auto budget =
        std::chrono::duration_cast<Clock::duration>(c_.interrupted_final_s);
    std::optional<Clock::time_point> hard;  // set once interrupted
    auto cap = [&](Clock::time_point t) {
      if (!hard && latch_.Aborted()) {
        hard = Clock::now() + budget;
        NoticeAbort();
      }
      return hard ? std::min(t, *hard) : t;
    };
    auto secs = [](std::chrono::duration<double> d) {
      return std::chrono::duration_cast<Clock::duration>(d);
    };
    std::chrono::duration<double> pause(spec.recovery_s);
    cap(Clock::now());  // notes an interrupt that came before this phase
    if (hard) pause = std::min(pause, kInterruptedRecovery);
    // A signal during the pause ends it; the shortened pause of an
    // interrupted run is not itself interruptible.
    StopLatch recovery(hard ? nullptr : c_.abort);
    recovery.WaitUntil(cap(Clock::now() + secs(pause)));
    auto until = cap(Clock::now() + std::chrono::seconds(30));
    auto healthy = c_.target->AwaitHealthy(std::max(
        std::chrono::milliseconds(100),
        std::chrono::duration_cast<std::chrono::milliseconds>(until -
                                                              Clock::now())));
    if (!healthy.ok()) {
      report.problems.push_back("not healthy after recovery: " +
                                healthy.error());
    }
    // Each final op is retried, on rotating nodes, until it is ok.
    auto final_deadline = Clock::now() + std::chrono::seconds(30);
    std::int64_t attempt = 0;
    for (const Operation& op : c_.workload->FinalOps()) {
      bool done = false;
      while (!done && Clock::now() < cap(final_deadline)) {
        std::int64_t process = next_process_.fetch_add(1);
        const Node& node = NodeFor(attempt++);
        auto client = Open(node);
        done = InvokeOne(client.get(), process, node, op, {},
                         /*final_op=*/true) == Outcome::kOk;
      }
      if (!done) {
        report.problems.push_back("final " + op.f + " of " + op.key.ToJson() +
                                  " never succeeded");
      }
    }
  }

  // Asks a ClientHealth target whether its clients can go on; the first
  // time one says no, records why and stops the workload.
  bool ClientsGaveUp() {
    auto* health = dynamic_cast<ClientHealth*>(c_.target);
    if (health == nullptr) return false;
    std::string fatal = health->Fatal();
    if (fatal.empty()) return false;
    {
      std::lock_guard<std::mutex> lock(client_failure_mu_);
      if (!client_failure_.empty()) return true;
      client_failure_ = fatal;
    }
    spdlog::error("stopping the run: {}", fatal);
    latch_.Stop();
    return true;
  }

  // Calls on_abort the first time the interpreter sees the abort flag.
  void NoticeAbort() {
    if (abort_noticed_) return;
    abort_noticed_ = true;
    if (c_.on_abort) c_.on_abort();
  }

  // "  12s / 60s  ok 840  fail 3  info 1  fault: partition n1|n2,n3 since
  // 3.2 s"; once the workload stops "time limit reached, waiting for N
  // outstanding operations" takes the place of the elapsed time ("clients
  // stopped the run" or "interrupted" instead when that is what stopped
  // it).
  void Status(Clock::time_point started) {
    if (!c_.on_status) return;
    const auto now = Clock::now();
    std::string fault = "none";
    {
      std::lock_guard<std::mutex> lock(counters_.fault_mu);
      if (!counters_.current_fault.empty()) {
        char since[48];
        snprintf(
            since, sizeof since, " since %.1f s",
            std::chrono::duration<double>(now - counters_.fault_since).count());
        fault = counters_.current_fault + since;
      }
    }
    std::string head;
    char buf[160];
    if (waiting_) {
      std::int64_t n;
      {
        std::lock_guard<std::mutex> lock(counters_.flight_mu);
        n = counters_.in_flight;
      }
      const char* why = "time limit reached";
      if (latch_.Aborted()) {
        why = "interrupted";
      } else {
        std::lock_guard<std::mutex> lock(client_failure_mu_);
        if (!client_failure_.empty()) why = "clients stopped the run";
      }
      snprintf(buf, sizeof buf, "%s, waiting for %lld outstanding operation%s",
               why, static_cast<long long>(n), n == 1 ? "" : "s");
    } else {
      snprintf(buf, sizeof buf, "%5.0fs / %.0fs",
               std::chrono::duration<double>(now - started).count(),
               c_.spec->time_limit_s);
    }
    head = buf;
    snprintf(buf, sizeof buf, "  ok %lld  fail %lld  info %lld  fault: ",
             static_cast<long long>(counters_.ok.load()),
             static_cast<long long>(counters_.fail.load()),
             static_cast<long long>(counters_.info.load()));
    c_.on_status(head + buf + fault);
  }

  const InterpreterConfig& c_;
  StopLatch latch_;
  Counters counters_;
  std::atomic<std::int64_t> next_process_{0};
  bool abort_noticed_ = false;  // main thread only
  std::mutex client_failure_mu_;
  std::string client_failure_;  // ClientsGaveUp: why the clients stopped
  bool waiting_ = false;        // main thread only: past the time limit
};

}  // namespace

std::vector<checkers::Verdict> CheckObservations(
    const checkers::History& history) {
  for (const Event& e : history) {
    if (e.f == "observe" && !e.is_nemesis()) {
      return {checkers::CheckLeaderPerTerm(history)};
    }
  }
  return {};
}

std::uint64_t DeriveSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

InterpreterReport RunInterpreter(const InterpreterConfig& config) {
  Run run(config);
  return run.Go();
}

}  // namespace faultline::harness

// List-append checker benchmark. Generates a large list-append history (a
// correct concurrent execution, so the verdict should be valid: each
// transaction takes effect atomically between its invocation and its
// completion) and checks it. Keys follow Jepsen's list-append generator:
// `--keys` keys are active at a time; a key retires after 32 appends and a
// fresh key takes its place.
//
// By default the events go, in batches of 4096 as they are generated,
// straight into a TxnHistoryBuilder (no History is built): check_seconds
// is the time spent in Add plus Finish. --history takes the old path:
// the whole History is generated, CheckListAppend times it, then the
// history is written as JSONL text and parsed back with ParseJsonl (skip
// that with --no-jsonl).
//
// Usage: txn_bench [--txns N] [--keys K] [--processes P] [--seed S]
//                  [--model M] [--inject] [--history] [--no-jsonl]
//                  [--jsonl-out FILE]
//   --inject appends one G-single cycle (read skew: T2 sees T1's append to
//   x but not its append to y), so the verdict should be invalid.
//   --jsonl-out FILE also writes the history to FILE as JSONL (not timed),
//   e.g. to time `faultline check --model list-append FILE`.
// Prints "name: value" lines.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/process_usage.h"
#include "checkers/history.h"
#include "checkers/history_io.h"
#include "checkers/txn/txn.h"

namespace fc = faultline::checkers;
using faultline::bench::CpuSeconds;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double PeakRssMb() {
  return static_cast<double>(faultline::bench::PeakRssBytes()) /
         (1024.0 * 1024.0);
}

struct Options {
  std::int64_t txns = 1'000'000;
  int keys = 1000;
  int processes = 16;
  std::uint64_t seed = 1;
  std::string model = "strict-serializable";
  bool inject = false;
  bool jsonl = true;      // --no-jsonl: skip the JSONL write and parse
  bool history = false;   // --history: the old path, through a History
  std::string jsonl_out;  // --jsonl-out FILE
};

constexpr int kAppendsPerKey = 32;

class ListAppendGen {
 public:
  explicit ListAppendGen(const Options& o)
      : o_(o), rng_(o.seed), slots_(static_cast<std::size_t>(o.processes)) {
    for (int k = 0; k < o.keys; ++k) pool_.push_back(NewKey());
  }

  // Calls emit(Event&&) for each event, in history order.
  template <typename Emit>
  void Run(Emit emit) {
    emit_ = emit;
    std::int64_t invoked = 0;
    std::int64_t done = 0;
    std::uniform_int_distribution<int> pick(0, o_.processes - 1);
    while (done < o_.txns) {
      const int s = pick(rng_);
      Slot& slot = slots_[static_cast<std::size_t>(s)];
      if (slot.stage == 0) {
        if (invoked == o_.txns) continue;
        ++invoked;
        Invoke(s, slot);
      } else if (slot.stage == 1) {
        Effect(slot);
      } else {
        Complete(s, slot);
        ++done;
      }
    }
    if (o_.inject) InjectGSingle();
  }

  std::int64_t keys_used() const {
    return static_cast<std::int64_t>(lists_.size());
  }

 private:
  struct MopSpec {
    bool append;
    std::int64_t key;
    std::int64_t value;
    fc::Value read;
  };
  struct Slot {
    int stage = 0;  // 0 idle, 1 invoked, 2 took effect
    std::vector<MopSpec> mops;
  };

  std::int64_t NewKey() {
    lists_.emplace_back();
    cached_.emplace_back();
    appends_.push_back(0);
    return static_cast<std::int64_t>(lists_.size()) - 1;
  }

  // A key from the active pool; `append` counts toward its retirement.
  std::int64_t PickKey(bool append) {
    const auto i =
        std::uniform_int_distribution<std::size_t>(0, pool_.size() - 1)(rng_);
    const std::int64_t k = pool_[i];
    if (append && ++appends_[static_cast<std::size_t>(k)] >= kAppendsPerKey) {
      pool_[i] = NewKey();
    }
    return k;
  }

  fc::Value MopsValue(const std::vector<MopSpec>& mops, bool results) const {
    fc::Value::List l;
    l.reserve(mops.size());
    for (const MopSpec& m : mops) {
      l.push_back(fc::Value::MakeList(
          {m.append ? append_f_ : read_f_, fc::Value::Int(m.key),
           m.append ? fc::Value::Int(m.value)
                    : (results ? m.read : fc::Value())}));
    }
    return fc::Value::MakeList(std::move(l));
  }

  void Emit(std::int64_t process, fc::EventType type, fc::Value value) {
    fc::Event e;
    e.index = emitted_++;
    e.time = e.index * 1000;
    e.process = process;
    e.type = type;
    e.f = "txn";
    e.value = std::move(value);
    emit_(std::move(e));
  }

  void Invoke(int s, Slot& slot) {
    slot.mops.clear();
    const int n = std::uniform_int_distribution<int>(1, 4)(rng_);
    for (int i = 0; i < n; ++i) {
      const bool append = (rng_() & 1) != 0;
      MopSpec m{append, PickKey(append), append ? next_value_++ : 0, {}};
      slot.mops.push_back(std::move(m));
    }
    Emit(s, fc::EventType::kInvoke, MopsValue(slot.mops, false));
    slot.stage = 1;
  }

  // The transaction takes effect: appends land, reads see the lists now.
  void Effect(Slot& slot) {
    for (MopSpec& m : slot.mops) {
      const auto k = static_cast<std::size_t>(m.key);
      if (m.append) {
        lists_[k].push_back(m.value);
        cached_[k] = fc::Value();
      } else {
        if (cached_[k].is_null()) {
          fc::Value::List l;
          l.reserve(lists_[k].size());
          for (std::int64_t v : lists_[k]) l.push_back(fc::Value::Int(v));
          cached_[k] = fc::Value::MakeList(std::move(l));  // shared by reads
        }
        m.read = cached_[k];
      }
    }
    slot.stage = 2;
  }

  void Complete(int s, Slot& slot) {
    Emit(s, fc::EventType::kOk, MopsValue(slot.mops, true));
    slot.stage = 0;
  }

  void RunAlone(std::vector<MopSpec> mops) {
    Slot slot;
    slot.mops = std::move(mops);
    Emit(0, fc::EventType::kInvoke, MopsValue(slot.mops, false));
    Effect(slot);
    Complete(0, slot);
  }

  // T1 appends to fresh keys x and y; T2 reads x with T1's element but y
  // without it (a G-single: T1 -wr-> T2 -rw-> T1); T3 then reads y with it.
  void InjectGSingle() {
    // Run's loop has completed every transaction: process 0 is free.
    const std::int64_t x = NewKey();
    const std::int64_t y = NewKey();
    const std::int64_t a = next_value_++;
    const std::int64_t b = next_value_++;
    RunAlone({{true, x, a, {}}, {true, y, b, {}}});
    Slot t2;
    t2.mops = {{false, x, 0, {}}, {false, y, 0, {}}};
    Emit(0, fc::EventType::kInvoke, MopsValue(t2.mops, false));
    t2.mops[0].read = fc::Value::MakeList({fc::Value::Int(a)});
    t2.mops[1].read = fc::Value::MakeList({});
    Emit(0, fc::EventType::kOk, MopsValue(t2.mops, true));
    RunAlone({{false, y, 0, {}}});
  }

  Options o_;
  std::mt19937_64 rng_;
  std::vector<Slot> slots_;
  std::vector<std::int64_t> pool_;
  std::vector<std::vector<std::int64_t>> lists_;
  std::vector<fc::Value> cached_;  // null: rebuild on the next read
  std::vector<int> appends_;
  std::int64_t next_value_ = 1;
  std::int64_t emitted_ = 0;
  std::function<void(fc::Event&&)> emit_;
  const fc::Value append_f_ = fc::Value::String("append");
  const fc::Value read_f_ = fc::Value::String("r");
};

bool ParseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char* v = nullptr;
    if (a == "--inject") {
      o.inject = true;
    } else if (a == "--no-jsonl") {
      o.jsonl = false;
    } else if (a == "--history") {
      o.history = true;
    } else if (a == "--jsonl-out" && (v = next()) != nullptr) {
      o.jsonl_out = v;
    } else if (a == "--txns" && (v = next()) != nullptr) {
      o.txns = std::atoll(v);
    } else if (a == "--keys" && (v = next()) != nullptr) {
      o.keys = std::atoi(v);
    } else if (a == "--processes" && (v = next()) != nullptr) {
      o.processes = std::atoi(v);
    } else if (a == "--seed" && (v = next()) != nullptr) {
      o.seed = std::strtoull(v, nullptr, 10);
    } else if (a == "--model" && (v = next()) != nullptr) {
      o.model = v;
    } else {
      std::fprintf(stderr,
                   "usage: txn_bench [--txns N] [--keys K] [--processes P] "
                   "[--seed S] [--model M] [--inject] [--history] "
                   "[--no-jsonl] [--jsonl-out FILE]\n");
      return false;
    }
  }
  if (o.txns < 1 || o.keys < 1 || o.processes < 1) {
    std::fprintf(stderr,
                 "txn_bench: --txns, --keys, --processes must be >= 1\n");
    return false;
  }
  return true;
}

// Writes events as JSONL lines to a file (--jsonl-out), buffered.
class JsonlOut {
 public:
  explicit JsonlOut(const std::string& path)
      : f_(path.empty() ? nullptr : std::fopen(path.c_str(), "w")) {}
  JsonlOut(const JsonlOut&) = delete;
  JsonlOut& operator=(const JsonlOut&) = delete;
  ~JsonlOut() { Close(); }
  bool failed(const std::string& path) const {
    return !path.empty() && f_ == nullptr;
  }
  void Write(const fc::Event& e) {
    if (f_ == nullptr) return;
    buf_ += fc::ToJsonLine(e);
    buf_ += '\n';
    if (buf_.size() >= (1u << 20)) Flush();
  }
  void Close() {
    if (f_ == nullptr) return;
    Flush();
    std::fclose(f_);
    f_ = nullptr;
  }

 private:
  void Flush() {
    std::fwrite(buf_.data(), 1, buf_.size(), f_);
    buf_.clear();
  }
  std::FILE* f_;
  std::string buf_;
};

void PrintHeader(const Options& o, std::size_t events, std::int64_t keys) {
  std::printf("txns: %zu\nevents: %zu\nkeys: %lld\nprocesses: %d\n", events / 2,
              events, static_cast<long long>(keys), o.processes);
  std::printf("injected: %s\nmodel: %s\n", o.inject ? "G-single" : "none",
              o.model.c_str());
}

void PrintVerdict(const fc::Verdict& v, double check, double cpu, double txns) {
  std::printf("verdict: %s\nsummary: %s\n",
              std::string(fc::ToString(v.validity)).c_str(), v.summary.c_str());
  std::printf("check_seconds: %.3f\n", check);
  std::printf("check_cpu_seconds: %.3f\n", cpu);
  std::printf("check_txns_per_second: %.0f\n", check > 0 ? txns / check : 0);
  std::printf("peak_rss_mb_after_check: %.1f\n", PeakRssMb());
  std::fflush(stdout);
}

// The default path: generated events fed in batches to a builder.
int RunStreaming(const Options& o) {
  fc::txn::TxnOptions opts;
  opts.consistency_model = o.model;
  JsonlOut out(o.jsonl_out);
  if (out.failed(o.jsonl_out)) {
    std::fprintf(stderr, "txn_bench: cannot write %s\n", o.jsonl_out.c_str());
    return 2;
  }
  fc::txn::TxnHistoryBuilder builder(fc::txn::Workload::kListAppend);
  builder.Reserve(static_cast<std::size_t>(o.txns) * 2 + (o.inject ? 6 : 0));
  constexpr std::size_t kBatch = 4096;
  std::vector<fc::Event> batch;
  batch.reserve(kBatch);
  double add_seconds = 0;
  double add_cpu = 0;
  auto feed = [&] {
    const double c0 = CpuSeconds();
    const auto t0 = Clock::now();
    for (const fc::Event& e : batch) builder.Add(e);
    add_seconds += Seconds(t0, Clock::now());
    add_cpu += CpuSeconds() - c0;
    batch.clear();
  };
  const auto t0 = Clock::now();
  ListAppendGen gen(o);
  gen.Run([&](fc::Event&& e) {
    out.Write(e);
    batch.push_back(std::move(e));
    if (batch.size() == kBatch) feed();
  });
  feed();
  out.Close();
  const auto t1 = Clock::now();
  const std::size_t events = builder.events();
  PrintHeader(o, events, gen.keys_used());
  std::printf("path: streaming (no History)\n");
  std::printf("generate_and_add_seconds: %.3f\n", Seconds(t0, t1));
  std::printf("add_seconds: %.3f\n", add_seconds);
  std::printf("peak_rss_mb_after_add: %.1f\n", PeakRssMb());
  std::fflush(stdout);
  const double c2 = CpuSeconds();
  const auto t2 = Clock::now();
  fc::Verdict v = builder.Finish(opts);
  const auto t3 = Clock::now();
  const double c3 = CpuSeconds();
  std::printf("finish_seconds: %.3f\n", Seconds(t2, t3));
  PrintVerdict(v, add_seconds + Seconds(t2, t3), add_cpu + (c3 - c2),
               static_cast<double>(events / 2));
  return v.validity == fc::Validity::kInvalid ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, o)) return 2;
  if (!o.history) return RunStreaming(o);

  auto t0 = Clock::now();
  ListAppendGen gen(o);
  fc::History history;
  history.reserve(static_cast<std::size_t>(o.txns) * 2 + 16);
  gen.Run([&](fc::Event&& e) { history.push_back(std::move(e)); });
  auto t1 = Clock::now();
  const auto txns = static_cast<double>(history.size() / 2);
  PrintHeader(o, history.size(), gen.keys_used());
  std::printf("path: history\n");
  std::printf("generate_seconds: %.3f\n", Seconds(t0, t1));
  std::printf("peak_rss_mb_after_generate: %.1f\n", PeakRssMb());
  std::fflush(stdout);
  if (!o.jsonl_out.empty()) {
    JsonlOut out(o.jsonl_out);
    for (const fc::Event& e : history) out.Write(e);
  }

  fc::txn::TxnOptions opts;
  opts.consistency_model = o.model;
  const double c2 = CpuSeconds();
  auto t2 = Clock::now();
  fc::Verdict v = fc::txn::CheckListAppend(history, opts);
  auto t3 = Clock::now();
  const double c3 = CpuSeconds();
  PrintVerdict(v, Seconds(t2, t3), c3 - c2, txns);
  if (!o.jsonl) return v.validity == fc::Validity::kInvalid ? 1 : 0;

  auto t4 = Clock::now();
  std::string text;
  for (const fc::Event& e : history) {
    text += fc::ToJsonLine(e);
    text += '\n';
  }
  auto t5 = Clock::now();
  const std::size_t events = history.size();
  fc::History().swap(history);  // the parsed copy replaces it
  const double c6 = CpuSeconds();
  auto t6 = Clock::now();
  fc::ReadResult parsed = fc::ParseJsonl(text);
  auto t7 = Clock::now();
  const double c7 = CpuSeconds();
  std::printf("jsonl_bytes: %zu\n", text.size());
  std::printf("jsonl_write_seconds: %.3f\n", Seconds(t4, t5));
  std::printf("jsonl_parse_seconds: %.3f\n", Seconds(t6, t7));
  std::printf("jsonl_parse_cpu_seconds: %.3f\n", c7 - c6);
  std::printf("jsonl_parse_ok: %s\n",
              parsed.ok && parsed.history.size() == events ? "yes" : "no");
  if (!parsed.ok) {
    std::printf("jsonl_parse_error: %s\n", fc::ToString(parsed.error).c_str());
  }
  std::printf("peak_rss_mb_after_parse: %.1f\n", PeakRssMb());
  return v.validity == fc::Validity::kInvalid ? 1 : 0;
}

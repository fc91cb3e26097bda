// Simulated register histories (see sim.h).
#include "checkers/sim.h"

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

namespace faultline::checkers {
namespace {

enum class Kind { kRead, kWrite, kCas };

struct SimOp {
  Kind kind = Kind::kRead;
  int key = 0;
  std::int64_t process = 0;
  std::int64_t call = 0, ret = 0, point = 0;
  Value arg;     // write value, or [expected, new]
  Value result;  // read result
  bool crashed = false, pending = false, refused = false;
  bool cas_ok = false;
  bool lost = false, delayed = false, stale = false;
};

struct Timed {
  std::int64_t time;
  int order;  // invokes (0) before completions (1) at equal time
  std::int64_t seq;
  Event event;
};

}  // namespace

History Simulate(const SimOptions& o) {
  std::mt19937_64 rng(o.seed);
  auto uni = [&](std::int64_t lo, std::int64_t hi) {  // inclusive
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) {
    return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < p;
  };
  bool cas = o.model == "cas-register";
  int procs = std::max(1, o.processes);
  int keys = std::max(1, o.keys);

  // Generate intervals per process slot; a crash retires the process id.
  std::vector<std::int64_t> clock(procs, 0), pid(procs);
  for (int i = 0; i < procs; ++i) pid[i] = i;
  std::int64_t next_pid = procs;
  std::int64_t next_value = 1;
  std::vector<std::vector<Value>> written(keys);
  std::vector<SimOp> ops;
  ops.reserve(static_cast<std::size_t>(o.ops));
  for (std::int64_t n = 0; n < o.ops; ++n) {
    // The slot that is free earliest goes next (keeps clocks balanced).
    int s = static_cast<int>(std::min_element(clock.begin(), clock.end()) -
                             clock.begin());
    SimOp op;
    op.process = pid[s];
    op.key = static_cast<int>(uni(0, keys - 1));
    op.call = clock[s] + uni(1, std::max<std::int64_t>(1, o.max_gap));
    op.ret = op.call + uni(1, std::max<std::int64_t>(1, o.max_latency));
    op.point = uni(op.call, op.ret);
    auto fresh = [&]() -> Value {
      if (o.unique_values) return Value::Int(next_value++);
      return Value::Int(uni(0, std::max(1, o.value_range) - 1));
    };
    double r = std::uniform_real_distribution<double>(0, 1)(rng);
    if (r < o.read_ratio) {
      op.kind = Kind::kRead;
    } else if (cas && r < o.read_ratio + o.cas_ratio) {
      op.kind = Kind::kCas;
      auto& w = written[op.key];
      Value expected;
      if (!w.empty() && !chance(0.15)) {
        expected = w[w.size() - 1 -
                     static_cast<std::size_t>(uni(
                         0, std::min<std::int64_t>(
                                2, static_cast<std::int64_t>(w.size()) - 1)))];
      }
      Value nv = fresh();
      w.push_back(nv);
      op.arg = Value::MakeList({expected, nv});
    } else {
      op.kind = Kind::kWrite;
      op.arg = fresh();
      written[op.key].push_back(op.arg);
      if (chance(o.fail_rate)) op.refused = true;
    }
    if (!op.refused && chance(o.info_rate)) {
      op.crashed = true;
      op.pending = chance(o.pending_share);
      pid[s] = next_pid++;
    }
    if (op.kind == Kind::kWrite && !op.crashed && !op.refused &&
        chance(o.lost_write_rate)) {
      op.lost = true;
    }
    if (op.kind == Kind::kWrite && !op.refused && chance(o.reorder_rate)) {
      op.delayed = true;
    }
    if (op.kind == Kind::kRead && chance(o.stale_read_rate)) op.stale = true;
    clock[s] = op.ret;
    ops.push_back(std::move(op));
  }

  // Apply effects in linearization-point order.
  std::vector<std::size_t> by_point(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) by_point[i] = i;
  std::stable_sort(by_point.begin(), by_point.end(),
                   [&](std::size_t a, std::size_t b) {
                     return ops[a].point < ops[b].point;
                   });
  std::vector<Value> reg(keys);
  std::vector<std::vector<Value>> history_of(keys);
  std::vector<std::optional<Value>> held(keys);  // a delayed write's value
  auto set = [&](int k, const Value& v) {
    reg[k] = v;
    history_of[k].push_back(v);
  };
  for (std::size_t i : by_point) {
    SimOp& op = ops[i];
    if (op.refused) continue;
    bool takes_effect = !op.crashed || chance(0.5);
    switch (op.kind) {
      case Kind::kRead:
        op.result = reg[op.key];
        if (op.stale && !history_of[op.key].empty()) {
          // Any earlier value, the initial null included.
          auto& h = history_of[op.key];
          auto pick = uni(0, static_cast<std::int64_t>(h.size()) - 1);
          op.result =
              pick == 0 ? Value() : h[static_cast<std::size_t>(pick - 1)];
        }
        break;
      case Kind::kWrite:
        if (!takes_effect || op.lost) break;
        if (op.delayed && !held[op.key]) {
          held[op.key] = op.arg;
          break;
        }
        set(op.key, op.arg);
        if (held[op.key]) {
          set(op.key, *held[op.key]);
          held[op.key].reset();
        }
        break;
      case Kind::kCas:
        op.cas_ok = reg[op.key] == op.arg.as_list()[0];
        if (op.cas_ok && takes_effect) set(op.key, op.arg.as_list()[1]);
        break;
    }
  }

  std::vector<Timed> timed;
  timed.reserve(ops.size() * 2 + 8);
  std::int64_t seq = 0;
  auto key_of = [&](int k) {
    return keys == 1 ? Value() : Value::String("k" + std::to_string(k));
  };
  const char* names[] = {"read", "write", "cas"};
  for (const SimOp& op : ops) {
    Event inv;
    inv.process = op.process;
    inv.type = EventType::kInvoke;
    inv.f = names[static_cast<int>(op.kind)];
    inv.key = key_of(op.key);
    inv.value = op.kind == Kind::kRead ? Value() : op.arg;
    Event done = inv;
    timed.push_back({op.call, 0, seq++, std::move(inv)});
    if (op.pending) continue;
    if (op.refused || (op.kind == Kind::kCas && !op.cas_ok && !op.crashed)) {
      done.type = EventType::kFail;
      done.error = op.refused ? "refused" : "compare-failed";
    } else if (op.crashed) {
      done.type = EventType::kInfo;
      done.error = "timeout";
    } else {
      done.type = EventType::kOk;
      if (op.kind == Kind::kRead) done.value = op.result;
    }
    timed.push_back({op.ret, 1, seq++, std::move(done)});
  }
  std::int64_t end = 0;
  for (const Timed& t : timed) end = std::max(end, t.time);
  if (o.nemesis_rate > 0) {
    auto count =
        static_cast<std::int64_t>(o.nemesis_rate * static_cast<double>(o.ops));
    for (std::int64_t i = 0; i < count; ++i) {
      Event e;
      e.process = kNemesisProcess;
      e.type = i % 2 == 0 ? EventType::kInvoke : EventType::kInfo;
      e.f = i % 2 == 0 ? "start-partition" : "stop-partition";
      timed.push_back(
          {uni(0, end), e.is_invoke() ? 0 : 1, seq++, std::move(e)});
    }
  }
  // Sort positions, not the (large) events; seq makes the order total.
  std::vector<std::size_t> order(timed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Timed& a = timed[x];
    const Timed& b = timed[y];
    if (a.time != b.time) return a.time < b.time;
    if (a.order != b.order) return a.order < b.order;
    return a.seq < b.seq;
  });
  History h;
  h.reserve(timed.size());
  for (std::size_t i : order) {
    Timed& t = timed[i];
    t.event.index = static_cast<std::int64_t>(h.size());
    if (o.with_time) t.event.time = t.time;
    h.push_back(std::move(t.event));
  }
  return h;
}

}  // namespace faultline::checkers

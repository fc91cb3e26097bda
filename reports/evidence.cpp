// Evidence that a run could find anything; see evidence.h for the rules.
#include "reports/evidence.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

namespace faultline::reports {
namespace {

using checkers::Event;
using checkers::EventType;
using checkers::Value;

struct Op {
  std::int64_t invoked_at = 0;
  std::optional<std::int64_t> done_at;  // absent: never completed
  EventType type = EventType::kInfo;    // kInfo when never completed
  std::string f;
  std::string error;
};

std::int64_t At(const Event& e, bool timed) {
  return timed && e.time ? *e.time : e.index;
}

void Count(PhaseCounts& c, EventType t) {
  if (t == EventType::kOk) {
    ++c.ok;
  } else if (t == EventType::kFail) {
    ++c.fail;
  } else {
    ++c.info;
  }
}

// A compare that did not match is an answer, not an error: a `fail`
// without error, or with the error "mismatch" that every target's client
// writes for it.
bool IsError(const Op& op) {
  return op.type == EventType::kInfo ||
         (op.type == EventType::kFail && !op.error.empty() &&
          op.error != "mismatch");
}

std::optional<std::int64_t> Number(const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.kind() == Value::Kind::kDouble)
    return static_cast<std::int64_t>(v.as_double());
  return std::nullopt;
}

// The largest |n| of an object's numeric fields, or nullopt.
std::optional<std::int64_t> MaxAbs(const Value* v) {
  if (v == nullptr || !v->is_object()) return std::nullopt;
  std::optional<std::int64_t> best;
  for (const auto& [k, x] : v->as_object()) {
    (void)k;
    if (auto n = Number(x)) best = std::max(best.value_or(0), std::abs(*n));
  }
  return best;
}

std::vector<std::string> Targets(const Value& start) {
  std::vector<std::string> out;
  auto names = [](const Value& list) {
    std::string s;
    if (!list.is_list()) return s;
    for (const Value& n : list.as_list()) {
      if (!n.is_string()) continue;
      s += (s.empty() ? "" : ",") + n.as_string();
    }
    return s;
  };
  if (const Value* c = start.Find("components"); c && c->is_list()) {
    for (const Value& comp : c->as_list()) out.push_back(names(comp));
    return out;
  }
  for (const char* field : {"nodes", "moved"}) {
    const Value* n = start.Find(field);
    if (n == nullptr || !n->is_list()) continue;
    for (const Value& x : n->as_list())
      if (x.is_string()) out.push_back(x.as_string());
    return out;
  }
  return out;
}

std::string Thousands(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", share * 100.0);
  return buf;
}

// Decides whether `f` bit and why, given the error share outside windows.
void Judge(FaultEvidence& f, double outside_share) {
  if (f.packets_dropped && *f.packets_dropped > 0) {
    f.signs.push_back(Thousands(*f.packets_dropped) + " packets dropped");
  }
  const std::int64_t n = f.in_window.total();
  if (f.errors > 0 && n > 0) {
    double share = static_cast<double>(f.errors) / static_cast<double>(n);
    if (share > outside_share) {
      std::string s = Thousands(f.errors) + " of " + Thousands(n) +
                      " requests failed or timed out (" + Percent(share) +
                      " vs " + Percent(outside_share) + " outside faults)";
      f.signs.push_back(s);
    }
  }
  if (f.leader_changes > 0) {
    f.signs.push_back(std::to_string(f.leader_changes) + " leader change" +
                      (f.leader_changes == 1 ? "" : "s"));
  }
  if (f.clock_observed_ms && *f.clock_observed_ms >= 1) {
    f.signs.push_back("clock offset of " + Thousands(*f.clock_observed_ms) +
                      " ms observed");
  }
  f.bit = !f.signs.empty();
}

}  // namespace

int Evidence::faults_bit() const {
  return static_cast<int>(
      std::count_if(faults.begin(), faults.end(),
                    [](const FaultEvidence& f) { return f.bit; }));
}

std::optional<double> Evidence::cas_share() const {
  if (cas_completed == 0) return std::nullopt;
  return static_cast<double>(cas_ok) / static_cast<double>(cas_completed);
}

std::string TargetsLabel(const FaultEvidence& f) {
  std::string out;
  for (const auto& t : f.targets) out += (out.empty() ? "" : "|") + t;
  return out;
}

Evidence ComputeEvidence(const checkers::History& history) {
  Evidence ev;
  ev.timed = !history.empty() &&
             std::all_of(history.begin(), history.end(),
                         [](const Event& e) { return e.time.has_value(); });
  const bool timed = ev.timed;

  // Fault windows, leader sightings and client operations in one pass.
  std::map<std::string, std::deque<std::size_t>> open_faults;
  std::vector<Op> workload_ops;
  std::unordered_map<std::int64_t, std::pair<std::size_t, int>> open_ops;
  // int: 0 workload, 1 final, 2 observer
  std::vector<Op> all_ops;
  std::vector<int> op_phase;
  std::set<std::string> leader_keys;
  std::vector<std::int64_t> leader_changes;  // times
  for (const Event& e : history) {
    if (e.is_nemesis()) {
      if (e.type != EventType::kInfo) continue;
      const bool starts = e.f.rfind("start-", 0) == 0;
      const bool stops = e.f.rfind("stop-", 0) == 0;
      if (!starts && !stops) continue;
      std::string kind = e.f.substr(starts ? 6 : 5);
      auto& q = open_faults[kind];
      if (starts && e.error.empty()) {
        FaultEvidence f;
        f.kind = kind;
        f.targets = Targets(e.value);
        f.start = At(e, timed);
        if (auto m = MaxAbs(e.value.Find("clock_ms"))) {
          f.clock_applied_ms = m;
        } else if (const Value* o = e.value.Find("offset_ms")) {
          if (auto n = Number(*o)) f.clock_applied_ms = std::abs(*n);
        }
        q.push_back(ev.faults.size());
        ev.faults.push_back(std::move(f));
      } else if (stops && !q.empty()) {
        FaultEvidence& f = ev.faults[q.front()];
        q.pop_front();
        f.end = At(e, timed);
        if (const Value* d = e.value.Find("dropped"); d && d->is_object()) {
          std::int64_t sum = 0;
          for (const auto& [node, n] : d->as_object()) {
            (void)node;
            sum += Number(n).value_or(0);
          }
          f.packets_dropped = sum;
        }
        f.clock_observed_ms = MaxAbs(e.value.Find("offset_ms"));
      }
      continue;
    }
    if (e.is_invoke()) {
      int phase = e.f == "observe" ? 2 : 0;
      if (const Value* p = e.FindExtra("phase");
          p && p->is_string() && p->as_string() == "final")
        phase = 1;
      Op op;
      op.invoked_at = At(e, timed);
      op.f = e.f;
      open_ops[e.process] = {all_ops.size(), phase};
      all_ops.push_back(std::move(op));
      op_phase.push_back(phase);
      continue;
    }
    auto it = open_ops.find(e.process);
    if (it == open_ops.end()) continue;  // a completion without invoke
    Op& op = all_ops[it->second.first];
    op.done_at = At(e, timed);
    op.type = e.type;
    op.error = e.error;
    open_ops.erase(it);
    if (e.f == "observe" && e.type == EventType::kOk) {
      const Value* leader = e.value.Find("leader");
      const Value* term = e.value.Find("term");
      if (leader && leader->is_string()) {
        std::string key = term && term->is_int()
                              ? "t" + std::to_string(term->as_int())
                              : "l" + leader->as_string();
        if (leader_keys.insert(key).second && leader_keys.size() > 1)
          leader_changes.push_back(At(e, timed));
      }
    }
  }
  const std::int64_t history_end =
      history.empty() ? 0 : At(history.back(), timed);

  for (std::size_t i = 0; i < all_ops.size(); ++i) {
    const Op& op = all_ops[i];
    if (op_phase[i] == 1) {
      Count(ev.final_reads, op.type);
      continue;
    }
    if (op_phase[i] == 2) {
      Count(ev.observer, op.type);
      continue;
    }
    Count(ev.workload, op.type);
    if (op.f == "cas") {
      ++ev.cas_completed;
      if (op.type == EventType::kOk) ++ev.cas_ok;
    }
    const std::int64_t done = op.done_at.value_or(history_end);
    bool in_any = false;
    for (FaultEvidence& f : ev.faults) {
      const std::int64_t start = f.start.value_or(0);
      const std::int64_t end = f.end.value_or(history_end);
      if (op.invoked_at >= start && op.invoked_at <= end) ++f.invoked;
      if (op.invoked_at > end || done < start) continue;
      in_any = true;
      Count(f.in_window, op.type);
      if (IsError(op)) {
        ++f.errors;
        if (op.error.find("timeout") != std::string::npos) ++f.timeouts;
      }
    }
    if (!in_any) Count(ev.outside, op.type);
  }
  std::int64_t outside_errors = 0;
  for (std::size_t i = 0; i < all_ops.size(); ++i) {
    if (op_phase[i] != 0 || !IsError(all_ops[i])) continue;
    const Op& op = all_ops[i];
    const std::int64_t done = op.done_at.value_or(history_end);
    bool in_any = std::any_of(
        ev.faults.begin(), ev.faults.end(), [&](const FaultEvidence& f) {
          return op.invoked_at <= f.end.value_or(history_end) &&
                 done >= f.start.value_or(0);
        });
    if (!in_any) ++outside_errors;
  }
  const double outside_share = ev.outside.total() > 0
                                   ? static_cast<double>(outside_errors) /
                                         static_cast<double>(ev.outside.total())
                                   : 0.0;
  for (FaultEvidence& f : ev.faults) {
    const std::int64_t start = f.start.value_or(0);
    const std::int64_t end = f.end.value_or(history_end);
    f.leader_changes =
        std::count_if(leader_changes.begin(), leader_changes.end(),
                      [&](std::int64_t t) { return t >= start && t <= end; });
    Judge(f, outside_share);
  }

  if (ev.faults.empty()) {
    ev.weak_reasons.push_back("no fault was applied");
  } else if (ev.faults_bit() == 0) {
    ev.weak_reasons.push_back("no fault had a visible effect");
  }
  if (ev.workload.ok < kWeakMinOkOps) {
    ev.weak_reasons.push_back(
        "the workload barely ran: " + Thousands(ev.workload.ok) +
        " ok operations (fewer than " + std::to_string(kWeakMinOkOps) + ")");
  }
  if (ev.cas_completed > 0 && ev.cas_ok == 0) {
    ev.weak_reasons.push_back("no compare-and-set succeeded (" +
                              Thousands(ev.cas_completed) + " tried)");
  }
  ev.weak = !ev.weak_reasons.empty();
  return ev;
}

namespace {

nlohmann::json CountsJson(const PhaseCounts& c) {
  return {{"ok", c.ok}, {"fail", c.fail}, {"info", c.info}};
}

PhaseCounts CountsFrom(const nlohmann::json& j) {
  PhaseCounts c;
  if (!j.is_object()) return c;
  auto get = [&](const char* k) -> std::int64_t {
    auto it = j.find(k);
    return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>()
                                                    : 0;
  };
  c.ok = get("ok");
  c.fail = get("fail");
  c.info = get("info");
  return c;
}

nlohmann::json OptJson(const std::optional<std::int64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<std::int64_t> OptFrom(const nlohmann::json& j, const char* k) {
  auto it = j.find(k);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

std::string EvidenceToJson(const Evidence& e) {
  using nlohmann::json;
  json faults = json::array();
  for (const FaultEvidence& f : e.faults) {
    faults.push_back({{"kind", f.kind},
                      {"targets", f.targets},
                      {"start", OptJson(f.start)},
                      {"end", OptJson(f.end)},
                      {"invoked", f.invoked},
                      {"in_window", CountsJson(f.in_window)},
                      {"errors", f.errors},
                      {"timeouts", f.timeouts},
                      {"packets_dropped", OptJson(f.packets_dropped)},
                      {"leader_changes", f.leader_changes},
                      {"clock_applied_ms", OptJson(f.clock_applied_ms)},
                      {"clock_observed_ms", OptJson(f.clock_observed_ms)},
                      {"bit", f.bit},
                      {"signs", f.signs}});
  }
  auto share = e.cas_share();
  json j = {{"unit", e.timed ? "ns" : "index"},
            {"faults", std::move(faults)},
            {"faults_bit", e.faults_bit()},
            {"outside", CountsJson(e.outside)},
            {"ops",
             {{"workload", CountsJson(e.workload)},
              {"final", CountsJson(e.final_reads)},
              {"observer", CountsJson(e.observer)}}},
            {"cas",
             {{"ok", e.cas_ok},
              {"completed", e.cas_completed},
              {"share", share ? json(*share) : json(nullptr)}}},
            {"weak", e.weak},
            {"weak_reasons", e.weak_reasons}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Evidence> EvidenceFromJson(const std::string& text) {
  using nlohmann::json;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  Evidence e;
  auto strings = [](const json& o, const char* k) {
    std::vector<std::string> out;
    auto it = o.find(k);
    if (it == o.end() || !it->is_array()) return out;
    for (const auto& s : *it)
      if (s.is_string()) out.push_back(s.get<std::string>());
    return out;
  };
  e.timed = !(j.contains("unit") && j["unit"] == "index");
  if (j.contains("faults") && j["faults"].is_array()) {
    for (const auto& x : j["faults"]) {
      if (!x.is_object()) continue;
      FaultEvidence f;
      if (x.contains("kind") && x["kind"].is_string())
        f.kind = x["kind"].get<std::string>();
      f.targets = strings(x, "targets");
      f.start = OptFrom(x, "start");
      f.end = OptFrom(x, "end");
      f.invoked = OptFrom(x, "invoked").value_or(0);
      if (x.contains("in_window")) f.in_window = CountsFrom(x["in_window"]);
      f.errors = OptFrom(x, "errors").value_or(0);
      f.timeouts = OptFrom(x, "timeouts").value_or(0);
      f.packets_dropped = OptFrom(x, "packets_dropped");
      f.leader_changes = OptFrom(x, "leader_changes").value_or(0);
      f.clock_applied_ms = OptFrom(x, "clock_applied_ms");
      f.clock_observed_ms = OptFrom(x, "clock_observed_ms");
      f.bit =
          x.contains("bit") && x["bit"].is_boolean() && x["bit"].get<bool>();
      f.signs = strings(x, "signs");
      e.faults.push_back(std::move(f));
    }
  }
  if (j.contains("outside")) e.outside = CountsFrom(j["outside"]);
  if (j.contains("ops") && j["ops"].is_object()) {
    const json& o = j["ops"];
    if (o.contains("workload")) e.workload = CountsFrom(o["workload"]);
    if (o.contains("final")) e.final_reads = CountsFrom(o["final"]);
    if (o.contains("observer")) e.observer = CountsFrom(o["observer"]);
  }
  if (j.contains("cas") && j["cas"].is_object()) {
    e.cas_ok = OptFrom(j["cas"], "ok").value_or(0);
    e.cas_completed = OptFrom(j["cas"], "completed").value_or(0);
  }
  e.weak =
      j.contains("weak") && j["weak"].is_boolean() && j["weak"].get<bool>();
  e.weak_reasons = strings(j, "weak_reasons");
  return e;
}

std::string EvidenceLines(const Evidence& e) {
  std::string line = "evidence: " + std::to_string(e.faults.size()) + " fault" +
                     (e.faults.size() == 1 ? "" : "s") + ", " +
                     std::to_string(e.faults_bit()) + " bit";
  // The strongest sign of each fault that bit, at most three faults.
  std::string bits;
  int shown = 0;
  for (const FaultEvidence& f : e.faults) {
    if (!f.bit) continue;
    if (++shown > 3) {
      bits += "; ...";
      break;
    }
    bits += (bits.empty() ? "" : "; ") + f.kind + ": " + f.signs.front();
  }
  if (!bits.empty()) line += " (" + bits + ")";
  line += "; " + Thousands(e.workload.ok) + " ok ops";
  if (e.final_reads.total() > 0 || e.observer.total() > 0) {
    line += " (+ " + Thousands(e.final_reads.total()) + " final reads, " +
            Thousands(e.observer.total()) + " observer reads)";
  }
  if (auto share = e.cas_share()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f %%", *share * 100.0);
    line += std::string("; CAS ") + buf + " ok";
  }
  line += "\n";
  if (e.weak) {
    line += "WEAK RUN: ";
    for (std::size_t i = 0; i < e.weak_reasons.size(); ++i)
      line += (i ? "; " : "") + e.weak_reasons[i];
    line +=
        " (the verdict stands, but this run could hardly have found a "
        "bug)\n";
  }
  return line;
}

}  // namespace faultline::reports

// The context of a linearizability violation (violation_context.h): fault
// spans from the nemesis events, the kind of the violation, the sentences
// that lead the explanation and their JSON.
#include "checkers/violation_context.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <unordered_set>

#include "checkers/value_ids.h"

namespace faultline::checkers::linear {
namespace {

constexpr std::int64_t kLast = std::numeric_limits<std::int64_t>::max();

double Num(const Value& v) {
  if (v.is_int()) return static_cast<double>(v.as_int());
  if (v.kind() == Value::Kind::kDouble) return v.as_double();
  return 0;
}

std::string Trim(double d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", d);
  return buf;
}

std::vector<std::string> Strings(const Value* list) {
  std::vector<std::string> out;
  if (list == nullptr || !list->is_list()) return out;
  for (const Value& v : list->as_list()) {
    if (v.is_string()) out.push_back(v.as_string());
  }
  return out;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

// "14.60 s", or "event 4235" when the history has no times.
std::string When(const Event* e) {
  if (e == nullptr) return "an unknown time";
  if (e->time) return Seconds(*e->time);
  return "event " + std::to_string(e->index);
}

void AppendSecondsOrNull(std::string& j, const Event* e) {
  if (e == nullptr || !e->time) {
    j += "null";
    return;
  }
  std::string frac = std::to_string(*e->time % 1000000000);
  while (frac.size() < 9) frac.insert(frac.begin(), '0');
  j += std::to_string(*e->time / 1000000000) + "." + frac;
}

// {"invoke_index":..,"invoke_s":..,"index":..,"s":..}
void AppendEdge(std::string& j, const Event* invoke, const Event* done) {
  j += "{\"invoke_index\":";
  j += invoke != nullptr ? std::to_string(invoke->index) : "null";
  j += ",\"invoke_s\":";
  AppendSecondsOrNull(j, invoke);
  j += ",\"index\":";
  j += done != nullptr ? std::to_string(done->index) : "null";
  j += ",\"s\":";
  AppendSecondsOrNull(j, done);
  j += "}";
}

// The event indexes an op spans: its invoke to its completion (or the end).
std::pair<std::int64_t, std::int64_t> Span(const Op& op) {
  std::int64_t last = op.complete_index >= 0 ? op.complete_index : kLast;
  return {op.invoke_index(), last};
}

// The part of a partition's ops the kind rules look at.
struct Flows {
  std::vector<std::optional<ValueFlow>> of;  // per partition op
  bool all = false;                          // every op has a flow
};

Flows FlowsOf(const Partition& p, const Model& model) {
  Flows f;
  f.of.resize(p.ops.size());
  f.all = !p.ops.empty();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    f.of[i] = model.Flow(p.ops[i].Make());
    if (!f.of[i]) f.all = false;
  }
  return f;
}

bool IsRead(const Flows& f, const Op& op, std::size_t i) {
  return f.of[i] && f.of[i]->kind == ValueFlow::Kind::kRead && op.completed();
}

// The facts behind the kind.
struct Facts {
  std::string kind = "no-consistent-order";
  std::size_t read = SIZE_MAX;         // R
  Value value;                         // X
  std::size_t written_by = SIZE_MAX;   // the writer of X that returned last
  bool initial = false;                // X is the initial value, unwritten
  std::vector<std::size_t> overwrote;  // S, by return
  std::vector<std::size_t> lost;       // lost-write: the lost writes of S
  std::size_t later_read = SIZE_MAX;   // stale-read: a later read of a
                                       // newer value
};

Facts Classify(const Partition& p, const Model& model, const Explanation& ex) {
  Facts out;
  Flows f = FlowsOf(p, model);
  if (!f.all) return out;
  for (std::size_t i : ex.rejected) {
    if (IsRead(f, p.ops[i], i)) {
      out.read = i;
      break;
    }
  }
  if (out.read == SIZE_MAX) return out;
  const Op& r = p.ops[out.read];
  out.value = *f.of[out.read]->observes;
  const Value& x = out.value;
  bool is_init = x == model.Init();
  // t_X: by then X had certainly been written.
  std::int64_t t_x = std::numeric_limits<std::int64_t>::min();
  bool producers = false;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const auto& fl = f.of[i];
    if (!fl->produces || !(*fl->produces == x)) continue;
    producers = true;
    t_x = std::max(t_x, p.ops[i].ret);
    if (out.written_by == SIZE_MAX ||
        p.ops[i].ret >= p.ops[out.written_by].ret) {
      out.written_by = i;
    }
  }
  if (!producers && !is_init) {
    out.kind = "never-written";
    return out;
  }
  out.initial = !producers;
  if (t_x == kNever) return out;  // a crashed writer may take effect late
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& w = p.ops[i];
    const auto& fl = f.of[i];
    if (!w.completed() || !fl->produces || *fl->produces == x) continue;
    if (w.call > t_x && w.ret < r.call) out.overwrote.push_back(i);
  }
  if (out.overwrote.empty()) return out;
  std::sort(out.overwrote.begin(), out.overwrote.end(),
            [&](std::size_t a, std::size_t b) {  // by return, stable
              return p.ops[a].ret != p.ops[b].ret ? p.ops[a].ret < p.ops[b].ret
                                                  : a < b;
            });

  // Values as ids; flags per id (observed by an ok op; newer, below).
  ValueIds ids;
  std::vector<char> observed, newer;
  auto flag = [&](std::vector<char>& flags, const Value& v) {
    std::uint32_t id = ids.Add(v);
    if (id >= flags.size()) flags.resize(ids.size() + ids.size() / 2, 0);
    flags[id] = 1;
  };
  auto has = [&](const std::vector<char>& flags, const Value& v) {
    std::uint32_t id = ids.Find(v);
    return id != ValueIds::kNone && id < flags.size() && flags[id] != 0;
  };
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].completed() && f.of[i]->observes) {
      flag(observed, *f.of[i]->observes);
    }
  }
  auto seen = [&](std::size_t i) {
    return f.of[i]->produces && has(observed, *f.of[i]->produces);
  };
  // seen_after[k]: an op at call order k or later, invoked before R, wrote
  // a value that some ok op observed. Ops are sorted by call.
  std::vector<bool> seen_after(p.ops.size() + 1, false);
  for (std::size_t k = p.ops.size(); k-- > 0;) {
    bool here = p.ops[k].call < r.call && k != out.read && seen(k);
    seen_after[k] = seen_after[k + 1] || here;
  }
  for (std::size_t w : out.overwrote) {  // earliest acknowledged first
    if (seen(w) || seen_after[w + 1]) continue;
    out.kind = "lost-write";
    for (std::size_t v : out.overwrote) {
      if (p.ops[v].ret >= p.ops[w].ret && !seen(v)) out.lost.push_back(v);
    }
    return out;
  }
  out.kind = "stale-read";
  // A later read of a value written after X was in place.
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const auto& fl = f.of[i];
    if (fl->produces && !(*fl->produces == x) && p.ops[i].call > t_x) {
      flag(newer, *fl->produces);
    }
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (i == out.read || p.ops[i].call <= r.call) continue;
    if (IsRead(f, p.ops[i], i) && has(newer, *f.of[i]->observes)) {
      out.later_read = i;
      break;
    }
  }
  return out;
}

// The sizes of `node`'s side of a partition and of the whole cluster.
std::pair<std::size_t, std::size_t> Sides(const FaultSpan& f,
                                          const std::string& node) {
  std::size_t total = 0, mine = 0;
  const Value* comps = f.value.Find("components");
  if (comps == nullptr || !comps->is_list()) return {0, 0};
  for (const Value& c : comps->as_list()) {
    std::vector<std::string> names = Strings(&c);
    total += names.size();
    if (std::find(names.begin(), names.end(), node) != names.end()) {
      mine = names.size();
    }
  }
  return {mine, total};
}

// A partition that leaves `node` with the majority does not impair what it
// serves; sentences leave it out (the JSON and the fault lines keep it).
bool OnMajoritySide(const FaultSpan& f, const std::string& node) {
  if (f.kind != "partition") return false;
  auto [mine, total] = Sides(f, node);
  return mine * 2 > total;
}

// The nodes whose part in `f` the text and the effect JSON describe: those
// it acts on, or for a fault on every node, the nodes its partition's
// components name.
std::vector<std::string> Named(const FaultSpan& f) {
  if (!f.nodes.empty()) return f.nodes;
  std::vector<std::string> out;
  const Value* comps = f.value.Find("components");
  if (comps == nullptr || !comps->is_list()) return out;
  for (const Value& c : comps->as_list()) {
    for (std::string& n : Strings(&c)) out.push_back(std::move(n));
  }
  return out;
}

// Builds the text and JSON: the faults on each involved op's node.
class Writer {
 public:
  Writer(const History& history, const Partition& p)
      : p_(p), faults_(FaultSpans(history)) {}

  // Ids of the faults acting on the op's node while it ran.
  std::vector<std::size_t> FaultsOn(const Op& op) {
    std::vector<std::size_t> ids;
    const std::string& node = OpNode(op);
    if (node.empty()) return ids;
    auto [lo, hi] = Span(op);
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      const FaultSpan& s = faults_[i];
      if (s.ActsOn(node) && s.first_index() <= hi && s.last_index() >= lo) {
        ids.push_back(i);
        used_.insert(i);
      }
    }
    return ids;
  }

  // "cut off from the majority since 14.01 s and paused from 2.00 s to
  // 6.00 s", or "".
  std::string Phrase(const Op& op) {
    std::vector<std::string> parts;
    auto [lo, hi] = Span(op);
    for (std::size_t i : FaultsOn(op)) {
      const FaultSpan& s = faults_[i];
      if (OnMajoritySide(s, OpNode(op))) continue;
      std::string part = DescribeFault(s, OpNode(op));
      const Event* from = s.start->index <= hi || s.start_invoke == nullptr
                              ? s.start
                              : s.start_invoke;
      if (s.stop != nullptr && !s.heal_failed && s.stop->index < hi) {
        part += " from " + When(from) + " to " + When(s.stop);
      } else {
        part += " since " + When(from);
      }
      parts.push_back(std::move(part));
    }
    return Join(parts);
  }

  // "n2, cut off from the majority since 14.01 s," or "n2" or "p7".
  std::string Subject(const Op& op, bool comma) {
    const std::string& node = OpNode(op);
    if (node.empty()) return "p" + std::to_string(op.process());
    std::string ph = Phrase(op);
    if (ph.empty()) return node;
    return comma ? node + ", " + ph + "," : node + " (" + ph + ")";
  }

  // " by n1 (paused since 2.00 s)", or "" when the node is unknown.
  std::string By(const Op& op) {
    if (OpNode(op).empty()) return "";
    return " by " + Subject(op, false);
  }

  // "47 was written by p4 through n2, acknowledged at 3.10 s" or "null is
  // the initial value".
  std::string Origin(const Facts& k) {
    std::string x = k.value.ToJson();
    if (k.initial) return x + " is the initial value";
    const Op& w = p_.ops[k.written_by];
    std::string out = x + " was written by p" + std::to_string(w.process());
    if (!OpNode(w).empty()) out += " through " + OpNode(w);
    if (w.completed()) return out + ", acknowledged at " + When(w.ok);
    return out + " (invoked at " + When(w.inv) + ", outcome unknown)";
  }

  void Involve(const char* role, std::size_t op) {
    if (op != SIZE_MAX) involved_.emplace_back(role, op);
  }

  // ,"involved":[..],"faults":[..]; also lists the faults overlapping the
  // events from `lo` to `hi`, for shading.
  std::string Json(std::int64_t lo, std::int64_t hi) {
    std::string j = ",\"involved\":[";
    for (std::size_t k = 0; k < involved_.size(); ++k) {
      const Op& op = p_.ops[involved_[k].second];
      if (k > 0) j += ",";
      j += "{\"role\":\"" + std::string(involved_[k].first) + "\",\"op\":";
      AppendOpJson(j, op);
      j += ",\"faults\":[";
      std::vector<std::size_t> ids = FaultsOn(op);
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) j += ",";
        j += std::to_string(ids[i]);
      }
      j += "]}";
    }
    j += "],\"faults\":[";
    bool first = true;
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      const FaultSpan& s = faults_[i];
      bool overlaps = s.first_index() <= hi && s.last_index() >= lo;
      if (!overlaps && used_.count(i) == 0) continue;
      if (!first) j += ",";
      first = false;
      j += "{\"id\":" + std::to_string(i) + ",\"kind\":";
      AppendJsonString(j, s.kind);
      j += ",\"nodes\":[";
      for (std::size_t n = 0; n < s.nodes.size(); ++n) {
        if (n > 0) j += ",";
        AppendJsonString(j, s.nodes[n]);
      }
      j += "],\"effect\":{";
      std::vector<std::string> named = Named(s);
      for (std::size_t n = 0; n < named.size(); ++n) {
        if (n > 0) j += ",";
        AppendJsonString(j, named[n]);
        j += ":";
        AppendJsonString(j, DescribeFault(s, named[n]));
      }
      j += "},\"start\":";
      AppendEdge(j, s.start_invoke, s.start);
      j += ",\"end\":";
      if (s.stop == nullptr) {
        j += "null";
      } else {
        AppendEdge(j, s.stop_invoke, s.stop);
      }
      j += ",\"heal_failed\":";
      j += s.heal_failed ? "true" : "false";
      j += ",\"value\":";
      s.value.AppendJson(j);
      j += "}";
    }
    j += "]";
    return j;
  }

  // One line per fault listed by Json, for the text.
  std::string Lines(std::int64_t lo, std::int64_t hi) {
    std::string t;
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      const FaultSpan& s = faults_[i];
      bool overlaps = s.first_index() <= hi && s.last_index() >= lo;
      if (!overlaps && used_.count(i) == 0) continue;
      std::vector<std::string> effects;
      for (const std::string& n : Named(s)) {
        effects.push_back(n + " " + DescribeFault(s, n));
      }
      t += "  " + s.kind + ": " +
           (effects.empty() ? std::string("every node") : Join(effects)) +
           "; started " + When(s.start);
      if (s.start_invoke != nullptr) {
        t += " (invoked " + When(s.start_invoke) + ", events " +
             std::to_string(s.start_invoke->index) + ", " +
             std::to_string(s.start->index) + ")";
      }
      if (s.stop == nullptr) {
        t += ", still in force at the end of the history";
      } else {
        t += std::string(s.heal_failed ? ", heal failed at " : ", ended ") +
             When(s.stop);
        if (s.stop_invoke != nullptr) {
          t += " (invoked " + When(s.stop_invoke) + ", events " +
               std::to_string(s.stop_invoke->index) + ", " +
               std::to_string(s.stop->index) + ")";
        }
      }
      t += "\n";
    }
    return t;
  }

 private:
  const Partition& p_;
  std::vector<FaultSpan> faults_;
  std::unordered_set<std::size_t> used_;
  std::vector<std::pair<const char*, std::size_t>> involved_;
};

std::string KeyName(const Value& key) {
  return key.is_null() ? std::string("(no key)") : key.ToJson();
}

}  // namespace

bool FaultSpan::ActsOn(const std::string& node) const {
  return nodes.empty() ||
         std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

std::int64_t FaultSpan::first_index() const {
  return start_invoke != nullptr ? start_invoke->index : start->index;
}

std::int64_t FaultSpan::last_index() const {
  return stop == nullptr || heal_failed ? kLast : stop->index;
}

std::vector<FaultSpan> FaultSpans(const History& history) {
  std::vector<FaultSpan> out;
  std::map<std::string, const Event*> invoked;           // f -> last invoke
  std::map<std::string, std::vector<std::size_t>> open;  // kind -> spans
  for (const Event& e : history) {
    if (!e.is_nemesis()) continue;
    bool starts = e.f.rfind("start-", 0) == 0;
    bool stops = e.f.rfind("stop-", 0) == 0;
    if (!starts && !stops) continue;
    if (e.is_invoke()) {
      invoked[e.f] = &e;
      continue;
    }
    const Event* inv = nullptr;
    if (auto it = invoked.find(e.f); it != invoked.end()) {
      inv = it->second;
      invoked.erase(it);
    }
    std::string kind = e.f.substr(starts ? 6 : 5);
    auto& q = open[kind];
    if (starts) {
      if (!e.error.empty()) continue;  // never in force
      FaultSpan s;
      s.kind = kind;
      s.value = e.value;
      s.start_invoke = inv;
      s.start = &e;
      if (const Value* grudge = e.value.Find("grudge");
          grudge != nullptr && grudge->is_object()) {
        for (const auto& [node, cut] : grudge->as_object()) {
          if (cut.is_list() && !cut.as_list().empty()) s.nodes.push_back(node);
        }
      }
      for (const char* field : {"nodes", "moved"}) {
        for (std::string& n : Strings(e.value.Find(field))) {
          if (std::find(s.nodes.begin(), s.nodes.end(), n) == s.nodes.end()) {
            s.nodes.push_back(std::move(n));
          }
        }
      }
      if (const Value* voter = e.value.Find("voter");
          voter != nullptr && voter->is_string() &&
          std::find(s.nodes.begin(), s.nodes.end(), voter->as_string()) ==
              s.nodes.end()) {
        s.nodes.push_back(voter->as_string());
      }
      q.push_back(out.size());
      out.push_back(std::move(s));
    } else if (!q.empty()) {
      FaultSpan& s = out[q.front()];
      q.erase(q.begin());
      s.stop_invoke = inv;
      s.stop = &e;
      s.heal_failed = !e.error.empty();
    }
  }
  return out;
}

std::string DescribeFault(const FaultSpan& fault, const std::string& node) {
  const Value& v = fault.value;
  const std::string& k = fault.kind;
  if (k == "partition") {
    auto [mine, total] = Sides(fault, node);
    const Value* grudge = v.Find("grudge");
    std::vector<std::string> from = grudge != nullptr
                                        ? Strings(grudge->Find(node))
                                        : std::vector<std::string>{};
    const Value* dir = v.Find("direction");
    bool one_way =
        dir != nullptr && dir->is_string() && dir->as_string() == "one-way";
    if (one_way) {
      std::vector<std::string> to, in;
      for (const std::string& flow : Strings(v.Find("blocked"))) {
        std::size_t at = flow.find("->");
        if (at == std::string::npos) continue;
        if (flow.substr(0, at) == node) to.push_back(flow.substr(at + 2));
        if (flow.substr(at + 2) == node) in.push_back(flow.substr(0, at));
      }
      std::vector<std::string> parts;
      if (!to.empty()) parts.push_back("its messages to " + Join(to));
      if (!in.empty()) parts.push_back("messages from " + Join(in));
      if (!parts.empty()) return "with " + Join(parts) + " blocked";
    }
    if (mine > 0 && mine * 2 < total) return "cut off from the majority";
    if (!from.empty()) return "cut off from " + Join(from);
    if (mine * 2 > total) return "with the majority";
    return "in a partition";
  }
  if (k == "pause") return "paused";
  if (k == "kill" || k == "kill-voter") return "killed";
  if (k == "power-loss") return "powered off (its unsynced writes lost)";
  if (k == "torn-write") return "powered off (its unsynced writes torn)";
  if (k == "fsync-error") return "with failing fsyncs";
  if (k == "disk-full") return "with a full disk";
  if (k == "slow-disk") return "with a slow disk";
  if (k == "delay") {
    const Value* ms = v.Find("delay_ms");
    return "with messages from its peers delayed" +
           (ms != nullptr ? " by " + Trim(Num(*ms)) + " ms" : std::string());
  }
  if (k == "loss") {
    const Value* pr = v.Find("probability");
    return "losing " +
           (pr != nullptr ? Trim(Num(*pr) * 100) + "% of" : std::string("")) +
           (pr != nullptr ? " " : "") + "its peers' packets";
  }
  if (k == "clock") {
    const Value* off = v.Find("offset_ms");
    const Value* rate = v.Find("rate");
    std::vector<std::string> parts;
    if (off != nullptr && Num(*off) != 0) {
      parts.push_back(std::string("moved by ") + (Num(*off) > 0 ? "+" : "") +
                      Trim(Num(*off)) + " ms");
    }
    if (rate != nullptr && Num(*rate) != 1) {
      parts.push_back("running at " + Trim(Num(*rate)) + "x");
    }
    if (parts.empty()) return "with its clock changed";
    return "with its clock " + Join(parts);
  }
  if (k == "strobe") {
    const Value* d = v.Find("delta_ms");
    const Value* per = v.Find("period_ms");
    if (d != nullptr && per != nullptr) {
      return "with its clock jumping by " + Trim(Num(*d)) + " ms every " +
             Trim(Num(*per)) + " ms";
    }
    return "with its clock jumping";
  }
  return "under the " + k + " fault";
}

ViolationContext DescribeViolation(const History& history, const Partition& p,
                                   const Model& model, const Explanation& ex) {
  ViolationContext c;
  Facts k = Classify(p, model, ex);
  c.kind = k.kind;
  Writer w(history, p);
  std::string at_s = "an unknown time";
  const Event* at_event = nullptr;
  if (ex.at_index >= 0 &&
      static_cast<std::size_t>(ex.at_index) < history.size()) {
    at_event = &history[static_cast<std::size_t>(ex.at_index)];
    at_s = When(at_event);
  }
  std::string sentence;
  std::size_t main_op = SIZE_MAX;
  std::string label;
  if (k.kind == "stale-read" || k.kind == "lost-write" ||
      k.kind == "never-written") {
    main_op = k.read;
    const Op& r = p.ops[k.read];
    std::string x = k.value.ToJson();
    std::string served = OpNode(r).empty() ? " read " : " served ";
    w.Involve("read", k.read);
    if (k.kind == "never-written") {
      label = "Read of a value never written";
      sentence = w.Subject(r, true) + served + x + " at " + When(r.ok) +
                 ", a value no operation wrote.";
      c.summary =
          "read of a value never written: " +
          (OpNode(r).empty() ? "p" + std::to_string(r.process()) : OpNode(r)) +
          " returned " + x + " at " + When(r.ok);
    } else if (k.kind == "stale-read") {
      label = "Stale read";
      const Op& latest = p.ops[k.overwrote.back()];
      const Op& first = p.ops[k.overwrote.front()];
      std::string y = latest.operation.input.ToJson();
      if (latest.operation.f == "cas" && latest.operation.input.is_list()) {
        y = latest.operation.input.as_list()[1].ToJson();
      }
      w.Involve("written_by", k.initial ? SIZE_MAX : k.written_by);
      if (k.overwrote.front() != k.overwrote.back()) {
        w.Involve("overwritten_by", k.overwrote.front());
      }
      w.Involve("latest_write", k.overwrote.back());
      w.Involve("later_read", k.later_read);
      sentence = w.Subject(r, true) + served + x + " at " + When(r.ok) + "; " +
                 y + " had been acknowledged" + w.By(latest) + " at " +
                 When(latest.ok) + ". " + w.Origin(k);
      if (k.overwrote.front() != k.overwrote.back()) {
        std::string y1 = model.DescribeOp(first.Make());
        sentence += ", first overwritten by p" +
                    std::to_string(first.process()) + " " + y1 +
                    ", acknowledged" + w.By(first) + " at " + When(first.ok);
      }
      sentence += ".";
      if (k.later_read != SIZE_MAX) {
        const Op& lr = p.ops[k.later_read];
        sentence +=
            " A later read saw a newer value: " +
            (OpNode(lr).empty() ? "p" + std::to_string(lr.process()) + " read "
                                : w.Subject(lr, true) + " served ") +
            lr.operation.output.ToJson() + " at " + When(lr.ok) + ".";
      }
      c.summary =
          "stale read: " +
          (OpNode(r).empty() ? "p" + std::to_string(r.process()) : OpNode(r)) +
          " returned " + x + " at " + When(r.ok) + ", after " + y +
          " was acknowledged at " + When(latest.ok);
    } else {
      label = "Lost write";
      const Op& lost = p.ops[k.lost.front()];
      std::string y = model.DescribeOp(lost.Make());
      for (std::size_t i : k.lost) w.Involve("lost", i);
      w.Involve("written_by", k.initial ? SIZE_MAX : k.written_by);
      sentence = "p" + std::to_string(lost.process()) + " " + y +
                 " was acknowledged" + w.By(lost) + " at " + When(lost.ok) +
                 ", but neither its value nor any later one was ever read: " +
                 w.Subject(r, true) + served + x + ", an older value, at " +
                 When(r.ok) + ".";
      if (k.lost.size() > 1) {
        std::vector<std::string> more;
        for (std::size_t i = 1; i < k.lost.size() && i <= 5; ++i) {
          more.push_back(model.DescribeOp(p.ops[k.lost[i]].Make()) + " at " +
                         When(p.ops[k.lost[i]].ok));
        }
        if (k.lost.size() > 6) {
          more.push_back(std::to_string(k.lost.size() - 6) + " more");
        }
        sentence +=
            " Acknowledged after it and never read either: " + Join(more) + ".";
      }
      sentence += " " + w.Origin(k) + ".";
      c.summary =
          "lost write: " + y + ", acknowledged at " + When(lost.ok) +
          ", was never read; " +
          (OpNode(r).empty() ? "p" + std::to_string(r.process()) : OpNode(r)) +
          " returned the older " + x + " at " + When(r.ok);
    }
  } else {
    label = "No consistent order";
    main_op = ex.blocker != SIZE_MAX ? ex.blocker
              : !ex.rejected.empty() ? ex.rejected.front()
                                     : SIZE_MAX;
    if (main_op != SIZE_MAX) {
      const Op& op = p.ops[main_op];
      w.Involve("failing", main_op);
      sentence =
          w.Subject(op, true) + " completed p" + std::to_string(op.process()) +
          " " + model.DescribeOp(op.Make()) + " at " +
          (op.ok != nullptr ? When(op.ok) : at_s) + ": " + ex.summary + ".";
    } else {
      sentence = ex.summary + ".";
    }
    c.summary = "no consistent order at " + at_s + ": " + ex.summary;
  }

  std::int64_t lo = main_op != SIZE_MAX ? p.ops[main_op].invoke_index() : 0;
  std::int64_t hi = ex.at_index >= 0 ? ex.at_index : lo;
  if (main_op != SIZE_MAX && p.ops[main_op].complete_index > hi) {
    hi = p.ops[main_op].complete_index;
  }
  std::string faults_json = w.Json(lo, hi);
  std::string lines = w.Lines(lo, hi);

  c.text = label + (p.key.is_null() ? "" : " on key " + KeyName(p.key)) +
           " at " + at_s + ".\n" + sentence + "\n";
  if (!lines.empty()) c.text += "Faults in force then:\n" + lines;

  std::string& j = c.json;
  j += ",\"kind\":\"" + c.kind + "\",\"at\":{\"index\":";
  j += ex.at_index >= 0 ? std::to_string(ex.at_index) : "null";
  j += ",\"s\":";
  AppendSecondsOrNull(j, at_event);
  j += "},\"context\":{\"sentence\":";
  AppendJsonString(j, sentence);
  auto op_or_null = [&](const char* name, std::size_t i) {
    j += ",\"" + std::string(name) + "\":";
    if (i == SIZE_MAX) {
      j += "null";
    } else {
      AppendOpJson(j, p.ops[i]);
    }
  };
  j += ",\"value\":";
  if (k.read != SIZE_MAX) {
    k.value.AppendJson(j);
  } else {
    j += "null";
  }
  op_or_null("read", k.read);
  op_or_null("written_by", k.initial ? SIZE_MAX : k.written_by);
  j += ",\"initial_value\":";
  j += k.initial ? "true" : "false";
  op_or_null("overwritten_by",
             k.overwrote.empty() ? SIZE_MAX : k.overwrote.front());
  op_or_null("latest_write",
             k.overwrote.empty() ? SIZE_MAX : k.overwrote.back());
  j += ",\"lost\":[";
  for (std::size_t i = 0; i < k.lost.size(); ++i) {
    if (i > 0) j += ",";
    AppendOpJson(j, p.ops[k.lost[i]]);
  }
  j += "]";
  op_or_null("later_read", k.later_read);
  j += faults_json;
  j += "}";
  return c;
}

}  // namespace faultline::checkers::linear

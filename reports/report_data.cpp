// The data block of report.html: operations as column arrays, lanes, fault
// windows and the linearizability violation, computed from the history and
// the checkers' verdicts.
#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkers/leader_per_term.h"
#include "checkers/linearizable.h"
#include "checkers/mutex_fencing.h"
#include "checkers/stats.h"
#include "reports/report_clocks.h"
#include "reports/report_html.h"
#include "reports/report_txn.h"
#include "reports/utf8.h"

namespace faultline::reports {
namespace {

using checkers::Event;
using checkers::EventType;
using checkers::History;
using nlohmann::json;

// Lanes: one per process while there are few; beyond that, processes whose
// lifetimes do not overlap share a lane (a worker takes a fresh process id
// after every info, so a long run has many short-lived processes).
constexpr std::size_t kMaxProcessLanes = 40;

// "4.310 s" for a time in ns (3 decimals, as the lock checker writes it).
std::string Seconds3(std::int64_t ns) {
  std::int64_t ms = ns / 1000000;
  std::string frac = std::to_string(ms % 1000);
  while (frac.size() < 3) frac.insert(frac.begin(), '0');
  return std::to_string(ms / 1000) + "." + frac + " s";
}

std::string Describe(const Event& inv, const Event* done, std::size_t max) {
  std::string d = inv.f;
  if (!inv.key.is_null()) d += " " + CutUtf8(inv.key.ToJson(), max);
  std::string in = inv.value.is_null() ? "" : inv.value.ToJson();
  if (!in.empty()) d += " " + CutUtf8(in, max);
  if (done != nullptr) {
    if (!done->value.is_null()) {
      std::string out = done->value.ToJson();
      if (out != in) d += " \xE2\x86\x92 " + CutUtf8(out, max);  // →
    }
    if (!done->error.empty()) d += " (" + CutUtf8(done->error, max) + ")";
  } else {
    d += " (never completed)";
  }
  if (!inv.node.empty()) d += " @" + CutUtf8(inv.node, max);
  return d;
}

int TypeCode(EventType t) {
  switch (t) {
    case EventType::kOk:
      return 0;
    case EventType::kFail:
      return 1;
    default:
      return 2;
  }
}

struct OpRow {
  std::int64_t process = 0;
  std::int64_t s = 0, e = 0;
  int type = 2;
  int f = 0;
  std::string desc;
};

class Builder {
 public:
  Builder(const History& h, const ReportOptions& o) : h_(h), o_(o) {
    timed_ = !h.empty();
    for (const Event& e : h) {
      if (!e.time) {
        timed_ = false;
        break;
      }
    }
    for (const Event& e : h) end_ = std::max(end_, X(e));
    by_index_ok_ = true;
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (h[i].index != static_cast<std::int64_t>(i)) by_index_ok_ = false;
    }
    if (!by_index_ok_) {
      for (std::size_t i = 0; i < h.size(); ++i) by_index_[h[i].index] = i;
    }
  }

  // x coordinate of an event: microseconds since start, or its index.
  std::int64_t X(const Event& e) const {
    return timed_ ? *e.time / 1000 : e.index;
  }
  // x of the event with history index `index`; `fallback` when unknown.
  std::int64_t XOfIndex(std::int64_t index, std::int64_t fallback) const {
    if (index < 0) return fallback;
    if (by_index_ok_) {
      if (index < static_cast<std::int64_t>(h_.size())) return X(h_[index]);
      return fallback;
    }
    auto it = by_index_.find(index);
    return it == by_index_.end() ? fallback : X(h_[it->second]);
  }

  json Build(const RunSummary& s) {
    json d;
    d["name"] = s.name;
    d["verdict"] = std::string(checkers::ToString(OverallValidity(s)));
    d["unit"] = timed_ ? "us" : "index";
    d["end"] = end_;
    Ops(d);
    Faults(d);
    d["violation"] = Violation(s);
    d["txn"] = TxnCyclesData(s, o_.max_value_chars);  // report_txn.h
    d["holds"] = Holds();
    d["leaders"] = Leaders();
    d["clocks"] = ClockSeries(h_, timed_, end_);  // reports/report_clocks.h
    return d;
  }

 private:
  void Ops(json& d) {
    std::vector<OpRow> rows;
    std::map<std::string, int> f_ids;
    std::vector<std::string> fs;
    std::unordered_map<std::int64_t, std::size_t> open;  // process -> inv
    auto add = [&](const Event& inv, const Event* done) {
      auto [it, fresh] = f_ids.emplace(inv.f, static_cast<int>(fs.size()));
      if (fresh) fs.push_back(inv.f);
      OpRow r;
      r.process = inv.process;
      r.s = X(inv);
      r.e = done != nullptr ? X(*done) : end_;
      r.type = done != nullptr ? TypeCode(done->type) : 3;  // 3: pending
      r.f = it->second;
      r.desc = Describe(inv, done, o_.max_value_chars);
      rows.push_back(std::move(r));
    };
    for (std::size_t i = 0; i < h_.size(); ++i) {
      const Event& e = h_[i];
      if (e.is_nemesis()) continue;
      if (e.is_invoke()) {
        auto prev = open.find(e.process);
        if (prev != open.end()) add(h_[prev->second], nullptr);
        open[e.process] = i;
        continue;
      }
      auto inv = open.find(e.process);
      if (inv == open.end()) continue;  // completion without invoke
      add(h_[inv->second], &e);
      open.erase(inv);
    }
    std::vector<std::size_t> pending;
    for (const auto& [p, i] : open) pending.push_back(i);
    std::sort(pending.begin(), pending.end());
    for (std::size_t i : pending) add(h_[i], nullptr);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const OpRow& a, const OpRow& b) { return a.s < b.s; });

    // Lanes.
    struct Life {
      std::int64_t first = 0, last = 0;
    };
    std::map<std::int64_t, Life> lives;
    for (const OpRow& r : rows) {
      auto [it, fresh] = lives.emplace(r.process, Life{r.s, r.e});
      if (!fresh) {
        it->second.first = std::min(it->second.first, r.s);
        it->second.last = std::max(it->second.last, r.e);
      }
    }
    std::map<std::int64_t, int> lane_of;
    std::vector<std::vector<std::int64_t>> lane_procs;
    if (lives.size() <= kMaxProcessLanes) {
      for (const auto& [p, life] : lives) {
        lane_of[p] = static_cast<int>(lane_procs.size());
        lane_procs.push_back({p});
      }
    } else {
      std::vector<std::pair<Life, std::int64_t>> order;
      for (const auto& [p, life] : lives) order.push_back({life, p});
      std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a.first.first != b.first.first ? a.first.first < b.first.first
                                              : a.second < b.second;
      });
      // Free lanes by (free-at, lane number): the lowest free lane is reused.
      using Slot = std::pair<std::int64_t, int>;
      std::priority_queue<Slot, std::vector<Slot>, std::greater<>> busy;
      std::priority_queue<int, std::vector<int>, std::greater<>> free_lanes;
      for (const auto& [life, p] : order) {
        while (!busy.empty() && busy.top().first < life.first) {
          free_lanes.push(busy.top().second);
          busy.pop();
        }
        int lane;
        if (free_lanes.empty()) {
          lane = static_cast<int>(lane_procs.size());
          lane_procs.emplace_back();
        } else {
          lane = free_lanes.top();
          free_lanes.pop();
        }
        lane_procs[lane].push_back(p);
        lane_of[p] = lane;
        busy.push({life.last, lane});
      }
    }
    json lanes = json::array();
    for (const auto& procs : lane_procs) {
      std::string label = "p" + std::to_string(procs.front());
      if (procs.size() > 1) {
        label += " +" + std::to_string(procs.size() - 1);
      }
      lanes.push_back(label);
    }
    d["lanes"] = std::move(lanes);
    d["fs"] = fs;
    json lane = json::array(), s = json::array(), e = json::array(),
         t = json::array(), f = json::array(), desc = json::array();
    for (OpRow& r : rows) {
      lane.push_back(lane_of[r.process]);
      s.push_back(r.s);
      e.push_back(r.e);
      t.push_back(r.type);
      f.push_back(r.f);
      desc.push_back(std::move(r.desc));
    }
    d["ops"] = {{"lane", std::move(lane)}, {"s", std::move(s)},
                {"e", std::move(e)},       {"t", std::move(t)},
                {"f", std::move(f)},       {"d", std::move(desc)}};
  }

  void Faults(json& d) {
    checkers::HistoryStats stats = checkers::ComputeStats(h_);
    json faults = json::array();
    for (const auto& w : stats.faults) {
      std::int64_t s = XOfIndex(w.start_index, 0);
      std::int64_t e = w.end_index < 0 ? end_ : XOfIndex(w.end_index, end_);
      faults.push_back(
          {{"f", w.f},
           {"s", s},
           {"e", std::max(s, e)},
           {"open", w.end_index < 0},
           {"detail",
            CutUtf8(w.value.is_null() ? "" : w.value.ToJson(), 4 * 80)}});
    }
    d["faults"] = std::move(faults);
  }

  json ViolationOp(const json& op, const std::string& role) {
    json out;
    std::int64_t index = op.value("index", static_cast<std::int64_t>(-1));
    std::int64_t done =
        op.value("complete_index", static_cast<std::int64_t>(-1));
    out["index"] = index;
    out["process"] = op.value("process", static_cast<std::int64_t>(0));
    out["s"] = XOfIndex(index, 0);
    out["e"] = done < 0 ? end_ : XOfIndex(done, end_);
    std::string type = op.value("type", std::string("info"));
    out["t"] = type == "ok" ? 0 : type == "fail" ? 1 : 2;
    std::string desc = op.value("f", std::string("?"));
    auto cut = [&](const char* field) -> std::string {
      auto it = op.find(field);
      if (it == op.end() || it->is_null()) return "";
      return CutUtf8(it->dump(-1, ' ', false, json::error_handler_t::replace),
                     o_.max_value_chars);
    };
    std::string in = cut("value"), result = cut("output");
    if (!in.empty()) desc += " " + in;
    if (!result.empty() && result != in) desc += " \xE2\x86\x92 " + result;
    if (type != "ok") desc += " (" + type + ")";
    out["d"] = desc;
    out["role"] = role;
    out["node"] =
        op.contains("node") && op["node"].is_string()
            ? CutUtf8(op["node"].get<std::string>(), o_.max_value_chars)
            : std::string();
    return out;
  }

  // x of a context edge ({"index":..}) of a fault; `fallback` when absent.
  std::int64_t EdgeX(const json& edge, std::int64_t fallback) const {
    if (!edge.is_object() || !edge.contains("index") ||
        !edge["index"].is_number_integer()) {
      return fallback;
    }
    return XOfIndex(edge["index"].get<std::int64_t>(), fallback);
  }

  // The faults of the violation's context (details_json failure.context
  // .faults): kind, window and what each did to the nodes it acts on.
  json ContextFaults(const json& context) {
    json out = json::array();
    if (!context.contains("faults") || !context["faults"].is_array()) {
      return out;
    }
    for (const json& f : context["faults"]) {
      if (!f.is_object()) continue;
      std::int64_t s = EdgeX(f.value("start", json()), 0);
      bool open = !f.contains("end") || !f["end"].is_object() ||
                  f.value("heal_failed", false);
      std::int64_t e = open ? end_ : EdgeX(f["end"], end_);
      std::string effect;
      if (f.contains("effect") && f["effect"].is_object()) {
        for (const auto& [node, what] : f["effect"].items()) {
          if (!what.is_string()) continue;
          if (!effect.empty()) effect += "; ";
          effect += node + " " + what.get<std::string>();
        }
      }
      if (effect.empty() && f.contains("value")) {
        effect =
            f["value"].dump(-1, ' ', false, json::error_handler_t::replace);
      }
      out.push_back({{"id", f.value("id", static_cast<std::int64_t>(-1))},
                     {"kind", f.value("kind", std::string("?"))},
                     {"s", s},
                     {"e", std::max(s, e)},
                     {"open", open},
                     {"effect", CutUtf8(effect, 4 * o_.max_value_chars)}});
    }
    return out;
  }

  // The linearizable checker's failure (details_json "failure"), with event
  // times looked up in the history; null when there is none.
  json Violation(const RunSummary& s) {
    for (const auto& v : s.verdicts) {
      if (v.checker != checkers::kLinearizableChecker ||
          v.validity != checkers::Validity::kInvalid) {
        continue;
      }
      json details = json::parse(v.details_json, nullptr, false);
      if (!details.is_object() || !details.contains("failure") ||
          !details["failure"].is_object()) {
        continue;
      }
      const json& failure = details["failure"];
      json out;
      out["checker"] = v.checker;
      out["summary"] = v.summary;
      out["model"] = details.value("model", std::string());
      out["key"] = failure.contains("key")
                       ? failure["key"].dump(-1, ' ', false,
                                             json::error_handler_t::replace)
                       : "null";
      out["state"] = failure.value("state", std::string());
      json ops = json::array(), why = json::array();
      std::map<std::int64_t, std::size_t> seen;  // index -> position in ops
      auto add = [&](const json& op, const std::string& role) {
        if (!op.is_object()) return;
        std::int64_t index = op.value("index", static_cast<std::int64_t>(-1));
        if (seen.count(index) != 0) return;
        seen[index] = ops.size();
        ops.push_back(ViolationOp(op, role));
      };
      if (failure.contains("stuck") && failure["stuck"].is_array()) {
        for (const auto& st : failure["stuck"]) {
          if (!st.is_object() || !st.contains("op")) continue;
          bool rejected = st.value("rejected", false);
          add(st["op"], rejected ? "rejected" : "stuck");
          std::string w = st.value("why", std::string());
          if (!w.empty()) {
            why.push_back(
                {{"index",
                  st["op"].value("index", static_cast<std::int64_t>(-1))},
                 {"why", w}});
          }
        }
      }
      if (failure.contains("prefix") && failure["prefix"].is_array()) {
        const json& prefix = failure["prefix"];
        std::size_t from = prefix.size() > 4 ? prefix.size() - 4 : 0;
        for (std::size_t i = from; i < prefix.size(); ++i) {
          add(prefix[i], "prefix");
        }
      }
      if (failure.contains("window") && failure["window"].is_array()) {
        for (const auto& op : failure["window"]) add(op, "window");
      }
      // The context: the kind, the sentence, the ops it names (the write
      // of the stale value, its overwrite, ...) and the faults in force.
      out["kind"] = failure.value("kind", std::string());
      out["at"] = nullptr;
      if (failure.contains("at") && failure["at"].is_object()) {
        const json& at = failure["at"];
        if (at.contains("index") && at["index"].is_number_integer()) {
          out["at"] = XOfIndex(at["index"].get<std::int64_t>(), 0);
        }
      }
      out["sentence"] = "";
      out["faults"] = json::array();
      if (failure.contains("context") && failure["context"].is_object()) {
        const json& context = failure["context"];
        out["sentence"] = context.value("sentence", std::string());
        out["faults"] = ContextFaults(context);
        if (context.contains("involved") && context["involved"].is_array()) {
          for (const json& inv : context["involved"]) {
            if (!inv.is_object() || !inv.contains("op")) continue;
            std::string part = inv.value("role", std::string());
            std::int64_t index =
                inv["op"].value("index", static_cast<std::int64_t>(-1));
            add(inv["op"], "context");
            auto at = seen.find(index);
            if (at == seen.end()) continue;
            json& row = ops[at->second];
            if (!row.contains("part")) row["part"] = part;
            if (inv.contains("faults") && inv["faults"].is_array()) {
              row["faults"] = inv["faults"];
            }
          }
        }
      }
      out["ops"] = std::move(ops);
      out["why"] = std::move(why);
      return out;
    }
    return nullptr;
  }

  // Lock and election runs: who held which lock (or led, for campaign
  // ops) when, per node, with overlapping holds; null for other runs.
  json Holds() {
    bool any = false;
    for (const Event& e : h_) {
      if (!e.is_nemesis() && (e.f == "acquire" || e.f == "campaign")) {
        any = true;
        break;
      }
    }
    if (!any) return nullptr;
    checkers::MutexFencingOptions mo;
    mo.max_examples = 1000;
    checkers::MutexFencingResult r = checkers::AnalyzeMutexFencing(h_, mo);
    if (!r.malformed.empty() || r.timed != timed_) return nullptr;
    auto x = [&](std::int64_t t) { return timed_ ? t / 1000 : t; };
    std::map<std::string, int> rows;
    std::vector<std::string> row_names;
    auto row_of = [&](const checkers::Hold& hold) {
      std::string name;
      std::int64_t i = hold.acquire.index;
      if (by_index_ok_ && i >= 0 && i < static_cast<std::int64_t>(h_.size())) {
        name = h_[i].node;
      } else if (auto it = by_index_.find(i); it != by_index_.end()) {
        name = h_[it->second].node;
      }
      if (name.empty()) name = "p" + std::to_string(hold.acquire.process);
      auto [it, fresh] = rows.emplace(name, static_cast<int>(rows.size()));
      if (fresh) row_names.push_back(name);
      return it->second;
    };
    // Holds whose token was granted twice or went backwards, by the index
    // of their acquire: what the mark on the chart says.
    std::unordered_map<std::int64_t, std::pair<std::string, std::string>> bad;
    auto when = [&](std::int64_t t) {
      return timed_ ? Seconds3(t) : "event " + std::to_string(t);
    };
    for (const auto& a : r.token_anomalies) {
      std::string token = a.later.token ? std::to_string(*a.later.token) : "?";
      std::string earlier =
          a.earlier.token ? std::to_string(*a.earlier.token) : "?";
      if (a.duplicate) {
        std::string why = "token " + token + " was granted to p" +
                          std::to_string(a.earlier.process) + " at " +
                          when(a.earlier.complete) + " and to p" +
                          std::to_string(a.later.process) + " at " +
                          when(a.later.complete);
        bad.emplace(a.earlier.index, std::make_pair("duplicate", why));
        bad[a.later.index] = {"duplicate", why};
      } else {
        bad.emplace(
            a.later.index,
            std::make_pair("backwards", "p" + std::to_string(a.later.process) +
                                            " got token " + token + " after p" +
                                            std::to_string(a.earlier.process) +
                                            " had got " + earlier + " at " +
                                            when(a.earlier.complete)));
      }
    }
    std::map<std::string, int> lock_ids;
    json locks = json::array(), items = json::array();
    constexpr std::size_t kMaxHolds = 20000;
    for (const auto& hold : r.holds) {
      if (items.size() >= kMaxHolds) break;
      std::string lock = CutUtf8(hold.lock.ToJson(), o_.max_value_chars);
      auto [it, fresh] =
          lock_ids.emplace(lock, static_cast<int>(lock_ids.size()));
      if (fresh) locks.push_back(lock);
      items.push_back({{"row", row_of(hold)},
                       {"lock", it->second},
                       {"p", hold.acquire.process},
                       {"token", hold.acquire.token ? json(*hold.acquire.token)
                                                    : json(nullptr)},
                       {"s", x(hold.start)},
                       {"e", x(hold.end)},
                       {"open", hold.open},
                       {"ended", hold.ended_by}});
      if (auto b = bad.find(hold.acquire.index); b != bad.end()) {
        items.back()["bad"] = b->second.first;
        items.back()["bad_why"] = b->second.second;
      }
    }
    json overlaps = json::array();
    for (const auto& o : r.overlaps) {
      overlaps.push_back(
          {{"lock", CutUtf8(o.lock.ToJson(), o_.max_value_chars)},
           {"s", x(o.start)},
           {"e", x(o.end)},
           {"unsafe", o.unsafe},
           {"why", o.why}});
    }
    return {{"rows", row_names},
            {"locks", std::move(locks)},
            {"items", std::move(items)},
            {"overlaps", std::move(overlaps)},
            {"overlap_count", r.overlap_count}};
  }

  // Election runs and runs with leader observations: the intervals in
  // which each node believed it led (leader-per-term), with terms, the
  // times two nodes believed so at once, and terms claimed by two nodes.
  json Leaders() {
    bool any = false;
    for (const Event& e : h_) {
      if (!e.is_nemesis() && (e.f == "observe" || e.f == "campaign")) {
        any = true;
        break;
      }
    }
    if (!any) return nullptr;
    checkers::LeaderPerTermOptions lo;
    lo.max_examples = 100;
    checkers::LeaderPerTermResult r = checkers::AnalyzeLeaderPerTerm(h_, lo);
    if (!r.malformed.empty() || r.timed != timed_ || r.intervals.empty()) {
      return nullptr;
    }
    auto x = [&](std::int64_t t) { return timed_ ? t / 1000 : t; };
    std::map<std::string, int> rows;
    std::vector<std::string> row_names;
    constexpr std::size_t kMaxIntervals = 20000;
    json items = json::array(), dual = json::array();
    for (const auto& iv : r.intervals) {
      if (items.size() >= kMaxIntervals) break;
      std::string name = CutUtf8(iv.node, o_.max_value_chars);
      if (iv.domain != "observe") {
        name += " (" + CutUtf8(iv.domain, o_.max_value_chars) + ")";
      }
      auto [it, fresh] = rows.emplace(name, static_cast<int>(rows.size()));
      if (fresh) row_names.push_back(name);
      items.push_back({{"row", it->second},
                       {"term", iv.term ? json(*iv.term) : json(nullptr)},
                       {"s", x(iv.start)},
                       {"e", x(iv.end)},
                       {"domain", iv.domain}});
    }
    // Times two nodes believed they led at once, per domain (intervals
    // are sorted by domain, then start).
    constexpr std::size_t kMaxDual = 2000;
    for (std::size_t i = 0; i < r.intervals.size() && dual.size() < kMaxDual;
         ++i) {
      const auto& a = r.intervals[i];
      for (std::size_t j = i + 1; j < r.intervals.size(); ++j) {
        const auto& b = r.intervals[j];
        if (b.domain != a.domain || b.start >= a.end) break;
        if (b.node == a.node) continue;
        dual.push_back(
            {{"s", x(b.start)},
             {"e", x(std::min(a.end, b.end))},
             {"what", a.node + " and " + b.node + " (" + a.domain + ")"}});
        if (dual.size() >= kMaxDual) break;
      }
    }
    json conflicts = json::array();
    for (const auto& c : r.conflicts) {
      std::string nodes;
      for (const auto& claim : c.claims) {
        if (!nodes.empty()) nodes += ", ";
        nodes += claim.node + " (" + claim.source + ")";
      }
      std::int64_t at = c.claims.empty() ? 0 : x(c.claims.back().time);
      conflicts.push_back({{"term", c.term},
                           {"domain", c.domain},
                           {"nodes", nodes},
                           {"s", at}});
    }
    // Leaders per term: the terms with two leaders first, then by domain
    // and term.
    struct TermRow {
      std::vector<std::string> nodes;
      std::int64_t s = 0;
      bool conflict = false;
    };
    std::map<std::pair<std::string, std::int64_t>, TermRow> terms;
    for (const auto& iv : r.intervals) {
      if (!iv.term) continue;
      auto [it, fresh] = terms.try_emplace({iv.domain, *iv.term});
      if (fresh || iv.start < it->second.s) it->second.s = iv.start;
      auto& nodes = it->second.nodes;
      if (std::find(nodes.begin(), nodes.end(), iv.node) == nodes.end()) {
        nodes.push_back(iv.node);
      }
    }
    for (const auto& c : r.conflicts) {
      TermRow& row = terms[{c.domain, c.term}];
      row.conflict = true;
      for (const auto& claim : c.claims) {
        if (std::find(row.nodes.begin(), row.nodes.end(), claim.node) ==
            row.nodes.end()) {
          row.nodes.push_back(claim.node);
        }
      }
      if (!c.claims.empty()) row.s = c.claims.front().time;
    }
    constexpr std::size_t kMaxTerms = 300;
    json term_rows = json::array();
    for (bool conflict : {true, false}) {
      for (const auto& [key, row] : terms) {
        if (row.conflict != conflict || term_rows.size() >= kMaxTerms) continue;
        json nodes = json::array();
        for (const auto& n : row.nodes) {
          nodes.push_back(CutUtf8(n, o_.max_value_chars));
        }
        term_rows.push_back({{"domain", key.first},
                             {"term", key.second},
                             {"nodes", std::move(nodes)},
                             {"s", x(row.s)},
                             {"conflict", row.conflict}});
      }
    }
    std::size_t more =
        terms.size() > term_rows.size() ? terms.size() - term_rows.size() : 0;
    return {{"rows", row_names},
            {"items", std::move(items)},
            {"dual", std::move(dual)},
            {"conflicts", std::move(conflicts)},
            {"terms", std::move(term_rows)},
            {"terms_more", more}};
  }

  const History& h_;
  const ReportOptions& o_;
  bool timed_ = false;
  std::int64_t end_ = 0;
  bool by_index_ok_ = true;
  std::unordered_map<std::int64_t, std::size_t> by_index_;
};

}  // namespace

std::string ReportDataJson(const RunSummary& s,
                           const checkers::History& history,
                           const ReportOptions& options) {
  Builder b(history, options);
  return b.Build(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace faultline::reports

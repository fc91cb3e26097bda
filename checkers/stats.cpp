// Statistics over a history; see stats.h for the definitions.
#include "checkers/stats.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>

namespace faultline::checkers {
namespace {

// Nearest-rank quantile of sorted values; q in (0, 1].
std::int64_t Quantile(const std::vector<std::int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(
      std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void Count(OpCounts& c, EventType t) {
  switch (t) {
    case EventType::kOk:
      ++c.ok;
      break;
    case EventType::kFail:
      ++c.fail;
      break;
    case EventType::kInfo:
    case EventType::kInvoke:  // never completed
      ++c.info;
      break;
  }
}

void AppendInt(std::string& out, std::int64_t v) { out += std::to_string(v); }

void AppendOptInt(std::string& out, const std::optional<std::int64_t>& v) {
  if (v) {
    AppendInt(out, *v);
  } else {
    out += "null";
  }
}

void AppendCounts(std::string& out, const OpCounts& c) {
  out += "\"ok\":";
  AppendInt(out, c.ok);
  out += ",\"fail\":";
  AppendInt(out, c.fail);
  out += ",\"info\":";
  AppendInt(out, c.info);
}

std::string Summary(const OpCounts& c) {
  return std::to_string(c.ok) + " ok, " + std::to_string(c.fail) + " fail, " +
         std::to_string(c.info) + " info";
}

std::string Ms(std::int64_t ns) {
  // Milliseconds with 3 decimals, without locale or printf.
  std::int64_t us = ns / 1000;
  std::string frac = std::to_string(us % 1000);
  while (frac.size() < 3) frac.insert(frac.begin(), '0');
  return std::to_string(us / 1000) + "." + frac + " ms";
}

}  // namespace

HistoryStats ComputeStats(const History& history) {
  HistoryStats s;
  std::unordered_map<std::int64_t, std::size_t> open_ops;  // process -> pos
  std::map<std::string, std::vector<std::int64_t>> lat;
  std::map<std::string, std::deque<std::size_t>> open_faults;  // f -> windows
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Event& e = history[i];
    if (e.is_nemesis()) {
      ++s.nemesis_events;
      // faultline's own vocabulary: a fault X is in effect from the info of
      // "start-X" (unless it carries an error) to the info of "stop-X".
      bool starts = e.f.rfind("start-", 0) == 0;
      bool stops = e.f.rfind("stop-", 0) == 0;
      if (starts || stops) {
        if (e.type != EventType::kInfo) continue;
        std::string kind = e.f.substr(starts ? 6 : 5);
        auto& q = open_faults[kind];
        if (starts && e.error.empty()) {
          FaultWindow w;
          w.f = kind;
          w.start = e.time;
          w.start_index = e.index;
          w.value = e.value;
          q.push_back(s.faults.size());
          s.faults.push_back(std::move(w));
        } else if (stops && !q.empty()) {
          FaultWindow& w = s.faults[q.front()];
          q.pop_front();
          w.end = e.time;
          w.end_index = e.index;
        }
        continue;
      }
      if (e.type == EventType::kInvoke) {
        FaultWindow w;
        w.f = e.f;
        w.start = e.time;
        w.start_index = e.index;
        w.value = e.value;
        open_faults[e.f].push_back(s.faults.size());
        s.faults.push_back(std::move(w));
      } else if (e.type == EventType::kInfo) {
        auto& q = open_faults[e.f];
        if (!q.empty()) {
          FaultWindow& w = s.faults[q.front()];
          q.pop_front();
          w.end = e.time;
          w.end_index = e.index;
        } else {
          FaultWindow w;
          w.f = e.f;
          w.start = e.time;
          w.end = e.time;
          w.start_index = e.index;
          w.end_index = e.index;
          w.value = e.value;
          s.faults.push_back(std::move(w));
        }
      }
      continue;
    }
    ++s.client_events;
    if (e.type == EventType::kInvoke) {
      open_ops[e.process] = i;
      continue;
    }
    Count(s.total, e.type);
    Count(s.counts[e.f], e.type);
    auto it = open_ops.find(e.process);
    if (it == open_ops.end()) continue;
    const Event& inv = history[it->second];
    open_ops.erase(it);
    if (inv.time && e.time && *e.time >= *inv.time) {
      lat[e.f].push_back(*e.time - *inv.time);
    }
  }
  for (const auto& [process, pos] : open_ops) {
    (void)process;
    Count(s.total, EventType::kInvoke);
    Count(s.counts[history[pos].f], EventType::kInvoke);
  }
  for (auto& [f, v] : lat) {
    std::sort(v.begin(), v.end());
    LatencyStats& l = s.latency[f];
    l.count = static_cast<std::int64_t>(v.size());
    l.p50 = Quantile(v, 0.50);
    l.p90 = Quantile(v, 0.90);
    l.p99 = Quantile(v, 0.99);
    l.max = v.back();
  }
  return s;
}

std::string StatsToJson(const HistoryStats& s) {
  std::string out = "{\"ops\":{";
  AppendCounts(out, s.total);
  out += "},\"by_f\":{";
  bool first = true;
  for (const auto& [f, c] : s.counts) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, f);
    out += ":{";
    AppendCounts(out, c);
    auto it = s.latency.find(f);
    if (it != s.latency.end()) {
      const LatencyStats& l = it->second;
      out += ",\"latency_ns\":{\"count\":";
      AppendInt(out, l.count);
      out += ",\"p50\":";
      AppendInt(out, l.p50);
      out += ",\"p90\":";
      AppendInt(out, l.p90);
      out += ",\"p99\":";
      AppendInt(out, l.p99);
      out += ",\"max\":";
      AppendInt(out, l.max);
      out += '}';
    }
    out += '}';
  }
  out += "},\"faults\":[";
  first = true;
  for (const FaultWindow& w : s.faults) {
    if (!first) out += ',';
    first = false;
    out += "{\"f\":";
    AppendJsonString(out, w.f);
    out += ",\"start\":";
    AppendOptInt(out, w.start);
    out += ",\"end\":";
    AppendOptInt(out, w.end);
    out += ",\"start_index\":";
    AppendInt(out, w.start_index);
    out += ",\"end_index\":";
    if (w.end_index >= 0) {
      AppendInt(out, w.end_index);
    } else {
      out += "null";
    }
    out += ",\"value\":";
    w.value.AppendJson(out);
    out += '}';
  }
  out += "],\"events\":{\"client\":";
  AppendInt(out, s.client_events);
  out += ",\"nemesis\":";
  AppendInt(out, s.nemesis_events);
  out += "}}";
  return out;
}

Verdict StatsVerdict(const History& history) {
  HistoryStats s = ComputeStats(history);
  Verdict v;
  v.checker = "stats";
  v.summary = Summary(s.total);
  if (s.total.ok == 0) {
    v.validity = Validity::kUnknown;
    v.summary += "; no operation completed ok, so nothing was tested";
  } else {
    v.validity = Validity::kValid;
  }
  std::string& x = v.explanation;
  for (const auto& [f, c] : s.counts) {
    x += f + ": " + Summary(c);
    auto it = s.latency.find(f);
    if (it != s.latency.end()) {
      const LatencyStats& l = it->second;
      x += "; latency p50 " + Ms(l.p50) + ", p90 " + Ms(l.p90) + ", p99 " +
           Ms(l.p99) + ", max " + Ms(l.max);
    }
    x += '\n';
  }
  if (!s.faults.empty()) {
    x += std::to_string(s.faults.size()) + " fault window(s)\n";
  }
  v.details_json = StatsToJson(s);
  return v;
}

}  // namespace faultline::checkers

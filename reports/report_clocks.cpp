#include "reports/report_clocks.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace faultline::reports {
namespace {

using checkers::Event;
using checkers::Value;
using nlohmann::json;

// A number field as a double; false when absent or not a number.
bool Number(const Value* v, double* out) {
  if (v == nullptr) return false;
  if (v->kind() == Value::Kind::kInt) {
    *out = static_cast<double>(v->as_int());
    return true;
  }
  if (v->kind() == Value::Kind::kDouble) {
    *out = v->as_double();
    return std::isfinite(*out);
  }
  return false;
}

// One node's clock as the chart sees it: offset `base` ms at x0, drifting
// by (rate - 1) ms per ms of x (µs, so / 1000) when timed.
struct Line {
  double base = 0;
  double rate = 1;
  std::int64_t x0 = 0;
  std::vector<std::pair<std::int64_t, double>> points;
};

class Series {
 public:
  explicit Series(bool timed) : timed_(timed) {}

  double At(const Line& l, std::int64_t x) const {
    if (!timed_ || l.rate == 1) return l.base;
    return l.base + (l.rate - 1) * static_cast<double>(x - l.x0) / 1000.0;
  }
  Line& Of(const std::string& node) {
    auto [it, fresh] = lines_.try_emplace(node);
    if (fresh) {
      order_.push_back(node);
      it->second.points.emplace_back(0, 0.0);
    }
    return it->second;
  }
  // The node's offset becomes `ms` at x (or at its last point, if later)
  // and runs at `rate` from there.
  void Set(const std::string& node, std::int64_t x, double ms, double rate) {
    Line& l = Of(node);
    x = std::max(x, l.points.back().first);
    const double before = At(l, x);
    if (l.points.back().first != x || l.points.back().second != before)
      l.points.emplace_back(x, before);
    if (ms != before) l.points.emplace_back(x, ms);
    l.base = ms;
    l.rate = rate;
    l.x0 = x;
  }
  json Finish(std::int64_t end) {
    json nodes = json::array(), series = json::array();
    double max_abs = 0;
    for (const auto& name : order_) {
      Line& l = lines_[name];
      const std::int64_t last = std::max(end, l.points.back().first);
      l.points.emplace_back(last, At(l, last));
      json pts = json::array();
      for (const auto& [x, ms] : l.points) {
        pts.push_back({x, std::round(ms * 1000) / 1000});
        max_abs = std::max(max_abs, std::fabs(ms));
      }
      nodes.push_back(name);
      series.push_back(std::move(pts));
    }
    return {{"nodes", std::move(nodes)},
            {"series", std::move(series)},
            {"max_abs", max_abs}};
  }
  bool empty() const { return order_.empty(); }

 private:
  const bool timed_;
  std::map<std::string, Line> lines_;
  std::vector<std::string> order_;
};

std::int64_t XOf(const Event& e, bool timed) {
  return timed && e.time ? *e.time / 1000 : e.index;
}

}  // namespace

json ClockSeries(const checkers::History& history, bool timed,
                 std::int64_t end) {
  Series s(timed);
  std::int64_t strobe_invoke_x = 0;
  for (const Event& e : history) {
    if (!e.is_nemesis()) continue;
    const std::int64_t x = XOf(e, timed);
    if (e.is_invoke()) {
      if (e.f == "start-strobe") strobe_invoke_x = x;
      continue;
    }
    if (!e.value.is_object() || !e.error.empty()) continue;
    const bool start_clock = e.f == "start-clock";
    const bool start_strobe = e.f == "start-strobe";
    if (start_clock || start_strobe) {
      double rate = 1;
      if (start_clock && !Number(e.value.Find("rate"), &rate)) rate = 1;
      const Value* now = e.value.Find("clock_ms");
      if (now == nullptr || !now->is_object()) continue;
      for (const auto& [node, v] : now->as_object()) {
        double ms = 0;
        if (Number(&v, &ms)) s.Set(node, x, ms, rate);
      }
      continue;
    }
    if (e.f != "stop-clock" && e.f != "stop-strobe") continue;
    const Value* flips = e.value.Find("flips");
    const Value* healed = e.value.Find("healed");
    if (timed && flips != nullptr && flips->is_list() && healed != nullptr &&
        healed->is_list()) {
      for (const Value& f : flips->as_list()) {
        double at = 0, ms = 0;
        if (!Number(f.Find("at_ms"), &at) || !Number(f.Find("clock_ms"), &ms))
          continue;
        const std::int64_t fx =
            std::min(x, strobe_invoke_x + static_cast<std::int64_t>(at * 1000));
        for (const Value& n : healed->as_list())
          if (n.is_string()) s.Set(n.as_string(), fx, ms, 1);
      }
    }
    const Value* after = e.value.Find("offset_ms");
    if (after == nullptr || !after->is_object()) continue;
    for (const auto& [node, v] : after->as_object()) {
      double ms = 0;
      if (Number(&v, &ms)) s.Set(node, x, ms, 1);
    }
  }
  if (s.empty()) return nullptr;
  return s.Finish(end);
}

}  // namespace faultline::reports

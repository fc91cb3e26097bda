#include "nemesis/clock/strobe.h"

#include <utility>

namespace faultline::nemesis {

long long StrobeFlipsDue(std::chrono::milliseconds elapsed,
                         std::chrono::milliseconds period) {
  if (elapsed.count() < 0 || period.count() <= 0) return 1;
  return elapsed.count() / period.count() + 1;
}

ClockStrobe::ClockStrobe(harness::ClockControl& clock,
                         std::vector<harness::Node> nodes, long long delta_ms,
                         long long period_ms)
    : clock_(clock),
      nodes_(std::move(nodes)),
      delta_ms_(delta_ms),
      period_(period_ms) {}

ClockStrobe::~ClockStrobe() { (void)Stop(); }

ClockStrobe::Flip ClockStrobe::FlipAll(long long k) {
  Flip flip;
  flip.up = StrobeUpAfter(k);
  flip.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   SteadyClock::now() - started_)
                   .count();
  bool first = true;
  for (const auto& node : nodes_) {
    auto off = clock_.Skew(node, StrobeStepMs(k, delta_ms_), 1.0);
    if (!off.ok()) {
      flip.error +=
          (flip.error.empty() ? "" : "; ") + node.name + ": " + off.error();
      continue;
    }
    if (first) flip.clock_ms = *off;
    first = false;
  }
  return flip;
}

harness::Status ClockStrobe::Start() {
  if (delta_ms_ < kMinStrobeDeltaMs || delta_ms_ > kMaxStrobeDeltaMs)
    return harness::Fail("strobe: delta " + std::to_string(delta_ms_) +
                         " ms is outside 1 ms .. 1 day");
  if (period_.count() < kMinStrobePeriodMs ||
      period_.count() > kMaxStrobePeriodMs)
    return harness::Fail("strobe: period " + std::to_string(period_.count()) +
                         " ms is outside 10 ms .. 1 h");
  std::unique_lock<std::mutex> lock(mu_);
  if (thread_.joinable() || !flips_.empty())
    return harness::Fail("strobe: already started");
  started_ = SteadyClock::now();
  Flip first = FlipAll(0);
  flips_.push_back(first);
  if (!first.error.empty()) return harness::Fail("strobe: " + first.error);
  thread_ = std::thread([this] { Run(); });
  return harness::Ok();
}

void ClockStrobe::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (long long k = 1;; ++k) {
    if (cv_.wait_until(lock, started_ + k * period_, [&] { return stop_; }))
      return;
    Flip flip = FlipAll(k);  // under mu_: Stop cannot slip in between
    flips_.push_back(std::move(flip));
    cv_.notify_all();
  }
}

std::vector<ClockStrobe::Flip> ClockStrobe::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
    thread_.join();
  return Flips();
}

std::vector<ClockStrobe::Flip> ClockStrobe::Flips() {
  std::lock_guard<std::mutex> lock(mu_);
  return flips_;
}

bool ClockStrobe::AwaitFlips(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    return flips_.size() >= n || stop_;
  }) && flips_.size() >= n;
}

checkers::Value StrobeFlipsValue(const std::vector<ClockStrobe::Flip>& flips) {
  using checkers::Value;
  Value::List out;
  for (const auto& f : flips) {
    Value::Object o = {{"at_ms", Value::Int(f.at_ms)},
                       {"up", Value::Bool(f.up)},
                       {"clock_ms", Value::Double(f.clock_ms)}};
    if (!f.error.empty()) o.emplace_back("error", Value::String(f.error));
    out.push_back(Value::MakeObject(std::move(o)));
  }
  return Value::MakeList(std::move(out));
}

}  // namespace faultline::nemesis

#include "nemesis/net/delay.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "nemesis/net/partition.h"

namespace faultline::nemesis {
namespace {

using harness::Fail;

// Parses a whole decimal number in [lo, hi]; nullopt otherwise.
std::optional<long long> ParseInt(const std::string& s, long long lo,
                                  long long hi) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> ParseU64(const std::string& s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

}  // namespace

std::string NetdelayUsage() {
  return "usage: faultline-netdelay --queue N --delay-ms D [--jitter-ms J] "
         "[--seed S]\n"
         "Holds every packet an iptables NFQUEUE rule sends to queue N for D\n"
         "milliseconds (plus or minus up to J, never reordered), then accepts\n"
         "it. Run it inside the network namespace whose rules use the queue.\n"
         "On SIGTERM or SIGINT it accepts every held packet and exits 0.\n"
         "  --queue N       NFQUEUE number, 0..65535\n"
         "  --delay-ms D    delay, " +
         std::to_string(kMinDelayMs) + ".." + std::to_string(kMaxDelayMs) +
         "\n"
         "  --jitter-ms J   uniform jitter, 0..D (default 0)\n"
         "  --seed S        jitter seed (default 1)\n";
}

harness::Result<NetdelayOptions> ParseNetdelayArgs(
    const std::vector<std::string>& args) {
  NetdelayOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
    if (a != "--queue" && a != "--delay-ms" && a != "--jitter-ms" &&
        a != "--seed")
      return Fail("unknown argument '" + a + "'");
    if (i + 1 >= args.size()) return Fail(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--queue") {
      auto n = ParseInt(v, 0, 65535);
      if (!n) return Fail("--queue: '" + v + "' is not a number in 0..65535");
      o.queue = static_cast<int>(*n);
    } else if (a == "--delay-ms") {
      auto n = ParseInt(v, kMinDelayMs, kMaxDelayMs);
      if (!n)
        return Fail("--delay-ms: '" + v + "' is not a number in " +
                    std::to_string(kMinDelayMs) + ".." +
                    std::to_string(kMaxDelayMs));
      o.delay_ms = static_cast<int>(*n);
    } else if (a == "--jitter-ms") {
      auto n = ParseInt(v, 0, kMaxDelayMs);
      if (!n) return Fail("--jitter-ms: '" + v + "' is not a number >= 0");
      o.jitter_ms = static_cast<int>(*n);
    } else {
      auto n = ParseU64(v);
      if (!n) return Fail("--seed: '" + v + "' is not a number in 0..2^64-1");
      o.seed = *n;
    }
  }
  if (o.queue < 0) return Fail("--queue is required");
  if (o.delay_ms < 0) return Fail("--delay-ms is required");
  if (o.jitter_ms > o.delay_ms)
    return Fail("--jitter-ms must not exceed --delay-ms");
  return o;
}

DelayLine::DelayLine(std::int64_t delay_ms, std::int64_t jitter_ms,
                     std::uint64_t seed)
    : delay_ms_(delay_ms), jitter_ms_(jitter_ms), rng_(SplitMix64(seed)) {
  if (delay_ms < 0 || jitter_ms < 0 || jitter_ms > delay_ms) {
    std::fprintf(stderr, "%s:%d: DelayLine: bad delay %lld / jitter %lld\n",
                 __FILE__, __LINE__, static_cast<long long>(delay_ms),
                 static_cast<long long>(jitter_ms));
    std::abort();
  }
}

std::int64_t DelayLine::Push(std::uint32_t id, std::int64_t now_ms) {
  if (now_ms < last_arrival_ms_) {
    std::fprintf(stderr, "%s:%d: DelayLine: time went backwards\n", __FILE__,
                 __LINE__);
    std::abort();
  }
  last_arrival_ms_ = now_ms;
  std::int64_t d = delay_ms_;
  if (jitter_ms_ > 0) {
    auto span = static_cast<std::uint64_t>(2 * jitter_ms_ + 1);
    d += static_cast<std::int64_t>(UniformBelow(rng_, span)) - jitter_ms_;
  }
  std::int64_t release = now_ms + d;
  if (release < last_release_ms_) release = last_release_ms_;
  last_release_ms_ = release;
  held_.push_back({id, release});
  return release;
}

std::vector<std::uint32_t> DelayLine::PopDue(std::int64_t now_ms) {
  std::vector<std::uint32_t> out;
  while (!held_.empty() && held_.front().release_ms <= now_ms) {
    out.push_back(held_.front().id);
    held_.pop_front();
  }
  return out;
}

std::vector<std::uint32_t> DelayLine::PopAll() {
  std::vector<std::uint32_t> out;
  out.reserve(held_.size());
  for (const auto& h : held_) out.push_back(h.id);
  held_.clear();
  return out;
}

std::optional<std::int64_t> DelayLine::NextRelease() const {
  if (held_.empty()) return std::nullopt;
  return held_.front().release_ms;
}

bool QueueBound(const std::string& proc_nfnetlink_queue, int queue) {
  std::istringstream in(proc_nfnetlink_queue);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    long long q = -1;
    if (fields >> q && q == queue) return true;
  }
  return false;
}

}  // namespace faultline::nemesis

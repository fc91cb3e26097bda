// Network delay: the pure parts shared by the faultline-netdelay daemon
// (nemesis/programs/netdelay_main.cpp, which holds packets queued by an
// iptables NFQUEUE rule) and NetnsNemesis (which starts it and installs the
// rules). `tc netem` needs the sch_netem kernel module; NFQUEUE works without
// it.
//
// No I/O here: DelayLine decides when each held packet is released, the
// option parser checks the daemon's flags, DelayRules builds the iptables
// batch. See docs/faults.md ("delay").
//
// Thread-safety: DelayLine is not thread-safe (one owner); the free
// functions are pure and may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "harness/interfaces/result.h"

namespace faultline::nemesis {

// Limits of the delay a fault may ask for (also the config's bounds).
inline constexpr int kMinDelayMs = 1;
inline constexpr int kMaxDelayMs = 10000;

struct NetdelayOptions {
  int queue = -1;          // --queue N, 0..65535 (required)
  int delay_ms = -1;       // --delay-ms D, kMinDelayMs..kMaxDelayMs (required)
  int jitter_ms = 0;       // --jitter-ms J, 0..delay_ms
  std::uint64_t seed = 1;  // --seed S
  bool help = false;       // --help / -h
};

// Parses the daemon's argv (argv[0] excluded). Errors name the flag.
harness::Result<NetdelayOptions> ParseNetdelayArgs(
    const std::vector<std::string>& args);

// The daemon's usage text (one paragraph per flag).
std::string NetdelayUsage();

// A FIFO of held packets. Each packet arriving at time t (ms on a monotonic
// clock, any origin) is released at max(t + delay + u, previous release),
// u uniform in [-jitter, +jitter] from a seeded generator: packets leave in
// arrival order (no reordering), and never earlier than t + delay - jitter.
class DelayLine {
 public:
  // Preconditions: delay_ms >= 0, 0 <= jitter_ms <= delay_ms.
  DelayLine(std::int64_t delay_ms, std::int64_t jitter_ms, std::uint64_t seed);

  // Holds packet `id` that arrived at `now_ms`; returns its release time.
  // Arrival times must not decrease (aborts otherwise: a broken clock).
  std::int64_t Push(std::uint32_t id, std::int64_t now_ms);
  // Removes and returns, in arrival order, the packets due at `now_ms`.
  std::vector<std::uint32_t> PopDue(std::int64_t now_ms);
  // Removes and returns every held packet (shutdown: accept them all).
  std::vector<std::uint32_t> PopAll();
  // Release time of the oldest held packet, if any.
  std::optional<std::int64_t> NextRelease() const;
  std::size_t size() const { return held_.size(); }

 private:
  struct Held {
    std::uint32_t id;
    std::int64_t release_ms;
  };
  std::int64_t delay_ms_;
  std::int64_t jitter_ms_;
  std::mt19937_64 rng_;
  std::deque<Held> held_;
  std::int64_t last_arrival_ms_ = INT64_MIN;
  std::int64_t last_release_ms_ = INT64_MIN;
};

// The iptables-restore batch (for `iptables-restore --noflush`) that queues
// every packet from each address in `sources` to NFQUEUE `queue`, with
// --queue-bypass so that packets pass undelayed while no daemon listens
// (a dead daemon heals the fault instead of turning it into a partition).
// The rules live in the chain kDelayChain (nemesis/net/iptables_chain.h).
// Defined in netdelay_node.cpp: the daemon, built from this file's
// definitions alone, does not link the iptables code.
std::string DelayRules(const std::vector<std::string>& sources, int queue);

// Whether the content of /proc/<pid>/net/netfilter/nfnetlink_queue lists a
// bound queue number `queue` (first column).
bool QueueBound(const std::string& proc_nfnetlink_queue, int queue);

}  // namespace faultline::nemesis

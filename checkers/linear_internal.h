// Internals of the linearizability checker, shared by the linear_*.cpp files
// (partitioning, pruning, search, explanation). Not a public API.
//
// Positions: every call and return gets an int64 position such that a return
// precedes a call iff it happened strictly before it. With times, a call at
// time t is 2t and a return 2t+1 (equal times are concurrent); without
// times, the event index is used the same way.
//
// Thread-safety: a Partition and its SearchContext belong to one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkers/history.h"
#include "checkers/model.h"

namespace faultline::checkers::linear {

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

// One operation of a partition. Points into the History being checked,
// which must outlive it, and keeps its own copy of what the model sees
// (copies of Values share their nodes), so the search and the pre-passes
// read the op without touching the scattered events.
struct Op {
  const Event* inv = nullptr;  // the invoke
  const Event* ok = nullptr;   // the ok completion, or nullptr
  std::int64_t call = 0;       // position of the invocation
  std::int64_t ret = kNever;   // position by which it must have taken effect;
                               // kNever: optional (may never take effect)
  std::int64_t complete_index = -1;  // event index of the completion, or -1
  EventType outcome = EventType::kInvoke;  // kOk, kInfo, or kInvoke (never
                                           // completed)
  bool closed = false;  // an info op whose interval an observation closed
  Operation operation;  // f, input, output (when ok) and completed
  bool mandatory() const { return ret != kNever; }
  bool completed() const { return ok != nullptr; }
  std::int64_t invoke_index() const { return inv->index; }
  std::int64_t process() const { return inv->process; }
  // The model's view.
  const Operation& Make() const { return operation; }
};

struct Partition {
  Value key;
  std::vector<Op> ops;     // sorted by call position (stable by invoke index)
  std::size_t pruned = 0;  // ops dropped by the pre-passes
  std::size_t closed = 0;  // info ops whose interval was closed
};

// Memory shared by all keys of one check.
struct Budget {
  std::uint64_t limit = 0;  // 0: none
  std::atomic<std::uint64_t> used{0};
  std::atomic<std::uint64_t> peak{0};
  // LinearizableOptions::memory_in_use, or null: then `limit` bounds what
  // it returns rather than `used`.
  const std::function<std::uint64_t()>* meter = nullptr;
  // Adds `delta` bytes; false when the limit is now exceeded.
  bool Charge(std::int64_t delta);
  // With a meter: true when what it reads is past the limit.
  bool MeterOver() const {
    return meter != nullptr && limit != 0 && (*meter)() > limit;
  }
};

struct BuildResult {
  std::vector<Partition> partitions;  // in order of first appearance
  std::string error;                  // non-empty: the history is malformed
  std::size_t failed_ops = 0;         // fail completions, ignored
  bool timed = false;        // positions are times (OrderedByTime, op_pairs.h)
  bool over_memory = false;  // stopped: budget->MeterOver()
};

// Pairs invocations with completions, drops failed ops and nemesis events,
// validates op shapes against the model and groups ops by partition key.
// With a budget that has a meter, looks at it every 65,536 events and stops
// (over_memory) past its limit.
BuildResult BuildPartitions(const History& history, const Model& model,
                            const Budget* budget = nullptr);

// Exact pre-passes (docs/checker.md): drops crashed read-only ops and, for
// models with a ValueFlow, crashed writes/cas whose value nothing observes;
// closes the interval of a crashed op that uniquely produced a value an ok
// op observed.
void Prune(Partition& p, const Model& model);

// The unique-value fast path (linear_unique.cpp): for models with a
// ValueFlow whose ops produce pairwise distinct values, none the initial
// one, decides exactly in O(n log n) whether `p` is linearizable. When it
// applies it also closes crashed producers that mandatory ops observe and
// drops crashed ops nothing mandatory needs (p.pruned, p.closed count
// them), so that the search, run on `p` to explain a violation, sees only
// mandatory ops. When it does not apply, `p` is unchanged.
// On a violation it also finds the earliest one, as the search defines it
// (the first return no linearizable prefix gets past), and a linearizable
// prefix that gets there, so the violation is explained without a search.
struct UniqueResult {
  bool applies = false;
  bool valid = false;              // meaningful when applies
  std::vector<std::size_t> order;  // valid + witness: a linearization
                                   // (indices into p.ops as changed)
  // Invalid: the blocker's return position, and a linearization of every
  // op returning before it (indices into p.ops as changed).
  std::int64_t blocker_ret = kNever;
  std::vector<std::size_t> prefix;
  bool prefix_found = false;  // false only if the decisions disagree (a bug)
  bool gave_up = false;       // a limit stopped it: no verdict
  std::string reason;         // why it gave up
};
// With `limits`, gives up (gave_up, with the reason) when the cancel flag,
// the deadline or the budget's meter says so, between its decisions, on
// keys of 4,096 ops or more (smaller ones finish once begun).
struct Limits;
UniqueResult CheckUnique(Partition& p, const Model& model, bool witness,
                         const Limits* limits = nullptr);

// Splits p.ops (call order) into maximal runs separated by quiescent points
// (every earlier op must have taken effect before every later op is
// called). Returns the start index of each segment; the first is 0.
std::vector<std::size_t> QuiescentSplits(const Partition& p);

struct Limits {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* cancel = nullptr;  // the caller's
  // The position of the earliest violation found so far on any key (its
  // blocker's return), kNever while none. A search that gets past it (every
  // op returning up to it linearized) stops with kPassed: any violation of
  // its key comes later. May be null.
  const std::atomic<std::int64_t>* bound = nullptr;
  Budget* budget = nullptr;
};

// Interned model states and cached transitions of one partition. The
// transitions live in one open-addressing table keyed by (state, op), so a
// cached Step costs O(1) whatever the number of states an op was tried in.
class StateTable {
 public:
  StateTable(const Model& model, const Partition& p);
  std::uint32_t Intern(const Value& v);
  const Value& Get(std::uint32_t id) const { return states_[id]; }
  // Next state id of partition op `op` from state `s`, or -1 when the op
  // cannot take effect there. Cached.
  std::int64_t Step(std::uint32_t s, std::size_t op);
  // Bytes held: interned states and the transition table's slots.
  std::uint64_t bytes() const { return bytes_; }

 private:
  struct Hash {
    const Model* m;
    std::size_t operator()(const Value& v) const { return m->StateHash(v); }
  };
  struct Eq {
    const Model* m;
    bool operator()(const Value& a, const Value& b) const {
      return m->StateEqual(a, b);
    }
  };
  const Model& model_;
  const Partition& p_;
  std::unordered_map<Value, std::uint32_t, Hash, Eq> ids_;
  std::vector<Value> states_;
  // Open addressing, linear probing: keys_[i] = op << 32 | state, next_[i]
  // its next state (-1: rejected); kEmpty marks a free slot (no op index
  // reaches 2^32 - 1). Two arrays keep a slot at 12 bytes.
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  void Grow();
  std::vector<std::uint64_t> keys_;
  std::vector<std::int32_t> next_;
  std::size_t used_ = 0;
  unsigned shift_ = 64;  // 64 - log2(keys_.size())
  std::uint64_t bytes_ = 0;
};

// kPassed: stopped because the search got past Limits::bound.
enum class Outcome { kOk, kViolation, kUnknown, kPassed };

struct SegmentResult {
  Outcome outcome = Outcome::kUnknown;
  std::vector<std::uint32_t> end_states;  // kOk: reachable end states
  // Witness (when asked): for end_states[i], the start state it came from
  // and the order of partition op indices.
  std::vector<std::uint32_t> witness_start;
  std::vector<std::vector<std::size_t>> witness_order;
  // kViolation: the linearizable prefix that got furthest in time
  // (partition op indices, in order), the state it reached and the start
  // state. "Furthest" is the latest first unlinearized return (the
  // blocker's), then the most ops: the blocker's return is then the
  // earliest instant at which the key's history stops being linearizable.
  std::vector<std::size_t> best_prefix;
  std::uint32_t best_state = 0;
  std::uint32_t best_start = 0;
  // The position of that first unlinearized return (kViolation: the
  // blocker's; kUnknown: how far the search got, so no violation of the
  // segment returns before it), kNever when unknown.
  std::int64_t best_ret = kNever;
  std::string reason;  // kUnknown: why
  std::uint64_t memo_entries = 0;
  std::size_t seg_begin = 0, seg_end = 0;  // the segment searched
};

// Wing & Gong / Lowe search of ops [begin, end) of `p` (a segment) from each
// of `starts`. With all_ends, finds every reachable end state (needed when
// another segment follows); otherwise stops at the first.
SegmentResult SearchSegment(const Partition& p, std::size_t begin,
                            std::size_t end,
                            const std::vector<std::uint32_t>& starts,
                            bool all_ends, bool witness, StateTable& table,
                            const Limits& limits);

// Explanation of a violation in partition p: the summary's reason, the
// explanation text and the members of the JSON object "failure" (without
// the braces), plus what the violation context (violation_context.h) needs.
struct Explanation {
  std::string summary;  // the model's reason, e.g. "read returned 4 but the
                        // register held 7"; no key
  std::string text;
  std::string json;
  std::size_t blocker = SIZE_MAX;     // partition op whose return the prefix
                                      // could not get past
  std::vector<std::size_t> rejected;  // stuck ops the state rejected, the
                                      // blocker first, then by return
  std::int64_t at = kNever;           // the blocker's return position
  std::int64_t at_index = -1;  // the event at that position (the blocker's
                               // completion, or for a closed crashed op
                               // the completion of its first observer)
  Value state;                 // the state the prefix reached
};
Explanation Explain(const Partition& p, const Model& model, StateTable& table,
                    const SegmentResult& failed);

// JSON of one op: {"index","complete_index","process","f","value","output",
// "type","closed","node","call_s","return_s"} (node: the completion's node,
// else the invoke's, else null; times in seconds since the start, null when
// the history has none or the op never completed).
void AppendOpJson(std::string& out, const Op& op);
// "p3 write 5 on n2 [1.20..1.25 s, events 12..15 ok]"-style one-liner.
std::string OpLine(const Model& model, const Op& op);
// The node an op went through: its completion's, else its invoke's; empty
// when the history does not say.
const std::string& OpNode(const Op& op);
// Seconds since the start with two decimals, "14.60 s".
std::string Seconds(std::int64_t ns);

}  // namespace faultline::checkers::linear

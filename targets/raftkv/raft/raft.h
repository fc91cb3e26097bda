// The Raft consensus core of raftkv, as a pure state machine in the shape of
// etcd-io/raft: no sockets, no files, no clock reads, no threads. The driver
// (server/ or the simulator) feeds it messages, ticks and the current time of
// the node's own monotonic clock, then performs what it asks for via Ready:
//
//   loop:
//     node.Tick(now) every few ms; node.Step(msg, now) per received message;
//     node.Propose / RequestRead / TransferLeadership on client requests
//     if node.HasReady():
//       Ready rd = node.GetReady();
//       1. persist rd.hard_state, rd.entries (overwriting the log from
//          rd.entries.front().index on), rd.snapshot; fsync   (must_sync)
//       2. send rd.messages
//       3. apply rd.snapshot (if any), then rd.committed in order
//       4. serve rd.read_states whose index <= applied; fail rd.failed_reads
//       node.Advance(rd)
//
// Implemented: leader election with randomized timeouts in
// [election_timeout, 2*election_timeout), PreVote, CheckQuorum, log
// replication with batching and pipelining (max_inflight appends in flight),
// commit only by counting replicas of current-term entries, leadership
// transfer (TimeoutNow), log compaction and chunked InstallSnapshot (stale or
// duplicate snapshots ignored, appends overlapping the snapshot trimmed),
// linearizable reads by ReadIndex, leader lease or follower leases, and the
// unsafe switches below for checking the checkers.
//
// Invariants the core keeps (checked after every step by the simulator's
// invariant checker, raft/invariants.h): at most one leader per term; log
// matching; leader completeness; applied entries are identical on every node;
// commit index never decreases; a read is served at an index >= every index
// committed before the read was requested.
//
// Thread-safety: none. One Node is used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/raft/types.h"

namespace faultline::raftkv::raft {

enum class Role : std::uint8_t {
  kFollower,
  kPreCandidate,
  kCandidate,
  kLeader
};
const char* ToString(Role r);

enum class ReadMode : std::uint8_t {
  // The leader confirms leadership with a heartbeat round, then serves at
  // the commit index it recorded when the read arrived. Followers forward
  // reads to the leader (kReadIndex) and serve once applied >= that index.
  kReadIndex,
  // The leader serves at its commit index while its leader lease is valid:
  // lease start = send time of the newest heartbeat round a majority has
  // acknowledged; length = election_timeout shrunk for drift, minus
  // lease_guard. Otherwise it falls back to ReadIndex.
  kLease,
  // Followers holding a valid read lease serve locally (see lease.h for the
  // rules); without one they use ReadIndex through the leader. The leader
  // serves by leader lease / ReadIndex as in kLease.
  kFollowerLease,
};
const char* ToString(ReadMode m);
// Parses "readindex", "lease", "follower-lease".
std::optional<ReadMode> ParseReadMode(const std::string& s);

// Unsafe switches: each turns off exactly one safety mechanism, so tests can
// prove the checkers find the resulting anomaly. Default: none.
// (Unsafe::kNone is scoped; GCC's -Wshadow still flags it against raft::kNone.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
enum class Unsafe : std::uint8_t {
  kNone,
  // "vote-not-persisted": HardState in Ready carries vote = kNone, so a
  // restarted node forgets whom it voted for -> two leaders in one term.
  kVoteNotPersisted,
  // "leader-read-no-quorum": the leader serves reads at its commit index
  // immediately, with no heartbeat round and no lease -> stale reads from an
  // isolated or paused old leader.
  kLeaderReadNoQuorum,
  // "follower-lease-no-margin": the holder starts its lease timer when the
  // grant arrives, not when it sent the request, and no drift margin or
  // guard is applied -> stale follower reads under delay or clock skew.
  kFollowerLeaseNoMargin,
  // "commit-old-terms": the leader advances commit by counting replicas of
  // entries of earlier terms too -> lost committed writes (Raft fig. 8).
  kCommitOldTerms,
  // "lock-token-per-term": not used by the core; the server's lock service
  // issues per-leader counters instead of Raft indexes as fencing tokens.
  kLockTokenPerTerm,
  // "log-not-synced": not used by the core; the server's storage writes as
  // usual but never fsyncs (storage/no_sync_env.h) -> a power loss can lose
  // acknowledged entries and votes.
  kLogNotSynced,
  // "txn-not-atomic": not used by the core; the server proposes each
  // micro-op of a TXN as its own entry, the next once the previous applied
  // -> other entries interleave: intermediate reads (G1b), read skew and
  // dependency cycles.
  kTxnNotAtomic,
};
#pragma GCC diagnostic pop
const char* ToString(Unsafe u);
// Parses "none" and the names in quotes above.
std::optional<Unsafe> ParseUnsafe(const std::string& s);

struct Config {
  NodeId id = kNone;
  std::vector<NodeId> voters;  // every member, including `id`
  std::uint64_t seed = 1;      // randomizes election timeouts (own PRNG)

  Nanos heartbeat_interval = 50'000'000;  // 50 ms
  Nanos election_timeout = 500'000'000;   // randomized in [t, 2t)
  bool pre_vote = true;
  bool check_quorum = true;

  std::size_t max_append_entries = 256;    // entries per kAppend
  std::size_t max_append_bytes = 1 << 20;  // bytes of entry data per kAppend
  std::size_t max_inflight = 64;           // unacknowledged kAppends
  std::size_t snapshot_chunk_bytes = 1 << 16;  // per kSnapshot message

  ReadMode read_mode = ReadMode::kReadIndex;
  Nanos follower_lease = 300'000'000;  // lease length a leader grants; must
                                       // be < election_timeout
  double drift_epsilon = 0.001;        // max relative clock-rate error
  Nanos lease_guard = 5'000'000;       // extra safety interval, 5 ms

  Unsafe unsafe = Unsafe::kNone;
};

// Role/leader/term as of the last change, for logging.
struct SoftState {
  Role role = Role::kFollower;
  Term term = 0;
  NodeId leader = kNone;
  bool operator==(const SoftState&) const = default;
};

// A linearizable read may be served once applied >= index.
struct ReadState {
  std::uint64_t context = 0;  // the id given to RequestRead
  Index index = 0;
};

struct Ready {
  std::optional<SoftState> soft_state;  // set when it changed
  std::optional<HardState> hard_state;  // set when it must be persisted
  std::vector<Entry> entries;           // to append; replaces the log from the
                                        // first entry's index on
  std::optional<Snapshot> snapshot;     // complete snapshot received from the
                                        // leader: persist, then restore the
                                        // state machine from it
  bool must_sync = false;               // fsync before sending messages
  std::vector<Message> messages;        // send after persisting
  std::vector<Entry> committed;         // apply in order, after `snapshot`
  std::vector<ReadState> read_states;
  std::vector<std::uint64_t> failed_reads;  // contexts that cannot be served
                                            // (leadership lost, no leader)
};

struct Status {
  NodeId id = kNone;
  Role role = Role::kFollower;
  Term term = 0;
  NodeId leader = kNone;
  NodeId vote = kNone;
  Index commit = 0;
  Index applied = 0;  // as acknowledged through Advance
  Index last_index = 0;
  Index snapshot_index = 0;
  ReadMode read_mode = ReadMode::kReadIndex;
  bool leader_lease_valid = false;    // leader: own lease now valid
  int lease_holders = 0;              // leader: unexpired follower leases
  bool follower_lease_valid = false;  // follower: holds a valid read lease
  Nanos follower_lease_remaining = 0;
  NodeId transferring_to = kNone;
};

struct ProposeResult {
  bool ok = false;
  Index index = 0;  // where the entry was appended (ok)
  Term term = 0;
  NodeId leader = kNone;  // !ok: who leads, as far as this node knows
  std::string error;      // !ok: "not leader", "transfer in progress", ...
};

// Outcome of a follower's attempt to serve a read locally under its lease.
enum class LocalRead : std::uint8_t {
  kServe,    // serve the value already taken
  kWait,     // a not-yet-known-committed entry touches the key, or the
             // state machine lags the lease floor: retry after the next Ready
  kNoLease,  // no valid lease: use RequestRead instead
};

class Node {
 public:
  Node(Config cfg, Nanos now);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Restores persisted state after a restart, before any other call.
  // `entries` follow the snapshot (if any) contiguously.
  void Restore(const HardState& hs, const std::optional<Snapshot>& snap,
               std::vector<Entry> entries);

  void Tick(Nanos now);
  void Step(const Message& m, Nanos now);

  // Appends a normal entry if this node leads (and no transfer is running).
  ProposeResult Propose(std::string data, Nanos now);
  // Asks for a linearizable read; the answer arrives as a ReadState or a
  // failed_reads entry with this context in a later Ready.
  void RequestRead(std::uint64_t context, Nanos now);
  // Follower-lease fast path. Call AFTER taking the value from the state
  // machine (value first, lease second). `touches_key(entry)` says whether a
  // log entry writes the key being read; the core asks it for every entry
  // it holds beyond the applied index.
  template <typename Pred>
  LocalRead TryLocalRead(Nanos now, Pred touches_key) const;
  // Starts a leadership transfer to `to` (leader only). Follower leases are
  // revoked and waited out first.
  bool TransferLeadership(NodeId to, Nanos now);
  // The driver took a snapshot of the state machine at `index` (<= applied):
  // drop log entries up to it, keep the snapshot to send to laggards.
  void Compact(Index index, std::string data);

  bool HasReady() const;
  // Each GetReady must be followed by Advance(rd) before the next GetReady
  // (Tick/Step/Propose/... in between are fine).
  Ready GetReady();
  // Everything in `rd` was persisted, sent and applied.
  void Advance(const Ready& rd);

  Status GetStatus(Nanos now) const;
  // Entries currently held in memory, for the driver's local-read check.
  // Returns nullptr if `i` is compacted or beyond the last index.
  const Entry* EntryAt(Index i) const;

 private:
  struct Impl;
  Impl* impl_;
  bool LocalReadPrecheck(Nanos now, Index* from, Index* to,
                         LocalRead* early) const;
};

template <typename Pred>
LocalRead Node::TryLocalRead(Nanos now, Pred touches_key) const {
  Index from = 0, to = 0;
  LocalRead early = LocalRead::kNoLease;
  if (!LocalReadPrecheck(now, &from, &to, &early)) return early;
  for (Index i = from; i <= to; ++i) {
    const Entry* e = EntryAt(i);
    if (e == nullptr || touches_key(*e)) return LocalRead::kWait;
  }
  return LocalRead::kServe;
}

}  // namespace faultline::raftkv::raft

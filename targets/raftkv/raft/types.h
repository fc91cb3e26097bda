// Raft value types shared by the pure core (raft.h), the write-ahead log
// (storage/), the wire codec (raft/codec.h) and the simulator.
//
// Plain values, copyable, no shared state. Time is `Nanos`: nanoseconds on
// the *node's own* monotonic clock (the driver passes it in; the core never
// reads a clock). Different nodes' clocks are not comparable and may run at
// slightly different rates (bounded by Config::drift_epsilon).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace faultline::raftkv::raft {

using NodeId = std::uint64_t;  // 1..N; 0 means "none"
using Term = std::uint64_t;
using Index = std::uint64_t;  // log index, first entry is 1
using Nanos = std::int64_t;   // node-local monotonic time

constexpr NodeId kNone = 0;

enum class EntryType : std::uint8_t {
  kNormal = 0,  // data is an opaque state-machine command
  kNoop = 1,    // appended by every new leader; data empty
};

struct Entry {
  Term term = 0;
  Index index = 0;
  EntryType type = EntryType::kNormal;
  std::string data;
  bool operator==(const Entry&) const = default;
};

// What must be on stable storage before the node votes or replies.
struct HardState {
  Term term = 0;
  NodeId vote = kNone;  // whom this node voted for in `term`
  Index commit = 0;     // may lag; persisted so restarts do not regress it
  bool operator==(const HardState&) const = default;
};

// A state-machine snapshot covering every entry up to `index`.
struct SnapshotMeta {
  Index index = 0;
  Term term = 0;  // term of the entry at `index`
  std::vector<NodeId> voters;
  bool operator==(const SnapshotMeta&) const = default;
};

struct Snapshot {
  SnapshotMeta meta;
  std::string data;  // the state machine's own serialization
  bool operator==(const Snapshot&) const = default;
};

enum class MsgType : std::uint8_t {
  kPreVote = 0,
  kPreVoteResp = 1,
  kVote = 2,
  kVoteResp = 3,
  kAppend = 4,  // also the probe; entries may be empty
  kAppendResp = 5,
  kHeartbeat = 6,  // commit notice + leadership/lease round; no entries
  kHeartbeatResp = 7,
  kSnapshot = 8,  // one chunk of an InstallSnapshot
  kSnapshotResp = 9,
  kTimeoutNow = 10,  // leadership transfer: campaign now, skip PreVote
  kReadIndex = 11,   // follower asks the leader for a read index
  kReadIndexResp = 12,
};

const char* ToString(MsgType t);

// One message between two nodes. Fields not used by a type stay default.
struct Message {
  MsgType type = MsgType::kHeartbeat;
  NodeId from = kNone;
  NodeId to = kNone;
  Term term = 0;  // sender's term (PreVote: the term it would campaign in)

  // kAppend: index/log_term of the entry preceding `entries`.
  // kVote/kPreVote: the candidate's last log index/term.
  // kAppendResp: highest index known to match (or the rejected index).
  // kHeartbeatResp: the follower's last log index (loss detection).
  Index index = 0;
  Term log_term = 0;
  std::vector<Entry> entries;
  Index commit = 0;  // leader's commit index (append, heartbeat)

  bool reject = false;
  // kAppendResp reject: the highest follower index <= min(rejected index,
  // its last index) whose term is <= the rejected log_term; `log_term` then
  // carries the follower's term at that index (fast backup, as in etcd).
  Index reject_hint = 0;

  // kHeartbeat/kHeartbeatResp: leadership-confirmation round (ReadIndex,
  // leader lease). kReadIndex/kReadIndexResp: the request's id. kVote: 1
  // marks a campaign started by TimeoutNow (voters skip their "heard from a
  // leader recently" check).
  std::uint64_t context = 0;

  // kSnapshot: one chunk. `snapshot.data` holds bytes
  // [snap_offset, snap_offset + size) of the whole serialized snapshot of
  // `snap_total` bytes; `snap_done` marks the last chunk.
  // kSnapshotResp: `index` = snapshot index, `snap_offset` = bytes received;
  // reject = the follower holds no assembly of it: start from offset 0.
  Snapshot snapshot;
  std::uint64_t snap_offset = 0;
  std::uint64_t snap_total = 0;
  bool snap_done = false;

  // Follower read leases (Config::read_mode == kFollowerLease).
  // Follower -> leader (kHeartbeatResp, kAppendResp): lease_seq != 0 asks
  // for a lease; the follower remembers when it *sent* this seq.
  // Leader -> follower (kHeartbeat, kAppend): lease_seq != 0 grants a lease
  // for that request seq, lasting lease_duration from the request's send
  // time; the holder may serve reads once it has applied lease_floor.
  // lease_revoke: the leader withdraws every lease (transfer).
  std::uint64_t lease_seq = 0;
  Nanos lease_duration = 0;
  Index lease_floor = 0;
  bool lease_revoke = false;
};

}  // namespace faultline::raftkv::raft

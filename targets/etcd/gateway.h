// The etcd v3 JSON gateway (grpc-gateway in etcd 3.4, prefix /v3/): request
// bodies and reply parsing, without any I/O so it can be unit tested on
// captured replies.
//
// Gateway facts this relies on (etcd 3.4.23, measured): keys and values are
// base64; int64/uint64 fields are JSON strings; fields with default values
// (0, false, empty) are omitted, so a failed txn has no `succeeded` and an
// empty range has no `kvs`/`count`; StatusResponse uses the proto's
// camelCase names (`raftTerm`, `raftIndex`), everything else snake_case.
//
// Register encoding: a register key K (string or int) lives at
// "/faultline/K"; a register value is stored as its compact JSON text
// (decimal for integers).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/value.h"
#include "harness/interfaces/result.h"

namespace faultline::targets::etcd {

inline constexpr std::string_view kKeyPrefix = "/faultline/";

// "/faultline/<key>" for a string or int key, "/faultline/" + "_" for null
// (single-register workloads); other kinds are an error.
harness::Result<std::string> RegisterKey(const checkers::Value& key);

// The stored text of a register value (its compact JSON).
std::string EncodeRegisterValue(const checkers::Value& value);
// Inverse of EncodeRegisterValue. Text that is not JSON (written by someone
// else) is returned as a string value.
checkers::Value DecodeRegisterValue(std::string_view text);

// Request bodies. `key`/`value` are raw bytes; base64 is applied here.
std::string RangeRequest(std::string_view key, bool serializable);
std::string PutRequest(std::string_view key, std::string_view value);
// Txn: if the key's value equals `expected` (or, when `expected` is nullopt,
// the key does not exist), put `value`.
std::string CasRequest(std::string_view key,
                       const std::optional<std::string>& expected,
                       std::string_view value);

struct RangeReply {
  bool found = false;
  std::string value;          // raw bytes; meaningful when found
  std::int64_t revision = 0;  // header.revision (0 if omitted)
};
// The reply to RangeRequest(key, ...): a kv for any other key than `key` is
// an error (an answer that is not to this request).
harness::Result<RangeReply> ParseRangeReply(std::string_view body,
                                            std::string_view key);

// A put reply: a JSON object with a header. Anything else is an error.
harness::Status ParsePutReply(std::string_view body);

struct TxnReply {
  bool succeeded = false;  // omitted `succeeded` means false
};
harness::Result<TxnReply> ParseTxnReply(std::string_view body);

struct StatusReply {
  std::uint64_t member_id = 0;   // header.member_id: who answered
  std::uint64_t leader = 0;      // 0 (omitted): no leader known
  std::int64_t raft_term = -1;   // raftTerm (term of the last applied entry)
  std::int64_t raft_index = -1;  // raftIndex
  std::string version;           // server version, e.g. "3.4.23"
};
harness::Result<StatusReply> ParseStatusReply(std::string_view body);

// GET /debug/vars, its "raft.status" object: the Raft node's own current
// state (unlike StatusReply.raft_term, which is the term of the last applied
// entry). Ids are hex strings there; "0" means none.
struct RaftStatus {
  std::uint64_t id = 0;
  std::int64_t term = -1;
  std::uint64_t lead = 0;  // 0: no leader known
  std::string state;       // "StateLeader", "StateFollower",
                           // "StateCandidate", "StatePreCandidate"
};
harness::Result<RaftStatus> ParseRaftStatus(std::string_view body);

struct Member {
  std::uint64_t id = 0;
  std::string name;  // empty for a member that has not started yet
};
harness::Result<std::vector<Member>> ParseMemberList(std::string_view body);

// GET /health: {"health":"true"} -> true, {"health":"false"} -> false.
harness::Result<bool> ParseHealthReply(std::string_view body);

// ---- Locks (etcd's concurrency-package recipe; see etcd_client.h) ----
//
// A lock L lives under the prefix "/faultline-lock/L/"; each contender puts
// "<prefix><lease id in hex>" with its lease, and the key with the lowest
// create revision holds the lock.
inline constexpr std::string_view kLockPrefix = "/faultline-lock/";

// "/faultline-lock/<name>/" for a non-empty string name without '/'.
harness::Result<std::string> LockPrefix(const checkers::Value& name);
// The first key after every key that starts with `prefix` (its range_end).
std::string PrefixEnd(std::string_view prefix);

// POST /v3/lease/grant {"TTL": ttl_s}.
std::string LeaseGrantRequest(std::int64_t ttl_s);
// {"ID": "<id>"}: the body of /v3/lease/keepalive and /v3/lease/revoke.
std::string LeaseIdRequest(std::int64_t lease_id);
// Put with a lease (0: none).
std::string PutWithLeaseRequest(std::string_view key, std::string_view value,
                                std::int64_t lease_id);
// All keys under `prefix` (keys only), by create revision, oldest first.
std::string PrefixKeysRequest(std::string_view prefix);
// Delete one key.
std::string DeleteRequest(std::string_view key);

struct LeaseReply {
  std::int64_t id = 0;
  std::int64_t ttl_s = 0;  // 0 (omitted): the lease does not exist any more
};
// A grant reply ({"header", "ID", "TTL"}); an ID of 0 or a TTL <= 0 is an
// error (the gateway puts a failed grant in `error`).
harness::Result<LeaseReply> ParseLeaseGrantReply(std::string_view body);
// The first message of a keepalive stream ({"result": {"ID", "TTL"}}); TTL
// omitted means the lease is gone. A stream error ({"error": ...}) is an
// error.
harness::Result<LeaseReply> ParseKeepAliveReply(std::string_view body);
// header.revision of a reply (put: the revision that created a new key).
harness::Result<std::int64_t> ParseHeaderRevision(std::string_view body);

struct KeyRevision {
  std::string key;  // raw bytes
  std::int64_t create_revision = 0;
};
// The kvs of a range reply, in reply order (empty when none).
harness::Result<std::vector<KeyRevision>> ParseKeysReply(std::string_view body);
// The `deleted` count of a deleterange reply (omitted: 0).
harness::Result<std::int64_t> ParseDeleteReply(std::string_view body);

// A short description of a gateway error body
// ({"error":"etcdserver: request timed out","code":14,...}), at most
// `max_len` bytes; the raw body (truncated) when it is not such an object.
std::string ErrorSummary(std::string_view body, std::size_t max_len = 120);

}  // namespace faultline::targets::etcd

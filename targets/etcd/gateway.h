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
#include "harness/result.h"

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
harness::Result<RangeReply> ParseRangeReply(std::string_view body);

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

struct Member {
  std::uint64_t id = 0;
  std::string name;  // empty for a member that has not started yet
};
harness::Result<std::vector<Member>> ParseMemberList(std::string_view body);

// GET /health: {"health":"true"} -> true, {"health":"false"} -> false.
harness::Result<bool> ParseHealthReply(std::string_view body);

// A short description of a gateway error body
// ({"error":"etcdserver: request timed out","code":14,...}), at most
// `max_len` bytes; the raw body (truncated) when it is not such an object.
std::string ErrorSummary(std::string_view body, std::size_t max_len = 120);

}  // namespace faultline::targets::etcd

// The replicated state machine of raftkv: a string key-value map with
// compare-and-set, a lock service with TTL leases and fencing tokens, and
// fenced puts. Deterministic: Apply depends only on the command bytes and
// the entry's index, so every replica reaches the same state.
//
// Commands are encoded by the Encode* functions (the leader proposes the
// bytes; every replica applies them). Lock expiry is itself a command
// (kExpire), proposed by the leader when its own timer fires
// (lock_timers.h), so expiry is decided through the log.
//
// Thread-safety: none; the server's single loop owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace faultline::raftkv::kv {

enum class Op : std::uint8_t {
  kPut = 1,      // key, value
  kDelete = 2,   // key
  kCas = 3,      // key, expected, value: swaps iff present and == expected
  kAcquire = 4,  // lock, owner, ttl_ms, token_hint
  kRenew = 5,    // lock, owner, token, ttl_ms
  kRelease = 6,  // lock, owner, token
  kExpire = 7,   // lock, token: releases iff still held under that token
  kFencedPut = 8,  // key, token, value: applies iff token >= highest seen
};

struct Command {
  Op op = Op::kPut;
  std::string key;       // key or lock name
  std::string value;     // put/cas/fenced value
  std::string expected;  // cas
  std::string owner;     // lock owner id (client-chosen)
  std::int64_t ttl_ms = 0;
  std::uint64_t token = 0;  // renew/release/expire/fenced; acquire: hint
};

std::string Encode(const Command& c);
std::optional<Command> Decode(const std::string& bytes);

// The outcome of applying one command, returned to the client that
// proposed it.
struct ApplyResult {
  bool ok = false;          // put/delete: true; cas: swapped; lock ops:
                            // granted/renewed/released; fenced: applied
  std::optional<std::string> value;  // previous value (cas fail), etc.
  std::uint64_t token = 0;  // acquire: the fencing token granted
  std::string holder;       // acquire refused: current owner
  std::uint64_t highest_token = 0;  // fenced put refused: highest seen
};

struct LockState {
  std::string owner;
  std::uint64_t token = 0;
  std::int64_t ttl_ms = 0;
};

class StateMachine {
 public:
  // Applies the command in the entry at `index`. Acquire's fencing token is
  // `index` (grows across leader changes), unless the command carries a
  // nonzero token_hint (the unsafe per-term counter), which is used as is.
  ApplyResult Apply(std::uint64_t index, const Command& c);

  std::optional<std::string> Get(const std::string& key) const;
  const std::map<std::string, LockState>& locks() const { return locks_; }
  std::uint64_t applied() const { return applied_; }
  void set_applied(std::uint64_t i) { applied_ = i; }  // no-op entries

  // Whole-state serialization for snapshots; Restore replaces the state.
  std::string Serialize() const;
  bool Restore(const std::string& bytes, std::uint64_t index);

 private:
  std::map<std::string, std::string> data_;
  std::map<std::string, LockState> locks_;
  std::map<std::string, std::uint64_t> fence_;  // key -> highest token seen
  std::uint64_t applied_ = 0;
};

}  // namespace faultline::raftkv::kv

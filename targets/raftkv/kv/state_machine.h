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
// Lock leases and stale expiries. Every lease has a *generation*: the Raft
// index of the entry that last granted or refreshed it (acquire, re-acquire
// by the same owner, renew). The leader's timer (lock_timers.h) remembers
// the (token, generation) it armed for; the kExpire it proposes carries
// both, and applies only if the lock is still held under that token AND
// that generation. A renew that applies after the expire was proposed but
// before it applied moves the generation past the one in the expire, so the
// stale expire is refused and the renewed lease survives. Generations are
// Raft indexes, so they are unique and only grow, on every replica and
// across leader changes, even when tokens repeat (unsafe token hints).
//
// Fencing: fence_[key] is the highest token any applied kFencedPut used for
// key. It only grows; Put/Delete/Cas of the key do not touch it.
//
// Value types. A key holds nothing, a string (Put, FencedPut, a TXN "W") or
// a list of strings (a TXN "APPEND"); data() and lists() never share a key.
// Put/FencedPut/W replace a list with a string; Delete removes either; Cas
// never matches a list (it is "no such key" for Cas); APPEND to a string is
// refused (WRONGTYPE) and refuses its whole transaction.
//
// Counters and accounts (kIncrBy, kTransfer, kMsetNx) keep integers as
// canonical decimal strings in data(), so snapshots need no new table:
// kIncrBy adds to a key (absent reads as 0; a list, a non-integer string or
// an int64 overflow refuses it, no effect); kTransfer moves a positive
// amount between two distinct keys that both hold integers, refusing
// (kInsufficientFunds) when the source holds less, and refusing when
// either is absent, so no transfer creates an account; kMsetNx sets all of
// its keys iff none of them holds anything (ok false, no effect, when one
// does), which makes a one-time initialisation idempotent.
//
// Transactions (kTxn): a list of micro-ops applied atomically in one entry.
// A pre-pass checks every APPEND against the key's type as the earlier
// micro-ops of the same transaction leave it; if one fails, nothing is
// applied. Otherwise the micro-ops apply in order and each R reads the state
// as the earlier micro-ops left it.
//
// Thread-safety: none; the server's single loop owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace faultline::raftkv::kv {

enum class Op : std::uint8_t {
  kPut = 1,        // key, value
  kDelete = 2,     // key
  kCas = 3,        // key, expected, value: swaps iff present and == expected
  kAcquire = 4,    // lock, owner, ttl_ms, token_hint
  kRenew = 5,      // lock, owner, token, ttl_ms
  kRelease = 6,    // lock, owner, token
  kExpire = 7,     // lock, token: releases iff still held under that token
  kFencedPut = 8,  // key, token, value: applies iff token >= highest seen
  kTxn = 9,        // txn: micro-ops (key is unused, "")
  kIncrBy = 10,    // key, amount: adds amount to key's integer (absent: 0)
  kTransfer = 11,  // key (from), value (to), amount: moves amount iff both
                   // hold integers and from holds at least amount
  kMsetNx = 12,    // txn (kWrite micro-ops only): sets every key iff none
                   // of them holds anything (key is unused, "")
};

// One micro-op of a transaction.
enum class TxnKind : std::uint8_t {
  kAppend = 1,  // append value to key's list (creating it)
  kWrite = 2,   // set key to the string value
  kRead = 3,    // read key (value unused, always "")
};

struct TxnOp {
  TxnKind kind = TxnKind::kRead;
  std::string key;
  std::string value;
  bool operator==(const TxnOp&) const = default;
};

// What a key holds, as a read sees it.
struct Datum {
  enum class Type : std::uint8_t { kAbsent, kString, kList };
  Type type = Type::kAbsent;
  std::string str;                // kString
  std::vector<std::string> list;  // kList
  bool operator==(const Datum&) const = default;
};

struct Command {
  Op op = Op::kPut;
  std::string key;       // key or lock name
  std::string value;     // put/cas/fenced value
  std::string expected;  // cas
  std::string owner;     // lock owner id (client-chosen)
  std::int64_t ttl_ms = 0;
  std::uint64_t token = 0;       // renew/release/expire/fenced; acquire: hint
  std::uint64_t generation = 0;  // expire: the lease generation it ends
  std::vector<TxnOp> txn;        // kTxn, kMsetNx: 1..kMaxTxnOps micro-ops
  std::int64_t amount = 0;       // kIncrBy, kTransfer
  bool operator==(const Command&) const = default;
};

// Compact binary encoding (a version byte, the op, then only the fields the
// op uses as varints / length-prefixed strings). Decode returns nullopt for
// anything Encode could not have produced (unknown version or op,
// truncated, trailing bytes); it never crashes or over-allocates.
std::string Encode(const Command& c);
std::optional<Command> Decode(const std::string& bytes);

// Builders for the commands the server proposes.
Command MakePut(std::string key, std::string value);
Command MakeDelete(std::string key);
Command MakeCas(std::string key, std::string expected, std::string value);
Command MakeAcquire(std::string lock, std::string owner, std::int64_t ttl_ms,
                    std::uint64_t token_hint = 0);
Command MakeRenew(std::string lock, std::string owner, std::uint64_t token,
                  std::int64_t ttl_ms);
Command MakeRelease(std::string lock, std::string owner, std::uint64_t token);
// `generation` is LockState::generation as the leader's timer saw it.
Command MakeExpire(std::string lock, std::uint64_t token,
                   std::uint64_t generation);
Command MakeFencedPut(std::string key, std::uint64_t token, std::string value);
// Clears the value of every kRead (it is not encoded).
Command MakeTxn(std::vector<TxnOp> ops);
Command MakeIncrBy(std::string key, std::int64_t amount);
Command MakeTransfer(std::string from, std::string to, std::int64_t amount);
// `pairs`: (key, value) to set, 1..kMaxTxnOps of them.
Command MakeMsetNx(std::vector<std::pair<std::string, std::string>> pairs);

// The reason a kTransfer is refused when `from` holds less than the amount
// (the server replies :0 for it, an error for every other refusal).
inline constexpr char kInsufficientFunds[] = "insufficient funds";

// The most micro-ops one transaction may hold (Decode refuses more).
inline constexpr std::size_t kMaxTxnOps = 4096;

// The outcome of applying one command, returned to the client that
// proposed it.
struct ApplyResult {
  bool ok = false;  // put/delete: true; cas: swapped; lock ops:
                    // granted/renewed/released; fenced: applied
  // put/delete: the previous value (nullopt: the key was absent, so DEL
  // replies :0); cas: the current value when the compare failed.
  std::optional<std::string> value;
  std::uint64_t token = 0;  // acquire/renew granted: the fencing token
  std::string holder;       // lock op refused: current owner ("" if free)
  std::uint64_t highest_token = 0;  // fenced put: highest token now seen
  std::string reason;  // refused: one line saying why (for the reply)
  // kTxn applied (ok): one Datum per micro-op; what each kRead saw (writes
  // leave theirs kAbsent). kTxn refused: empty, reason says why.
  std::vector<Datum> txn;
  // kIncrBy applied: the key's new value.
  std::int64_t number = 0;
};

struct LockState {
  std::string owner;
  std::uint64_t token = 0;
  std::int64_t ttl_ms = 0;
  std::uint64_t generation = 0;  // index of the last grant/refresh entry
  bool operator==(const LockState&) const = default;
};

class StateMachine {
 public:
  // Applies the command in the entry at `index` and sets applied() to it.
  // Precondition: index > applied() (the applier never replays; violating
  // it aborts with file:line).
  //
  // Acquire's fencing token is `index` (grows across leader changes),
  // unless the command carries a nonzero token_hint (the unsafe per-term
  // counter), which is used as is. Acquire of a lock the same owner holds
  // returns the existing token and refreshes the lease (new ttl, new
  // generation); held by another owner: refused with `holder`. ttl_ms <= 0
  // is refused. Renew/Release need owner and token to match the holder.
  // Expire needs token and generation to match. FencedPut applies iff
  // token >= fence(key), then fence(key) = token.
  // Txn: see "Transactions" above; refused (ok false, reason) on an APPEND
  // to a string.
  ApplyResult Apply(std::uint64_t index, const Command& c);

  // The string value of key (nullopt when absent or a list).
  std::optional<std::string> Get(const std::string& key) const;
  // Whatever key holds.
  Datum Lookup(const std::string& key) const;
  const std::map<std::string, std::vector<std::string>>& lists() const {
    return lists_;
  }
  const std::map<std::string, LockState>& locks() const { return locks_; }
  const std::map<std::string, std::string>& data() const { return data_; }
  // Highest fenced-put token seen for key (0 if none).
  std::uint64_t fence(const std::string& key) const;
  std::uint64_t applied() const { return applied_; }
  void set_applied(std::uint64_t i) { applied_ = i; }  // no-op entries

  // Whole-state serialization for snapshots (data, locks, fences, lists,
  // applied index), versioned and checksummed. Restore replaces the state and
  // returns true iff `bytes` is a well-formed serialization whose applied
  // index equals `index` and index >= applied() (never rolls back);
  // otherwise returns false and leaves the state untouched. Never crashes
  // on garbage.
  std::string Serialize() const;
  bool Restore(const std::string& bytes, std::uint64_t index);

 private:
  ApplyResult ApplyTxn(const std::vector<TxnOp>& ops);
  ApplyResult ApplyCounter(const Command& c);  // kIncrBy, kTransfer, kMsetNx

  std::map<std::string, std::string> data_;
  std::map<std::string, LockState> locks_;
  std::map<std::string, std::uint64_t> fence_;  // key -> highest token seen
  std::map<std::string, std::vector<std::string>> lists_;  // list values
  std::uint64_t applied_ = 0;
};

}  // namespace faultline::raftkv::kv

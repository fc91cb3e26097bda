#include "targets/raftkv/kv/state_machine.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "targets/raftkv/kv/bytes.h"

namespace faultline::raftkv::kv {
namespace {

[[noreturn]] void Die(const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
  std::abort();
}

#define KV_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : Die(__FILE__, __LINE__, #cond))

ApplyResult Refused(std::string reason, std::string holder = {}) {
  ApplyResult r;
  r.ok = false;
  r.reason = std::move(reason);
  r.holder = std::move(holder);
  return r;
}

std::string HeldBy(const LockState& l) { return "held by " + l.owner; }

// Snapshot layout (version 2; Restore also reads version 1, which ends
// after the fences and has no lists):
//   "RKVS" [version] [fnv1a64 of body, 8 bytes LE] body
//   body = applied
//          n_data  (key value)*
//          n_locks (name owner token ttl_ms generation)*
//          n_fence (key token)*
//          n_lists (key n_elems (elem)*)*          (version 2)
// Keys of each table are strictly increasing (std::map order), which
// Restore checks, so a decoded table equals the one serialized; a list key
// must not also be a data key.
constexpr std::string_view kMagic = "RKVS";
constexpr std::uint8_t kSnapshotVersion = 2;
constexpr std::uint8_t kOldestSnapshotVersion = 1;
constexpr std::size_t kHeader = 4 + 1 + 8;

// A count can never exceed the bytes left (every record takes >= 1 byte):
// stops forged counts from looping long over nothing.
bool Count(bytes::Reader* r, std::uint64_t* n) {
  return r->Varint(n) && *n <= r->remaining();
}

}  // namespace

ApplyResult StateMachine::Apply(std::uint64_t index, const Command& c) {
  KV_CHECK(index > applied_);
  applied_ = index;
  ApplyResult r;
  switch (c.op) {
    case Op::kPut: {
      lists_.erase(c.key);
      auto it = data_.find(c.key);
      if (it != data_.end()) {
        r.value = std::move(it->second);
        it->second = c.value;
      } else {
        data_.emplace(c.key, c.value);
      }
      r.ok = true;
      return r;
    }
    case Op::kDelete: {
      auto it = data_.find(c.key);
      if (it != data_.end()) {
        r.value = std::move(it->second);
        data_.erase(it);
      }
      if (lists_.erase(c.key) > 0) r.value = std::string();  // DEL -> :1
      r.ok = true;
      return r;
    }
    case Op::kCas: {
      auto it = data_.find(c.key);
      if (it == data_.end()) return Refused("no such key");
      if (it->second != c.expected) {
        r = Refused("value differs");
        r.value = it->second;
        return r;
      }
      it->second = c.value;
      r.ok = true;
      return r;
    }
    case Op::kAcquire: {
      if (c.ttl_ms <= 0) return Refused("ttl must be positive");
      auto it = locks_.find(c.key);
      if (it != locks_.end()) {
        LockState& l = it->second;
        if (l.owner != c.owner) return Refused(HeldBy(l), l.owner);
        // Same owner: keep the token, refresh the lease.
        l.ttl_ms = c.ttl_ms;
        l.generation = index;
        r.ok = true;
        r.token = l.token;
        return r;
      }
      LockState l;
      l.owner = c.owner;
      l.token = c.token != 0 ? c.token : index;
      l.ttl_ms = c.ttl_ms;
      l.generation = index;
      r.ok = true;
      r.token = l.token;
      locks_.emplace(c.key, std::move(l));
      return r;
    }
    case Op::kRenew: {
      auto it = locks_.find(c.key);
      if (it == locks_.end()) return Refused("not held");
      LockState& l = it->second;
      if (l.owner != c.owner) return Refused(HeldBy(l), l.owner);
      if (l.token != c.token) {
        return Refused("held under another token", l.owner);
      }
      if (c.ttl_ms <= 0) return Refused("ttl must be positive", l.owner);
      l.ttl_ms = c.ttl_ms;
      l.generation = index;
      r.ok = true;
      r.token = l.token;
      return r;
    }
    case Op::kRelease: {
      auto it = locks_.find(c.key);
      if (it == locks_.end()) return Refused("not held");
      const LockState& l = it->second;
      if (l.owner != c.owner) return Refused(HeldBy(l), l.owner);
      if (l.token != c.token) {
        return Refused("held under another token", l.owner);
      }
      r.ok = true;
      r.token = l.token;
      locks_.erase(it);
      return r;
    }
    case Op::kExpire: {
      auto it = locks_.find(c.key);
      if (it == locks_.end()) return Refused("not held");
      const LockState& l = it->second;
      if (l.token != c.token || l.generation != c.generation) {
        return Refused("lease was renewed or re-granted", l.owner);
      }
      r.ok = true;
      r.token = l.token;
      r.holder = l.owner;
      locks_.erase(it);
      return r;
    }
    case Op::kFencedPut: {
      auto it = fence_.find(c.key);
      std::uint64_t highest = it == fence_.end() ? 0 : it->second;
      if (c.token < highest) {
        r = Refused("token " + std::to_string(c.token) + " < highest " +
                    std::to_string(highest));
        r.highest_token = highest;
        return r;
      }
      fence_[c.key] = c.token;
      lists_.erase(c.key);
      auto d = data_.find(c.key);
      if (d != data_.end()) {
        r.value = std::move(d->second);
        d->second = c.value;
      } else {
        data_.emplace(c.key, c.value);
      }
      r.ok = true;
      r.highest_token = c.token;
      return r;
    }
    case Op::kTxn:
      return ApplyTxn(c.txn);
    case Op::kIncrBy:
    case Op::kTransfer:
    case Op::kMsetNx:
      return ApplyCounter(c);
  }
  // An op value Decode would not produce: a no-op, identically everywhere.
  return Refused("unknown op");
}

ApplyResult StateMachine::ApplyCounter(const Command& c) {
  ApplyResult r;
  if (c.op == Op::kMsetNx) {
    for (const TxnOp& t : c.txn) {
      if (Lookup(t.key).type != Datum::Type::kAbsent) return r;  // ok false
    }
    for (const TxnOp& t : c.txn) data_[t.key] = t.value;
    r.ok = true;
    return r;
  }
  // The integer a key holds: absent -> `absent`, else nullopt for a list or
  // a string that is not a canonical int64.
  auto integer =
      [this](
          const std::string& key,
          std::optional<std::int64_t> absent) -> std::optional<std::int64_t> {
    auto it = data_.find(key);
    if (it == data_.end()) return lists_.count(key) > 0 ? std::nullopt : absent;
    std::int64_t v = 0;
    const std::string& s = it->second;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() ||
        std::to_string(v) != s)
      return std::nullopt;
    return v;
  };
  if (c.op == Op::kIncrBy) {
    std::optional<std::int64_t> v = integer(c.key, 0);
    if (!v) return Refused("key '" + c.key + "' does not hold an integer");
    std::int64_t sum = 0;
    if (__builtin_add_overflow(*v, c.amount, &sum))
      return Refused("increment would overflow");
    data_[c.key] = std::to_string(sum);
    r.ok = true;
    r.number = sum;
    return r;
  }
  // kTransfer
  if (c.amount <= 0) return Refused("amount must be positive");
  if (c.key == c.value) return Refused("from and to are the same account");
  std::optional<std::int64_t> from = integer(c.key, std::nullopt);
  std::optional<std::int64_t> to = integer(c.value, std::nullopt);
  if (!from || !to) return Refused("no such account (both must hold integers)");
  if (*from < c.amount) return Refused(kInsufficientFunds);
  std::int64_t sum = 0;
  if (__builtin_add_overflow(*to, c.amount, &sum))
    return Refused("transfer would overflow");
  data_[c.key] = std::to_string(*from - c.amount);
  data_[c.value] = std::to_string(sum);
  r.ok = true;
  return r;
}

ApplyResult StateMachine::ApplyTxn(const std::vector<TxnOp>& ops) {
  // Pre-pass: the type each key has as the earlier micro-ops leave it.
  std::map<std::string_view, Datum::Type> types;
  for (const TxnOp& t : ops) {
    if (t.kind == TxnKind::kRead) continue;
    auto it = types.find(t.key);
    Datum::Type now = it != types.end() ? it->second : Lookup(t.key).type;
    if (t.kind == TxnKind::kAppend && now == Datum::Type::kString) {
      return Refused("APPEND to key '" + t.key + "', which holds a string");
    }
    types[t.key] =
        t.kind == TxnKind::kAppend ? Datum::Type::kList : Datum::Type::kString;
  }
  ApplyResult r;
  r.ok = true;
  r.txn.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TxnOp& t = ops[i];
    switch (t.kind) {
      case TxnKind::kRead:
        r.txn[i] = Lookup(t.key);
        break;
      case TxnKind::kAppend:
        lists_[t.key].push_back(t.value);
        break;
      case TxnKind::kWrite:
        lists_.erase(t.key);
        data_[t.key] = t.value;
        break;
    }
  }
  return r;
}

Datum StateMachine::Lookup(const std::string& key) const {
  Datum d;
  if (auto it = data_.find(key); it != data_.end()) {
    d.type = Datum::Type::kString;
    d.str = it->second;
  } else if (auto l = lists_.find(key); l != lists_.end()) {
    d.type = Datum::Type::kList;
    d.list = l->second;
  }
  return d;
}

std::optional<std::string> StateMachine::Get(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

std::uint64_t StateMachine::fence(const std::string& key) const {
  auto it = fence_.find(key);
  return it == fence_.end() ? 0 : it->second;
}

std::string StateMachine::Serialize() const {
  std::string body;
  bytes::PutVarint(&body, applied_);
  bytes::PutVarint(&body, data_.size());
  for (const auto& [k, v] : data_) {
    bytes::PutString(&body, k);
    bytes::PutString(&body, v);
  }
  bytes::PutVarint(&body, locks_.size());
  for (const auto& [name, l] : locks_) {
    bytes::PutString(&body, name);
    bytes::PutString(&body, l.owner);
    bytes::PutVarint(&body, l.token);
    bytes::PutSigned(&body, l.ttl_ms);
    bytes::PutVarint(&body, l.generation);
  }
  bytes::PutVarint(&body, fence_.size());
  for (const auto& [k, t] : fence_) {
    bytes::PutString(&body, k);
    bytes::PutVarint(&body, t);
  }
  bytes::PutVarint(&body, lists_.size());
  for (const auto& [k, l] : lists_) {
    bytes::PutString(&body, k);
    bytes::PutVarint(&body, l.size());
    for (const std::string& e : l) bytes::PutString(&body, e);
  }
  std::string out;
  out.reserve(kHeader + body.size());
  out.append(kMagic);
  out.push_back(static_cast<char>(kSnapshotVersion));
  std::uint64_t sum = bytes::Fnv1a64(body);
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((sum >> (8 * i)) & 0xff));
  }
  out.append(body);
  return out;
}

bool StateMachine::Restore(const std::string& in, std::uint64_t index) {
  if (in.size() < kHeader || std::string_view(in).substr(0, 4) != kMagic) {
    return false;
  }
  const std::uint8_t version = static_cast<std::uint8_t>(in[4]);
  if (version < kOldestSnapshotVersion || version > kSnapshotVersion) {
    return false;
  }
  std::uint64_t sum = 0;
  for (int i = 0; i < 8; ++i) {
    sum |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(in[5 + i]))
           << (8 * i);
  }
  std::string_view body = std::string_view(in).substr(kHeader);
  if (bytes::Fnv1a64(body) != sum) return false;

  bytes::Reader r(body);
  std::uint64_t applied = 0;
  std::uint64_t n = 0;
  if (!r.Varint(&applied) || applied != index || index < applied_) {
    return false;
  }

  std::map<std::string, std::string> data;
  if (!Count(&r, &n)) return false;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string k;
    std::string v;
    if (!r.String(&k) || !r.String(&v)) return false;
    if (!data.empty() && !(data.rbegin()->first < k)) return false;
    data.emplace_hint(data.end(), std::move(k), std::move(v));
  }

  std::map<std::string, LockState> locks;
  if (!Count(&r, &n)) return false;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string name;
    LockState l;
    if (!r.String(&name) || !r.String(&l.owner) || !r.Varint(&l.token) ||
        !r.Signed(&l.ttl_ms) || !r.Varint(&l.generation)) {
      return false;
    }
    if (!locks.empty() && !(locks.rbegin()->first < name)) return false;
    locks.emplace_hint(locks.end(), std::move(name), std::move(l));
  }

  std::map<std::string, std::uint64_t> fence;
  if (!Count(&r, &n)) return false;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string k;
    std::uint64_t t = 0;
    if (!r.String(&k) || !r.Varint(&t)) return false;
    if (!fence.empty() && !(fence.rbegin()->first < k)) return false;
    fence.emplace_hint(fence.end(), std::move(k), t);
  }

  std::map<std::string, std::vector<std::string>> lists;
  if (version >= 2) {
    if (!Count(&r, &n)) return false;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string k;
      std::uint64_t m = 0;
      if (!r.String(&k) || !Count(&r, &m)) return false;
      if (!lists.empty() && !(lists.rbegin()->first < k)) return false;
      if (data.count(k) != 0) return false;
      std::vector<std::string> l(static_cast<std::size_t>(m));
      for (std::string& e : l) {
        if (!r.String(&e)) return false;
      }
      lists.emplace_hint(lists.end(), std::move(k), std::move(l));
    }
  }
  if (!r.done()) return false;

  data_ = std::move(data);
  lists_ = std::move(lists);
  locks_ = std::move(locks);
  fence_ = std::move(fence);
  applied_ = applied;
  return true;
}

}  // namespace faultline::raftkv::kv

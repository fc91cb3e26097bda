// Command encoding: [version=1][op] then the op's fields, in the order of
// the Op comments in state_machine.h. Integers are varints (ttl_ms
// zigzag), strings are length-prefixed. kTxn: the (empty) key, a varint
// count n (1..kMaxTxnOps), then n times [kind byte] key, and the value for
// kAppend/kWrite only. kIncrBy: key, amount (zigzag). kTransfer: key
// (from), value (to), amount (zigzag). kMsetNx: the (empty) key, then the
// kTxn layout, every micro-op a kWrite.
#include <algorithm>
#include <utility>
#include <vector>

#include "targets/raftkv/kv/bytes.h"
#include "targets/raftkv/kv/state_machine.h"

namespace faultline::raftkv::kv {
namespace {

constexpr std::uint8_t kCommandVersion = 1;

bool DecodeTxn(bytes::Reader* r, std::vector<TxnOp>* ops) {
  std::uint64_t n = 0;
  // Every micro-op takes at least 2 bytes, so n is bounded by the input.
  if (!r->Varint(&n) || n == 0 || n > kMaxTxnOps || n > r->remaining()) {
    return false;
  }
  ops->resize(static_cast<std::size_t>(n));
  for (TxnOp& t : *ops) {
    std::uint8_t kind = 0;
    if (!r->Byte(&kind) || kind < 1 || kind > 3) return false;
    t.kind = static_cast<TxnKind>(kind);
    if (!r->String(&t.key)) return false;
    if (t.kind != TxnKind::kRead && !r->String(&t.value)) return false;
  }
  return true;
}

}  // namespace

std::string Encode(const Command& c) {
  std::string out;
  out.reserve(8 + c.key.size() + c.value.size() + c.expected.size() +
              c.owner.size());
  out.push_back(static_cast<char>(kCommandVersion));
  out.push_back(static_cast<char>(c.op));
  bytes::PutString(&out, c.key);
  switch (c.op) {
    case Op::kPut:
      bytes::PutString(&out, c.value);
      break;
    case Op::kDelete:
      break;
    case Op::kCas:
      bytes::PutString(&out, c.expected);
      bytes::PutString(&out, c.value);
      break;
    case Op::kAcquire:
      bytes::PutString(&out, c.owner);
      bytes::PutSigned(&out, c.ttl_ms);
      bytes::PutVarint(&out, c.token);
      break;
    case Op::kRenew:
      bytes::PutString(&out, c.owner);
      bytes::PutVarint(&out, c.token);
      bytes::PutSigned(&out, c.ttl_ms);
      break;
    case Op::kRelease:
      bytes::PutString(&out, c.owner);
      bytes::PutVarint(&out, c.token);
      break;
    case Op::kExpire:
      bytes::PutVarint(&out, c.token);
      bytes::PutVarint(&out, c.generation);
      break;
    case Op::kFencedPut:
      bytes::PutVarint(&out, c.token);
      bytes::PutString(&out, c.value);
      break;
    case Op::kIncrBy:
      bytes::PutSigned(&out, c.amount);
      break;
    case Op::kTransfer:
      bytes::PutString(&out, c.value);
      bytes::PutSigned(&out, c.amount);
      break;
    case Op::kTxn:
    case Op::kMsetNx:
      bytes::PutVarint(&out, c.txn.size());
      for (const TxnOp& t : c.txn) {
        out.push_back(static_cast<char>(t.kind));
        bytes::PutString(&out, t.key);
        if (t.kind != TxnKind::kRead) bytes::PutString(&out, t.value);
      }
      break;
  }
  return out;
}

std::optional<Command> Decode(const std::string& in) {
  bytes::Reader r(in);
  std::uint8_t version = 0;
  std::uint8_t op = 0;
  if (!r.Byte(&version) || version != kCommandVersion || !r.Byte(&op)) {
    return std::nullopt;
  }
  Command c;
  c.op = static_cast<Op>(op);
  if (!r.String(&c.key)) return std::nullopt;
  bool ok = false;
  switch (c.op) {
    case Op::kPut:
      ok = r.String(&c.value);
      break;
    case Op::kDelete:
      ok = true;
      break;
    case Op::kCas:
      ok = r.String(&c.expected) && r.String(&c.value);
      break;
    case Op::kAcquire:
      ok = r.String(&c.owner) && r.Signed(&c.ttl_ms) && r.Varint(&c.token);
      break;
    case Op::kRenew:
      ok = r.String(&c.owner) && r.Varint(&c.token) && r.Signed(&c.ttl_ms);
      break;
    case Op::kRelease:
      ok = r.String(&c.owner) && r.Varint(&c.token);
      break;
    case Op::kExpire:
      ok = r.Varint(&c.token) && r.Varint(&c.generation);
      break;
    case Op::kFencedPut:
      ok = r.Varint(&c.token) && r.String(&c.value);
      break;
    case Op::kTxn:
      ok = DecodeTxn(&r, &c.txn);
      break;
    case Op::kIncrBy:
      ok = r.Signed(&c.amount);
      break;
    case Op::kTransfer:
      ok = r.String(&c.value) && r.Signed(&c.amount);
      break;
    case Op::kMsetNx:
      ok = DecodeTxn(&r, &c.txn) &&
           std::all_of(c.txn.begin(), c.txn.end(), [](const TxnOp& t) {
             return t.kind == TxnKind::kWrite;
           });
      break;
    default:
      return std::nullopt;  // unknown op
  }
  if (!ok || !r.done()) return std::nullopt;
  return c;
}

Command MakePut(std::string key, std::string value) {
  Command c;
  c.op = Op::kPut;
  c.key = std::move(key);
  c.value = std::move(value);
  return c;
}

Command MakeDelete(std::string key) {
  Command c;
  c.op = Op::kDelete;
  c.key = std::move(key);
  return c;
}

Command MakeCas(std::string key, std::string expected, std::string value) {
  Command c;
  c.op = Op::kCas;
  c.key = std::move(key);
  c.expected = std::move(expected);
  c.value = std::move(value);
  return c;
}

Command MakeAcquire(std::string lock, std::string owner, std::int64_t ttl_ms,
                    std::uint64_t token_hint) {
  Command c;
  c.op = Op::kAcquire;
  c.key = std::move(lock);
  c.owner = std::move(owner);
  c.ttl_ms = ttl_ms;
  c.token = token_hint;
  return c;
}

Command MakeRenew(std::string lock, std::string owner, std::uint64_t token,
                  std::int64_t ttl_ms) {
  Command c;
  c.op = Op::kRenew;
  c.key = std::move(lock);
  c.owner = std::move(owner);
  c.token = token;
  c.ttl_ms = ttl_ms;
  return c;
}

Command MakeRelease(std::string lock, std::string owner, std::uint64_t token) {
  Command c;
  c.op = Op::kRelease;
  c.key = std::move(lock);
  c.owner = std::move(owner);
  c.token = token;
  return c;
}

Command MakeExpire(std::string lock, std::uint64_t token,
                   std::uint64_t generation) {
  Command c;
  c.op = Op::kExpire;
  c.key = std::move(lock);
  c.token = token;
  c.generation = generation;
  return c;
}

Command MakeFencedPut(std::string key, std::uint64_t token, std::string value) {
  Command c;
  c.op = Op::kFencedPut;
  c.key = std::move(key);
  c.token = token;
  c.value = std::move(value);
  return c;
}

Command MakeTxn(std::vector<TxnOp> ops) {
  Command c;
  c.op = Op::kTxn;
  c.txn = std::move(ops);
  for (TxnOp& t : c.txn) {
    if (t.kind == TxnKind::kRead) t.value.clear();
  }
  return c;
}

Command MakeIncrBy(std::string key, std::int64_t amount) {
  Command c;
  c.op = Op::kIncrBy;
  c.key = std::move(key);
  c.amount = amount;
  return c;
}

Command MakeTransfer(std::string from, std::string to, std::int64_t amount) {
  Command c;
  c.op = Op::kTransfer;
  c.key = std::move(from);
  c.value = std::move(to);
  c.amount = amount;
  return c;
}

Command MakeMsetNx(std::vector<std::pair<std::string, std::string>> pairs) {
  Command c;
  c.op = Op::kMsetNx;
  c.txn.reserve(pairs.size());
  for (auto& [k, v] : pairs)
    c.txn.push_back({TxnKind::kWrite, std::move(k), std::move(v)});
  return c;
}

}  // namespace faultline::raftkv::kv

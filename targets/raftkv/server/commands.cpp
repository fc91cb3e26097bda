// Client commands of the raftkv server (docs/targets/raftkv.md, "Client
// protocol") and their replies.
//
// The collection workloads' commands (docs/collections.md), each one log
// entry:
//   INCRBY key n        add n to key's integer (absent = 0) -> :new value;
//                       -ERR (no effect) for a list, a non-integer or an
//                       overflow.
//   XFER from to n      move n > 0 from one integer key to another -> :1;
//                       :0 when from holds less than n (no effect); -ERR
//                       (no effect) when either key is absent or not an
//                       integer. (TRANSFER is the leadership transfer.)
//   MSETNX k v [k v..]  set every key iff none holds anything -> :1, else
//                       :0 (no effect).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "targets/raftkv/resp/resp.h"
#include "targets/raftkv/server/log.h"
#include "targets/raftkv/server/server_impl.h"

namespace faultline::raftkv::server {
namespace {

using ULL = unsigned long long;

bool ParseU64(const std::string& s, std::uint64_t* out) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseTtl(const std::string& s, std::int64_t* out) {
  std::uint64_t v = 0;
  if (!ParseU64(s, &v) || v == 0 || v > (1ULL << 40)) return false;
  *out = static_cast<std::int64_t>(v);
  return true;
}

// A signed decimal int64 (INCRBY's increment, XFER's amount).
bool ParseI64(const std::string& s, std::int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' ||
      std::isspace(static_cast<unsigned char>(s[0])))
    return false;
  *out = v;
  return true;
}

std::string Upper(std::string s) {
  for (char& ch : s)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// Whether log entry `e` writes data key `key` (lock commands do not: locks
// live in their own table).
bool TouchesKey(const raft::Entry& e, const std::string& key) {
  if (e.type != raft::EntryType::kNormal) return false;
  std::optional<kv::Command> c = kv::Decode(e.data);
  if (!c) return false;
  switch (c->op) {
    case kv::Op::kPut:
    case kv::Op::kDelete:
    case kv::Op::kCas:
    case kv::Op::kFencedPut:
      return c->key == key;
    case kv::Op::kIncrBy:
      return c->key == key;
    case kv::Op::kTransfer:
      return c->key == key || c->value == key;
    case kv::Op::kTxn:
    case kv::Op::kMsetNx:
      return std::any_of(c->txn.begin(), c->txn.end(), [&](const kv::TxnOp& t) {
        return t.kind != kv::TxnKind::kRead && t.key == key;
      });
    default:
      return false;
  }
}

}  // namespace

void Server::Impl::ReplyError(const RequestRef& ref, const std::string& line) {
  std::string out;
  resp::AppendError(&out, line);
  clients.Reply(ref, std::move(out));
}

void Server::Impl::ReplyValue(const RequestRef& ref, const kv::Datum& v) {
  std::string out;
  AppendDatum(&out, v);
  clients.Reply(ref, std::move(out));
}

std::string Server::Impl::NotLeaderError(raft::NodeId leader,
                                         raft::Term term) const {
  auto it = opts.peers.find(leader);
  if (leader != raft::kNone && leader != opts.id && it != opts.peers.end())
    return "NOTLEADER " + std::to_string(leader) + " " +
           it->second.client.ToString();
  return "NOLEADER term " + std::to_string(term);
}

void Server::Impl::Dispatch(const ClientCommand& cmd, raft::Nanos now) {
  const std::vector<std::string>& a = cmd.args;
  const std::string name = Upper(a[0]);
  auto arity = [&](std::size_t n) {
    if (a.size() == n) return true;
    ReplyError(cmd.ref, "ERR wrong number of arguments for '" + name +
                            "' (expected " + std::to_string(n - 1) + ")");
    return false;
  };
  std::string out;
  if (name == "PING") {
    if (a.size() > 1) {
      resp::AppendBulk(&out, a[1]);
    } else {
      resp::AppendSimple(&out, "PONG");
    }
    clients.Reply(cmd.ref, std::move(out));
  } else if (name == "QUIT") {
    resp::AppendSimple(&out, "OK");
    clients.Reply(cmd.ref, std::move(out));
    clients.CloseAfter(cmd.ref);
  } else if (name == "GET") {
    if (arity(2)) StartRead(cmd.ref, a[1], now);
  } else if (name == "SET") {
    if (arity(3)) Propose(cmd.ref, kv::MakePut(a[1], a[2]), now);
  } else if (name == "DEL") {
    if (arity(2)) Propose(cmd.ref, kv::MakeDelete(a[1]), now);
  } else if (name == "CAS") {
    if (arity(4)) Propose(cmd.ref, kv::MakeCas(a[1], a[2], a[3]), now);
  } else if (name == "TXN") {
    StartTxn(cmd.ref, a, now);
  } else if (name == "INCRBY") {
    if (!arity(3)) return;
    std::int64_t by = 0;
    if (!ParseI64(a[2], &by))
      return ReplyError(cmd.ref, "ERR increment must be an integer");
    Propose(cmd.ref, kv::MakeIncrBy(a[1], by), now);
  } else if (name == "XFER") {
    if (!arity(4)) return;
    std::int64_t amount = 0;
    if (!ParseI64(a[3], &amount) || amount <= 0)
      return ReplyError(cmd.ref, "ERR amount must be a positive integer");
    if (a[1] == a[2])
      return ReplyError(cmd.ref, "ERR XFER needs two different keys");
    Propose(cmd.ref, kv::MakeTransfer(a[1], a[2], amount), now);
  } else if (name == "MSETNX") {
    if (a.size() < 3 || a.size() % 2 == 0)
      return ReplyError(cmd.ref, "ERR MSETNX needs key value pairs");
    if ((a.size() - 1) / 2 > kv::kMaxTxnOps)
      return ReplyError(cmd.ref, "ERR MSETNX has more than " +
                                     std::to_string(kv::kMaxTxnOps) + " keys");
    std::vector<std::pair<std::string, std::string>> pairs;
    for (std::size_t i = 1; i + 1 < a.size(); i += 2)
      pairs.emplace_back(a[i], a[i + 1]);
    Propose(cmd.ref, kv::MakeMsetNx(std::move(pairs)), now);
  } else if (name == "LOCK") {
    if (!arity(4)) return;
    std::int64_t ttl = 0;
    if (!ParseTtl(a[3], &ttl))
      return ReplyError(cmd.ref, "ERR ttl_ms must be a positive integer");
    std::uint64_t hint = 0;
    if (opts.unsafe == raft::Unsafe::kLockTokenPerTerm &&
        soft.role == raft::Role::kLeader)
      hint = token_counter++;
    Propose(cmd.ref, kv::MakeAcquire(a[1], a[2], ttl, hint), now);
  } else if (name == "RENEW") {
    if (!arity(5)) return;
    std::uint64_t token = 0;
    std::int64_t ttl = 0;
    if (!ParseU64(a[3], &token))
      return ReplyError(cmd.ref, "ERR token must be an unsigned integer");
    if (!ParseTtl(a[4], &ttl))
      return ReplyError(cmd.ref, "ERR ttl_ms must be a positive integer");
    Propose(cmd.ref, kv::MakeRenew(a[1], a[2], token, ttl), now);
  } else if (name == "UNLOCK") {
    if (!arity(4)) return;
    std::uint64_t token = 0;
    if (!ParseU64(a[3], &token))
      return ReplyError(cmd.ref, "ERR token must be an unsigned integer");
    Propose(cmd.ref, kv::MakeRelease(a[1], a[2], token), now);
  } else if (name == "FSET") {
    if (!arity(4)) return;
    std::uint64_t token = 0;
    if (!ParseU64(a[2], &token))
      return ReplyError(cmd.ref, "ERR token must be an unsigned integer");
    Propose(cmd.ref, kv::MakeFencedPut(a[1], token, a[3]), now);
  } else if (name == "STATUS" || name == "INFO") {
    resp::AppendBulk(&out, StatusText(now));
    clients.Reply(cmd.ref, std::move(out));
  } else if (name == "TRANSFER") {
    if (!arity(2)) return;
    std::uint64_t to = 0;
    if (!ParseU64(a[1], &to) || opts.peers.count(to) == 0 || to == opts.id)
      return ReplyError(cmd.ref, "ERR TRANSFER needs the id of another member");
    raft::Status st = node->GetStatus(now);
    if (st.role != raft::Role::kLeader)
      return ReplyError(cmd.ref, NotLeaderError(st.leader, st.term));
    if (!node->TransferLeadership(to, now))
      return ReplyError(cmd.ref, "ERR transfer refused (one is running?)");
    RAFTKV_INFO("leadership transfer to %llu started", static_cast<ULL>(to));
    resp::AppendSimple(&out, "OK");
    clients.Reply(cmd.ref, std::move(out));
  } else if (name == "CONFIG" || name == "COMMAND" || name == "CLIENT") {
    resp::AppendArrayHeader(&out, 0);
    clients.Reply(cmd.ref, std::move(out));
  } else {
    ReplyError(cmd.ref, "ERR unknown command '" + a[0] + "'");
  }
}

void Server::Impl::Propose(const RequestRef& ref, const kv::Command& c,
                           raft::Nanos now) {
  raft::ProposeResult r = node->Propose(kv::Encode(c), now);
  if (!r.ok) {
    raft::Status st = node->GetStatus(now);
    ReplyError(ref, NotLeaderError(r.leader, st.term));
    return;
  }
  PendingWrite p;
  p.ref = ref;
  p.term = r.term;
  p.deadline = now + raft::Nanos{opts.request_timeout_ms} * 1'000'000;
  proposals.emplace(r.index, p);
}

void Server::Impl::AnswerApplied(const raft::Entry& e, const kv::Command& c,
                                 const kv::ApplyResult& r, bool decoded) {
  auto [lo, hi] = proposals.equal_range(e.index);
  for (auto it = lo; it != hi; ++it) {
    const RequestRef& ref = it->second.ref;
    const std::uint64_t split = it->second.split;
    if (it->second.term != e.term) {
      // Another entry committed at this index: ours never will.
      ProposalError(split, ref,
                    "ERR proposal dropped (leadership changed); not applied");
      continue;
    }
    if (!decoded) {
      ProposalError(split, ref, "ERR the command did not decode; not applied");
      continue;
    }
    if (split != 0) {
      SplitPartApplied(split, c, r);
      continue;
    }
    std::string out;
    switch (c.op) {
      case kv::Op::kPut:
        resp::AppendSimple(&out, "OK");
        break;
      case kv::Op::kDelete:
        resp::AppendInteger(&out, r.value.has_value() ? 1 : 0);
        break;
      case kv::Op::kCas:
        resp::AppendInteger(&out, r.ok ? 1 : 0);
        break;
      case kv::Op::kAcquire:
        if (r.ok)
          resp::AppendInteger(&out, static_cast<std::int64_t>(r.token));
        else if (!r.holder.empty())
          resp::AppendError(&out, "LOCKED held by " + r.holder);
        else
          resp::AppendError(&out, "ERR " + r.reason);
        break;
      case kv::Op::kRenew:
      case kv::Op::kRelease:
        if (r.ok)
          resp::AppendSimple(&out, "OK");
        else
          resp::AppendError(
              &out, "NOTOWNER " + (r.reason.empty() ? std::string("not held")
                                                    : r.reason));
        break;
      case kv::Op::kExpire:
        resp::AppendSimple(&out, "OK");
        break;
      case kv::Op::kFencedPut:
        if (r.ok)
          resp::AppendSimple(&out, "OK");
        else
          resp::AppendError(&out, "FENCED token " + std::to_string(c.token) +
                                      " < highest " +
                                      std::to_string(r.highest_token));
        break;
      case kv::Op::kTxn:
        if (r.ok) {
          resp::AppendArrayHeader(&out, c.txn.size());
          AppendTxnElements(&out, c, r);
        } else {
          resp::AppendError(&out, "WRONGTYPE " + r.reason);
        }
        break;
      case kv::Op::kIncrBy:
        if (r.ok)
          resp::AppendInteger(&out, r.number);
        else
          resp::AppendError(&out, "ERR " + r.reason);
        break;
      case kv::Op::kTransfer:
        if (r.ok || r.reason == kv::kInsufficientFunds)
          resp::AppendInteger(&out, r.ok ? 1 : 0);
        else
          resp::AppendError(&out, "ERR " + r.reason);
        break;
      case kv::Op::kMsetNx:
        resp::AppendInteger(&out, r.ok ? 1 : 0);
        break;
    }
    clients.Reply(ref, std::move(out));
  }
  proposals.erase(lo, hi);
}

void Server::Impl::StartRead(const RequestRef& ref, const std::string& key,
                             raft::Nanos now) {
  raft::Nanos deadline = now + raft::Nanos{opts.request_timeout_ms} * 1'000'000;
  if (opts.read_mode == raft::ReadMode::kFollowerLease &&
      soft.role == raft::Role::kFollower && TryLocal(ref, key, deadline, now))
    return;
  std::uint64_t ctx = next_context++;
  PendingRead p;
  p.ref = ref;
  p.key = key;
  p.deadline = deadline;
  reads.emplace(ctx, std::move(p));
  node->RequestRead(ctx, now);
}

bool Server::Impl::TryLocal(const RequestRef& ref, const std::string& key,
                            raft::Nanos deadline, raft::Nanos now) {
  // Value first, lease second (lease.h).
  kv::Datum value = sm.Lookup(key);
  raft::LocalRead lr = node->TryLocalRead(
      now, [&key](const raft::Entry& e) { return TouchesKey(e, key); });
  switch (lr) {
    case raft::LocalRead::kServe:
      ReplyValue(ref, value);
      return true;
    case raft::LocalRead::kWait:
      parked.push_back({ref, key, deadline});
      return true;
    case raft::LocalRead::kNoLease:
      return false;
  }
  return false;
}

void Server::Impl::RetryParked(raft::Nanos now) {
  if (parked.empty()) return;
  std::vector<Parked> again;
  again.swap(parked);
  for (Parked& p : again) {
    if (TryLocal(p.ref, p.key, p.deadline, now)) continue;
    std::uint64_t ctx = next_context++;
    reads.emplace(ctx, PendingRead{p.ref, p.key, p.deadline, 0, false});
    node->RequestRead(ctx, now);
  }
}

void Server::Impl::ServeReady() {
  while (!reads_by_index.empty() &&
         reads_by_index.begin()->first <= sm.applied()) {
    std::uint64_t ctx = reads_by_index.begin()->second;
    reads_by_index.erase(reads_by_index.begin());
    auto it = reads.find(ctx);
    if (it == reads.end()) continue;  // timed out meanwhile
    ReplyValue(it->second.ref, sm.Lookup(it->second.key));
    reads.erase(it);
  }
}

std::string Server::Impl::StatusText(raft::Nanos now) const {
  raft::Status st = node->GetStatus(now);
  std::string leader_addr;
  if (auto it = opts.peers.find(st.leader); it != opts.peers.end())
    leader_addr = it->second.client.ToString();
  std::string s;
  auto field = [&s](const char* k, const std::string& v) {
    s += k;
    s += ':';
    s += v;
    s += "\r\n";
  };
  auto num = [](std::uint64_t v) { return std::to_string(v); };
  field("id", num(opts.id));
  field("role", raft::ToString(st.role));
  field("term", num(st.term));
  field("leader", num(st.leader));
  field("leader_addr", leader_addr);
  field("commit", num(st.commit));
  field("applied", num(sm.applied()));
  field("last_index", num(st.last_index));
  field("snapshot_index", num(st.snapshot_index));
  field("read_mode", raft::ToString(opts.read_mode));
  field("leader_lease", st.leader_lease_valid ? "valid" : "none");
  field("lease_holders", num(static_cast<std::uint64_t>(st.lease_holders)));
  field("follower_lease", st.follower_lease_valid ? "valid" : "none");
  field(
      "follower_lease_remaining_ms",
      num(static_cast<std::uint64_t>(
          std::max<raft::Nanos>(0, st.follower_lease_remaining) / 1'000'000)));
  field("unsafe", raft::ToString(opts.unsafe));
  return s;
}

}  // namespace faultline::raftkv::server

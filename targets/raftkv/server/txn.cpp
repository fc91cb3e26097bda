// TXN, the multi-key transaction command (docs/targets/raftkv.md, "Client
// protocol"):
//
//   TXN op1 key1 arg1 [op2 key2 arg2 ...]
//
// op (case-insensitive) is APPEND (append arg to key's list), W (set key to
// the string arg) or R (read key; arg is ignored, send "-"). The whole
// transaction is one log entry, applied atomically (kv::Op::kTxn); the reply,
// after it applied, is an array with one element per micro-op: +OK for
// APPEND and W; for R what the key held at that point of the transaction: an
// array of bulk strings (a list), a bulk string, or null (absent). An APPEND
// to a key holding a string refuses the whole transaction with
// -WRONGTYPE (no effect).
//
// --unsafe txn-not-atomic: each micro-op is proposed as its own one-op
// kTxn entry, the next once the previous applied, so other entries
// interleave. The reply is the same array once every part applied; when a
// part fails, the reply is that part's error if it was the first part (no
// effect), else -PARTIAL (some micro-ops took effect).
#include <cctype>

#include "targets/raftkv/resp/resp.h"
#include "targets/raftkv/server/server_impl.h"

namespace faultline::raftkv::server {
namespace {

std::optional<kv::TxnKind> ParseKind(const std::string& s) {
  std::string u;
  for (char ch : s)
    u.push_back(
        static_cast<char>(std::toupper(static_cast<unsigned char>(ch))));
  if (u == "APPEND") return kv::TxnKind::kAppend;
  if (u == "W") return kv::TxnKind::kWrite;
  if (u == "R") return kv::TxnKind::kRead;
  return std::nullopt;
}

const char kPartial[] =
    "PARTIAL a micro-op failed after earlier ones applied "
    "(--unsafe txn-not-atomic): ";

}  // namespace

void AppendDatum(std::string* out, const kv::Datum& d) {
  switch (d.type) {
    case kv::Datum::Type::kAbsent:
      resp::AppendNull(out);
      return;
    case kv::Datum::Type::kString:
      resp::AppendBulk(out, d.str);
      return;
    case kv::Datum::Type::kList:
      resp::AppendArrayHeader(out, d.list.size());
      for (const std::string& e : d.list) resp::AppendBulk(out, e);
      return;
  }
}

void Server::Impl::AppendTxnElements(std::string* out, const kv::Command& c,
                                     const kv::ApplyResult& r) {
  for (std::size_t i = 0; i < c.txn.size(); ++i) {
    if (c.txn[i].kind == kv::TxnKind::kRead && i < r.txn.size())
      AppendDatum(out, r.txn[i]);
    else
      resp::AppendSimple(out, "OK");
  }
}

void Server::Impl::StartTxn(const RequestRef& ref,
                            const std::vector<std::string>& a,
                            raft::Nanos now) {
  const std::size_t n = (a.size() - 1) / 3;
  if (a.size() < 4 || (a.size() - 1) % 3 != 0)
    return ReplyError(ref,
                      "ERR TXN needs op key arg triples (op: APPEND, W or R)");
  if (n > kv::kMaxTxnOps)
    return ReplyError(ref, "ERR TXN has more than " +
                               std::to_string(kv::kMaxTxnOps) + " micro-ops");
  std::vector<kv::TxnOp> ops(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<kv::TxnKind> k = ParseKind(a[1 + 3 * i]);
    if (!k)
      return ReplyError(
          ref, "ERR TXN op must be APPEND, W or R, not '" + a[1 + 3 * i] + "'");
    ops[i] = {*k, a[2 + 3 * i], a[3 + 3 * i]};
  }
  if (opts.unsafe != raft::Unsafe::kTxnNotAtomic) {
    Propose(ref, kv::MakeTxn(std::move(ops)), now);
    return;
  }
  std::uint64_t id = next_split++;
  SplitTxn& t = splits[id];
  t.ref = ref;
  t.ops = std::move(ops);
  t.deadline = now + raft::Nanos{opts.request_timeout_ms} * 1'000'000;
  ProposeSplitPart(id, now);
}

void Server::Impl::ProposeSplitPart(std::uint64_t split, raft::Nanos now) {
  auto it = splits.find(split);
  if (it == splits.end()) return;
  SplitTxn& t = it->second;
  raft::ProposeResult r =
      node->Propose(kv::Encode(kv::MakeTxn({t.ops[t.proposed]})), now);
  if (!r.ok) {
    raft::Status st = node->GetStatus(now);
    SplitFailed(split, NotLeaderError(r.leader, st.term));
    return;
  }
  ++t.proposed;
  PendingWrite p;
  p.term = r.term;
  p.deadline = t.deadline;
  p.split = split;
  proposals.emplace(r.index, p);
}

void Server::Impl::ContinueSplits(raft::Nanos now) {
  if (split_ready.empty()) return;
  std::vector<std::uint64_t> ready;
  ready.swap(split_ready);
  for (std::uint64_t id : ready) ProposeSplitPart(id, now);
}

void Server::Impl::SplitPartApplied(std::uint64_t split, const kv::Command& c,
                                    const kv::ApplyResult& r) {
  auto it = splits.find(split);
  if (it == splits.end()) return;
  if (!r.ok) return SplitFailed(split, "WRONGTYPE " + r.reason);
  SplitTxn& t = it->second;
  AppendTxnElements(&t.elements, c, r);
  ++t.applied;
  if (t.applied < t.ops.size()) {
    split_ready.push_back(split);
    return;
  }
  std::string out;
  resp::AppendArrayHeader(&out, t.ops.size());
  out += t.elements;
  clients.Reply(t.ref, std::move(out));
  splits.erase(it);
}

void Server::Impl::SplitFailed(std::uint64_t split, const std::string& line) {
  auto it = splits.find(split);
  if (it == splits.end()) return;
  if (it->second.applied == 0)
    ReplyError(it->second.ref, line);
  else
    ReplyError(it->second.ref, kPartial + line);
  splits.erase(it);
}

void Server::Impl::ProposalError(std::uint64_t split, const RequestRef& ref,
                                 const std::string& line) {
  if (split == 0)
    ReplyError(ref, line);
  else
    SplitFailed(split, line);
}

}  // namespace faultline::raftkv::server

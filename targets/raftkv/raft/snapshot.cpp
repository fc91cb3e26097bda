// Log compaction and chunked InstallSnapshot (node_impl.h).
#include <algorithm>

#include "targets/raftkv/raft/node_impl.h"

namespace faultline::raftkv::raft {

void Node::Impl::CompactInner(Index index, std::string data) {
  if (index <= log.snap_index()) return;
  RAFT_CHECK(index <= log.applied());
  Term t = log.TermOr0(index);
  log.CompactTo(index);
  snapshot = Snapshot{SnapshotMeta{index, t, cfg.voters}, std::move(data)};
}

void Node::Impl::SendSnapshotChunk(NodeId to, Nanos now) {
  auto it = prs.find(to);
  if (it == prs.end() || !snapshot) return;
  Progress& pr = it->second;
  if (pr.state() != ProgressState::kSnapshot ||
      pr.pending_snapshot() != snapshot->meta.index) {
    pr.BecomeSnapshot(snapshot->meta.index);
  }
  const std::string& data = snapshot->data;
  std::uint64_t total = data.size();
  std::uint64_t off = std::min<std::uint64_t>(pr.snap_offset(), total);
  std::uint64_t chunk = std::max<std::size_t>(cfg.snapshot_chunk_bytes, 1);
  std::uint64_t n = std::min(chunk, total - off);
  Message m;
  m.type = MsgType::kSnapshot;
  m.to = to;
  m.snapshot.meta = snapshot->meta;
  m.snapshot.data = data.substr(off, n);
  m.snap_offset = off;
  m.snap_total = total;
  m.snap_done = off + n == total;
  m.commit = log.committed();
  AttachLease(&m, now);
  Send(std::move(m));
}

void Node::Impl::HandleSnapshot(const Message& m, Nanos /*now*/) {
  const SnapshotMeta& meta = m.snapshot.meta;
  auto ack = [&](Index idx) {
    Message r;
    r.type = MsgType::kAppendResp;
    r.to = m.from;
    r.index = idx;
    Send(std::move(r));
  };
  // reject = true asks the leader to start over from the first chunk.
  auto progress = [&](std::uint64_t off, bool restart) {
    Message r;
    r.type = MsgType::kSnapshotResp;
    r.to = m.from;
    r.index = meta.index;
    r.snap_offset = off;
    r.reject = restart;
    Send(std::move(r));
  };
  if (meta.index <= log.committed()) {
    // Stale or duplicate: we already have (at least) this state.
    if (incoming && incoming->meta.index <= log.committed()) incoming.reset();
    ack(log.committed());
    return;
  }
  std::uint64_t size = m.snapshot.data.size();
  if (m.snap_offset > m.snap_total || size > m.snap_total - m.snap_offset)
    return;  // malformed chunk
  bool same = incoming && incoming->meta == meta &&
              incoming->total == m.snap_total && incoming->from == m.from &&
              incoming->term == m.term;
  if (!same) {
    if (m.snap_offset != 0) {
      progress(0, /*restart=*/true);
      return;
    }
    incoming = Incoming{meta, m.term, m.from, m.snap_total, {}};
  }
  if (m.snap_offset == incoming->data.size()) {
    incoming->data.append(m.snapshot.data);
  }  // else a duplicate or a chunk past a gap: ignore its bytes
  if (incoming->data.size() < incoming->total) {
    progress(incoming->data.size(), /*restart=*/false);
    return;
  }
  Snapshot snap{incoming->meta, std::move(incoming->data)};
  incoming.reset();
  if (log.MatchTerm(snap.meta.index, snap.meta.term)) {
    // Our log already holds everything the snapshot covers.
    log.CommitTo(snap.meta.index);
  } else {
    log.ResetToSnapshot(snap.meta.index, snap.meta.term);
    pending_snapshot = std::move(snap);
  }
  ack(log.committed());
}

void Node::Impl::HandleSnapshotResp(const Message& m, Nanos now) {
  auto it = prs.find(m.from);
  if (it == prs.end()) return;
  Progress& pr = it->second;
  if (pr.state() != ProgressState::kSnapshot || !snapshot) return;
  if (m.index != pr.pending_snapshot()) return;  // stale
  if (m.reject) {
    pr.SetSnapOffset(0);
  } else if (m.snap_offset > pr.snap_offset()) {
    pr.SetSnapOffset(m.snap_offset);
  } else {
    return;  // a duplicate answer: the chunk after it is already on its way
  }
  if (pr.snap_offset() < snapshot->data.size()) SendSnapshotChunk(m.from, now);
}

}  // namespace faultline::raftkv::raft

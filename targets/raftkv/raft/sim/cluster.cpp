#include "targets/raftkv/raft/sim/cluster.h"

#include <cstdio>
#include <cstdlib>

namespace faultline::raftkv::raft::sim {

struct Cluster::Slot {
  std::unique_ptr<Node> node;
  MemDisk disk;
  SimKv kv;
  int restarts = 0;
  std::uint64_t campaigns = 0;
  std::map<std::uint64_t, PendingRead> reads;  // context -> read
  std::vector<ReadTicket> local_waiting;       // follower-lease kWait
};

namespace {

bool TouchesKey(const Entry& e, const std::string& key) {
  std::string k, v;
  return SimKv::DecodePut(e, &k, &v) && k == key;
}

}  // namespace

Cluster::Cluster(std::uint64_t seed, ClusterOptions opt)
    : seed_(seed),
      opt_(std::move(opt)),
      net_(seed, opt_.net),
      checker_(seed, [this](NodeId n) -> const MemDisk* {
        auto it = slots_.find(n);
        return it == slots_.end() ? nullptr : &it->second->disk;
      }) {
  for (std::size_t i = 1; i <= opt_.nodes; ++i) ids_.push_back(i);
  for (NodeId n : ids_) {
    auto s = std::make_unique<Slot>();
    s->node = std::make_unique<Node>(ConfigFor(n, 0), clock_.Local(n));
    slots_.emplace(n, std::move(s));
  }
}

Cluster::~Cluster() = default;

Config Cluster::ConfigFor(NodeId n, int restarts) const {
  Config c = opt_.base;
  c.id = n;
  c.voters = ids_;
  c.seed = seed_ * 1000003ULL + n * 7919ULL +
           static_cast<std::uint64_t>(restarts) * 104729ULL;
  return c;
}

Cluster::Slot& Cluster::S(NodeId n) {
  auto it = slots_.find(n);
  if (it == slots_.end()) {
    std::fprintf(stderr, "%s:%d: no node %llu\n", __FILE__, __LINE__,
                 static_cast<unsigned long long>(n));
    std::abort();
  }
  return *it->second;
}

const Cluster::Slot& Cluster::S(NodeId n) const {
  return const_cast<Cluster*>(this)->S(n);
}

bool Cluster::Up(NodeId n) const { return S(n).node != nullptr; }
Node* Cluster::node(NodeId n) { return S(n).node.get(); }
const MemDisk& Cluster::disk(NodeId n) const { return S(n).disk; }
const SimKv& Cluster::kv(NodeId n) const { return S(n).kv; }
int Cluster::restarts(NodeId n) const { return S(n).restarts; }
std::uint64_t Cluster::campaigns(NodeId n) const { return S(n).campaigns; }

Status Cluster::StatusOf(NodeId n) const {
  const Slot& s = S(n);
  if (!s.node) return Status{};
  return s.node->GetStatus(clock_.Local(n));
}

NodeId Cluster::Leader() const {
  NodeId best = kNone;
  Term best_term = 0;
  for (NodeId n : ids_) {
    if (!Up(n)) continue;
    Status st = StatusOf(n);
    if (st.role == Role::kLeader && st.term >= best_term) {
      best = n;
      best_term = st.term;
    }
  }
  return best;
}

void Cluster::Trace(const std::string& line) {
  if (!trace) return;
  trace("t=" + std::to_string(clock_.Real() / 1000) + "us " + line);
}

void Cluster::Crash(NodeId n) {
  Slot& s = S(n);
  if (!s.node) return;
  Trace("crash n" + std::to_string(n));
  s.node.reset();
  s.kv = SimKv();
  s.reads.clear();
  s.local_waiting.clear();
  checker_.OnCrash(n);
}

void Cluster::Restart(NodeId n) {
  Slot& s = S(n);
  if (s.node) return;
  ++s.restarts;
  Trace("restart n" + std::to_string(n) + " term " +
        std::to_string(s.disk.hs.term) + " vote " +
        std::to_string(s.disk.hs.vote) + " commit " +
        std::to_string(s.disk.hs.commit) + " last " +
        std::to_string(s.disk.LastIndex()));
  s.node = std::make_unique<Node>(ConfigFor(n, s.restarts), clock_.Local(n));
  s.node->Restore(s.disk.hs, s.disk.snap, s.disk.log);
  s.kv = SimKv();
  if (s.disk.snap && !s.kv.Restore(s.disk.snap->data, s.disk.SnapIndex())) {
    checker_.Contract(n, "unreadable snapshot on disk");
  }
  checker_.OnRestart(n, s.disk.hs.commit);
  ProcessReady(n);
}

void Cluster::TickNode(NodeId n) {
  Slot& s = S(n);
  if (!s.node) return;
  s.node->Tick(clock_.Local(n));
  ProcessReady(n);
}

void Cluster::Deliver(const Message& m) {
  if (m.to == kNone || slots_.count(m.to) == 0) return;
  Slot& s = S(m.to);
  if (!s.node) return;
  s.node->Step(m, clock_.Local(m.to));
  ProcessReady(m.to);
}

void Cluster::DeliverDue() {
  for (;;) {
    std::vector<Message> due = net_.TakeDue(clock_.Real());
    if (due.empty()) return;
    for (const Message& m : due) Deliver(m);
  }
}

bool Cluster::MaybeCrash(NodeId n, ReadyPhase p, const Ready& rd) {
  if (crash_hook && crash_hook(n, p, rd)) {
    Crash(n);
    return true;
  }
  return false;
}

void Cluster::ProcessReady(NodeId n) {
  for (int round = 0; round < 100; ++round) {
    if (!ProcessReadyOnce(n)) return;
    RetryLocalReads(n);
    const Slot& s = S(n);
    if (!s.node || !s.node->HasReady()) return;
  }
  checker_.Contract(n, "Ready never drains");
}

bool Cluster::ProcessReadyOnce(NodeId n) {
  for (int guard = 0; guard < 1000; ++guard) {
    Slot& s = S(n);
    if (!s.node || !s.node->HasReady()) break;
    Ready rd = s.node->GetReady();
    if (trace) {
      if (rd.soft_state) {
        Trace("n" + std::to_string(n) + " " + ToString(rd.soft_state->role) +
              " term " + std::to_string(rd.soft_state->term) + " leader " +
              std::to_string(rd.soft_state->leader));
      }
      for (const Message& m : rd.messages) {
        std::string l = std::string("  send ") + ToString(m.type) + " " +
                        std::to_string(m.from) + "->" + std::to_string(m.to) +
                        " term " + std::to_string(m.term) + " idx " +
                        std::to_string(m.index) + " lt " +
                        std::to_string(m.log_term) +
                        " n=" + std::to_string(m.entries.size()) + " commit " +
                        std::to_string(m.commit);
        if (m.reject) l += " REJECT";
        if (m.lease_seq) {
          l += " lease_seq " + std::to_string(m.lease_seq) + " dur " +
               std::to_string(m.lease_duration) + " floor " +
               std::to_string(m.lease_floor);
        }
        if (m.lease_revoke) l += " revoke";
        Trace(l);
      }
      for (const Entry& e : rd.committed) {
        Trace("  n" + std::to_string(n) + " apply " + std::to_string(e.index) +
              " t" + std::to_string(e.term) + " " + e.data);
      }
    }
    for (const Message& m : rd.messages) {
      if (m.type == MsgType::kVote || m.type == MsgType::kPreVote) {
        ++s.campaigns;
        break;
      }
    }
    if (MaybeCrash(n, ReadyPhase::kBeforePersist, rd)) return false;
    // 1. persist
    if (rd.hard_state) {
      checker_.OnPersistHardState(n, s.disk.hs, *rd.hard_state);
      s.disk.hs = *rd.hard_state;
    }
    if (rd.snapshot) {
      checker_.OnPersistSnapshot(n, *rd.snapshot);
      s.disk.InstallSnapshot(*rd.snapshot);
    }
    if (!rd.entries.empty()) {
      checker_.OnPersistEntries(n, rd.entries);
      if (auto err = s.disk.Append(rd.entries)) checker_.Contract(n, *err);
    }
    if (MaybeCrash(n, ReadyPhase::kAfterPersist, rd)) return false;
    // 2. send
    for (const Message& m : rd.messages) {
      if (m.from != n) {
        checker_.Contract(n, std::string("sends a message from node ") +
                                 std::to_string(m.from));
      }
      if (m.to == n) continue;
      net_.Send(m, clock_.Real());
    }
    if (MaybeCrash(n, ReadyPhase::kAfterSend, rd)) return false;
    // 3. apply
    if (rd.snapshot) {
      checker_.OnApplySnapshot(n, *rd.snapshot, s.kv.applied());
      if (!s.kv.Restore(rd.snapshot->data, rd.snapshot->meta.index)) {
        checker_.Contract(n, "unreadable snapshot received");
      }
    }
    const Index commit =
        rd.committed.empty() ? 0 : s.node->GetStatus(clock_.Local(n)).commit;
    for (const Entry& e : rd.committed) {
      if (e.index > commit) {
        checker_.Contract(n, "applies index " + std::to_string(e.index) +
                                 " beyond its commit " +
                                 std::to_string(commit));
      }
      checker_.OnApply(n, e, s.kv.applied());
      s.kv.Apply(e);
    }
    // 4. reads
    for (const ReadState& r : rd.read_states) {
      auto it = s.reads.find(r.context);
      if (it == s.reads.end()) continue;
      it->second.has_index = true;
      it->second.index = r.index;
    }
    for (std::uint64_t ctx : rd.failed_reads) {
      if (s.reads.erase(ctx) > 0) ++failed_reads_;
    }
    if (MaybeCrash(n, ReadyPhase::kAfterApply, rd)) return false;
    s.node->Advance(rd);
    ServeReads(n);
    if (opt_.snapshot_every > 0 &&
        s.kv.applied() >= s.disk.SnapIndex() + opt_.snapshot_every &&
        s.kv.applied() <= s.disk.LastIndex()) {
      const Index at = s.kv.applied();
      std::string data = s.kv.Serialize();
      s.node->Compact(at, data);
      s.disk.Compact(at, std::move(data), ids_);
    }
  }
  return true;
}

void Cluster::ServeReads(NodeId n) {
  Slot& s = S(n);
  for (auto it = s.reads.begin(); it != s.reads.end();) {
    const PendingRead& r = it->second;
    if (!r.has_index || s.kv.applied() < r.index) {
      ++it;
      continue;
    }
    std::optional<std::string> v = s.kv.Get(r.ticket.key);
    checker_.OnReadServed(n, r.ticket, r.index, v, "read-index");
    served_.push_back(ServedRead{n, r.ticket.key, v, false});
    it = s.reads.erase(it);
  }
}

void Cluster::Observe() {
  ++step_;
  checker_.SetStep(step_, clock_.Real());
  for (NodeId n : ids_) {
    if (!Up(n)) continue;
    Status st = StatusOf(n);
    checker_.ObserveNode(n, st.role, st.term, st.commit);
  }
}

ProposeResult Cluster::Propose(NodeId n, const std::string& key,
                               const std::string& value) {
  Slot& s = S(n);
  if (!s.node) {
    ProposeResult r;
    r.error = "down";
    return r;
  }
  ProposeResult r =
      s.node->Propose(SimKv::EncodePut(key, value), clock_.Local(n));
  ProcessReady(n);
  return r;
}

void Cluster::StartRead(NodeId n, const ReadTicket& t) {
  Slot& s = S(n);
  const std::uint64_t ctx = next_ctx_++;
  s.reads[ctx] = PendingRead{t, false, 0};
  s.node->RequestRead(ctx, clock_.Local(n));
}

void Cluster::Read(NodeId n, const std::string& key, bool try_local) {
  Slot& s = S(n);
  if (!s.node) return;
  ReadTicket t = checker_.OnReadInvoked(key);
  if (try_local && opt_.base.read_mode == ReadMode::kFollowerLease) {
    s.local_waiting.push_back(t);
    RetryLocalReads(n);
  } else {
    StartRead(n, t);
  }
  ProcessReady(n);
}

void Cluster::RetryLocalReads(NodeId n) {
  Slot& s = S(n);
  if (!s.node || s.local_waiting.empty()) return;
  std::vector<ReadTicket> waiting;
  waiting.swap(s.local_waiting);
  for (const ReadTicket& t : waiting) {
    // The value first, the lease second.
    std::optional<std::string> v = s.kv.Get(t.key);
    const LocalRead r = s.node->TryLocalRead(
        clock_.Local(n), [&](const Entry& e) { return TouchesKey(e, t.key); });
    if (trace) {
      Status st = s.node->GetStatus(clock_.Local(n));
      Trace("n" + std::to_string(n) + " local read " + t.key + " = " +
            v.value_or("nil") + " -> " + std::to_string(static_cast<int>(r)) +
            " applied " + std::to_string(s.kv.applied()) + " commit " +
            std::to_string(st.commit) + " lease remaining " +
            std::to_string(st.follower_lease_remaining));
    }
    switch (r) {
      case LocalRead::kServe:
        checker_.OnReadServed(n, t, 0, v, "local");
        served_.push_back(ServedRead{n, t.key, v, true});
        break;
      case LocalRead::kWait:
        s.local_waiting.push_back(t);
        break;
      case LocalRead::kNoLease:
        StartRead(n, t);
        break;
    }
  }
}

bool Cluster::TransferLeadership(NodeId from, NodeId to) {
  Slot& s = S(from);
  if (!s.node) return false;
  const bool ok = s.node->TransferLeadership(to, clock_.Local(from));
  ProcessReady(from);
  return ok;
}

std::size_t Cluster::PendingReads() const {
  std::size_t n = 0;
  for (const auto& [id, s] : slots_)
    n += s->reads.size() + s->local_waiting.size();
  return n;
}

}  // namespace faultline::raftkv::raft::sim

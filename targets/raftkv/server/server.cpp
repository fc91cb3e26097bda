#include "targets/raftkv/server/server.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>

#include "targets/raftkv/raft/codec.h"
#include "targets/raftkv/resp/resp.h"
#include "targets/raftkv/server/log.h"
#include "targets/raftkv/server/server_impl.h"
#include "targets/raftkv/storage/env.h"
#include "targets/raftkv/storage/no_sync_env.h"

namespace faultline::raftkv::server {
namespace {

volatile std::sig_atomic_t g_stop = 0;

using ULL = unsigned long long;

}  // namespace

raft::Nanos MonotonicNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<raft::Nanos>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Server::Server(Options opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}
Server::~Server() = default;
std::string Server::Start() { return impl_->Start(); }
int Server::Run() { return impl_->Run(); }
void Server::RequestStop() { g_stop = 1; }
void Server::ResetStop() { g_stop = 0; }
int Server::ClientPort() const { return impl_->clients.BoundPort(); }
int Server::PeerPort() const {
  return impl_->transport ? impl_->transport->BoundPort() : 0;
}

Server::Impl::Impl(Options o) : opts(std::move(o)) {
  kv::LockTimers::Options to;
  to.drift_epsilon = opts.lease_drift_bound;
  to.guard = 5'000'000;
  timers = kv::LockTimers(to);
}

std::string Server::Impl::Start() {
  std::error_code ec;
  std::filesystem::create_directories(opts.data_dir, ec);
  if (ec)
    return "--data-dir " + opts.data_dir + ": cannot create: " + ec.message();
  storage::Recovered rec;
  std::string err;
  storage::Env* env = storage::PosixEnv();
  if (opts.unsafe == raft::Unsafe::kLogNotSynced) {
    no_sync_env = std::make_unique<storage::NoSyncEnv>(env);
    env = no_sync_env.get();
  }
  disk = storage::DiskStorage::Open(opts.data_dir, env, &rec, &err);
  if (!disk) return "--data-dir " + opts.data_dir + ": " + err;

  raft::Config cfg;
  cfg.id = opts.id;
  for (const auto& [id, p] : opts.peers) cfg.voters.push_back(id);
  cfg.seed = std::random_device{}() ^ (opts.id * 0x9e3779b97f4a7c15ULL) ^
             static_cast<std::uint64_t>(MonotonicNow());
  cfg.heartbeat_interval = raft::Nanos{opts.heartbeat_ms} * 1'000'000;
  cfg.election_timeout = raft::Nanos{opts.election_ms} * 1'000'000;
  cfg.pre_vote = opts.pre_vote;
  cfg.check_quorum = opts.check_quorum;
  cfg.read_mode = opts.read_mode;
  cfg.follower_lease = raft::Nanos{opts.follower_lease_ms} * 1'000'000;
  cfg.drift_epsilon = opts.lease_drift_bound;
  cfg.unsafe = opts.unsafe;
  cfg.max_append_entries = static_cast<std::size_t>(opts.max_append_entries);
  cfg.max_inflight = static_cast<std::size_t>(opts.max_inflight);
  // Tick several times per heartbeat, at most every 10 ms.
  tick_interval = std::clamp<raft::Nanos>(cfg.heartbeat_interval / 5, 1'000'000,
                                          10'000'000);

  raft::Nanos now = MonotonicNow();
  node = std::make_unique<raft::Node>(cfg, now);
  bool recovered = rec.snapshot.has_value() || !rec.entries.empty() ||
                   rec.hard_state != raft::HardState{};
  if (recovered) {
    if (rec.snapshot) {
      if (!sm.Restore(rec.snapshot->data, rec.snapshot->meta.index))
        return "--data-dir " + opts.data_dir +
               ": the snapshot does not decode as a state machine";
      applied_term = rec.snapshot->meta.term;
      snapshot_index = rec.snapshot->meta.index;
    }
    raft::Index first = rec.entries.empty() ? 0 : rec.entries.front().index;
    raft::Index last = rec.entries.empty() ? 0 : rec.entries.back().index;
    RAFTKV_INFO(
        "recovered term=%llu vote=%llu commit=%llu snapshot=%llu "
        "entries=%llu..%llu (%zu) torn_records=%d",
        static_cast<ULL>(rec.hard_state.term),
        static_cast<ULL>(rec.hard_state.vote),
        static_cast<ULL>(rec.hard_state.commit),
        static_cast<ULL>(snapshot_index), static_cast<ULL>(first),
        static_cast<ULL>(last), rec.entries.size(), rec.torn_records);
    node->Restore(rec.hard_state, rec.snapshot, std::move(rec.entries));
  } else {
    RAFTKV_INFO("fresh data directory %s", opts.data_dir.c_str());
  }

  std::map<raft::NodeId, HostPort> raft_addrs;
  for (const auto& [id, p] : opts.peers) raft_addrs[id] = p.raft;
  transport = std::make_unique<PeerTransport>(opts.id, raft_addrs);
  if (err = transport->Listen(opts.peers.at(opts.id).raft); !err.empty())
    return err;
  if (err = clients.Listen(opts.listen); !err.empty()) return err;
  RAFTKV_INFO("serving clients on %s, peers on %s, read-mode=%s unsafe=%s",
              opts.listen.ToString().c_str(),
              opts.peers.at(opts.id).raft.ToString().c_str(),
              raft::ToString(opts.read_mode), raft::ToString(opts.unsafe));
  next_tick = now + tick_interval;
  return "";
}

int Server::Impl::Run() {
  while (!g_stop && !fatal) Iterate();
  FailAll("SHUTDOWN");
  clients.Shutdown();
  if (transport) transport->Flush(MonotonicNow());
  transport.reset();
  disk.reset();
  if (fatal) {
    RAFTKV_ERROR("stopped after a fatal error");
    return 1;
  }
  RAFTKV_INFO("stopped cleanly");
  return 0;
}

void Server::Impl::Iterate() {
  fds.clear();
  transport->AppendPollFds(&fds);
  clients.AppendPollFds(&fds);
  raft::Nanos now = MonotonicNow();
  int timeout_ms = 0;
  if (!node->HasReady() && now < next_tick)
    timeout_ms = static_cast<int>((next_tick - now + 999'999) / 1'000'000);
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n < 0 && errno != EINTR) {
    RAFTKV_ERROR("poll: %s", std::strerror(errno));
    fatal = true;
    return;
  }
  if (n < 0) {
    for (auto& p : fds) p.revents = 0;
  }
  now = MonotonicNow();

  received.clear();
  transport->HandlePoll(fds, now, &received);
  for (const std::string& payload : received) {
    raft::Message m;
    if (!raft::DecodeMessage(payload, &m)) {
      RAFTKV_WARN("dropped a peer message that does not decode (%zu bytes)",
                  payload.size());
      continue;
    }
    if (m.to != opts.id || m.from == opts.id || opts.peers.count(m.from) == 0) {
      RAFTKV_DEBUG("dropped a %s from unknown member %llu to %llu",
                   raft::ToString(m.type), static_cast<ULL>(m.from),
                   static_cast<ULL>(m.to));
      continue;
    }
    node->Step(m, now);
  }

  commands.clear();
  clients.HandlePoll(fds, &commands);
  for (const ClientCommand& c : commands) Dispatch(c, now);

  if (now >= next_tick) {
    OnTick(now);
    next_tick = now + tick_interval;
  }
  while (!fatal && node->HasReady()) {
    if (!HandleReady(now)) fatal = true;
  }
  transport->Flush(now);
  clients.Flush();
}

void Server::Impl::OnTick(raft::Nanos now) {
  node->Tick(now);
  if (timers.leading()) {
    for (const kv::DueExpiry& d : timers.Due(now)) {
      RAFTKV_DEBUG("lock %s token %llu expired; proposing its release",
                   d.name.c_str(), static_cast<ULL>(d.token));
      Propose(RequestRef{}, kv::MakeExpire(d.name, d.token, d.generation), now);
    }
  }
  for (auto it = proposals.begin(); it != proposals.end();) {
    if (it->second.deadline <= now) {
      ProposalError(it->second.split, it->second.ref,
                    "TIMEOUT outcome unknown");
      it = proposals.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = reads.begin(); it != reads.end();) {
    if (it->second.deadline <= now) {
      ReplyError(it->second.ref, "TIMEOUT outcome unknown");
      it = reads.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(parked, [&](const Parked& p) {
    if (p.deadline > now) return false;
    ReplyError(p.ref, "TIMEOUT outcome unknown");
    return true;
  });
}

void Server::Impl::OnSoftState(const raft::SoftState& ss, raft::Nanos now) {
  RAFTKV_INFO("role=%s term=%llu leader=%llu", raft::ToString(ss.role),
              static_cast<ULL>(ss.term), static_cast<ULL>(ss.leader));
  bool was_leader = soft.role == raft::Role::kLeader;
  bool is_leader = ss.role == raft::Role::kLeader;
  if (is_leader && (!was_leader || ss.term != soft.term)) {
    timers.OnBecomeLeader(sm.locks(), now);
    token_counter = 1;
  } else if (!is_leader && was_leader) {
    timers.OnLoseLeadership();
  }
  soft = ss;
}

bool Server::Impl::HandleReady(raft::Nanos now) {
  raft::Ready rd = node->GetReady();
  if (rd.soft_state) OnSoftState(*rd.soft_state, now);

  // 1. Persist.
  if (rd.snapshot) {
    std::string err = disk->SaveSnapshot(*rd.snapshot);
    if (!err.empty()) {
      RAFTKV_ERROR("fatal: saving a received snapshot: %s", err.c_str());
      return false;
    }
  }
  if (rd.hard_state || !rd.entries.empty()) {
    std::string err = disk->Save(rd.hard_state, rd.entries, rd.must_sync);
    if (!err.empty()) {
      RAFTKV_ERROR("fatal: writing the log: %s", err.c_str());
      return false;
    }
  }
  // 2. Send.
  for (const raft::Message& m : rd.messages)
    transport->Send(m.to, raft::EncodeMessage(m));
  transport->Flush(now);

  // 3. Apply: a newer snapshot, then committed entries; never roll back.
  if (rd.snapshot && rd.snapshot->meta.index > sm.applied()) {
    const raft::Snapshot& s = *rd.snapshot;
    if (!sm.Restore(s.data, s.meta.index)) {
      RAFTKV_ERROR("fatal: a received snapshot at %llu does not decode",
                   static_cast<ULL>(s.meta.index));
      return false;
    }
    applied_term = s.meta.term;
    snapshot_index = s.meta.index;
    RAFTKV_INFO("restored snapshot at index %llu term %llu",
                static_cast<ULL>(s.meta.index), static_cast<ULL>(s.meta.term));
    if (timers.leading()) timers.OnBecomeLeader(sm.locks(), now);
  }
  for (const raft::Entry& e : rd.committed) {
    if (e.index <= sm.applied()) continue;
    ApplyEntry(e, now);
  }
  // Proposals at or below applied that no entry answered (covered by a
  // snapshot): their fate is unknown here.
  while (!proposals.empty() && proposals.begin()->first <= sm.applied()) {
    const PendingWrite& p = proposals.begin()->second;
    ProposalError(p.split, p.ref, "TIMEOUT outcome unknown");
    proposals.erase(proposals.begin());
  }

  // 4. Reads.
  for (const raft::ReadState& rs : rd.read_states) {
    auto it = reads.find(rs.context);
    if (it == reads.end()) continue;
    it->second.index = rs.index;
    it->second.have_index = true;
    reads_by_index.emplace(rs.index, rs.context);
  }
  ServeReady();
  for (std::uint64_t ctx : rd.failed_reads) {
    auto it = reads.find(ctx);
    if (it == reads.end()) continue;
    raft::Status st = node->GetStatus(now);
    ReplyError(it->second.ref, NotLeaderError(st.leader, st.term));
    reads.erase(it);
  }

  node->Advance(rd);
  ContinueSplits(now);
  MaybeSnapshot();
  RetryParked(now);
  return true;
}

void Server::Impl::ApplyEntry(const raft::Entry& e, raft::Nanos now) {
  if (e.type != raft::EntryType::kNormal) {
    sm.set_applied(e.index);
    applied_term = e.term;
    AnswerApplied(e, kv::Command{}, kv::ApplyResult{}, false);
    return;
  }
  std::optional<kv::Command> c = kv::Decode(e.data);
  if (!c) {
    // Every replica skips it the same way.
    RAFTKV_WARN("entry %llu does not decode as a command; skipped",
                static_cast<ULL>(e.index));
    sm.set_applied(e.index);
    applied_term = e.term;
    AnswerApplied(e, kv::Command{}, kv::ApplyResult{}, false);
    return;
  }
  kv::ApplyResult r = sm.Apply(e.index, *c);
  applied_term = e.term;
  switch (c->op) {
    case kv::Op::kAcquire:
    case kv::Op::kRenew:
    case kv::Op::kRelease:
    case kv::Op::kExpire: {
      auto it = sm.locks().find(c->key);
      std::optional<kv::LockState> st;
      if (it != sm.locks().end()) st = it->second;
      timers.OnApplied(c->key, st, now);
      break;
    }
    default:
      break;
  }
  AnswerApplied(e, *c, r, true);
}

void Server::Impl::MaybeSnapshot() {
  if (sm.applied() < snapshot_index + opts.snapshot_entries) return;
  raft::Snapshot s;
  s.meta.index = sm.applied();
  s.meta.term = applied_term;
  for (const auto& [id, p] : opts.peers) s.meta.voters.push_back(id);
  s.data = sm.Serialize();
  std::string err = disk->SaveSnapshot(s);
  if (!err.empty()) {
    // The log still holds everything: keep serving, try again later.
    RAFTKV_WARN("snapshot at %llu failed: %s", static_cast<ULL>(s.meta.index),
                err.c_str());
    snapshot_index = s.meta.index;
    return;
  }
  node->Compact(s.meta.index, s.data);
  snapshot_index = s.meta.index;
  RAFTKV_INFO("snapshot at index %llu term %llu (%zu bytes)",
              static_cast<ULL>(s.meta.index), static_cast<ULL>(s.meta.term),
              s.data.size());
}

void Server::Impl::FailAll(const std::string& error) {
  for (auto& [i, p] : proposals) ProposalError(p.split, p.ref, error);
  proposals.clear();
  for (auto& [id, t] : splits) ReplyError(t.ref, error);  // between parts
  splits.clear();
  split_ready.clear();
  for (auto& [c, r] : reads) ReplyError(r.ref, error);
  reads.clear();
  reads_by_index.clear();
  for (Parked& p : parked) ReplyError(p.ref, error);
  parked.clear();
}

}  // namespace faultline::raftkv::server

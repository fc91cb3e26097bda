// Internal state of the raftkv server driver (server.h), shared by
// server.cpp (startup, loop, Ready handling) and commands.cpp (client
// commands and replies). Not a public interface.
#pragma once

#include <poll.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "targets/raftkv/kv/lock_timers.h"
#include "targets/raftkv/kv/state_machine.h"
#include "targets/raftkv/raft/raft.h"
#include "targets/raftkv/server/client_port.h"
#include "targets/raftkv/server/flags.h"
#include "targets/raftkv/server/server.h"
#include "targets/raftkv/server/transport.h"
#include "targets/raftkv/storage/storage.h"

namespace faultline::raftkv::server {

raft::Nanos MonotonicNow();

// Appends what key holds as a RESP reply: bulk string, array of bulk
// strings (a list) or null (absent). txn.cpp.
void AppendDatum(std::string* out, const kv::Datum& d);

struct Server::Impl {
  explicit Impl(Options o);

  // --- server.cpp
  std::string Start();
  int Run();
  void Iterate();
  void OnTick(raft::Nanos now);
  bool HandleReady(raft::Nanos now);  // false: fatal error
  void ApplyEntry(const raft::Entry& e, raft::Nanos now);
  void MaybeSnapshot();
  void OnSoftState(const raft::SoftState& ss, raft::Nanos now);
  void FailAll(const std::string& error);

  // --- commands.cpp
  void Dispatch(const ClientCommand& cmd, raft::Nanos now);
  void Propose(const RequestRef& ref, const kv::Command& c, raft::Nanos now);
  void StartRead(const RequestRef& ref, const std::string& key,
                 raft::Nanos now);
  // Follower-lease fast path; false if the read must go through the leader.
  bool TryLocal(const RequestRef& ref, const std::string& key,
                raft::Nanos deadline, raft::Nanos now);
  void RetryParked(raft::Nanos now);
  void ServeReady();  // read states whose index <= applied
  void AnswerApplied(const raft::Entry& e, const kv::Command& c,
                     const kv::ApplyResult& r, bool decoded);
  std::string NotLeaderError(raft::NodeId leader, raft::Term term) const;
  std::string StatusText(raft::Nanos now) const;
  void ReplyError(const RequestRef& ref, const std::string& line);
  void ReplyValue(const RequestRef& ref, const kv::Datum& v);

  // --- txn.cpp: TXN, and its --unsafe txn-not-atomic split
  void StartTxn(const RequestRef& ref, const std::vector<std::string>& a,
                raft::Nanos now);
  // The reply elements of an applied kTxn (one per micro-op).
  static void AppendTxnElements(std::string* out, const kv::Command& c,
                                const kv::ApplyResult& r);
  // A proposal (PendingWrite) that its entry will never answer: `line` to
  // its client `ref`, or, when `split` is nonzero, to that split TXN.
  void ProposalError(std::uint64_t split, const RequestRef& ref,
                     const std::string& line);
  void SplitPartApplied(std::uint64_t split, const kv::Command& c,
                        const kv::ApplyResult& r);
  void SplitFailed(std::uint64_t split, const std::string& line);
  void ProposeSplitPart(std::uint64_t split, raft::Nanos now);
  void ContinueSplits(raft::Nanos now);  // after Advance: next parts

  Options opts;
  raft::Nanos tick_interval = 5'000'000;
  // --unsafe log-not-synced: the Env `disk` writes through (declared first,
  // so it outlives `disk`); null otherwise.
  std::unique_ptr<storage::Env> no_sync_env;
  std::unique_ptr<storage::DiskStorage> disk;
  std::unique_ptr<raft::Node> node;
  kv::StateMachine sm;
  kv::LockTimers timers;
  std::unique_ptr<PeerTransport> transport;
  server::ClientPort clients;

  raft::Term applied_term = 0;      // term of the entry at sm.applied()
  raft::Index snapshot_index = 0;   // last snapshot taken or restored
  raft::SoftState soft;             // as last reported
  std::uint64_t token_counter = 1;  // --unsafe lock-token-per-term
  std::uint64_t next_context = 1;
  raft::Nanos next_tick = 0;
  bool fatal = false;

  struct PendingWrite {
    RequestRef ref;
    raft::Term term = 0;
    raft::Nanos deadline = 0;
    std::uint64_t split = 0;  // nonzero: a part of splits[split] (ref unset)
  };
  // By log index; several proposals may share an index (a new leader
  // re-used it); the committed entry there decides which one, if any, won.
  std::multimap<raft::Index, PendingWrite> proposals;

  // --unsafe txn-not-atomic: a TXN proposed one micro-op per entry, each
  // part proposed once the previous one applied, so other entries can
  // interleave. Answered when the last part applied (or one failed).
  struct SplitTxn {
    RequestRef ref;
    std::vector<kv::TxnOp> ops;
    std::size_t proposed = 0;  // parts proposed so far
    std::size_t applied = 0;   // parts applied so far
    std::string elements;      // RESP reply elements of the applied parts
    raft::Nanos deadline = 0;  // of the whole transaction
  };
  std::map<std::uint64_t, SplitTxn> splits;
  std::uint64_t next_split = 1;
  std::vector<std::uint64_t> split_ready;  // next part due after Advance

  struct PendingRead {
    RequestRef ref;
    std::string key;
    raft::Nanos deadline = 0;
    raft::Index index = 0;  // set once the read state arrived
    bool have_index = false;
  };
  std::map<std::uint64_t, PendingRead> reads;  // by context
  std::multimap<raft::Index, std::uint64_t> reads_by_index;

  struct Parked {  // follower-lease local read that must wait (kWait)
    RequestRef ref;
    std::string key;
    raft::Nanos deadline = 0;
  };
  std::vector<Parked> parked;

  // Scratch buffers reused by every iteration.
  std::vector<pollfd> fds;
  std::vector<std::string> received;
  std::vector<ClientCommand> commands;
};

}  // namespace faultline::raftkv::server

// The raftkv server driver: one single-threaded poll loop that glues the
// pure Raft core (raft::Node), the write-ahead log (storage::DiskStorage),
// the state machine and lock timers (kv/), the peer transport and the
// client port.
//
// Each loop iteration: poll (at most one tick interval), feed received peer
// messages to Step, turn client commands into Propose / RequestRead /
// TryLocalRead, Tick every tick interval, then handle every Ready exactly as
// raft.h prescribes: persist (fsync when must_sync) -> send -> restore a
// newer snapshot and apply committed entries (answering the proposing
// clients, matched by (index, term)) -> serve read states -> Advance. All
// commands read in one iteration share one Ready and one fsync.
//
// Thread-safety: none. Run() owns the calling thread until a stop is
// requested (RequestStop is async-signal-safe).
#pragma once

#include <memory>
#include <string>

#include "targets/raftkv/server/flags.h"

namespace faultline::raftkv::server {

class Server {
 public:
  explicit Server(Options opts);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the data directory, recovers, binds both ports. Returns "" or an
  // error line (the caller exits 1).
  std::string Start();
  // Serves until RequestStop(); answers what is pending with -SHUTDOWN.
  // Returns 0 after a clean stop, 1 after a fatal error (e.g. a failed
  // fsync), which is logged.
  int Run();
  // Makes Run() return (in every Server of the process). Async-signal-safe.
  static void RequestStop();
  // Tests: forget an earlier RequestStop before starting servers again.
  static void ResetStop();

  // For tests: the bound ports (useful with port 0).
  int ClientPort() const;
  int PeerPort() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::raftkv::server

// ZkSession: one ZooKeeper session (libzookeeper-mt, the C client's
// threaded flavour) to one server, with every call bounded by a deadline.
// The C client's asynchronous API runs each request on its own I/O thread;
// this class waits for the completion until the deadline and then gives
// up on it (the completion still runs later, into an object it co-owns).
//
// The handle is made lazily and made again after the session expired (its
// ephemeral znodes are then gone; see zk_lock_client.h). `Reset` closes it.
//
// Return codes are the C client's (ZOK, ZNONODE, ZCONNECTIONLOSS, ...) plus
// kTimedOut: no completion before the deadline (the request may or may not
// have been sent and applied), and kNotConnected: the session was not
// connected before the deadline, so nothing was sent.
//
// Thread-safety: one thread calls the methods (a worker's client); the C
// client's own threads only touch the shared completion objects and the
// event box.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace faultline::targets::zookeeper {

constexpr int kTimedOut = 1;
constexpr int kNotConnected = 2;

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

struct ZkStat {
  std::int64_t czxid = 0;
  std::int64_t mzxid = 0;
  int version = -1;
  std::int64_t ephemeral_owner = 0;
};

struct ZkReply {
  int rc = kTimedOut;
  std::string data;  // get: the node's data; create: the created path
  ZkStat stat;       // get, set, exists, create
  std::vector<std::string> children;
  std::vector<int> op_rcs;  // multi: each op's own code, when answered
  bool ok() const { return rc == 0; }
};

// One operation of a multi (zoo_amulti; see ZkSession::Multi).
struct ZkOp {
  enum class Kind { kCheck, kSet, kCreate, kDelete };
  Kind kind = Kind::kCheck;
  std::string path;
  std::string data;  // set, create (a persistent znode, open ACL)
  int version = -1;  // check, set, delete: the expected version; -1 = any
  bool operator==(const ZkOp&) const = default;
};

// The C client logs through one process-wide stream: this sends errors
// only (no connection chatter) to `path`, appended. The first call wins;
// later calls do nothing. Without a call the C client logs to stderr.
void SetClientLog(const std::string& path);

// A readable name for a return code ("ZNONODE", "timeout", ...).
std::string RcName(int rc);

class ZkSession {
 public:
  // `hosts` is the connection string ("10.77.40.1:2181"), `timeout_ms` the
  // session timeout asked for (the server clamps it, see
  // ClampSessionTimeout).
  ZkSession(std::string hosts, int timeout_ms);
  ~ZkSession();
  ZkSession(const ZkSession&) = delete;
  ZkSession& operator=(const ZkSession&) = delete;

  // Makes a handle if there is none or the session expired, then waits
  // until it is connected or `deadline` passes.
  bool AwaitConnected(Deadline deadline);
  // True when a handle exists and its session expired (the server dropped
  // it and its ephemeral znodes).
  bool Expired();
  // True when a handle exists and is connected now.
  bool Connected();
  // The session id, 0 without a handle.
  std::int64_t SessionId();
  // Closes the handle (ephemeral znodes go away with a clean close).
  void Reset();

  // Each waits for the connection first (kNotConnected when it never came).
  ZkReply Get(const std::string& path, Deadline deadline);
  ZkReply Set(const std::string& path, const std::string& data, int version,
              Deadline deadline);
  // flags: 0, ZOO_EPHEMERAL, ZOO_EPHEMERAL_SEQUENTIAL, ... (open ACL).
  ZkReply Create(const std::string& path, const std::string& data, int flags,
                 Deadline deadline);
  ZkReply Delete(const std::string& path, int version, Deadline deadline);
  // With `watch`, a one-shot watch on the path bumps EventCount when the
  // node changes (as does every session event).
  ZkReply Exists(const std::string& path, bool watch, Deadline deadline);
  ZkReply Children(const std::string& path, Deadline deadline);
  // The `sync` call: the server catches up with the leader before it
  // answers, so a read after it sees every write committed before it.
  ZkReply Sync(const std::string& path, Deadline deadline);
  // The `multi` call: every op is applied, in order, as one transaction by
  // the leader, or none is. rc is ZOK, or the first failing op's code
  // (ZBADVERSION, ZNONODE, ZNODEEXISTS, ...: then nothing was applied),
  // or a connection/timeout code as for the other calls (unknown whether it
  // was applied). op_rcs has each op's code when the server answered.
  // `ops` must not be empty.
  ZkReply Multi(const std::vector<ZkOp>& ops, Deadline deadline);

  // Watch and session events so far; WaitEvent blocks until the count
  // passes `seen` or `until`.
  std::uint64_t EventCount();
  void WaitEvent(std::uint64_t seen, Deadline until);

  // Shared with the C client's threads.
  struct Events {
    std::mutex mu;
    std::condition_variable cv;
    std::uint64_t count = 0;
    void Bump();
  };

 private:
  zhandle_t* Handle();  // makes one when needed; nullptr if it cannot

  std::string hosts_;
  int timeout_ms_;
  zhandle_t* zh_ = nullptr;
  std::shared_ptr<Events> events_;
};

}  // namespace faultline::targets::zookeeper

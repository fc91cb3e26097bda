#include "targets/zookeeper/zk_client.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "targets/etcd/gateway.h"  // the register value encoding
#include "targets/zookeeper/zk_config.h"
#include "targets/zookeeper/zk_session.h"

namespace faultline::targets::zookeeper {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;

constexpr const char* kRegisters = "/faultline/registers";
constexpr const char* kLocks = "/faultline/locks";

using harness::Done;

std::string HostString(const ZkClientOptions& o) {
  return o.host + ":" + std::to_string(kClientPort);
}

// Return codes that guarantee the request was never sent.
bool NotSent(int rc) { return rc == kNotConnected || rc == ZINVALIDSTATE; }

// The outcome of an update request that did not succeed and has no
// meaning of its own for the operation.
Completion UpdateError(int rc, const Value& arg) {
  if (NotSent(rc)) return Done(Outcome::kFail, arg, RcName(rc));
  return Done(Outcome::kInfo, arg, RcName(rc));
}

// The outcome of a read-only request that did not succeed.
Completion ReadError(int rc, const Value& arg) {
  if (rc == kTimedOut) return Done(Outcome::kInfo, arg, "timeout");
  return Done(Outcome::kFail, arg, RcName(rc));
}

// Creates the persistent znodes of `path` and its ancestors that are
// missing (best effort; a later request reports what still fails).
void EnsurePath(ZkSession& s, const std::string& path, Deadline deadline) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      ZkReply r = s.Create(path.substr(0, i), "", 0, deadline);
      if (!r.ok() && r.rc != ZNODEEXISTS) return;
    }
  }
}

Deadline DeadlineAfter(long ms) {
  return Clock::now() + std::chrono::milliseconds(ms);
}

std::string NameOf(const Value& key) {
  if (key.is_string()) return key.as_string();
  if (key.is_int()) return std::to_string(key.as_int());
  if (key.is_null()) return "_";
  return "";
}

bool ValidName(const std::string& n) {
  return !n.empty() && n != "." && n != ".." &&
         n.find_first_of("/\r\n") == std::string::npos;
}

}  // namespace

// ---- registers -----------------------------------------------------------

ZkRegisterClient::ZkRegisterClient(ZkClientOptions options)
    : options_(std::move(options)),
      session_(std::make_unique<ZkSession>(HostString(options_),
                                           options_.session_timeout_ms)) {}

ZkRegisterClient::~ZkRegisterClient() = default;

std::string ZkRegisterClient::PathFor(const Value& key) {
  const std::string name = NameOf(key);
  if (!ValidName(name)) return "";
  return std::string(kRegisters) + "/" + name;
}

Completion ZkRegisterClient::Invoke(const Operation& op) noexcept {
  try {
    if (PathFor(op.key).empty()) {
      return Done(Outcome::kFail, op.value,
                  "unsupported key " + op.key.ToJson());
    }
    if (op.f == "read") return Read(op);
    if (op.f == "write") return Write(op);
    if (op.f == "cas") return Cas(op);
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  } catch (const std::exception& e) {
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                "exception");
  }
}

Completion ZkRegisterClient::Read(const Operation& op) {
  const auto deadline = DeadlineAfter(options_.op_timeout_ms);
  const std::string path = PathFor(op.key);
  if (options_.sync_reads) {
    ZkReply s = session_->Sync(kRegisters, deadline);
    // ZNONODE: nothing was ever written, the read will say so.
    if (!s.ok() && s.rc != ZNONODE) return ReadError(s.rc, op.value);
  }
  ZkReply r = session_->Get(path, deadline);
  if (r.rc == ZNONODE) return Done(Outcome::kOk, Value::Null());
  if (!r.ok()) return ReadError(r.rc, op.value);
  return Done(Outcome::kOk, etcd::DecodeRegisterValue(r.data));
}

Completion ZkRegisterClient::Write(const Operation& op) {
  const auto deadline = DeadlineAfter(options_.op_timeout_ms);
  const std::string path = PathFor(op.key);
  const std::string data = etcd::EncodeRegisterValue(op.value);
  // Each failed step below had no effect (ZNONODE, ZNODEEXISTS), so the
  // loop may try again until the deadline.
  bool ensured = false;
  while (true) {
    ZkReply set = session_->Set(path, data, -1, deadline);
    if (set.ok()) return Done(Outcome::kOk, op.value);
    if (set.rc != ZNONODE) return UpdateError(set.rc, op.value);
    ZkReply made = session_->Create(path, data, 0, deadline);
    if (made.ok()) return Done(Outcome::kOk, op.value);
    if (made.rc == ZNONODE && !ensured) {
      EnsurePath(*session_, kRegisters, deadline);  // the parent is missing
      ensured = true;
      continue;
    }
    if (made.rc == ZNODEEXISTS || made.rc == ZNONODE) {
      if (Clock::now() >= deadline) {
        return Done(Outcome::kFail, op.value, "raced: " + RcName(made.rc));
      }
      continue;
    }
    return UpdateError(made.rc, op.value);
  }
}

Completion ZkRegisterClient::Cas(const Operation& op) {
  if (!op.value.is_list() || op.value.as_list().size() != 2) {
    return Done(Outcome::kFail, op.value, "cas value must be [expected, new]");
  }
  const Value& expected = op.value.as_list()[0];
  const std::string fresh = etcd::EncodeRegisterValue(op.value.as_list()[1]);
  const auto deadline = DeadlineAfter(options_.op_timeout_ms);
  const std::string path = PathFor(op.key);
  // Until the update is sent nothing can have happened: errors are fail.
  ZkReply s = session_->Sync(kRegisters, deadline);
  if (!s.ok() && s.rc != ZNONODE) {
    return Done(Outcome::kFail, op.value, "sync: " + RcName(s.rc));
  }
  ZkReply r = session_->Get(path, deadline);
  if (r.rc == ZNONODE) {
    if (!expected.is_null()) return Done(Outcome::kFail, op.value, "mismatch");
    ZkReply made = session_->Create(path, fresh, 0, deadline);
    if (made.rc == ZNONODE) {
      EnsurePath(*session_, kRegisters, deadline);
      made = session_->Create(path, fresh, 0, deadline);
    }
    if (made.ok()) return Done(Outcome::kOk, op.value);
    if (made.rc == ZNODEEXISTS) {
      return Done(Outcome::kFail, op.value, "mismatch");
    }
    if (made.rc == ZNONODE) return Done(Outcome::kFail, op.value, "ZNONODE");
    return UpdateError(made.rc, op.value);
  }
  if (!r.ok()) return Done(Outcome::kFail, op.value, "get: " + RcName(r.rc));
  if (expected.is_null() || r.data != etcd::EncodeRegisterValue(expected)) {
    return Done(Outcome::kFail, op.value, "mismatch");
  }
  ZkReply set = session_->Set(path, fresh, r.stat.version, deadline);
  if (set.ok()) return Done(Outcome::kOk, op.value);
  if (set.rc == ZBADVERSION || set.rc == ZNONODE) {
    return Done(Outcome::kFail, op.value, "mismatch (" + RcName(set.rc) + ")");
  }
  return UpdateError(set.rc, op.value);
}

// ---- locks -----------------------------------------------------------------

ZkLockClient::ZkLockClient(ZkClientOptions options)
    : options_(std::move(options)),
      session_(std::make_unique<ZkSession>(HostString(options_),
                                           options_.session_timeout_ms)) {}

ZkLockClient::~ZkLockClient() = default;

Completion ZkLockClient::Invoke(const Operation& op) noexcept {
  try {
    const std::string name = NameOf(op.key);
    if (op.key.is_null() || !ValidName(name)) {
      return Done(Outcome::kFail, op.value,
                  "unsupported lock name " + op.key.ToJson());
    }
    if (op.f == "acquire") return Acquire(op, name);
    if (op.f == "renew" || op.f == "release") return RenewOrRelease(op, name);
    return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
  } catch (const std::exception& e) {
    return Done(Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    return Done(Outcome::kInfo, op.value, "exception");
  }
}

Completion ZkLockClient::Acquire(const Operation& op, const std::string& name) {
  const auto deadline = DeadlineAfter(options_.op_timeout_ms);
  // Time kept back to delete our znode when we give up waiting.
  const long margin = std::min<long>(500, options_.op_timeout_ms / 3);
  const auto wait_deadline = deadline - std::chrono::milliseconds(margin);
  const std::string dir = std::string(kLocks) + "/" + name;
  if (session_->Expired()) held_.clear();  // a new session comes next
  held_.erase(name);

  ZkReply made =
      session_->Create(dir + "/lock-", "", ZOO_EPHEMERAL_SEQUENTIAL, deadline);
  if (made.rc == ZNONODE) {
    EnsurePath(*session_, dir, deadline);
    made = session_->Create(dir + "/lock-", "", ZOO_EPHEMERAL_SEQUENTIAL,
                            deadline);
  }
  if (!made.ok()) {
    if (made.rc == ZNONODE) return Done(Outcome::kFail, op.value, "ZNONODE");
    // Maybe created: the znode dies with this client's session, which the
    // interpreter closes when it replaces the client after an info.
    return UpdateError(made.rc, op.value);
  }
  const std::string own_path = made.data;
  const std::string own = own_path.substr(own_path.rfind('/') + 1);
  const std::int64_t token = made.stat.czxid;
  const std::int64_t session = session_->SessionId();

  while (true) {
    if (Clock::now() >= wait_deadline) break;
    const std::uint64_t seen = session_->EventCount();
    ZkReply kids = session_->Children(dir, wait_deadline);
    if (!kids.ok()) {
      if (kids.rc == kTimedOut) break;
      if (session_->Expired()) {
        return Done(Outcome::kFail, op.value,
                    "session expired while waiting (znode gone)");
      }
      // Disconnected for now: wait for the session to come back.
      session_->WaitEvent(
          seen, std::min(wait_deadline,
                         Clock::now() + std::chrono::milliseconds(100)));
      continue;
    }
    auto pred = LockPredecessor(kids.children, own);
    if (!pred) {
      // Our znode is gone: the session expired on the server.
      return Done(Outcome::kFail, op.value, "znode vanished while waiting");
    }
    if (pred->empty()) {
      held_[name] = own_path;
      held_session_ = session;
      return Done(Outcome::kOk, Value::Int(token));
    }
    ZkReply ex = session_->Exists(dir + "/" + *pred, true, wait_deadline);
    if (ex.rc == ZNONODE) continue;  // gone already: look again
    // Watching (or a transient error): wait for an event, and look again
    // now and then in case one was missed.
    session_->WaitEvent(
        seen,
        std::min(wait_deadline, Clock::now() + std::chrono::milliseconds(500)));
  }
  // Gave up: take our place in the queue back.
  ZkReply del = session_->Delete(own_path, -1, deadline);
  if (del.ok() || del.rc == ZNONODE) {
    return Done(Outcome::kFail, op.value, "timeout-waiting");
  }
  return Done(Outcome::kInfo, op.value,
              "timeout-waiting; delete: " + RcName(del.rc));
}

Completion ZkLockClient::RenewOrRelease(const Operation& op,
                                        const std::string& name) {
  auto it = held_.find(name);
  if (it == held_.end()) {
    return Done(Outcome::kFail, op.value,
                "not-held: this client holds no znode of " + name);
  }
  const std::string path = it->second;
  const bool release = op.f == "release";
  if (release) held_.erase(it);
  if (session_->Expired() || session_->SessionId() != held_session_) {
    held_.erase(name);
    return Done(Outcome::kFail, op.value, "not-held: session expired");
  }
  const auto deadline = DeadlineAfter(options_.op_timeout_ms);
  if (!release) {
    ZkReply ex = session_->Exists(path, false, deadline);
    if (ex.ok() && ex.stat.ephemeral_owner == held_session_) {
      return Done(Outcome::kOk, op.value);
    }
    if (ex.ok() || ex.rc == ZNONODE) {
      held_.erase(name);
      return Done(Outcome::kFail, op.value, "not-held: znode gone");
    }
    return Done(Outcome::kInfo, op.value, RcName(ex.rc));
  }
  ZkReply del = session_->Delete(path, -1, deadline);
  if (del.ok()) return Done(Outcome::kOk, op.value);
  if (del.rc == ZNONODE) {
    return Done(Outcome::kFail, op.value, "not-held: znode gone");
  }
  return Done(Outcome::kInfo, op.value, RcName(del.rc));
}

}  // namespace faultline::targets::zookeeper

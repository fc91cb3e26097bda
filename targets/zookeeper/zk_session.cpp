#include "targets/zookeeper/zk_session.h"

#include <zookeeper/zookeeper.h>

#include <cstdio>
#include <utility>
#include <vector>

namespace faultline::targets::zookeeper {
namespace {

// One request in flight: the waiting thread and the completion (on the C
// client's thread) share it; whoever finishes last frees it.
struct Pending {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  ZkReply reply;
};
using PendingPtr = std::shared_ptr<Pending>;

PendingPtr* NewToken(const PendingPtr& p) { return new PendingPtr(p); }

// Takes back the token handed to the C client and completes the request.
template <typename Fill>
void Complete(const void* data, Fill fill) {
  auto* token = static_cast<PendingPtr*>(const_cast<void*>(data));
  PendingPtr p = std::move(*token);
  delete token;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    fill(p->reply);
    p->done = true;
  }
  p->cv.notify_all();
}

void CopyStat(const struct Stat* s, ZkStat* out) {
  if (s == nullptr) return;
  out->czxid = s->czxid;
  out->mzxid = s->mzxid;
  out->version = s->version;
  out->ephemeral_owner = s->ephemeralOwner;
}

void OnData(int rc, const char* value, int len, const struct Stat* stat,
            const void* data) {
  Complete(data, [&](ZkReply& r) {
    r.rc = rc;
    if (rc == ZOK && value != nullptr && len > 0) r.data.assign(value, len);
    if (rc == ZOK) CopyStat(stat, &r.stat);
  });
}

void OnStat(int rc, const struct Stat* stat, const void* data) {
  Complete(data, [&](ZkReply& r) {
    r.rc = rc;
    if (rc == ZOK) CopyStat(stat, &r.stat);
  });
}

void OnStringStat(int rc, const char* value, const struct Stat* stat,
                  const void* data) {
  Complete(data, [&](ZkReply& r) {
    r.rc = rc;
    if (rc == ZOK && value != nullptr) r.data = value;
    if (rc == ZOK) CopyStat(stat, &r.stat);
  });
}

void OnString(int rc, const char* value, const void* data) {
  Complete(data, [&](ZkReply& r) {
    r.rc = rc;
    if (rc == ZOK && value != nullptr) r.data = value;
  });
}

void OnVoid(int rc, const void* data) {
  Complete(data, [&](ZkReply& r) { r.rc = rc; });
}

void OnStrings(int rc, const struct String_vector* strings, const void* data) {
  Complete(data, [&](ZkReply& r) {
    r.rc = rc;
    if (rc == ZOK && strings != nullptr) {
      for (int i = 0; i < strings->count; ++i) {
        r.children.emplace_back(strings->data[i]);
      }
    }
  });
}

// A multi in flight: besides the reply, the buffers the C client fills in
// when the answer comes (each op's result, a set's stat, a create's path),
// which must live until then even when the waiter gave up.
struct MultiPending : Pending {
  std::vector<ZkOp> ops;
  std::vector<zoo_op_t> zops;
  std::vector<zoo_op_result_t> results;
  std::vector<struct Stat> stats;
  std::vector<std::vector<char>> paths;
};

void OnMulti(int rc, const void* data) {
  auto* token = static_cast<PendingPtr*>(const_cast<void*>(data));
  auto* m = static_cast<MultiPending*>(token->get());
  // The per-op results are complete when the multi's completion runs.
  std::vector<int> rcs;
  if (rc == ZOK || rc == ZBADVERSION || rc == ZNONODE || rc == ZNODEEXISTS ||
      rc == ZNOTEMPTY || rc == ZBADARGUMENTS) {
    for (const zoo_op_result_t& r : m->results) rcs.push_back(r.err);
  }
  Complete(data, [&](ZkReply& r) {
    r.rc = rc;
    r.op_rcs = std::move(rcs);
  });
}

void OnEvent(zhandle_t*, int, int, const char*, void* ctx) {
  static_cast<ZkSession::Events*>(ctx)->Bump();
}

// Issues one asynchronous call and waits for it until `deadline`.
template <typename Issue>
ZkReply Call(Issue issue, Deadline deadline) {
  auto p = std::make_shared<Pending>();
  PendingPtr* token = NewToken(p);
  const int rc = issue(static_cast<const void*>(token));
  if (rc != ZOK) {
    delete token;  // the completion will never run
    ZkReply r;
    r.rc = rc;
    return r;
  }
  std::unique_lock<std::mutex> lock(p->mu);
  if (!p->cv.wait_until(lock, deadline, [&] { return p->done; })) {
    ZkReply r;
    r.rc = kTimedOut;
    return r;
  }
  return p->reply;
}

}  // namespace

void SetClientLog(const std::string& path) {
  static std::once_flag once;
  std::call_once(once, [&] {
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    FILE* f = fopen(path.c_str(), "a");
    if (f != nullptr) zoo_set_log_stream(f);  // open for the process' life
  });
}

void ZkSession::Events::Bump() {
  {
    std::lock_guard<std::mutex> lock(mu);
    ++count;
  }
  cv.notify_all();
}

std::string RcName(int rc) {
  switch (rc) {
    case kTimedOut:
      return "timeout";
    case kNotConnected:
      return "not-connected";
    case ZOK:
      return "ZOK";
    case ZNONODE:
      return "ZNONODE";
    case ZNODEEXISTS:
      return "ZNODEEXISTS";
    case ZBADVERSION:
      return "ZBADVERSION";
    case ZCONNECTIONLOSS:
      return "ZCONNECTIONLOSS";
    case ZOPERATIONTIMEOUT:
      return "ZOPERATIONTIMEOUT";
    case ZSESSIONEXPIRED:
      return "ZSESSIONEXPIRED";
    case ZINVALIDSTATE:
      return "ZINVALIDSTATE";
    case ZCLOSING:
      return "ZCLOSING";
    case ZNOTEMPTY:
      return "ZNOTEMPTY";
    default:
      return std::string("zk error ") + std::to_string(rc) + " (" + zerror(rc) +
             ")";
  }
}

ZkSession::ZkSession(std::string hosts, int timeout_ms)
    : hosts_(std::move(hosts)),
      timeout_ms_(timeout_ms),
      events_(std::make_shared<Events>()) {}

ZkSession::~ZkSession() { Reset(); }

void ZkSession::Reset() {
  if (zh_ != nullptr) {
    zookeeper_close(zh_);  // joins the C client's threads
    zh_ = nullptr;
  }
}

zhandle_t* ZkSession::Handle() {
  if (zh_ != nullptr) {
    const int state = zoo_state(zh_);
    if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
      Reset();
    }
  }
  if (zh_ == nullptr) {
    zh_ = zookeeper_init(hosts_.c_str(), OnEvent, timeout_ms_, nullptr,
                         events_.get(), 0);
  }
  return zh_;
}

bool ZkSession::Expired() {
  return zh_ != nullptr && zoo_state(zh_) == ZOO_EXPIRED_SESSION_STATE;
}

bool ZkSession::Connected() {
  return zh_ != nullptr && zoo_state(zh_) == ZOO_CONNECTED_STATE;
}

std::int64_t ZkSession::SessionId() {
  if (zh_ == nullptr) return 0;
  const clientid_t* id = zoo_client_id(zh_);
  return id == nullptr ? 0 : id->client_id;
}

bool ZkSession::AwaitConnected(Deadline deadline) {
  while (true) {
    const std::uint64_t seen = EventCount();
    zhandle_t* zh = Handle();
    if (zh != nullptr && zoo_state(zh) == ZOO_CONNECTED_STATE) return true;
    if (Clock::now() >= deadline) return false;
    // State changes bump the event count; poll too, in case one was missed.
    WaitEvent(seen,
              std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
  }
}

std::uint64_t ZkSession::EventCount() {
  std::lock_guard<std::mutex> lock(events_->mu);
  return events_->count;
}

void ZkSession::WaitEvent(std::uint64_t seen, Deadline until) {
  std::unique_lock<std::mutex> lock(events_->mu);
  events_->cv.wait_until(lock, until, [&] { return events_->count != seen; });
}

namespace {
ZkReply NotConnected() {
  ZkReply r;
  r.rc = kNotConnected;
  return r;
}
}  // namespace

ZkReply ZkSession::Get(const std::string& path, Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) { return zoo_aget(zh_, path.c_str(), 0, OnData, t); },
      deadline);
}

ZkReply ZkSession::Set(const std::string& path, const std::string& data,
                       int version, Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) {
        return zoo_aset(zh_, path.c_str(), data.data(),
                        static_cast<int>(data.size()), version, OnStat, t);
      },
      deadline);
}

ZkReply ZkSession::Create(const std::string& path, const std::string& data,
                          int flags, Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) {
        return zoo_acreate2(zh_, path.c_str(), data.data(),
                            static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE,
                            flags, OnStringStat, t);
      },
      deadline);
}

ZkReply ZkSession::Delete(const std::string& path, int version,
                          Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) {
        return zoo_adelete(zh_, path.c_str(), version, OnVoid, t);
      },
      deadline);
}

ZkReply ZkSession::Exists(const std::string& path, bool watch,
                          Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) {
        if (!watch) return zoo_aexists(zh_, path.c_str(), 0, OnStat, t);
        return zoo_awexists(zh_, path.c_str(), OnEvent, events_.get(), OnStat,
                            t);
      },
      deadline);
}

ZkReply ZkSession::Children(const std::string& path, Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) {
        return zoo_aget_children(zh_, path.c_str(), 0, OnStrings, t);
      },
      deadline);
}

ZkReply ZkSession::Sync(const std::string& path, Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  return Call(
      [&](const void* t) { return zoo_async(zh_, path.c_str(), OnString, t); },
      deadline);
}

ZkReply ZkSession::Multi(const std::vector<ZkOp>& ops, Deadline deadline) {
  if (!AwaitConnected(deadline)) return NotConnected();
  auto m = std::make_shared<MultiPending>();
  m->ops = ops;
  const std::size_t n = m->ops.size();
  m->zops.resize(n);
  m->results.assign(n, zoo_op_result_t{});
  m->stats.assign(n, Stat{});
  m->paths.assign(n, std::vector<char>(256));
  for (std::size_t i = 0; i < n; ++i) {
    ZkOp& op = m->ops[i];
    zoo_op_t* z = &m->zops[i];
    const int len = static_cast<int>(op.data.size());
    switch (op.kind) {
      case ZkOp::Kind::kCheck:
        zoo_check_op_init(z, op.path.c_str(), op.version);
        break;
      case ZkOp::Kind::kSet:
        zoo_set_op_init(z, op.path.c_str(), op.data.data(), len, op.version,
                        &m->stats[i]);
        break;
      case ZkOp::Kind::kCreate:
        zoo_create_op_init(z, op.path.c_str(), op.data.data(), len,
                           &ZOO_OPEN_ACL_UNSAFE, 0, m->paths[i].data(),
                           static_cast<int>(m->paths[i].size()));
        break;
      case ZkOp::Kind::kDelete:
        zoo_delete_op_init(z, op.path.c_str(), op.version);
        break;
    }
  }
  PendingPtr p = m;
  PendingPtr* token = NewToken(p);
  const int rc = zoo_amulti(zh_, static_cast<int>(n), m->zops.data(),
                            m->results.data(), OnMulti, token);
  if (rc != ZOK) {
    delete token;  // the completion will never run
    ZkReply r;
    r.rc = rc;
    return r;
  }
  std::unique_lock<std::mutex> lock(p->mu);
  if (!p->cv.wait_until(lock, deadline, [&] { return p->done; })) {
    ZkReply r;
    r.rc = kTimedOut;
    return r;
  }
  return p->reply;
}

}  // namespace faultline::targets::zookeeper

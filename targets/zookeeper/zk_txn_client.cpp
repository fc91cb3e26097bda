#include "targets/zookeeper/zk_txn_client.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "targets/etcd/gateway.h"  // the JSON value encoding
#include "targets/zookeeper/zk_config.h"

namespace faultline::targets::zookeeper {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Done;
using harness::Operation;
using harness::Outcome;
using Kind = ZkTxnPlan::Micro::Kind;

bool ValidName(const std::string& n) {
  return !n.empty() && n != "." && n != ".." &&
         n.find_first_of(std::string("/\r\n\0", 4)) == std::string::npos;
}

// Creates the persistent znodes of `path` and its ancestors that are
// missing; true when all of them exist afterwards.
bool EnsurePath(ZkSession& s, const std::string& path, Deadline deadline) {
  for (std::size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      ZkReply r = s.Create(path.substr(0, i), "", 0, deadline);
      if (!r.ok() && r.rc != ZNODEEXISTS) return false;
    }
  }
  return true;
}

bool HasCreate(const std::vector<ZkOp>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](const ZkOp& o) {
    return o.kind == ZkOp::Kind::kCreate;
  });
}

bool IsTimeout(int rc) { return rc == kTimedOut || rc == ZOPERATIONTIMEOUT; }

}  // namespace

// ---- pure parts
// --------------------------------------------------------------

std::string TxnPathFor(const Value& key) {
  std::string name;
  if (key.is_int()) {
    name = std::to_string(key.as_int());
  } else if (key.is_string()) {
    name = key.as_string();
  }
  if (!ValidName(name)) return "";
  return std::string(kTxnRoot) + "/" + name;
}

bool ZkTxnPlan::read_only() const {
  return std::none_of(written.begin(), written.end(), [](bool w) { return w; });
}

harness::Result<ZkTxnPlan> PlanZkTxn(const Value& txn, ZkTxnWorkload workload) {
  if (!txn.is_list() || txn.as_list().empty()) {
    return harness::Fail("txn value must be a non-empty list of [f, k, v]");
  }
  const char* write_f = workload == ZkTxnWorkload::kListAppend ? "append" : "w";
  ZkTxnPlan plan;
  for (const Value& m : txn.as_list()) {
    if (!m.is_list() || m.as_list().size() != 3 ||
        !m.as_list()[0].is_string()) {
      return harness::Fail("txn micro-op must be [f, k, v]: " + m.ToJson());
    }
    const std::string& f = m.as_list()[0].as_string();
    const Value& k = m.as_list()[1];
    const Value& v = m.as_list()[2];
    const std::string path = TxnPathFor(k);
    if (path.empty()) {
      return harness::Fail("unsupported txn key " + k.ToJson());
    }
    ZkTxnPlan::Micro micro;
    if (f == "r") {
      micro.kind = Kind::kRead;
    } else if (f == write_f) {
      micro.kind =
          workload == ZkTxnWorkload::kListAppend ? Kind::kAppend : Kind::kWrite;
      if (!v.is_int() && !v.is_string()) {
        return harness::Fail("txn value must be an integer or string: " +
                             m.ToJson());
      }
      micro.arg = v;
    } else {
      return harness::Fail("unsupported txn micro-op " + m.ToJson() +
                           " (expected \"r\" or \"" + write_f + "\")");
    }
    auto it = std::find(plan.paths.begin(), plan.paths.end(), path);
    micro.key = static_cast<std::size_t>(it - plan.paths.begin());
    if (it == plan.paths.end()) {
      plan.paths.push_back(path);
      plan.keys.push_back(k);
      plan.depends.push_back(false);
      plan.written.push_back(false);
    }
    const std::size_t i = micro.key;
    // A read before the first write, or any append, uses the old value.
    if (micro.kind == Kind::kAppend ||
        (micro.kind == Kind::kRead && !plan.written[i])) {
      plan.depends[i] = true;
    }
    if (micro.kind != Kind::kRead) plan.written[i] = true;
    plan.ops.push_back(std::move(micro));
  }
  return plan;
}

std::string EncodeTxnData(const Value& value) {
  return etcd::EncodeRegisterValue(value);
}

harness::Result<Value> DecodeTxnData(ZkTxnWorkload workload,
                                     const ZkKeyState& state,
                                     const std::string& path) {
  const bool lists = workload == ZkTxnWorkload::kListAppend;
  if (!state.found) return lists ? Value::MakeList({}) : Value::Null();
  Value v = etcd::DecodeRegisterValue(state.data);
  // Faultline writes compact JSON: anything else came from elsewhere.
  bool ours = v.ToJson() == state.data;
  if (lists) {
    ours =
        ours && v.is_list() &&
        std::all_of(v.as_list().begin(), v.as_list().end(),
                    [](const Value& e) { return e.is_int() || e.is_string(); });
  }
  if (!ours) {
    return harness::Fail("unexpected data at " + path + ": " + state.data);
  }
  return v;
}

harness::Result<ZkTxnEvaluation> EvaluateZkTxn(
    const ZkTxnPlan& plan, ZkTxnWorkload workload,
    const std::vector<ZkKeyState>& states) {
  if (states.size() != plan.paths.size()) {
    return harness::Fail("internal: one state per key expected");
  }
  std::vector<Value> current;
  current.reserve(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) {
    auto v = DecodeTxnData(workload, states[i], plan.paths[i]);
    if (!v) return harness::Fail(v.error());
    current.push_back(std::move(*v));
  }
  Value::List out;
  out.reserve(plan.ops.size());
  for (const ZkTxnPlan::Micro& m : plan.ops) {
    const Value& k = plan.keys[m.key];
    switch (m.kind) {
      case Kind::kRead:
        out.push_back(Value::MakeList({Value::String("r"), k, current[m.key]}));
        break;
      case Kind::kAppend: {
        Value::List list = current[m.key].as_list();
        list.push_back(m.arg);
        current[m.key] = Value::MakeList(std::move(list));
        out.push_back(Value::MakeList({Value::String("append"), k, m.arg}));
        break;
      }
      case Kind::kWrite:
        current[m.key] = m.arg;
        out.push_back(Value::MakeList({Value::String("w"), k, m.arg}));
        break;
    }
  }
  ZkTxnEvaluation eval;
  eval.completed = Value::MakeList(std::move(out));
  eval.data.resize(plan.paths.size());
  for (std::size_t i = 0; i < plan.paths.size(); ++i) {
    if (plan.written[i]) eval.data[i] = EncodeTxnData(current[i]);
  }
  return eval;
}

std::vector<ZkOp> TxnMulti(const ZkTxnPlan& plan,
                           const std::vector<ZkKeyState>& states,
                           const ZkTxnEvaluation& eval) {
  std::vector<ZkOp> ops;
  for (std::size_t i = 0; i < plan.paths.size(); ++i) {
    const std::string& path = plan.paths[i];
    const ZkKeyState& s = states[i];
    if (plan.written[i]) {
      if (s.found) {
        ops.push_back({ZkOp::Kind::kSet, path, eval.data[i],
                       plan.depends[i] ? s.version : -1});
      } else {
        ops.push_back({ZkOp::Kind::kCreate, path, eval.data[i], -1});
      }
    } else if (s.found) {
      ops.push_back({ZkOp::Kind::kCheck, path, "", s.version});
    } else {
      // "Still absent": a create that fails if someone made it, undone.
      ops.push_back({ZkOp::Kind::kCreate, path, "", -1});
      ops.push_back({ZkOp::Kind::kDelete, path, "", 0});
    }
  }
  return ops;
}

Completion TxnError(int rc, ZkTxnStep step, bool read_only,
                    const Value& value) {
  if (step == ZkTxnStep::kRead) {
    // Nothing was written yet; a read-only transaction's timeout stays
    // unknown, as a register read's does.
    if (read_only && IsTimeout(rc)) {
      return Done(Outcome::kInfo, value, "read: " + RcName(rc));
    }
    return Done(Outcome::kFail, value, "read: " + RcName(rc));
  }
  if (rc == ZBADVERSION || rc == ZNODEEXISTS || rc == ZNONODE) {
    return Done(Outcome::kFail, value, "conflict: " + RcName(rc));
  }
  if (rc == kNotConnected || rc == ZINVALIDSTATE) {
    return Done(Outcome::kFail, value, "multi not sent: " + RcName(rc));
  }
  if (read_only && !IsTimeout(rc)) {
    // Checks (and create+delete pairs) change nothing, applied or not.
    return Done(Outcome::kFail, value, "multi: " + RcName(rc));
  }
  return Done(Outcome::kInfo, value, "multi: " + RcName(rc));
}

// ---- the client
// ----------------------------------------------------------------

ZkTxnClient::ZkTxnClient(ZkTxnOptions options)
    : options_(std::move(options)),
      session_(std::make_unique<ZkSession>(
          options_.host + ":" + std::to_string(kClientPort),
          options_.session_timeout_ms)) {}

ZkTxnClient::~ZkTxnClient() = default;

Completion ZkTxnClient::Invoke(const Operation& op) noexcept {
  try {
    if (op.f != "txn") {
      return Done(Outcome::kFail, op.value, "unsupported-op " + op.f);
    }
    return Txn(op);
  } catch (const std::exception& e) {
    return Done(Outcome::kInfo, op.value,
                std::string("exception: ") + e.what());
  } catch (...) {
    return Done(Outcome::kInfo, op.value, "exception");
  }
}

Completion ZkTxnClient::Txn(const Operation& op) {
  auto plan = PlanZkTxn(op.value, options_.workload);
  if (!plan) return Done(Outcome::kFail, op.value, plan.error());
  const bool read_only = plan->read_only();
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options_.op_timeout_ms);

  // 1. Read every key (after a sync in the safe mode).
  if (options_.sync_reads) {
    ZkReply s = session_->Sync("/", deadline);
    if (!s.ok()) return TxnError(s.rc, ZkTxnStep::kRead, read_only, op.value);
  }
  std::vector<ZkKeyState> states(plan->paths.size());
  for (std::size_t i = 0; i < plan->paths.size(); ++i) {
    ZkReply r = session_->Get(plan->paths[i], deadline);
    if (r.rc == ZNONODE) continue;  // absent
    if (!r.ok()) return TxnError(r.rc, ZkTxnStep::kRead, read_only, op.value);
    states[i].found = true;
    states[i].data = std::move(r.data);
    states[i].version = r.stat.version;
  }

  // 2. Evaluate.
  auto eval = EvaluateZkTxn(*plan, options_.workload, states);
  if (!eval) return Done(Outcome::kFail, op.value, eval.error());
  if (read_only && !options_.sync_reads) {
    // The unsafe mode: the connected server's state, unvalidated.
    return Done(Outcome::kOk, eval->completed);
  }

  // 3. Commit (or validate) in one multi.
  const std::vector<ZkOp> ops = TxnMulti(*plan, states, *eval);
  const bool creates = HasCreate(ops);
  if (creates && !root_ready_) {
    root_ready_ = EnsurePath(*session_, kTxnRoot, deadline);
  }
  ZkReply m = session_->Multi(ops, deadline);
  if (m.ok()) return Done(Outcome::kOk, eval->completed);
  if (m.rc == ZNONODE && creates) root_ready_ = false;  // look again
  return TxnError(m.rc, ZkTxnStep::kMulti, read_only, op.value);
}

}  // namespace faultline::targets::zookeeper

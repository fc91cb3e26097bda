#include "targets/etcd/txn_gateway.h"

#include <algorithm>
#include <map>
#include <utility>

#include "targets/etcd/base64.h"
#include "targets/etcd/gateway_json.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using detail::BytesField;
using detail::FromJson;
using detail::HasHeader;
using detail::IntField;
using detail::json;
using detail::ParseObject;
using harness::Fail;
using harness::Result;

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Result<std::string> TxnKey(const Value& k) {
  if (k.is_int())
    return std::string(kTxnKeyPrefix) + std::to_string(k.as_int());
  if (k.is_string() && k.as_string().find('\0') == std::string::npos) {
    return std::string(kTxnKeyPrefix) + k.as_string();
  }
  return Fail("unsupported txn key " + k.ToJson() +
              " (keys are integers or strings)");
}

// The value held by one key while a transaction is evaluated.
struct Current {
  bool found = false;
  Value value;  // list-append: a list; rw-register: the register value
};

Result<Current> Decode(const TxnKeyState& s, TxnWorkload workload,
                       const std::string& key) {
  Current c;
  if (!s.found) {
    c.value = workload == TxnWorkload::kListAppend ? Value::MakeList({})
                                                   : Value::Null();
    return c;
  }
  json doc = json::parse(s.value, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() ||
      (workload == TxnWorkload::kListAppend && !doc.is_array())) {
    return Fail("key " + key + " holds a value faultline did not write: " +
                s.value.substr(0, 60));
  }
  c.found = true;
  c.value = FromJson(doc);
  return c;
}

}  // namespace

Result<TxnPlan> PlanTxn(const Value& txn, TxnWorkload workload) {
  if (!txn.is_list() || txn.as_list().empty()) {
    return Fail("txn value must be a non-empty list of [f, k, v]");
  }
  const char* write_f = workload == TxnWorkload::kListAppend ? "append" : "w";
  TxnPlan plan;
  plan.ops.reserve(txn.as_list().size());
  for (const Value& m : txn.as_list()) {
    if (!m.is_list() || m.as_list().size() != 3 ||
        !m.as_list()[0].is_string()) {
      return Fail("txn micro-op must be [f, k, v]: " + m.ToJson());
    }
    const Value::List& parts = m.as_list();
    const std::string& f = parts[0].as_string();
    auto key = TxnKey(parts[1]);
    if (!key) return Fail(key.error());
    TxnMicroOp op;
    op.key = *key;
    op.k = parts[1];
    const bool written = Contains(plan.writes, op.key);
    if (f == "r") {
      op.kind = TxnMicroOp::Kind::kRead;
      if (!written && !Contains(plan.depends, op.key)) {
        plan.depends.push_back(op.key);
      }
    } else if (f == write_f) {
      if (!parts[2].is_int() && !parts[2].is_string()) {
        return Fail("txn value must be an integer or a string: " + m.ToJson());
      }
      op.arg = parts[2];
      if (workload == TxnWorkload::kListAppend) {
        op.kind = TxnMicroOp::Kind::kAppend;
        // An append extends the list as it stands: the first one depends
        // on the stored list (unless a read already made it a dependency).
        if (!written && !Contains(plan.depends, op.key)) {
          plan.depends.push_back(op.key);
        }
      } else {
        op.kind = TxnMicroOp::Kind::kWrite;
      }
      if (!written) plan.writes.push_back(op.key);
    } else {
      return Fail("unsupported txn micro-op " + m.ToJson() +
                  " (expected r or " + write_f + ")");
    }
    plan.ops.push_back(std::move(op));
  }
  return plan;
}

std::string ReadRequest(const std::vector<std::string>& keys,
                        bool serializable) {
  json success = json::array();
  for (const std::string& k : keys) {
    json range = {{"key", Base64Encode(k)}};
    if (serializable) range["serializable"] = true;
    success.push_back({{"request_range", std::move(range)}});
  }
  return json{{"success", std::move(success)}}.dump();
}

Result<std::vector<TxnKeyState>> ParseReadReply(
    std::string_view body, const std::vector<std::string>& keys) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("txn read: unexpected reply");
  auto ok = doc->find("succeeded");
  if (ok == doc->end() || !ok->is_boolean() || !ok->get<bool>()) {
    return Fail("txn read: not succeeded");
  }
  auto responses = doc->find("responses");
  if (responses == doc->end() || !responses->is_array() ||
      responses->size() != keys.size()) {
    return Fail("txn read: expected " + std::to_string(keys.size()) +
                " responses");
  }
  std::vector<TxnKeyState> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const json& r = (*responses)[i];
    auto range = r.is_object() ? r.find("response_range") : r.end();
    if (range == r.end() || !range->is_object()) {
      return Fail("txn read: response " + std::to_string(i) +
                  " is not a range");
    }
    auto kvs = range->find("kvs");
    if (kvs == range->end() || kvs->is_null()) continue;  // absent
    if (!kvs->is_array()) return Fail("txn read: kvs is not an array");
    if (kvs->empty()) continue;
    if (kvs->size() != 1 || !(*kvs)[0].is_object()) {
      return Fail("txn read: expected one kv, got " +
                  std::to_string(kvs->size()));
    }
    const json& kv = (*kvs)[0];
    auto kv_key = BytesField(kv, "key");
    if (!kv_key || *kv_key != keys[i]) {
      return Fail("txn read: kv of another key");
    }
    auto value = BytesField(kv, "value");
    auto mod = IntField<std::int64_t>(kv, "mod_revision", 0);
    if (!value || !mod || *mod <= 0) {
      return Fail("txn read: malformed kv of " + keys[i]);
    }
    out[i] = {true, std::move(*value), *mod};
  }
  return out;
}

Result<TxnEvaluation> Evaluate(const TxnPlan& plan, TxnWorkload workload,
                               const std::vector<TxnKeyState>& states) {
  if (states.size() != plan.depends.size()) {
    return Fail("txn: " + std::to_string(states.size()) + " states for " +
                std::to_string(plan.depends.size()) + " keys");
  }
  std::map<std::string, Current> current;
  for (std::size_t i = 0; i < states.size(); ++i) {
    auto c = Decode(states[i], workload, plan.depends[i]);
    if (!c) return Fail(c.error());
    current.emplace(plan.depends[i], std::move(*c));
  }
  Value::List completed;
  completed.reserve(plan.ops.size());
  for (const TxnMicroOp& op : plan.ops) {
    Current& c = current[op.key];  // a blind write's key starts empty
    switch (op.kind) {
      case TxnMicroOp::Kind::kRead:
        completed.push_back(
            Value::MakeList({Value::String("r"), op.k, c.value}));
        break;
      case TxnMicroOp::Kind::kAppend: {
        Value::List items = c.value.as_list();
        items.push_back(op.arg);
        c.value = Value::MakeList(std::move(items));
        c.found = true;
        completed.push_back(
            Value::MakeList({Value::String("append"), op.k, op.arg}));
        break;
      }
      case TxnMicroOp::Kind::kWrite:
        c.value = op.arg;
        c.found = true;
        completed.push_back(
            Value::MakeList({Value::String("w"), op.k, op.arg}));
        break;
    }
  }
  TxnEvaluation out;
  out.completed = Value::MakeList(std::move(completed));
  out.puts.reserve(plan.writes.size());
  for (const std::string& k : plan.writes) {
    out.puts.push_back(current[k].value.ToJson());
  }
  return out;
}

std::string GuardedPutRequest(const std::vector<std::string>& depends,
                              const std::vector<TxnKeyState>& states,
                              const std::vector<std::string>& writes,
                              const std::vector<std::string>& puts) {
  json compare = json::array();
  for (std::size_t i = 0; i < depends.size() && i < states.size(); ++i) {
    compare.push_back(
        {{"key", Base64Encode(depends[i])},
         {"result", "EQUAL"},
         {"target", "MOD"},
         {"mod_revision", std::to_string(states[i].mod_revision)}});
  }
  json success = json::array();
  for (std::size_t i = 0; i < writes.size() && i < puts.size(); ++i) {
    success.push_back({{"request_put",
                        {{"key", Base64Encode(writes[i])},
                         {"value", Base64Encode(puts[i])}}}});
  }
  json req = {{"success", std::move(success)}};
  if (!compare.empty()) req["compare"] = std::move(compare);
  return req.dump();
}

std::string WriteRequest(const TxnPlan& plan,
                         const std::vector<TxnKeyState>& states,
                         const std::vector<std::string>& puts) {
  return GuardedPutRequest(plan.depends, states, plan.writes, puts);
}

}  // namespace faultline::targets::etcd

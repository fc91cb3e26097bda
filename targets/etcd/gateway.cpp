#include "targets/etcd/gateway.h"

#include <charconv>

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

}  // namespace

Result<std::string> RegisterKey(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kNull:
      return std::string(kKeyPrefix) + "_";
    case Value::Kind::kString:
      return std::string(kKeyPrefix) + key.as_string();
    case Value::Kind::kInt:
      return std::string(kKeyPrefix) + std::to_string(key.as_int());
    default:
      return Fail("unsupported key " + key.ToJson() +
                  " (keys are strings or integers)");
  }
}

std::string EncodeRegisterValue(const Value& value) { return value.ToJson(); }

Value DecodeRegisterValue(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Value::String(std::string(text));
  return FromJson(doc);
}

std::string RangeRequest(std::string_view key, bool serializable) {
  json req = {{"key", Base64Encode(key)}};
  if (serializable) req["serializable"] = true;
  return req.dump();
}

std::string PutRequest(std::string_view key, std::string_view value) {
  json req = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  return req.dump();
}

std::string CasRequest(std::string_view key,
                       const std::optional<std::string>& expected,
                       std::string_view value) {
  json compare = {{"key", Base64Encode(key)}, {"result", "EQUAL"}};
  if (expected) {
    compare["target"] = "VALUE";
    compare["value"] = Base64Encode(*expected);
  } else {
    compare["target"] = "VERSION";  // version 0: the key does not exist
    compare["version"] = "0";
  }
  json put = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  json req = {{"compare", json::array({compare})},
              {"success", json::array({{{"request_put", put}}})}};
  return req.dump();
}

Result<RangeReply> ParseRangeReply(std::string_view body,
                                   std::string_view key) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("range: unexpected reply");
  RangeReply reply;
  auto rev = IntField<std::int64_t>((*doc)["header"], "revision", 0);
  if (!rev) return Fail("range: bad header.revision");
  reply.revision = *rev;
  auto kvs = doc->find("kvs");
  if (kvs == doc->end() || kvs->is_null()) return reply;
  if (!kvs->is_array()) return Fail("range: kvs is not an array");
  if (kvs->empty()) return reply;
  if (kvs->size() != 1 || !(*kvs)[0].is_object()) {
    return Fail("range: expected one kv, got " + std::to_string(kvs->size()));
  }
  auto kv_key = BytesField((*kvs)[0], "key");
  if (!kv_key || *kv_key != key) return Fail("range: kv of another key");
  auto value = BytesField((*kvs)[0], "value");
  if (!value) return Fail("range: value is not base64");
  reply.found = true;
  reply.value = std::move(*value);
  return reply;
}

harness::Status ParsePutReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("put: unexpected reply");
  return harness::Ok();
}

Result<TxnReply> ParseTxnReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("txn: unexpected reply");
  TxnReply reply;
  auto it = doc->find("succeeded");
  if (it != doc->end() && !it->is_null()) {
    if (!it->is_boolean()) return Fail("txn: succeeded is not a boolean");
    reply.succeeded = it->get<bool>();
  }
  return reply;
}

Result<StatusReply> ParseStatusReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("status: unexpected reply");
  StatusReply reply;
  auto member = IntField<std::uint64_t>((*doc)["header"], "member_id", 0);
  auto leader = IntField<std::uint64_t>(*doc, "leader", 0);
  auto term = IntField<std::int64_t>(*doc, "raftTerm", -1);
  auto index = IntField<std::int64_t>(*doc, "raftIndex", -1);
  if (!member || *member == 0) return Fail("status: no header.member_id");
  if (!leader || !term || !index) return Fail("status: malformed field");
  if (*term < 0) {  // older spelling, or only the header's copy present
    auto header_term =
        IntField<std::int64_t>((*doc)["header"], "raft_term", -1);
    if (header_term) term = header_term;
  }
  reply.member_id = *member;
  reply.leader = *leader;
  reply.raft_term = *term;
  reply.raft_index = *index;
  auto version = doc->find("version");
  if (version != doc->end() && version->is_string()) {
    reply.version = version->get<std::string>();
  }
  return reply;
}

namespace {

// A hex id string of raft.status ("2e1259d415f2a040", "0") into `out`;
// false when it is not one.
bool HexId(const json& obj, const char* name, std::uint64_t* out) {
  auto it = obj.find(name);
  if (it == obj.end() || !it->is_string()) return false;
  const std::string text = it->get<std::string>();
  if (text.empty() || text.size() > 16) return false;
  std::uint64_t id = 0;
  for (char c : text) {
    int digit = 0;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return false;
    }
    id = id * 16 + static_cast<std::uint64_t>(digit);
  }
  *out = id;
  return true;
}

}  // namespace

Result<RaftStatus> ParseRaftStatus(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc) return Fail("debug vars: not a JSON object");
  auto it = doc->find("raft.status");
  if (it == doc->end() || !it->is_object()) {
    return Fail("debug vars: no raft.status");
  }
  const json& raft = *it;
  RaftStatus status;
  auto term = raft.find("term");
  auto state = raft.find("raftState");
  if (!HexId(raft, "id", &status.id) || status.id == 0 ||
      !HexId(raft, "lead", &status.lead) || term == raft.end() ||
      !term->is_number_integer() || state == raft.end() ||
      !state->is_string()) {
    return Fail("debug vars: malformed raft.status");
  }
  status.term = term->get<std::int64_t>();
  status.state = state->get<std::string>();
  return status;
}

Result<std::vector<Member>> ParseMemberList(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("member list: unexpected reply");
  std::vector<Member> members;
  auto list = doc->find("members");
  if (list == doc->end() || list->is_null()) return members;
  if (!list->is_array()) return Fail("member list: members is not an array");
  for (const auto& m : *list) {
    if (!m.is_object()) return Fail("member list: member is not an object");
    auto id = IntField<std::uint64_t>(m, "ID", 0);
    if (!id || *id == 0) return Fail("member list: member without ID");
    Member member;
    member.id = *id;
    auto name = m.find("name");
    if (name != m.end() && name->is_string())
      member.name = name->get<std::string>();
    members.push_back(std::move(member));
  }
  return members;
}

Result<bool> ParseHealthReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc) return Fail("health: unexpected reply");
  auto it = doc->find("health");
  if (it == doc->end()) return Fail("health: no health field");
  if (it->is_string()) return it->get<std::string>() == "true";
  if (it->is_boolean()) return it->get<bool>();
  return Fail("health: malformed health field");
}

Result<std::string> LockPrefix(const Value& name) {
  if (!name.is_string() || name.as_string().empty() ||
      name.as_string().find('/') != std::string::npos) {
    return Fail("unsupported lock name " + name.ToJson() +
                " (lock names are non-empty strings without '/')");
  }
  return std::string(kLockPrefix) + name.as_string() + "/";
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  for (std::size_t i = end.size(); i-- > 0;) {
    const auto c = static_cast<unsigned char>(end[i]);
    if (c < 0xff) {
      end[i] = static_cast<char>(c + 1);
      end.resize(i + 1);
      return end;
    }
  }
  return std::string(1, '\0');  // every key (etcd's convention)
}

std::string LeaseGrantRequest(std::int64_t ttl_s) {
  return json{{"TTL", ttl_s}}.dump();
}

std::string LeaseIdRequest(std::int64_t lease_id) {
  return json{{"ID", std::to_string(lease_id)}}.dump();
}

std::string PutWithLeaseRequest(std::string_view key, std::string_view value,
                                std::int64_t lease_id) {
  json req = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
  if (lease_id != 0) req["lease"] = std::to_string(lease_id);
  return req.dump();
}

std::string PrefixKeysRequest(std::string_view prefix) {
  json req = {{"key", Base64Encode(prefix)},
              {"range_end", Base64Encode(PrefixEnd(prefix))},
              {"sort_order", "ASCEND"},
              {"sort_target", "CREATE"},
              {"keys_only", true}};
  return req.dump();
}

std::string DeleteRequest(std::string_view key) {
  return json{{"key", Base64Encode(key)}}.dump();
}

namespace {

Result<LeaseReply> LeaseFields(const json& obj, const char* what) {
  auto id = IntField<std::int64_t>(obj, "ID", 0);
  auto ttl = IntField<std::int64_t>(obj, "TTL", 0);
  if (!id || !ttl) return Fail(std::string(what) + ": malformed ID or TTL");
  LeaseReply r;
  r.id = *id;
  r.ttl_s = *ttl;
  return r;
}

}  // namespace

Result<LeaseReply> ParseLeaseGrantReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("lease grant: unexpected reply");
  auto r = LeaseFields(*doc, "lease grant");
  if (!r) return r;
  if (r->id == 0 || r->ttl_s <= 0) return Fail("lease grant: no lease");
  return r;
}

Result<LeaseReply> ParseKeepAliveReply(std::string_view body) {
  // A stream of newline-separated messages; the first one answers.
  std::string_view first = body.substr(0, body.find('\n'));
  auto doc = ParseObject(first);
  if (!doc) return Fail("keepalive: unexpected reply");
  auto result = doc->find("result");
  if (result == doc->end() || !result->is_object()) {
    return Fail("keepalive: " + ErrorSummary(first));
  }
  return LeaseFields(*result, "keepalive");
}

Result<std::int64_t> ParseHeaderRevision(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("unexpected reply");
  auto rev = IntField<std::int64_t>((*doc)["header"], "revision", 0);
  if (!rev || *rev <= 0) return Fail("reply without header.revision");
  return *rev;
}

Result<std::vector<KeyRevision>> ParseKeysReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("range: unexpected reply");
  std::vector<KeyRevision> keys;
  auto kvs = doc->find("kvs");
  if (kvs == doc->end() || kvs->is_null()) return keys;
  if (!kvs->is_array()) return Fail("range: kvs is not an array");
  for (const auto& kv : *kvs) {
    if (!kv.is_object()) return Fail("range: kv is not an object");
    auto key = BytesField(kv, "key");
    auto rev = IntField<std::int64_t>(kv, "create_revision", 0);
    if (!key || key->empty() || !rev || *rev <= 0) {
      return Fail("range: kv without key or create_revision");
    }
    keys.push_back({std::move(*key), *rev});
  }
  return keys;
}

Result<std::int64_t> ParseDeleteReply(std::string_view body) {
  auto doc = ParseObject(body);
  if (!doc || !HasHeader(*doc)) return Fail("delete: unexpected reply");
  auto deleted = IntField<std::int64_t>(*doc, "deleted", 0);
  if (!deleted || *deleted < 0) return Fail("delete: malformed deleted");
  return *deleted;
}

std::string ErrorSummary(std::string_view body, std::size_t max_len) {
  std::string out;
  auto doc = ParseObject(body);
  if (doc) {
    auto it = doc->find("error");
    if (it == doc->end() || !it->is_string()) it = doc->find("message");
    if (it != doc->end() && it->is_string()) out = it->get<std::string>();
  }
  if (out.empty()) out = std::string(body);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (out.size() > max_len) out.resize(max_len);
  return out;
}

}  // namespace faultline::targets::etcd

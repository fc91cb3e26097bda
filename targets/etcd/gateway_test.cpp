#include "targets/etcd/gateway.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "targets/etcd/base64.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using json = nlohmann::json;

// Replies captured from etcd 3.4.23 (single member on 127.0.0.11).
constexpr const char* kRangeEmpty =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","revision":"1","raft_term":"2"}})";
constexpr const char* kRangeFound =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","revision":"2","raft_term":"2"},"kvs":[{"key":"L2ZhdWx0bGluZS94","create_revision":"2","mod_revision":"2","version":"1","value":"Mw=="}],"count":"1"})";
constexpr const char* kPut =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","revision":"2","raft_term":"2"}})";
constexpr const char* kTxnFailed =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","revision":"2","raft_term":"2"}})";
constexpr const char* kTxnSucceeded =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","revision":"3","raft_term":"2"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"3"}}}]})";
constexpr const char* kStatusLeader =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","revision":"4","raft_term":"2"},"version":"3.4.23","dbSize":"32768","leader":"6305945801947262607","raftIndex":"9","raftTerm":"2","raftAppliedIndex":"9","dbSizeInUse":"16384"})";
constexpr const char* kMemberList =
    R"({"header":{"cluster_id":"10440260189480975490","member_id":"6305945801947262607","raft_term":"2"},"members":[{"ID":"6305945801947262607","name":"n1","peerURLs":["http://127.0.0.11:2380"],"clientURLs":["http://127.0.0.11:2379"]},{"ID":"42","peerURLs":["http://127.0.0.12:2380"]}]})";
constexpr const char* kError =
    R"({"error":"etcdserver: request timed out","message":"etcdserver: request timed out","code":14})";

TEST_CASE("range reply without kvs is an absent key", "[etcd][gateway]") {
  auto r = ParseRangeReply(kRangeEmpty, "/faultline/x");
  REQUIRE(r.ok());
  CHECK_FALSE(r->found);
  CHECK(r->revision == 1);
}

TEST_CASE("range reply with one kv decodes the value", "[etcd][gateway]") {
  auto r = ParseRangeReply(kRangeFound, "/faultline/x");
  REQUIRE(r.ok());
  CHECK(r->found);
  CHECK(r->value == "3");
  CHECK(r->revision == 2);
  CHECK(DecodeRegisterValue(r->value) == Value::Int(3));
}

TEST_CASE("range reply that is not a gateway reply is an error",
          "[etcd][gateway]") {
  CHECK_FALSE(ParseRangeReply("", "/faultline/x").ok());
  CHECK_FALSE(ParseRangeReply("not json", "/faultline/x").ok());
  CHECK_FALSE(ParseRangeReply(kError, "/faultline/x").ok());
  CHECK_FALSE(
      ParseRangeReply(
          R"({"header":{},"kvs":[{"key":"L2ZhdWx0bGluZS94","value":"!!"}]})",
          "/faultline/x")
          .ok());
  CHECK_FALSE(
      ParseRangeReply(R"({"header":{},"kvs":{}})", "/faultline/x").ok());
}

TEST_CASE("range reply for another key is an error", "[etcd][gateway]") {
  // kRangeFound's kv is /faultline/x.
  CHECK_FALSE(ParseRangeReply(kRangeFound, "/faultline/y").ok());
  CHECK_FALSE(ParseRangeReply(kRangeFound, "/faultline/").ok());
  // A kv without a key is not an answer to a range of one key either.
  CHECK_FALSE(ParseRangeReply(R"({"header":{},"kvs":[{"value":"Mw=="}]})",
                              "/faultline/x")
                  .ok());
  // No kv: absent, whatever the key.
  CHECK(ParseRangeReply(kRangeEmpty, "/faultline/y").ok());
}

TEST_CASE("put reply needs a header", "[etcd][gateway]") {
  CHECK(ParsePutReply(kPut).ok());
  CHECK_FALSE(ParsePutReply(kError).ok());
  CHECK_FALSE(ParsePutReply("[]").ok());
}

TEST_CASE("txn succeeded is true only when present", "[etcd][gateway]") {
  auto ok = ParseTxnReply(kTxnSucceeded);
  REQUIRE(ok.ok());
  CHECK(ok->succeeded);
  auto omitted = ParseTxnReply(kTxnFailed);
  REQUIRE(omitted.ok());
  CHECK_FALSE(omitted->succeeded);
  auto explicit_false = ParseTxnReply(R"({"header":{},"succeeded":false})");
  REQUIRE(explicit_false.ok());
  CHECK_FALSE(explicit_false->succeeded);
  CHECK_FALSE(ParseTxnReply(R"({"header":{},"succeeded":"yes"})").ok());
  CHECK_FALSE(ParseTxnReply(kError).ok());
}

TEST_CASE("status reply gives member, leader and term", "[etcd][gateway]") {
  auto s = ParseStatusReply(kStatusLeader);
  REQUIRE(s.ok());
  CHECK(s->member_id == 6305945801947262607ULL);
  CHECK(s->leader == 6305945801947262607ULL);
  CHECK(s->raft_term == 2);
  CHECK(s->raft_index == 9);
  CHECK(s->version == "3.4.23");
}

TEST_CASE("status reply of a member without leader", "[etcd][gateway]") {
  // An isolated member: `leader` omitted (0), raftTerm still the old term.
  auto s = ParseStatusReply(
      R"({"header":{"member_id":"17","raft_term":"5"},"version":"3.4.23","raftIndex":"30","raftTerm":"5"})");
  REQUIRE(s.ok());
  CHECK(s->member_id == 17);
  CHECK(s->leader == 0);
  CHECK(s->raft_term == 5);
  CHECK_FALSE(ParseStatusReply(R"({"header":{}})").ok());  // no member id
  CHECK_FALSE(
      ParseStatusReply(R"({"header":{"member_id":"1"},"leader":"x"})").ok());
}

TEST_CASE("member list maps ids to names", "[etcd][gateway]") {
  auto m = ParseMemberList(kMemberList);
  REQUIRE(m.ok());
  REQUIRE(m->size() == 2);
  CHECK((*m)[0].id == 6305945801947262607ULL);
  CHECK((*m)[0].name == "n1");
  CHECK((*m)[1].id == 42);
  CHECK((*m)[1].name.empty());  // not started yet
}

TEST_CASE("health reply", "[etcd][gateway]") {
  CHECK(ParseHealthReply(R"({"health":"true"})").value());
  CHECK_FALSE(ParseHealthReply(R"({"health":"false"})").value());
  CHECK_FALSE(ParseHealthReply(R"({"status":"ok"})").ok());
  CHECK_FALSE(ParseHealthReply("<html>").ok());
}

TEST_CASE("error summary", "[etcd][gateway]") {
  CHECK(ErrorSummary(kError) == "etcdserver: request timed out");
  CHECK(ErrorSummary("plain\ntext") == "plain text");
  CHECK(ErrorSummary(std::string(500, 'x'), 10) == std::string(10, 'x'));
}

TEST_CASE("register keys and values", "[etcd][gateway]") {
  CHECK(RegisterKey(Value::String("k1")).value() == "/faultline/k1");
  CHECK(RegisterKey(Value::Int(7)).value() == "/faultline/7");
  CHECK(RegisterKey(Value::Null()).value() == "/faultline/_");
  CHECK_FALSE(RegisterKey(Value::MakeList({})).ok());

  CHECK(EncodeRegisterValue(Value::Int(42)) == "42");
  CHECK(DecodeRegisterValue("42") == Value::Int(42));
  CHECK(DecodeRegisterValue("-3") == Value::Int(-3));
  CHECK(DecodeRegisterValue(R"("s")") == Value::String("s"));
  CHECK(DecodeRegisterValue("not json") == Value::String("not json"));
  Value list = Value::MakeList({Value::Int(1), Value::String("a")});
  CHECK(DecodeRegisterValue(EncodeRegisterValue(list)) == list);
}

TEST_CASE("request bodies", "[etcd][gateway]") {
  auto range = json::parse(RangeRequest("/faultline/x", false));
  CHECK(range["key"] == "L2ZhdWx0bGluZS94");
  CHECK_FALSE(range.contains("serializable"));
  CHECK(json::parse(RangeRequest("/faultline/x", true))["serializable"] ==
        true);

  auto put = json::parse(PutRequest("/faultline/x", "3"));
  CHECK(put["key"] == "L2ZhdWx0bGluZS94");
  CHECK(put["value"] == "Mw==");

  auto cas = json::parse(CasRequest("/faultline/x", std::string("4"), "5"));
  REQUIRE(cas["compare"].size() == 1);
  CHECK(cas["compare"][0]["target"] == "VALUE");
  CHECK(cas["compare"][0]["result"] == "EQUAL");
  CHECK(cas["compare"][0]["value"] == Base64Encode("4"));
  CHECK(cas["success"][0]["request_put"]["value"] == Base64Encode("5"));
  CHECK_FALSE(cas.contains("failure"));

  auto create = json::parse(CasRequest("/faultline/x", std::nullopt, "5"));
  CHECK(create["compare"][0]["target"] == "VERSION");
  CHECK(create["compare"][0]["version"] == "0");
}

// Lock replies captured from etcd 3.4.23 (single member, lease TTL 1 asked,
// 2 granted: etcd's minimum).
constexpr const char* kLeaseGrant =
    R"({"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"1","raft_term":"2"},"ID":"7668682575560598278","TTL":"2"})";
constexpr const char* kKeepAlive =
    R"({"result":{"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"3","raft_term":"2"},"ID":"7668682575560598278","TTL":"2"}})"
    "\n";
constexpr const char* kKeepAliveExpired =
    R"({"result":{"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"4","raft_term":"2"},"ID":"7668682575560598278"}})"
    "\n";
constexpr const char* kLockKeys =
    R"({"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"3","raft_term":"2"},"kvs":[{"key":"L2ZsL2xvY2swL2E=","create_revision":"2","mod_revision":"2","version":"1","lease":"7668682575560598278"},{"key":"L2ZsL2xvY2swL2I=","create_revision":"3","mod_revision":"3","version":"1","lease":"7668682575560598281"}],"count":"2"})";
constexpr const char* kDeleted =
    R"({"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"5","raft_term":"2"},"deleted":"1"})";
constexpr const char* kDeletedNone =
    R"({"header":{"cluster_id":"2037210783374497686","member_id":"13195394291058371180","revision":"5","raft_term":"2"}})";
constexpr const char* kLeaseNotFound =
    R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})";

TEST_CASE("lock prefixes and their range end", "[etcd][gateway][lock]") {
  CHECK(LockPrefix(Value::String("lock0")).value() == "/faultline-lock/lock0/");
  CHECK_FALSE(LockPrefix(Value::String("")).ok());
  CHECK_FALSE(LockPrefix(Value::String("a/b")).ok());
  CHECK_FALSE(LockPrefix(Value::Int(3)).ok());
  CHECK(PrefixEnd("/l/a/") == "/l/a0");  // '/' + 1 == '0'
  CHECK(PrefixEnd("a\xff") == "b");
  CHECK(PrefixEnd("\xff") == std::string(1, '\0'));
}

TEST_CASE("lock request bodies", "[etcd][gateway][lock]") {
  CHECK(json::parse(LeaseGrantRequest(2)) == json{{"TTL", 2}});
  CHECK(json::parse(LeaseIdRequest(7668682575560598278)) ==
        json{{"ID", "7668682575560598278"}});
  auto put = json::parse(PutWithLeaseRequest("/l/a/1", "", 42));
  CHECK(put["key"] == Base64Encode("/l/a/1"));
  CHECK(put["lease"] == "42");
  CHECK_FALSE(json::parse(PutWithLeaseRequest("k", "v", 0)).contains("lease"));
  auto keys = json::parse(PrefixKeysRequest("/l/a/"));
  CHECK(keys["key"] == Base64Encode("/l/a/"));
  CHECK(keys["range_end"] == Base64Encode("/l/a0"));
  CHECK(keys["sort_target"] == "CREATE");
  CHECK(keys["sort_order"] == "ASCEND");
  CHECK(keys["keys_only"] == true);
  CHECK(json::parse(DeleteRequest("/l/a/1"))["key"] == Base64Encode("/l/a/1"));
}

TEST_CASE("lease replies", "[etcd][gateway][lock]") {
  auto grant = ParseLeaseGrantReply(kLeaseGrant);
  REQUIRE(grant.ok());
  CHECK(grant->id == 7668682575560598278);
  CHECK(grant->ttl_s == 2);
  CHECK_FALSE(ParseLeaseGrantReply(kLeaseNotFound).ok());
  CHECK_FALSE(ParseLeaseGrantReply(R"({"header":{},"TTL":"2"})").ok());

  auto alive = ParseKeepAliveReply(kKeepAlive);
  REQUIRE(alive.ok());
  CHECK(alive->ttl_s == 2);
  auto gone = ParseKeepAliveReply(kKeepAliveExpired);
  REQUIRE(gone.ok());
  CHECK(gone->ttl_s == 0);  // TTL omitted: the lease expired
  CHECK_FALSE(ParseKeepAliveReply(
                  R"({"error":{"grpc_code":14,"message":"unavailable"}})")
                  .ok());
  CHECK_FALSE(ParseKeepAliveReply("").ok());
}

TEST_CASE("lock key and delete replies", "[etcd][gateway][lock]") {
  auto keys = ParseKeysReply(kLockKeys);
  REQUIRE(keys.ok());
  REQUIRE(keys->size() == 2);
  CHECK((*keys)[0].key == "/fl/lock0/a");
  CHECK((*keys)[0].create_revision == 2);
  CHECK((*keys)[1].create_revision == 3);
  auto none = ParseKeysReply(kPut);  // no kvs: an empty queue
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK_FALSE(ParseKeysReply(R"({"header":{},"kvs":[{"key":"YQ=="}]})").ok());
  CHECK(ParseHeaderRevision(kPut).value() == 2);
  CHECK_FALSE(ParseHeaderRevision(kLeaseNotFound).ok());
  CHECK(ParseDeleteReply(kDeleted).value() == 1);
  CHECK(ParseDeleteReply(kDeletedNone).value() == 0);
  CHECK_FALSE(ParseDeleteReply(kLeaseNotFound).ok());
}

TEST_CASE("raft.status from /debug/vars", "[gateway]") {
  // Shape captured from etcd 3.4.23 (trimmed: other expvars omitted).
  auto s = ParseRaftStatus(
      R"({"cmdline":["etcd"],"raft.status":{"id":"2e1259d415f2a040","term":2,)"
      R"("vote":"2e1259d415f2a040","commit":4,"lead":"2e1259d415f2a040",)"
      R"("raftState":"StateLeader","applied":4,"progress":{},)"
      R"("leadtransferee":"0"}})");
  REQUIRE(s.ok());
  CHECK(s->id == 0x2e1259d415f2a040ULL);
  CHECK(s->lead == 0x2e1259d415f2a040ULL);
  CHECK(s->term == 2);
  CHECK(s->state == "StateLeader");
  auto none = ParseRaftStatus(R"({"raft.status":{"id":"a","term":7,"lead":"0",)"
                              R"("raftState":"StatePreCandidate"}})");
  REQUIRE(none.ok());
  CHECK(none->lead == 0);
  CHECK(none->term == 7);
  CHECK_FALSE(ParseRaftStatus(R"({"memstats":{}})").ok());
  CHECK_FALSE(ParseRaftStatus(R"({"raft.status":{"id":"xyz","term":1,)"
                              R"("lead":"0","raftState":"StateFollower"}})")
                  .ok());
  CHECK_FALSE(ParseRaftStatus("not json").ok());
}

}  // namespace
}  // namespace faultline::targets::etcd

#include "targets/etcd/txn_gateway.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "targets/etcd/base64.h"

namespace faultline::targets::etcd {
namespace {

using checkers::Value;
using json = nlohmann::json;

// Captured from etcd 3.4.23: a txn ranging over /faultline-txn/1 (holding
// "[3]") and the absent /faultline-txn/2.
constexpr const char* kReadReply =
    R"({"header":{"cluster_id":"3460116363838020990","member_id":"7501010807256764859","revision":"2","raft_term":"2"},"succeeded":true,"responses":[{"response_range":{"header":{"revision":"2"},"kvs":[{"key":"L2ZhdWx0bGluZS10eG4vMQ==","create_revision":"2","mod_revision":"2","version":"1","value":"WzNd"}],"count":"1"}},{"response_range":{"header":{"revision":"2"}}}]})";

Value Micro(const char* f, std::int64_t k, Value v) {
  return Value::MakeList({Value::String(f), Value::Int(k), std::move(v)});
}

TEST_CASE("txn plan: dependencies and writes per workload", "[etcd][txn]") {
  const Value txn = Value::MakeList({Micro("append", 1, Value::Int(5)),
                                     Micro("r", 1, Value::Null()),
                                     Micro("r", 2, Value::Null())});
  auto la = PlanTxn(txn, TxnWorkload::kListAppend);
  REQUIRE(la);
  CHECK(la->depends ==
        std::vector<std::string>{"/faultline-txn/1", "/faultline-txn/2"});
  CHECK(la->writes == std::vector<std::string>{"/faultline-txn/1"});

  const Value rw = Value::MakeList({Micro("w", 1, Value::Int(5)),
                                    Micro("r", 1, Value::Null()),
                                    Micro("r", 2, Value::Null())});
  auto p = PlanTxn(rw, TxnWorkload::kRwRegister);
  REQUIRE(p);
  // A read after the transaction's own write does not depend on etcd.
  CHECK(p->depends == std::vector<std::string>{"/faultline-txn/2"});
  CHECK(p->writes == std::vector<std::string>{"/faultline-txn/1"});

  auto blind = PlanTxn(Value::MakeList({Micro("w", 3, Value::Int(1))}),
                       TxnWorkload::kRwRegister);
  REQUIRE(blind);
  CHECK(blind->depends.empty());
}

TEST_CASE("txn plan: malformed values are errors", "[etcd][txn]") {
  CHECK_FALSE(PlanTxn(Value::MakeList({}), TxnWorkload::kListAppend));
  CHECK_FALSE(PlanTxn(Value::Int(1), TxnWorkload::kListAppend));
  // "w" is not a list-append micro-op, "append" not a rw-register one.
  auto wrong = PlanTxn(Value::MakeList({Micro("w", 1, Value::Int(1))}),
                       TxnWorkload::kListAppend);
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().find("expected r or append") != std::string::npos);
  CHECK_FALSE(PlanTxn(Value::MakeList({Micro("append", 1, Value::Int(1))}),
                      TxnWorkload::kRwRegister));
  CHECK_FALSE(PlanTxn(Value::MakeList({Micro("append", 1, Value::Null())}),
                      TxnWorkload::kListAppend));
  CHECK_FALSE(
      PlanTxn(Value::MakeList({Value::MakeList(
                  {Value::String("r"), Value::MakeList({}), Value::Null()})}),
              TxnWorkload::kListAppend));
}

TEST_CASE("txn read: request and captured reply", "[etcd][txn]") {
  const std::vector<std::string> keys = {"/faultline-txn/1",
                                         "/faultline-txn/2"};
  json req = json::parse(ReadRequest(keys, /*serializable=*/true));
  REQUIRE(req["success"].size() == 2);
  CHECK(req["success"][1]["request_range"]["key"] ==
        Base64Encode("/faultline-txn/2"));
  CHECK(req["success"][0]["request_range"]["serializable"] == true);
  CHECK_FALSE(
      json::parse(ReadRequest(keys, false))["success"][0]["request_range"]
          .contains("serializable"));

  auto states = ParseReadReply(kReadReply, keys);
  REQUIRE(states);
  REQUIRE(states->size() == 2);
  CHECK((*states)[0].found);
  CHECK((*states)[0].value == "[3]");
  CHECK((*states)[0].mod_revision == 2);
  CHECK_FALSE((*states)[1].found);
  CHECK((*states)[1].mod_revision == 0);

  // Answers that are not to this request.
  CHECK_FALSE(ParseReadReply(kReadReply, {"/faultline-txn/9", keys[1]}));
  CHECK_FALSE(ParseReadReply(kReadReply, {keys[0]}));
  CHECK_FALSE(ParseReadReply(R"({"header":{}})", keys));
  CHECK_FALSE(ParseReadReply("not json", keys));
}

TEST_CASE("txn evaluate: reads see own appends; puts are the final lists",
          "[etcd][txn]") {
  const Value txn = Value::MakeList(
      {Micro("r", 1, Value::Null()), Micro("append", 1, Value::Int(5)),
       Micro("r", 1, Value::Null()), Micro("append", 2, Value::Int(6)),
       Micro("r", 2, Value::Null())});
  auto plan = PlanTxn(txn, TxnWorkload::kListAppend);
  REQUIRE(plan);
  auto states = ParseReadReply(kReadReply, plan->depends);
  REQUIRE(states);
  auto eval = Evaluate(*plan, TxnWorkload::kListAppend, *states);
  REQUIRE(eval);
  CHECK(
      eval->completed.ToJson() ==
      R"([["r",1,[3]],["append",1,5],["r",1,[3,5]],["append",2,6],["r",2,[6]]])");
  CHECK(eval->puts == std::vector<std::string>{"[3,5]", "[6]"});

  json w = json::parse(WriteRequest(*plan, *states, eval->puts));
  REQUIRE(w["compare"].size() == 2);
  CHECK(w["compare"][0]["target"] == "MOD");
  CHECK(w["compare"][0]["mod_revision"] == "2");
  CHECK(w["compare"][1]["mod_revision"] == "0");  // absent key
  REQUIRE(w["success"].size() == 2);
  CHECK(Base64Decode(w["success"][0]["request_put"]["value"].get<std::string>())
            .value_or("") == "[3,5]");

  // A value faultline did not write is not silently read as a list.
  std::vector<TxnKeyState> foreign = *states;
  foreign[0].value = "hello";
  auto bad = Evaluate(*plan, TxnWorkload::kListAppend, foreign);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().find("/faultline-txn/1") != std::string::npos);
}

TEST_CASE("txn evaluate: rw-register reads and blind writes", "[etcd][txn]") {
  const Value txn = Value::MakeList({Micro("r", 2, Value::Null()),
                                     Micro("w", 1, Value::Int(7)),
                                     Micro("r", 1, Value::Null())});
  auto plan = PlanTxn(txn, TxnWorkload::kRwRegister);
  REQUIRE(plan);
  std::vector<TxnKeyState> states = {{true, "4", 9}};
  auto eval = Evaluate(*plan, TxnWorkload::kRwRegister, states);
  REQUIRE(eval);
  CHECK(eval->completed.ToJson() == R"([["r",2,4],["w",1,7],["r",1,7]])");
  CHECK(eval->puts == std::vector<std::string>{"7"});
  CHECK(Evaluate(*plan, TxnWorkload::kRwRegister, {}).error().find("states") !=
        std::string::npos);
  // No dependencies: no compare at all.
  auto blind = PlanTxn(Value::MakeList({Micro("w", 3, Value::Int(1))}),
                       TxnWorkload::kRwRegister);
  REQUIRE(blind);
  json w = json::parse(WriteRequest(*blind, {}, {"1"}));
  CHECK_FALSE(w.contains("compare"));
}

}  // namespace
}  // namespace faultline::targets::etcd

namespace faultline::targets::etcd {
namespace {

TEST_CASE("guarded put: create-if-absent for every key", "[etcd][txn]") {
  const std::vector<std::string> keys = {"/faultline-bank/0",
                                         "/faultline-bank/1"};
  json w = json::parse(GuardedPutRequest(keys, {{}, {}}, keys, {"60", "40"}));
  REQUIRE(w["compare"].size() == 2);
  CHECK(w["compare"][1]["key"] == Base64Encode("/faultline-bank/1"));
  CHECK(w["compare"][1]["mod_revision"] == "0");
  REQUIRE(w["success"].size() == 2);
  CHECK(Base64Decode(w["success"][1]["request_put"]["value"].get<std::string>())
            .value_or("") == "40");
}

}  // namespace
}  // namespace faultline::targets::etcd

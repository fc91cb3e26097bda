// Unit tests for OkAnswerValue: which ok answers of an exec client are
// valid for each workload's vocabulary, and what a valid one records.
#include "targets/process/exec_answer.h"

#include <catch2/catch.hpp>
#include <string>

#include "checkers/json_parser.h"

namespace {

using faultline::checkers::Value;
using faultline::harness::Operation;
using faultline::targets::process::OkAnswerValue;

Value Json(const std::string& text) {
  Value v;
  std::string error;
  REQUIRE(faultline::checkers::ParseJson(text, v, &error));
  return v;
}

Operation Op(std::string f, const std::string& value = "null") {
  return Operation{std::move(f), Value(), Json(value)};
}

// The error of an answer that must be invalid ("" when it was accepted).
std::string Refused(const std::string& workload, const Operation& op,
                    const std::string& answer, int accounts = 3) {
  const Value v = Json(answer);
  auto r = OkAnswerValue(workload, accounts, op, &v);
  return r.ok() ? std::string() : r.error();
}

// The value an answer that must be valid records.
Value Accepted(const std::string& workload, const Operation& op,
               const std::string& answer, int accounts = 3) {
  const Value v = Json(answer);
  auto r = OkAnswerValue(workload, accounts, op, &v);
  INFO(workload << " " << op.f << " " << answer << ": "
                << (r.ok() ? "" : r.error()));
  REQUIRE(r.ok());
  return r.value();
}

}  // namespace

TEST_CASE("exec answers: set add echoes its element, a read is a list") {
  CHECK(Accepted("set", Op("add", "7"), "7") == Value::Int(7));
  CHECK(Refused("set", Op("add", "7"), "8") ==
        "ok to add whose \"value\" is not the one sent (7)");
  CHECK(Refused("set", Op("add", "7"), "\"7\"") != "");
  auto missing = OkAnswerValue("set", 3, Op("add", "7"), nullptr);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == "ok to add without \"value\"");

  CHECK(Accepted("set", Op("read"), "[]") == Value::MakeList({}));
  CHECK(Accepted("set", Op("read"), "[3, \"x\", 3]") ==
        Json("[3, \"x\", 3]"));  // a duplicate is for the checker to report
  CHECK(Refused("set", Op("read"), "null") ==
        "ok to a set read whose \"value\" is not a list");
  CHECK(Refused("set", Op("read"), "{\"0\": 1}") != "");
  CHECK(Refused("set", Op("read"), "[1, [2]]") ==
        "ok to a set read listing [2] (elements are integers or strings)");
  CHECK(Refused("set", Op("read"), "[1.5]") != "");
}

TEST_CASE("exec answers: counter add echoes, a read is an integer") {
  CHECK(Accepted("counter", Op("add", "3"), "3") == Value::Int(3));
  CHECK(Refused("counter", Op("add", "3"), "8") != "");  // the new total
  CHECK(Accepted("counter", Op("read"), "42") == Value::Int(42));
  CHECK(Refused("counter", Op("read"), "\"42\"") ==
        "ok to a counter read that is not an integer");
  CHECK(Refused("counter", Op("read"), "null") != "");
  CHECK(Refused("counter", Op("read"), "[42]") != "");
}

TEST_CASE("exec answers: bank transfer echoes, a read names the accounts") {
  const Operation transfer = Op("transfer", R"({"from":0,"to":2,"amount":4})");
  CHECK(Accepted("bank", transfer, R"({"amount":4,"from":0,"to":2})") ==
        transfer.value);  // any order; the invocation's value is recorded
  CHECK(Refused("bank", transfer, R"({"from":0,"to":2,"amount":5})") ==
        "ok to transfer whose \"value\" is not the one sent "
        "({\"from\":0,\"to\":2,\"amount\":4})");
  CHECK(Refused("bank", transfer, R"({"from":0,"to":2})") != "");
  CHECK(Refused("bank", transfer,
                R"({"from":0,"to":2,"amount":4,"extra":1})") != "");
  CHECK(Refused("bank", transfer, "null") != "");

  CHECK(Accepted("bank", Op("read"), R"({"0":50,"1":30,"2":20})") ==
        Json(R"({"0":50,"1":30,"2":20})"));
  // An account left out is the system's doing: the checker reports it.
  CHECK(Accepted("bank", Op("read"), R"({"2":20,"0":80})") ==
        Json(R"({"2":20,"0":80})"));
  // Negative balances and wrong totals are for the checker too.
  CHECK(Accepted("bank", Op("read"), R"({"0":-5,"1":1,"2":1})") ==
        Json(R"({"0":-5,"1":1,"2":1})"));
  CHECK(Refused("bank", Op("read"), R"({"0":50,"1":30,"2":10,"3":10})") ==
        "ok to a bank read naming account \"3\" (the accounts are \"0\" .. "
        "\"2\")");
  CHECK(Refused("bank", Op("read"), R"({"b/0":100})") != "");
  // (The JSON parser refuses a duplicate field; a Value can still hold one.)
  const Value twice = Value::MakeObject(
      {{"0", Value::Int(50)}, {"1", Value::Int(0)}, {"0", Value::Int(50)}});
  auto dup = OkAnswerValue("bank", 3, Op("read"), &twice);
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error() == "ok to a bank read naming account \"0\" twice");
  CHECK(Refused("bank", Op("read"), R"({"0":"50","1":30,"2":20})") ==
        "ok to a bank read whose balance of \"0\" is \"50\", not an integer");
  CHECK(Refused("bank", Op("read"), "[50,30,20]") ==
        "ok to a bank read whose \"value\" is not an object");
  // The number of accounts is the configured one.
  CHECK(Refused("bank", Op("read"), R"({"0":50,"1":30,"2":20})", 2) != "");
}

TEST_CASE("exec answers: the register, lock, status and txn rules stay") {
  CHECK(Accepted("register", Op("read"), "[1, {\"a\": null}]") ==
        Json("[1, {\"a\": null}]"));
  CHECK(Accepted("register", Op("read"), "null").is_null());
  auto no_read = OkAnswerValue("register", 3, Op("read"), nullptr);
  REQUIRE_FALSE(no_read.ok());
  CHECK(no_read.error() == "ok to a read without \"value\"");
  // write, cas, renew and release record the invocation's value.
  CHECK(Accepted("register", Op("write", "17"), "99") == Value::Int(17));
  CHECK(OkAnswerValue("register", 3, Op("write", "17"), nullptr).value() ==
        Value::Int(17));
  CHECK(Accepted("lock", Op("acquire", "1000"), "12") == Value::Int(12));
  CHECK(Refused("lock", Op("acquire", "1000"), "\"12\"") ==
        "ok to an acquire without an integer token");
  CHECK(Accepted("set", Op("status"), R"({"role":"leader"})") ==
        Json(R"({"role":"leader"})"));
  CHECK(Refused("bank", Op("status"), "[]") ==
        "ok to a status without an object \"value\"");

  const Operation txn = Op("txn", R"([["r",1,null],["append",1,5]])");
  CHECK(Accepted("list-append", txn, R"([["r",1,[2]],["append",1,5]])") ==
        Json(R"([["r",1,[2]],["append",1,5]])"));
  CHECK(Refused("list-append", txn, R"([["r",1,[2]]])") ==
        "ok to a txn with 1 micro-ops, expected 2");
  CHECK(Refused("list-append", txn, R"([["r",1,[2]],["append",1,6]])") ==
        "ok to a txn whose micro-op 2 is not the one sent "
        "([\"append\",1,5])");
  CHECK(Refused("list-append", txn, R"([["r",2,[2]],["append",1,5]])") != "");
}

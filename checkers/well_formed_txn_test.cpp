// CheckWellFormed's shapes for the transactional models list-append and
// rw-register, and the EDN reader leaving two-micro-op transactions whole.
#include <catch2/catch.hpp>
#include <string>

#include "checkers/history_io.h"

namespace fc = faultline::checkers;

namespace {

// The first violation's message for a JSONL text under `model`, or "" when
// the history is well-formed.
std::string Problem(const std::string& jsonl, const char* model) {
  fc::ReadResult r = fc::ParseJsonl(jsonl);
  REQUIRE(r.ok);
  auto bad = fc::CheckWellFormed(r.history, model);
  return bad ? std::to_string(bad->line) + ": " + bad->message : "";
}

std::string Pair(const std::string& invoke, const std::string& ok) {
  return "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"txn\","
         "\"value\":" +
         invoke +
         "}\n{\"index\":1,\"process\":0,\"type\":\"ok\",\"f\":\"txn\","
         "\"value\":" +
         ok + "}\n";
}

}  // namespace

TEST_CASE("CheckWellFormed: list-append and rw-register shapes",
          "[wellformed][txn]") {
  CHECK(fc::IsKnownModel("list-append"));
  CHECK(fc::IsKnownModel("rw-register"));
  CHECK(Problem(Pair(R"([["append",1,5],["r","k",null]])",
                     R"([["append",1,5],["r","k",[3,5]]])"),
                "list-append") == "");
  CHECK(Problem(Pair(R"([["w",1,5],["r",2,null]])", R"([["w",1,5],["r",2,7]])"),
                "rw-register") == "");
  // Empty reads: null or [] for a list, null for a register.
  CHECK(Problem(Pair(R"([["r",1,null]])", R"([["r",1,null]])"),
                "list-append") == "");
  CHECK(Problem(Pair(R"([["r",1,null]])", R"([["r",1,[]]])"), "list-append") ==
        "");

  std::string p =
      Problem(Pair(R"([["w",1,5]])", R"([["w",1,5]])"), "list-append");
  CHECK(p.find("1: ") == 0);
  CHECK(p.find("has f \"w\"; expected \"append\" or \"r\"") !=
        std::string::npos);
  p = Problem(Pair(R"([["r",1,null]])", R"([["r",1,7]])"), "list-append");
  CHECK(p.find("2: ") == 0);
  CHECK(p.find("whole list") != std::string::npos);
  p = Problem(Pair(R"([["r",1,null]])", R"([["r",1,[7]]])"), "rw-register");
  CHECK(p.find("a rw-register read returns") != std::string::npos);
  // A read's invoke value is ignored (the completion carries the read).
  CHECK(Problem(Pair(R"([["r",1,3]])", R"([["r",1,3]])"), "rw-register") == "");
  p = Problem(Pair(R"([["append",[1],5]])", R"([["append",[1],5]])"),
              "list-append");
  CHECK(p.find("a key is an integer or a string") != std::string::npos);
  p = Problem(Pair(R"({"a":1})", R"({"a":1})"), "list-append");
  CHECK(p.find("a txn value must be a list") != std::string::npos);
  p = Problem(
      "{\"index\":0,\"process\":0,\"type\":\"invoke\",\"f\":\"read\","
      "\"value\":null}\n",
      "rw-register");
  CHECK(p.find("expected txn") != std::string::npos);
}

TEST_CASE("EDN: a transaction of two micro-ops is not a [key value] tuple",
          "[edn][txn]") {
  fc::ReadResult r = fc::ParseHistory(
      "{:type :invoke, :f :txn, :value [[:append 1 2] [:r 1 nil]], "
      ":process 0, :index 0}\n"
      "{:type :ok, :f :txn, :value [[:append 1 2] [:r 1 [2]]], "
      ":process 0, :index 1}\n",
      fc::HistoryFormat::kJepsenEdn);
  REQUIRE(r.ok);
  REQUIRE(r.history.size() == 2);
  CHECK(r.history[1].key.is_null());
  CHECK(r.history[1].value.ToJson() == R"([["append",1,2],["r",1,[2]]])");
  CHECK_FALSE(fc::CheckWellFormed(r.history, "list-append").has_value());
}

#include "targets/process/exec_answer.h"

#include <set>
#include <utility>

namespace faultline::targets::process {
namespace {

using checkers::Value;
using harness::Fail;
using harness::Result;

// Whether `got`, the value of an ok answer to the txn `sent`, is the
// micro-op list the protocol asks for: a list as long as `sent`, each
// element [f, k, v] with the f and k sent in that place, and the v sent for
// every micro-op that is not a read ("r"); a read's v is what it read (any
// JSON). Otherwise `why` says what is wrong.
bool TxnAnswerMatches(const Value& sent, const Value& got, std::string* why) {
  if (!got.is_list()) {
    *why = "whose \"value\" is not a list";
    return false;
  }
  if (!sent.is_list() || got.as_list().size() != sent.as_list().size()) {
    *why = "with " + std::to_string(got.as_list().size()) +
           " micro-ops, expected " +
           std::to_string(sent.is_list() ? sent.as_list().size() : 0);
    return false;
  }
  for (std::size_t i = 0; i < got.as_list().size(); ++i) {
    const Value& g = got.as_list()[i];
    const Value& s = sent.as_list()[i];
    const bool shaped = g.is_list() && g.as_list().size() == 3 && s.is_list() &&
                        s.as_list().size() == 3;
    const bool same = shaped && g.as_list()[0] == s.as_list()[0] &&
                      g.as_list()[1] == s.as_list()[1] &&
                      (s.as_list()[0] == Value::String("r") ||
                       g.as_list()[2] == s.as_list()[2]);
    if (!same) {
      *why = "whose micro-op " + std::to_string(i + 1) +
             " is not the one sent (" + s.ToJson() + ")";
      return false;
    }
  }
  return true;
}

// "" when `got` is a set read: a list of integers and strings.
std::string SetReadProblem(const Value& got) {
  if (!got.is_list()) return "a set read whose \"value\" is not a list";
  for (const Value& e : got.as_list()) {
    if (!e.is_int() && !e.is_string()) {
      return "a set read listing " + e.ToJson() +
             " (elements are integers or strings)";
    }
  }
  return "";
}

// "" when `got` is a bank read over accounts "0".."accounts-1": an object
// of integer balances naming no other account and none twice (an account
// left out is for the checker to report).
std::string BankReadProblem(const Value& got, int accounts) {
  if (!got.is_object()) return "a bank read whose \"value\" is not an object";
  std::set<std::string> seen;
  for (const auto& [name, balance] : got.as_object()) {
    bool known = false;
    for (int a = 0; a < accounts && !known; ++a)
      known = name == std::to_string(a);
    if (!known) {
      return "a bank read naming account \"" + name + "\" (the accounts are " +
             "\"0\" .. \"" + std::to_string(accounts - 1) + "\")";
    }
    if (!seen.insert(name).second) {
      return "a bank read naming account \"" + name + "\" twice";
    }
    if (!balance.is_int()) {
      return "a bank read whose balance of \"" + name + "\" is " +
             balance.ToJson() + ", not an integer";
    }
  }
  return "";
}

// Whether `got` is the transfer `sent`: the same "from", "to" and "amount"
// and no other field, in any order.
bool SameTransfer(const Value& sent, const Value& got) {
  if (!sent.is_object() || !got.is_object()) return false;
  if (got.as_object().size() != sent.as_object().size()) return false;
  for (const auto& [name, v] : sent.as_object()) {
    const Value* g = got.Find(name);
    if (g == nullptr || *g != v) return false;
  }
  return true;
}

}  // namespace

Result<Value> OkAnswerValue(const std::string& workload, int accounts,
                            const harness::Operation& op, const Value* value) {
  const std::string& f = op.f;
  if (f == "status") {
    if (value == nullptr || !value->is_object()) {
      return Fail("ok to a status without an object \"value\"");
    }
    return *value;
  }
  if (f == "acquire") {
    if (value == nullptr || !value->is_int()) {
      return Fail("ok to an acquire without an integer token");
    }
    return *value;
  }
  if (f == "txn") {
    std::string why;
    if (value == nullptr) return Fail("ok to a txn without \"value\"");
    if (!TxnAnswerMatches(op.value, *value, &why)) {
      return Fail("ok to a txn " + why);
    }
    return *value;
  }
  if (f == "read") {
    if (value == nullptr) return Fail("ok to a read without \"value\"");
    std::string problem;
    if (workload == "set") {
      problem = SetReadProblem(*value);
    } else if (workload == "counter") {
      if (!value->is_int()) problem = "a counter read that is not an integer";
    } else if (workload == "bank") {
      problem = BankReadProblem(*value, accounts);
    }
    if (!problem.empty()) return Fail("ok to " + problem);
    return *value;
  }
  const bool echo =
      ((workload == "set" || workload == "counter") && f == "add") ||
      (workload == "bank" && f == "transfer");
  if (echo) {
    if (value == nullptr) return Fail("ok to " + f + " without \"value\"");
    const bool same =
        f == "transfer" ? SameTransfer(op.value, *value) : *value == op.value;
    if (!same) {
      return Fail("ok to " + f + " whose \"value\" is not the one sent (" +
                  op.value.ToJson() + ")");
    }
  }
  return op.value;
}

}  // namespace faultline::targets::process

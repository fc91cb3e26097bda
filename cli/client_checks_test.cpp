// Unit tests for client-test's sequences (cli/client_checks.h) against an
// in-memory client: an honest one passes every check, and each kind of
// broken client fails the check meant to catch it.
#include "cli/client_checks.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using faultline::checkers::Value;
using faultline::cli::ClientChecks;
using faultline::harness::Client;
using faultline::harness::Completion;
using faultline::harness::Done;
using faultline::harness::Operation;
using faultline::harness::Outcome;

enum class Bug {
  kNone,
  kFailApplies,      // a cas mismatch or a short transfer still takes effect
  kNoExclusion,      // a held lock is granted again
  kNoOwnWrites,      // txn reads ignore the txn's own writes
  kNotAtomic,        // a txn applies only its first write
  kLosesElements,    // a set read leaves out the latest element
  kLosesIncrements,  // every second counter add is not applied
  kWrongAccounts,    // a bank read names accounts "b/0", "b/1", ...
};

// The state every client of one test shares (the "system").
struct Store {
  std::map<std::string, Value> registers;  // register and txn keys
  std::map<std::string, std::int64_t> locks;
  std::int64_t next_token = 10;
  std::vector<Value> set;
  std::int64_t counter = 0;
  int adds = 0;
  std::vector<std::int64_t> bank = {40, 30, 30};
};

// A client of `workload` over the shared store, with `bug`.
class MemoryClient : public Client {
 public:
  MemoryClient(std::shared_ptr<Store> s, Bug bug, std::string workload)
      : s_(std::move(s)), bug_(bug), workload_(std::move(workload)) {}

  Completion Invoke(const Operation& op) noexcept override {
    Store& s = *s_;
    const std::string key = op.key.ToJson();
    if (op.f == "status") {
      return Done(Outcome::kOk,
                  Value::MakeObject({{"role", Value::String("leader")}}));
    }
    if (op.f == "txn") return Txn(op);
    if (op.f == "read") return Read(op);
    if (op.f == "write") {
      s.registers[key] = op.value;
      return Done(Outcome::kOk, op.value);
    }
    if (op.f == "cas") {
      const Value& old = op.value.as_list()[0];
      const bool match = s.registers.count(key) && s.registers[key] == old;
      if (match || bug_ == Bug::kFailApplies) {
        s.registers[key] = op.value.as_list()[1];
      }
      return match ? Done(Outcome::kOk, op.value)
                   : Done(Outcome::kFail, op.value, "mismatch");
    }
    if (op.f == "acquire") {
      if (s.locks.count(key) && bug_ != Bug::kNoExclusion)
        return Done(Outcome::kFail, op.value, "held");
      s.locks[key] = ++s.next_token;
      return Done(Outcome::kOk, Value::Int(s.next_token));
    }
    if (op.f == "renew" || op.f == "release") {
      auto it = s.locks.find(key);
      if (it == s.locks.end() || it->second != op.value.as_int())
        return Done(Outcome::kFail, op.value, "not-held");
      if (op.f == "release") s.locks.erase(it);
      return Done(Outcome::kOk, op.value);
    }
    if (op.f == "add" && workload_ == "set") {
      s.set.push_back(op.value);
      return Done(Outcome::kOk, op.value);
    }
    if (op.f == "add") {
      if (bug_ != Bug::kLosesIncrements || ++s.adds % 2 == 1)
        s.counter += op.value.as_int();
      return Done(Outcome::kOk, op.value);
    }
    if (op.f == "transfer") {
      const auto from = op.value.Find("from")->as_int();
      const auto to = op.value.Find("to")->as_int();
      const auto amount = op.value.Find("amount")->as_int();
      const bool enough = s.bank[from] >= amount;
      if (enough || bug_ == Bug::kFailApplies) {
        s.bank[from] -= amount;
        s.bank[to] += amount;
      }
      return enough ? Done(Outcome::kOk, op.value)
                    : Done(Outcome::kFail, op.value, "insufficient funds");
    }
    return Done(Outcome::kFail, op.value, "unsupported f");
  }

 private:
  Completion Read(const Operation& op) {
    if (workload_ == "set") {
      Value::List elems = s_->set;
      if (bug_ == Bug::kLosesElements && !elems.empty()) elems.pop_back();
      return Done(Outcome::kOk, Value::MakeList(std::move(elems)));
    }
    if (workload_ == "counter") {
      return Done(Outcome::kOk, Value::Int(s_->counter));
    }
    if (workload_ == "bank") {
      Value::Object balances;
      for (std::size_t a = 0; a < s_->bank.size(); ++a) {
        balances.emplace_back(
            (bug_ == Bug::kWrongAccounts ? "b/" : "") + std::to_string(a),
            Value::Int(s_->bank[a]));
      }
      return Done(Outcome::kOk, Value::MakeObject(std::move(balances)));
    }
    auto it = s_->registers.find(op.key.ToJson());
    return Done(Outcome::kOk, it == s_->registers.end() ? Value() : it->second);
  }

  Completion Txn(const Operation& op) {
    std::map<std::string, Value> view = s_->registers;  // the txn's state
    Value::List out;
    int writes = 0;
    for (const Value& m : op.value.as_list()) {
      const std::string f = m.as_list()[0].as_string();
      const std::string k = "t" + m.as_list()[1].ToJson();
      if (f == "r") {
        const auto& from = bug_ == Bug::kNoOwnWrites ? s_->registers : view;
        auto it = from.find(k);
        Value got = it != from.end()             ? it->second
                    : workload_ == "list-append" ? Value::MakeList({})
                                                 : Value();
        out.push_back(Value::MakeList({m.as_list()[0], m.as_list()[1], got}));
        continue;
      }
      Value next = m.as_list()[2];
      if (f == "append") {
        Value::List list;
        if (auto it = view.find(k); it != view.end())
          list = it->second.as_list();
        list.push_back(next);
        next = Value::MakeList(std::move(list));
      }
      view[k] = next;
      if (bug_ == Bug::kNotAtomic && ++writes == 1) s_->registers[k] = next;
      out.push_back(m);
    }
    if (bug_ != Bug::kNotAtomic) s_->registers = view;
    return Done(Outcome::kOk, Value::MakeList(std::move(out)));
  }

  std::shared_ptr<Store> s_;
  Bug bug_;
  std::string workload_;
};

// The checks' failures for `workload` against a client with `bug`.
std::vector<std::string> Run(const std::string& workload, Bug bug,
                             int* total = nullptr) {
  auto store = std::make_shared<Store>();
  MemoryClient a(store, bug, workload);
  MemoryClient b(store, bug, workload);
  ClientChecks k(nullptr);
  if (workload == "register") {
    faultline::cli::RegisterChecks(a, k, 7, 100);
  } else if (workload == "lock") {
    faultline::cli::LockChecks(a, b, k, "L", 1000);
  } else if (workload == "list-append") {
    faultline::cli::ListAppendChecks(a, k, 7, 100);
  } else if (workload == "rw-register") {
    faultline::cli::RwRegisterChecks(a, k, 7, 100);
  } else if (workload == "set") {
    store->set = {Value::Int(5), Value::Int(6)};  // added by someone before
    faultline::cli::SetChecks(a, k, 1'000'000'000);
  } else if (workload == "counter") {
    store->counter = 11;
    faultline::cli::CounterChecks(a, k);
  } else {
    faultline::cli::BankChecks(a, k, 3, 100);
  }
  faultline::cli::StatusChecks(a, k);
  if (total != nullptr) *total = k.total();
  return k.failures();
}

bool Has(const std::vector<std::string>& failures, const std::string& what) {
  return std::any_of(failures.begin(), failures.end(), [&](const auto& f) {
    return f.find(what) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("client checks: an honest client passes every sequence") {
  for (const char* w : {"register", "lock", "list-append", "rw-register", "set",
                        "counter", "bank"}) {
    INFO(w);
    int total = 0;
    auto failures = Run(w, Bug::kNone, &total);
    CHECK(failures.empty());
    CHECK(total >= 6);
  }
}

TEST_CASE("client checks: each broken client fails the check for it") {
  auto reg = Run("register", Bug::kFailApplies);
  CHECK(reg == std::vector<std::string>{
                   "that cas changed nothing (fail means it did not happen)",
                   "a cas with the right expected value answers ok"});
  CHECK(Has(Run("lock", Bug::kNoExclusion),
            "a second client's acquire of the held lock answers fail"));

  auto own = Run("list-append", Bug::kNoOwnWrites);
  CHECK(Has(own, "a read after the txn's own append sees it"));
  CHECK(Has(own, "reads after its appends see them"));
  CHECK_FALSE(Has(own, "a txn reads a fresh key as []"));
  CHECK(Has(Run("rw-register", Bug::kNoOwnWrites),
            "a read after the txn's own write sees it"));
  auto partial = Run("list-append", Bug::kNotAtomic);
  CHECK(partial ==
        std::vector<std::string>{"both appends of one txn are read back by "
                                 "the next"});
  CHECK(Run("rw-register", Bug::kNotAtomic) ==
        std::vector<std::string>{"both writes of one txn are read back by "
                                 "the next"});

  CHECK(Has(Run("set", Bug::kLosesElements),
            "the added element is read back with every element read before"));
  auto counter = Run("counter", Bug::kLosesIncrements);
  CHECK(counter == std::vector<std::string>{
                       "all three adds are read back (exactly 9 more than at "
                       "first)"});
  CHECK(Run("bank", Bug::kWrongAccounts) ==
        std::vector<std::string>{"the read lists exactly the accounts \"0\" "
                                 ".. \"2\", each with an integer balance"});
  CHECK(Run("bank", Bug::kFailApplies) ==
        std::vector<std::string>{
            "that transfer changed nothing (fail means it did not happen)"});
}

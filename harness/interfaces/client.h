// Client: one logical process's connection to the system under test.
// Operations use the history vocabulary (f, key, value; see
// docs/history-format.md), so workloads stay independent of targets.
#pragma once

#include <string>
#include <utility>

#include "checkers/value.h"

namespace faultline::harness {

struct Operation {
  std::string f;          // "read", "write", "cas", ...
  checkers::Value key;    // null for single-object workloads
  checkers::Value value;  // the invocation's argument
};

enum class Outcome { kOk, kFail, kInfo };

struct Completion {
  Outcome type = Outcome::kInfo;
  checkers::Value value;  // ok: the observed result; fail/info: the argument
  std::string error;      // why fail/info, e.g. "timeout"
};

// A completion: the clients' shorthand for {type, value, error}.
inline Completion Done(Outcome type, checkers::Value value,
                       std::string error = "") {
  Completion c;
  c.type = type;
  c.value = std::move(value);
  c.error = std::move(error);
  return c;
}

class Client {
 public:
  virtual ~Client() = default;
  // Performs one operation. Never throws: anything unexpected is kInfo.
  // `fail` only where the system guarantees the op had no effect.
  virtual Completion Invoke(const Operation& op) noexcept = 0;
};

}  // namespace faultline::harness

// The model interface of the linearizability checker: a sequential
// specification of one object (a register, a key-value cell, a mutex). A new
// model is one small file under checkers/models/ plus one line in
// models/registry.cpp.
//
// States are Values (checkers/value.h): equality and hashing come from Value,
// so a model only says how an operation moves the state. The checker interns
// states and caches Step results, so Step is called at most once per distinct
// (state, operation) pair.
//
// Thread-safety: models are immutable after construction; every method is
// const and may be called from many threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/value.h"

namespace faultline::checkers {

// One operation of a history as a model sees it: an invocation paired with
// its completion. Failed operations never reach a model (they had no effect).
struct Operation {
  std::string f;           // operation name from the model's vocabulary
  Value input;             // the invoke's `value`
  Value output;            // the ok completion's `value`; null when !completed
  bool completed = false;  // true for ok; false for info / never completed,
                           // in which case `output` is unknown
};

struct StepResult {
  bool ok = false;  // the operation can take effect in this state with
                    // this output
  Value next;       // the state afterwards (meaningful when ok)
};

// How an operation moves values around, for the unique-value pruning rules
// (docs/checker.md). Only models whose state is a single overwritable value
// (register, cas-register) describe their operations this way; the rules are
// proved for exactly these shapes:
//  - a write sets the state to `produces` regardless of the previous state;
//  - a cas sets it to `produces` only if the state equals `observes`;
//  - a read (completed) observes `observes` and changes nothing.
struct ValueFlow {
  enum class Kind { kRead, kWrite, kCas };
  Kind kind = Kind::kRead;
  std::optional<Value> observes;  // read result / cas expected value
  std::optional<Value> produces;  // written / cas new value
};

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string_view name() const = 0;
  virtual Value Init() const = 0;

  // Applies `op` to `state`. For an incomplete op (op.completed == false)
  // the output is unknown: return ok when the op *can* take effect and the
  // state it leaves; "did not take effect" is handled by the checker.
  virtual StepResult Step(const Value& state, const Operation& op) const = 0;

  // Validates the shape of an operation (known f, value shapes); returns a
  // message when the op does not belong to this model's vocabulary.
  virtual std::optional<std::string> Validate(const Operation& op) const = 0;

  // True when an incomplete op of this kind can never change the state, so
  // it may be dropped (e.g. a read that timed out).
  virtual bool ReadOnly(const Operation& op) const = 0;

  // Partition key of an operation, given the event's `key` field. Operations
  // with different keys act on independent objects (P-compositionality).
  virtual Value PartitionKey(const Value& event_key,
                             const Operation& op) const {
    (void)op;
    return event_key;
  }

  // Equality and hash of states; Value's by default.
  virtual bool StateEqual(const Value& a, const Value& b) const {
    return a == b;
  }
  virtual std::size_t StateHash(const Value& s) const { return s.Hash(); }

  // Human-readable forms, for explanations.
  virtual std::string DescribeOp(const Operation& op) const;
  virtual std::string DescribeState(const Value& state) const;
  // Why `op` cannot take effect in `state`, e.g. "read returned 4 but the
  // register held 7". Only called when Step(state, op) is not ok.
  virtual std::string WhyRejected(const Value& state,
                                  const Operation& op) const;

  // Value flow for the pruning rules, or nullopt when the model does not
  // support them (the default).
  virtual std::optional<ValueFlow> Flow(const Operation& op) const {
    (void)op;
    return std::nullopt;
  }
};

// The model with this name ("register", "cas-register", "kv", "mutex"), or
// nullptr when unknown.
std::unique_ptr<Model> MakeModel(std::string_view name);

// Names accepted by MakeModel, sorted.
std::vector<std::string> ModelNames();

}  // namespace faultline::checkers

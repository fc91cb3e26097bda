// Internal to checkers/txn: which consistency models each anomaly type
// violates, and the strongest models a set of anomalies leaves satisfied.
// The table is in classify.cpp's header comment.
//
// Thread-safety: pure functions over constant tables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::checkers::txn {

// Model indices into ConsistencyModelNames(), strongest first.
enum Model : int {
  kStrictSerializable = 0,
  kSerializable = 1,
  kSnapshotIsolation = 2,
  kRepeatableRead = 3,
  kReadCommitted = 4,
  kReadUncommitted = 5,
  kModelCount = 6,
};

// Bit i set: the anomaly type violates model i. Unknown types violate
// strict-serializable only.
std::uint32_t ViolatedModels(std::string_view anomaly_type);

// The index of `name` in ConsistencyModelNames(), or -1.
int ModelIndex(std::string_view name);

// True when `stronger` implies `weaker` (every model implies itself).
bool Implies(int stronger, int weaker);

// Given the union of violated models: the satisfied models no satisfied
// model is stronger than, and the violated models no violated model is
// weaker than; both strongest first.
std::vector<std::string> StrongestSatisfied(std::uint32_t violated);
std::vector<std::string> WeakestViolated(std::uint32_t violated);

// "a", "a and b", "a, b and c".
std::string JoinAnd(const std::vector<std::string>& items);

}  // namespace faultline::checkers::txn

// Anomaly types → the consistency models they violate (checkers/txn/
// classify.h), following Adya's isolation levels and the model graph Elle
// publishes:
//
//   model               forbids (in addition to every weaker model's list)
//   read-uncommitted    G0, duplicate-elements, incompatible-order,
//                       garbage-read
//   read-committed      G1a, G1b, G1c, internal
//   snapshot-isolation  G-single, lost-update           (allows G2-item)
//   repeatable-read     G-single, G2-item, lost-update  (Adya PL-2.99)
//   serializable        every data-edge cycle (G0 .. G2-item)
//   strict-serializable every "-process" and "-realtime" cycle
//
// Order: strict-serializable > serializable > {snapshot-isolation,
// repeatable-read} > read-committed > read-uncommitted; snapshot isolation
// and repeatable read are incomparable.
#include "checkers/txn/classify.h"

#include "checkers/txn/txn.h"

namespace faultline::checkers::txn {
namespace {

constexpr std::uint32_t Bit(int m) { return 1u << m; }

// Models forbidding what read-committed forbids, and so on upward.
constexpr std::uint32_t kAboveRu =
    Bit(kStrictSerializable) | Bit(kSerializable) | Bit(kSnapshotIsolation) |
    Bit(kRepeatableRead) | Bit(kReadCommitted);
constexpr std::uint32_t kAll = kAboveRu | Bit(kReadUncommitted);
constexpr std::uint32_t kSiAndRr =
    Bit(kStrictSerializable) | Bit(kSerializable) | Bit(kSnapshotIsolation) |
    Bit(kRepeatableRead);
constexpr std::uint32_t kRrUp =
    Bit(kStrictSerializable) | Bit(kSerializable) | Bit(kRepeatableRead);

// weaker_or_equal[m]: the models m implies (m included).
constexpr std::uint32_t kImplied[kModelCount] = {
    kAll,
    kAll & ~Bit(kStrictSerializable),
    Bit(kSnapshotIsolation) | Bit(kReadCommitted) | Bit(kReadUncommitted),
    Bit(kRepeatableRead) | Bit(kReadCommitted) | Bit(kReadUncommitted),
    Bit(kReadCommitted) | Bit(kReadUncommitted),
    Bit(kReadUncommitted),
};

}  // namespace

const std::vector<std::string>& ConsistencyModelNames() {
  static const std::vector<std::string> kNames = {
      "strict-serializable", "serializable",   "snapshot-isolation",
      "repeatable-read",     "read-committed", "read-uncommitted"};
  return kNames;
}

int ModelIndex(std::string_view name) {
  const auto& names = ConsistencyModelNames();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

bool Implies(int stronger, int weaker) {
  return (kImplied[stronger] & Bit(weaker)) != 0;
}

std::uint32_t ViolatedModels(std::string_view t) {
  if (t.ends_with("-realtime") || t.ends_with("-process")) {
    return Bit(kStrictSerializable);
  }
  if (t == "G0" || t == "duplicate-elements" || t == "incompatible-order" ||
      t == "garbage-read") {
    return kAll;
  }
  if (t == "G1a" || t == "G1b" || t == "G1c" || t == "internal") {
    return kAboveRu;
  }
  if (t == "G-single" || t == "lost-update") return kSiAndRr;
  if (t == "G2-item") return kRrUp;
  return Bit(kStrictSerializable);
}

std::vector<std::string> StrongestSatisfied(std::uint32_t violated) {
  std::vector<std::string> out;
  for (int m = 0; m < kModelCount; ++m) {
    if (violated & Bit(m)) continue;
    bool dominated = false;
    for (int s = 0; s < kModelCount; ++s) {
      if (s != m && !(violated & Bit(s)) && Implies(s, m)) dominated = true;
    }
    if (!dominated) out.push_back(ConsistencyModelNames()[m]);
  }
  return out;
}

std::vector<std::string> WeakestViolated(std::uint32_t violated) {
  std::vector<std::string> out;
  for (int m = 0; m < kModelCount; ++m) {
    if (!(violated & Bit(m))) continue;
    bool dominated = false;
    for (int w = 0; w < kModelCount; ++w) {
      if (w != m && (violated & Bit(w)) && Implies(m, w)) dominated = true;
    }
    if (!dominated) out.push_back(ConsistencyModelNames()[m]);
  }
  return out;
}

std::string JoinAnd(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace faultline::checkers::txn

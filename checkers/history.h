// History events and histories, as specified in docs/history-format.md.
// This header is the in-memory form of history.jsonl: the runner builds
// Events and writes them with ToJsonLine; checkers read them with
// ParseHistory (checkers/history_io.h).
//
// Thread-safety: plain values; a const History may be shared across threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkers/value.h"

namespace faultline::checkers {

enum class EventType : std::uint8_t { kInvoke, kOk, kFail, kInfo };

std::string_view ToString(EventType t);  // "invoke", "ok", "fail", "info"
// The inverse of ToString: the type named `name`, or nullopt when `name` is
// not one of "invoke", "ok", "fail", "info".
std::optional<EventType> ParseEventType(std::string_view name);

// The process id used for `"process": "nemesis"`.
inline constexpr std::int64_t kNemesisProcess = -1;

struct Event {
  std::int64_t index = 0;            // 0-based position in the file
  std::optional<std::int64_t> time;  // ns since test start, non-decreasing
  std::int64_t process = 0;          // >= 0, or kNemesisProcess
  EventType type = EventType::kInvoke;
  std::string f;
  Value key;          // null when absent (single-object history)
  Value value;        // argument on invoke, observed result on ok
  std::string error;  // empty when absent
  std::string node;   // empty when absent
  // Any other fields (latency_ns, fence, term, ...), in file order.
  std::vector<std::pair<std::string, Value>> extra;

  bool is_nemesis() const { return process == kNemesisProcess; }
  bool is_invoke() const { return type == EventType::kInvoke; }
  // Extra field by name, or nullptr.
  const Value* FindExtra(std::string_view name) const;
};

using History = std::vector<Event>;

// One JSON object per spec, without the trailing newline. Optional fields
// that are absent (time, key, error, node) are omitted.
std::string ToJsonLine(const Event& e);

}  // namespace faultline::checkers

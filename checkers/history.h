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
  std::int64_t index = 0;  // 0-based position in the file
  // 1-based line of the file where the event starts, set by the readers
  // (checkers/history_io.h); 0 for events built in memory. Messages about
  // an event cite LineOf(event).
  std::int64_t line = 0;
  // ns since test start. faultline writes them non-decreasing; Jepsen's
  // can step back by up to a millisecond (file order is the history's
  // order, see docs/history-formats.md).
  std::optional<std::int64_t> time;
  std::int64_t process = 0;  // >= 0, or kNemesisProcess
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

// The line to cite for `e`: its line in the file, or index + 1 for an event
// built in memory (the line it has in a JSONL file written by ToJsonLine).
inline std::int64_t LineOf(const Event& e) {
  return e.line > 0 ? e.line : e.index + 1;
}

// One JSON object per spec, without the trailing newline. Optional fields
// that are absent (time, key, error, node) are omitted.
std::string ToJsonLine(const Event& e);

}  // namespace faultline::checkers

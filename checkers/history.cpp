// Event helpers and the JSONL writer side of docs/history-format.md.
#include "checkers/history.h"

#include <charconv>

namespace faultline::checkers {
namespace {

void AppendInt(std::string& out, std::int64_t i) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), i);
  out.append(buf, res.ptr);
}

}  // namespace

std::string_view ToString(EventType t) {
  switch (t) {
    case EventType::kInvoke:
      return "invoke";
    case EventType::kOk:
      return "ok";
    case EventType::kFail:
      return "fail";
    case EventType::kInfo:
      return "info";
  }
  return "invoke";
}

std::optional<EventType> ParseEventType(std::string_view name) {
  for (EventType t : {EventType::kInvoke, EventType::kOk, EventType::kFail,
                      EventType::kInfo}) {
    if (ToString(t) == name) return t;
  }
  return std::nullopt;
}

const Value* Event::FindExtra(std::string_view name) const {
  for (const auto& [field, v] : extra) {
    if (field == name) return &v;
  }
  return nullptr;
}

std::string ToJsonLine(const Event& e) {
  std::string out;
  out.reserve(96);
  out += "{\"index\":";
  AppendInt(out, e.index);
  if (e.time) {
    out += ",\"time\":";
    AppendInt(out, *e.time);
  }
  out += ",\"process\":";
  if (e.is_nemesis()) {
    out += "\"nemesis\"";
  } else {
    AppendInt(out, e.process);
  }
  out += ",\"type\":\"";
  out += ToString(e.type);
  out += "\",\"f\":";
  AppendJsonString(out, e.f);
  if (!e.key.is_null()) {
    out += ",\"key\":";
    e.key.AppendJson(out);
  }
  out += ",\"value\":";
  e.value.AppendJson(out);
  if (!e.error.empty()) {
    out += ",\"error\":";
    AppendJsonString(out, e.error);
  }
  if (!e.node.empty()) {
    out += ",\"node\":";
    AppendJsonString(out, e.node);
  }
  for (const auto& [name, v] : e.extra) {
    out += ',';
    AppendJsonString(out, name);
    out += ':';
    v.AppendJson(out);
  }
  out += '}';
  return out;
}

}  // namespace faultline::checkers

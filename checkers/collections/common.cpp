// Helpers shared by the collection checkers; see common.h.
#include "checkers/collections/common.h"

#include "checkers/history_io.h"

namespace faultline::checkers::collections::detail {

std::string Seconds(std::int64_t ns) {
  bool negative = ns < 0;
  std::uint64_t abs = negative ? 0 - static_cast<std::uint64_t>(ns)
                               : static_cast<std::uint64_t>(ns);
  std::uint64_t ms = abs / 1000000;
  std::string frac = std::to_string(ms % 1000);
  while (frac.size() < 3) frac.insert(frac.begin(), '0');
  return (negative ? "-" : "") + std::to_string(ms / 1000) + "." + frac + " s";
}

std::string Where(const Event& e) {
  std::string ev = "event " + std::to_string(e.index);
  if (!e.time) return ev;
  return Seconds(*e.time) + " (" + ev + ")";
}

std::string OpAt(const Event& e) {
  std::string out = "p" + std::to_string(e.process) + "'s " + e.f;
  out += " at " + Where(e);
  return out;
}

std::int64_t BetweenRaw(const Event& earlier, const Event& later) {
  if (earlier.time && later.time) return *later.time - *earlier.time;
  return later.index - earlier.index;
}

std::string Between(const Event& earlier, const Event& later) {
  std::int64_t d = BetweenRaw(earlier, later);
  if (earlier.time && later.time) return Seconds(d);
  return std::to_string(d) + (d == 1 ? " event" : " events");
}

std::string Show(const Value& v) { return v.ToJson(); }

std::optional<std::string> StructureProblem(const History& h) {
  if (auto bad = CheckWellFormed(h, "")) return ToString(*bad);
  return std::nullopt;
}

Verdict Malformed(std::string_view checker, const std::string& problem) {
  Verdict v;
  v.checker = std::string(checker);
  v.validity = Validity::kUnknown;
  v.summary = "malformed history, nothing was checked: " + problem;
  v.explanation = v.summary;
  v.details_json = "{\"malformed\":";
  AppendJsonString(v.details_json, problem);
  v.details_json += "}";
  return v;
}

std::string LineText(const Event& e) {
  return "line " + std::to_string(LineOf(e));
}

void Key(std::string& out, std::string_view name) {
  AppendJsonString(out, name);
  out += ':';
}

void Int(std::string& out, std::string_view name, std::int64_t v) {
  Key(out, name);
  out += std::to_string(v);
}

void Str(std::string& out, std::string_view name, std::string_view v) {
  Key(out, name);
  AppendJsonString(out, v);
}

void EventRef(std::string& out, std::string_view name, const Event& e) {
  Key(out, name);
  out += "{";
  Int(out, "index", e.index);
  out += ",";
  Int(out, "process", e.process);
  out += ",";
  Key(out, "time");
  out += e.time ? std::to_string(*e.time) : "null";
  out += "}";
}

}  // namespace faultline::checkers::collections::detail

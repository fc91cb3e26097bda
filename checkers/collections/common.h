// Helpers shared by the set, bank and counter checkers: how an operation is
// named in an explanation, times in seconds, the malformed-history verdict,
// and a few JSON writers. Internal to checkers/collections/.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "checkers/history.h"
#include "checkers/verdict.h"

namespace faultline::checkers::collections::detail {

// "4.200 s" for a time in ns since the test started (3 decimals, no locale).
std::string Seconds(std::int64_t ns);

// Where event `e` happened: "4.200 s (event 17)", or "event 17" when the
// event has no time.
std::string Where(const Event& e);

// "p3's read at 4.200 s (event 17)": an operation by its process, f, and
// the event named (an invoke or a completion).
std::string OpAt(const Event& e);

// The time between two events: "1.250 s" when both carry a time, else
// "12 events" from their indices. `later` is at or after `earlier`.
std::string Between(const Event& earlier, const Event& later);
// The same in ns (or in events when a time is missing), for JSON.
std::int64_t BetweenRaw(const Event& earlier, const Event& later);

// An element, account or value as a person reads it: JSON text (strings in
// quotes, integers as they are).
std::string Show(const Value& v);

// The structural rules of docs/history-format.md (CheckWellFormed with no
// model): nullopt when they hold, else "line L: ...".
std::optional<std::string> StructureProblem(const History& h);

// The verdict for a history that cannot be checked: unknown, with
// `problem` (which names the line) in the summary.
Verdict Malformed(std::string_view checker, const std::string& problem);

// "line L" of event `e` (its LineOf, history.h), for shape messages.
std::string LineText(const Event& e);

// JSON helpers: `"name":` and a value. The caller adds commas.
void Key(std::string& out, std::string_view name);
void Int(std::string& out, std::string_view name, std::int64_t v);
void Str(std::string& out, std::string_view name, std::string_view v);
// {"index":I,"process":P,"time":T|null} of one event.
void EventRef(std::string& out, std::string_view name, const Event& e);

}  // namespace faultline::checkers::collections::detail

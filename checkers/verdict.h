// The result every checker returns: a three-valued verdict with an
// explanation. Pure value type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace faultline::checkers {

enum class Validity { kValid, kInvalid, kUnknown };

std::string_view ToString(Validity v);  // "valid", "invalid", "unknown"

// Exit code per docs/history-format.md: 0 valid, 1 invalid, 2 unknown.
int ExitCode(Validity v);

struct Verdict {
  std::string checker;  // e.g. "linearizable", "stats"
  Validity validity = Validity::kUnknown;
  std::string summary;       // one line, for the terminal and JUnit
  std::string explanation;   // readable multi-line text; may be empty
  std::string details_json;  // a JSON object for results.json; "{}" if none
};

// invalid wins over unknown wins over valid; an empty list is valid.
Validity Compose(const std::vector<Verdict>& verdicts);

}  // namespace faultline::checkers

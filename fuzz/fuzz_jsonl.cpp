// libFuzzer target: ParseJsonl, CheckWellFormed and the stats functions
// over arbitrary bytes. Besides "no crash, no sanitizer report", it checks
// two properties and aborts when they fail:
//  - an error always names a line >= 1 and a column >= 0;
//  - a history that parsed writes back (ToJsonLine) to text that parses
//    again to the same lines (the writer and reader agree).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "checkers/history.h"
#include "checkers/history_io.h"
#include "checkers/stats.h"

namespace fc = faultline::checkers;

namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "fuzz_jsonl: property violated: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fc::ReadResult r = fc::ParseJsonl(text);
  if (!r.ok) {
    if (r.error.line < 1 || r.error.column < 0 || r.error.message.empty()) {
      Die("error without a position or message");
    }
    return 0;
  }
  for (std::string_view model :
       {"", "register", "cas-register", "kv", "mutex"}) {
    auto err = fc::CheckWellFormed(r.history, model);
    if (err && (err->line < 1 ||
                err->line > static_cast<std::int64_t>(r.history.size()))) {
      Die("well-formedness error outside the history");
    }
  }
  fc::HistoryStats stats = fc::ComputeStats(r.history);
  (void)fc::StatsToJson(stats);
  (void)fc::StatsVerdict(r.history);

  std::string written;
  for (const fc::Event& e : r.history) {
    written += fc::ToJsonLine(e);
    written += '\n';
  }
  fc::ReadResult again = fc::ParseJsonl(written);
  if (!again.ok) Die("written history does not parse");
  if (again.history.size() != r.history.size()) Die("event count changed");
  for (std::size_t i = 0; i < r.history.size(); ++i) {
    if (fc::ToJsonLine(again.history[i]) != fc::ToJsonLine(r.history[i])) {
      Die("event changed in a write/read round trip");
    }
  }
  return 0;
}

// libFuzzer target: the Jepsen EDN and Porcupine log readers (and
// CheckWellFormed on what they read) over arbitrary bytes. Property: an
// error always names a line >= 1.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "checkers/history_io.h"

namespace fc = faultline::checkers;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (auto format :
       {fc::HistoryFormat::kJepsenEdn, fc::HistoryFormat::kPorcupine}) {
    fc::ReadResult r = fc::ParseHistory(text, format);
    if (!r.ok) {
      if (r.error.line < 1 || r.error.message.empty()) {
        std::fprintf(stderr, "fuzz_edn: error without position\n");
        std::abort();
      }
      continue;
    }
    (void)fc::CheckWellFormed(r.history, "cas-register");
  }
  return 0;
}

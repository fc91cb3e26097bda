// Which history reader `faultline check` uses when --format is not given,
// and which one to suggest when the chosen reader fails. Pure: callers pass
// the file's name and text.
//
// Detection (docs/history-formats.md, "Choosing the format"):
//   1. the extension: .jsonl and .json are faultline JSONL, .edn is Jepsen
//      EDN, .log is a Porcupine (Jepsen) log;
//   2. otherwise (.txt, no extension, anything else) the first non-blank
//      line: a jepsen.util log line is porcupine; `{"` (JSON object) is
//      jsonl; an EDN map `{:` is porcupine for a .txt file (Porcupine's kv
//      logs) and edn otherwise; `[`, `(`, `;` or `#` is edn;
//   3. jsonl when nothing decides.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "checkers/history_io.h"

namespace faultline::cli {

struct FormatChoice {
  checkers::HistoryFormat format = checkers::HistoryFormat::kJsonl;
  std::string reason;  // e.g. "the extension .edn", "its first line"
};

FormatChoice DetectHistoryFormat(std::string_view path, std::string_view text);

// "jsonl", "edn", "porcupine": the --format names.
std::string_view FormatName(checkers::HistoryFormat format);
std::optional<checkers::HistoryFormat> FormatFromName(std::string_view name);

// A format other than `failed` whose reader reads the beginning of `text`
// (its first 64 KiB, cut at a line boundary) without an error and finds at
// least one event, tried in the order jsonl, edn, porcupine; nullopt when
// none does. Detection too looks at the first 64 KiB only.
std::optional<checkers::HistoryFormat> SuggestFormat(
    std::string_view text, checkers::HistoryFormat failed);

}  // namespace faultline::cli

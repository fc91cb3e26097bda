#include "cli/history_format.h"

#include <array>
#include <cctype>

namespace faultline::cli {
namespace {

using checkers::HistoryFormat;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The extension of the last path component, lower case, with its dot; "".
std::string Extension(std::string_view path) {
  auto slash = path.find_last_of('/');
  std::string_view base =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto dot = base.find_last_of('.');
  if (dot == std::string_view::npos || dot == 0) return "";
  return Lower(base.substr(dot));
}

// Detection and suggestions look at this much of the file only, so a
// large file is not read to decide how to read it.
constexpr std::size_t kSampleBytes = 64u << 10;

// `text` cut to kSampleBytes at a line boundary (whole when shorter).
std::string_view Sample(std::string_view text) {
  if (text.size() <= kSampleBytes) return text;
  std::string_view head = text.substr(0, kSampleBytes);
  std::size_t nl = head.rfind('\n');
  return nl == std::string_view::npos ? head : head.substr(0, nl + 1);
}

// The first line with something other than whitespace, left-trimmed (of
// the text's first kSampleBytes).
std::string_view FirstLine(std::string_view text) {
  text = text.substr(0, kSampleBytes);
  std::size_t pos = 0;
  // A UTF-8 byte order mark is not content.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    std::size_t first = line.find_first_not_of(" \t\r\f\v");
    if (first != std::string_view::npos) return line.substr(first);
    pos = end + 1;
  }
  return {};
}

}  // namespace

std::string_view FormatName(HistoryFormat format) {
  switch (format) {
    case HistoryFormat::kJepsenEdn:
      return "edn";
    case HistoryFormat::kPorcupine:
      return "porcupine";
    case HistoryFormat::kJsonl:
      break;
  }
  return "jsonl";
}

std::optional<HistoryFormat> FormatFromName(std::string_view name) {
  if (name == "jsonl") return HistoryFormat::kJsonl;
  if (name == "edn") return HistoryFormat::kJepsenEdn;
  if (name == "porcupine") return HistoryFormat::kPorcupine;
  return std::nullopt;
}

FormatChoice DetectHistoryFormat(std::string_view path, std::string_view text) {
  const std::string ext = Extension(path);
  if (ext == ".jsonl" || ext == ".json")
    return {HistoryFormat::kJsonl, "the extension " + ext};
  if (ext == ".edn") return {HistoryFormat::kJepsenEdn, "the extension .edn"};
  if (ext == ".log") return {HistoryFormat::kPorcupine, "the extension .log"};
  std::string_view line = FirstLine(text);
  const std::string why = "its first line";
  if (line.find("jepsen.util - ") != std::string_view::npos)
    return {HistoryFormat::kPorcupine, why + " (a Jepsen log line)"};
  if (line.size() >= 2 && line[0] == '{') {
    std::size_t next = line.find_first_not_of(" \t", 1);
    char c = next == std::string_view::npos ? '\0' : line[next];
    if (c == '"' || c == '}') return {HistoryFormat::kJsonl, why + " (JSON)"};
    if (c == ':') {
      if (ext == ".txt")
        return {HistoryFormat::kPorcupine, why + " (EDN maps in a .txt file)"};
      return {HistoryFormat::kJepsenEdn, why + " (an EDN map)"};
    }
  }
  if (!line.empty() &&
      (line[0] == '[' || line[0] == '(' || line[0] == ';' || line[0] == '#'))
    return {HistoryFormat::kJepsenEdn, why + " (EDN)"};
  return {HistoryFormat::kJsonl, "the default"};
}

std::optional<HistoryFormat> SuggestFormat(std::string_view text,
                                           HistoryFormat failed) {
  constexpr std::array<HistoryFormat, 3> kOrder = {HistoryFormat::kJsonl,
                                                   HistoryFormat::kJepsenEdn,
                                                   HistoryFormat::kPorcupine};
  const std::string_view sample = Sample(text);
  for (HistoryFormat f : kOrder) {
    if (f == failed) continue;
    std::size_t events = 0;
    checkers::ReadResult r = checkers::StreamHistory(
        sample, f, [&](const checkers::Event&, std::size_t) {
          ++events;
          return true;
        });
    if (r.ok && events > 0) return f;
  }
  return std::nullopt;
}

}  // namespace faultline::cli

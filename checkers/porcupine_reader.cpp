// Reader for the history logs in Porcupine's test data
// (github.com/anishathalye/porcupine, test_data/): see history_io.h and
// docs/history-formats.md.
//
// Line kinds:
//  - Jepsen log lines "INFO  jepsen.util - P\t:TYPE\t:F\tVALUE" where P is a
//    process number or :nemesis and VALUE an EDN form. When a fail/info
//    completion's VALUE is a bare keyword (":timed-out") it is the error:
//    the event gets error "timed-out" and, as the spec asks, the value of
//    its invocation.
//  - EDN op maps, one per line ("{:process 0, :type :invoke, :f :get,
//    :key \"6\", :value nil}"), as in test_data/kv/.
//  - Blank lines and any other line (log noise) are skipped; one warning
//    counts the skipped non-blank lines. Text whose non-blank lines are all
//    skipped (not one event) is an error at the first of them: it is not a
//    Porcupine log. Empty or blank text is an empty history.
// A jepsen.util line whose fields are malformed, or a malformed op map, is
// an error. The last line, when unterminated and cut short, is ignored with
// a warning. Events get index = position; there are no times. A line longer
// than 1 MiB is an error, and so are 100,000 non-event lines before the
// first event (neither is a Porcupine log), so a large file of something
// else is refused without being read to its end.
#include <charconv>
#include <cstring>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "checkers/edn_parser.h"
#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

constexpr std::string_view kMarker = "jepsen.util - ";
// Lines longer than this are refused; before the first event, this many
// lines that are not events end the reading (the text is not a log).
constexpr std::size_t kMaxLine = 1u << 20;
constexpr std::int64_t kMaxNoiseFirst = 100000;

std::string_view Trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Splits off the next tab-separated field.
std::string_view NextField(std::string_view& rest) {
  std::size_t tab = rest.find('\t');
  std::string_view field = rest.substr(0, tab);
  rest =
      tab == std::string_view::npos ? std::string_view() : rest.substr(tab + 1);
  return Trim(field);
}

bool ParseType(std::string_view s, EventType& t) {
  if (s == ":invoke") {
    t = EventType::kInvoke;
  } else if (s == ":ok") {
    t = EventType::kOk;
  } else if (s == ":fail") {
    t = EventType::kFail;
  } else if (s == ":info") {
    t = EventType::kInfo;
  } else {
    return false;
  }
  return true;
}

struct LineFailure {
  std::size_t column = 0;  // 0-based within the line
  std::string message;
  bool truncated = false;
};

// Parses one EDN form that must fill all of `text`.
bool ParseWholeForm(std::string_view text, Value& out, LineFailure& fail) {
  EdnParser p(text);
  p.SkipSpace();
  if (!p.ParseForm(out)) {
    fail.column = p.error_offset();
    fail.message = p.error();
    fail.truncated = p.hit_end();
    return false;
  }
  p.SkipSpace();
  if (!p.at_end()) {
    fail.column = p.pos();
    fail.message = "unexpected text after the value";
    return false;
  }
  return true;
}

// Returns 1 when `line` is a Jepsen op log line parsed into `e`, 0 when it
// is not an op line, -1 on error.
int ParseLogLine(std::string_view line, Event& e, LineFailure& fail) {
  std::size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return 0;
  std::size_t base = at + kMarker.size();
  std::string_view rest = line.substr(base);
  std::string_view proc = NextField(rest);
  std::string_view type = NextField(rest);
  EventType t;
  if (!ParseType(type, t)) return 0;  // some other jepsen.util message
  std::string_view f = NextField(rest);
  std::string_view value_text = Trim(rest);
  e.type = t;
  if (proc == ":nemesis") {
    e.process = kNemesisProcess;
  } else {
    std::int64_t p = 0;
    auto r = std::from_chars(proc.data(), proc.data() + proc.size(), p);
    if (r.ec != std::errc() || r.ptr != proc.data() + proc.size() || p < 0) {
      fail.column = base;
      fail.message = "expected a process number or :nemesis after \"" +
                     std::string(kMarker) + "\", not \"" + std::string(proc) +
                     "\"";
      return -1;
    }
    e.process = p;
  }
  if (f.size() < 2 || f[0] != ':') {
    fail.column = base;
    fail.message =
        "expected the operation as a keyword (e.g. :read) in the "
        "third field, not \"" +
        std::string(f) + "\"";
    return -1;
  }
  e.f = std::string(f.substr(1));
  if (value_text.empty()) return 1;  // no value: null
  LineFailure inner;
  if (!ParseWholeForm(value_text, e.value, inner)) {
    if (e.is_nemesis()) {  // free-form nemesis text: keep it verbatim
      e.value = Value::String(std::string(value_text));
      return 1;
    }
    fail = std::move(inner);
    fail.column += static_cast<std::size_t>(value_text.data() - line.data());
    return -1;
  }
  return 1;
}

}  // namespace

ReadResult StreamPorcupineLog(std::string_view text, const EventSink& sink) {
  ReadResult result;
  // The outstanding invoke per client process (its f, value and key), to
  // fill in values of fail/info completions that only name an error.
  struct Invoke {
    std::string f;
    Value value;
    Value key;
  };
  std::unordered_map<std::int64_t, Invoke> outstanding;
  std::size_t pos = ByteOrderMarkLength(text);
  std::int64_t line_no = 0;
  std::int64_t skipped = 0;
  std::int64_t first_skipped = 0;
  std::int64_t events = 0;
  Event e;
  auto not_a_log = [&](std::string_view what) {
    result.ok = false;
    result.error.line = first_skipped;
    result.error.column = 1;
    result.error.message =
        "no history event in " + std::string(what) +
        ", and this is the first: expected Jepsen log "
        "lines (\"INFO  jepsen.util - 0\\t:invoke\\t:read\\tnil\", tab-"
        "separated) or EDN op maps, one per line ({:process 0, :type "
        ":invoke, :f :read, :value nil}); a faultline history needs "
        "--format jsonl, a Jepsen history.edn --format edn";
    return result;
  };
  while (pos < text.size()) {
    ++line_no;
    // Porcupine's lines are short: one longer than kMaxLine is refused
    // without looking for its end.
    const std::size_t window = std::min(text.size() - pos, kMaxLine + 1);
    const char* nl =
        static_cast<const char*>(std::memchr(text.data() + pos, '\n', window));
    bool terminated = nl != nullptr;
    if (!terminated && window > kMaxLine) {
      result.ok = false;
      result.error.line = line_no;
      result.error.column = 1;
      result.error.message =
          "a line longer than 1 MiB: not a Porcupine log line (a Jepsen log "
          "line or one EDN op map)";
      return result;
    }
    std::size_t end =
        terminated ? static_cast<std::size_t>(nl - text.data()) : text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = terminated ? end + 1 : end;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view trimmed = Trim(line);
    if (trimmed.empty()) continue;

    e = Event{};
    LineFailure fail;
    int kind = 0;
    bool from_log = false;
    if (trimmed.front() == '{') {
      Value map;
      if (ParseWholeForm(line, map, fail)) {
        std::string err = EventFromEdnMap(map, e, nullptr);
        if (err.empty()) {
          kind = 1;
        } else {
          fail.column = static_cast<std::size_t>(trimmed.data() - line.data());
          fail.message = err;
          kind = -1;
        }
      } else {
        kind = -1;
      }
    } else {
      kind = ParseLogLine(line, e, fail);
      from_log = true;
    }
    if (kind == 0) {
      if (skipped++ == 0) first_skipped = line_no;
      // Noise is tolerated, but not without end before the first event.
      if (events == 0 && skipped >= kMaxNoiseFirst) {
        return not_a_log("the first " + std::to_string(skipped) +
                         " non-blank lines");
      }
      continue;
    }
    if (kind < 0) {
      if (!terminated && fail.truncated) {
        result.warnings.push_back("line " + std::to_string(line_no) +
                                  ": ignored a truncated last line (" +
                                  fail.message + ")");
        break;
      }
      result.ok = false;
      result.error.line = line_no;
      result.error.column = static_cast<std::int64_t>(fail.column) + 1;
      result.error.message = std::move(fail.message);
      if (trimmed.starts_with("{\"")) {
        result.error.message +=
            "; expected an EDN op map ({:process 0, :type :invoke, ...}), "
            "and this line looks like JSON: a faultline history needs "
            "--format jsonl";
      }
      return result;
    }
    e.index = events++;
    e.line = line_no;
    if (!e.is_nemesis()) {
      if (e.is_invoke()) {
        outstanding[e.process] = Invoke{e.f, e.value, e.key};
      } else if (auto it = outstanding.find(e.process);
                 it != outstanding.end()) {
        const Invoke& inv = it->second;
        // ":info :write :timed-out": the value names the error.
        if (from_log && e.type != EventType::kOk && e.value.is_string() &&
            inv.f == e.f && !(inv.value == e.value)) {
          std::string_view raw = Trim(line.substr(line.rfind('\t') + 1));
          if (!raw.empty() && raw.front() == ':') {
            e.error = e.value.as_string();
            e.value = inv.value;
          }
        }
        if (e.key.is_null()) e.key = inv.key;
        outstanding.erase(it);
      }
    }
    if (!sink(e, pos)) {
      result.stopped = true;
      return result;
    }
  }
  if (events == 0 && skipped > 0) {
    // Text with lines but not one event is not a Porcupine log (a README, a
    // JSONL history): reading it as an empty history would check nothing.
    return not_a_log(std::to_string(skipped) + " non-blank line(s)");
  }
  if (skipped > 0) {
    result.warnings.push_back(
        "skipped " + std::to_string(skipped) +
        " line(s) that are not history events, the first at line " +
        std::to_string(first_skipped));
  }
  return result;
}

ReadResult ParsePorcupineLog(std::string_view text) {
  History history;
  ReadResult result =
      StreamPorcupineLog(text, [&](const Event& e, std::size_t) {
        history.push_back(e);
        return true;
      });
  if (result.ok) result.history = std::move(history);
  return result;
}

}  // namespace faultline::checkers

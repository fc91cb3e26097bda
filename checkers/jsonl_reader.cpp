// The strict history.jsonl reader (docs/history-format.md).
//
// Decisions beyond the spec (also in docs/history-formats.md):
// - Lines end with "\n"; a "\r" before it is dropped (CRLF files read fine).
// - Blank (whitespace-only) lines are skipped; they do not count as events,
//   so `index` counts only event lines. One warning reports how many.
// - The last line, when it has no terminating newline and the JSON in it is
//   cut short (the text ends inside a value), is ignored with a warning: it
//   is what a killed writer leaves. Any other malformed line, including a
//   complete-but-wrong last line, is an error.
// - Optional fields (time, key, error, node) may be null, meaning absent.
// - Columns are 1-based byte offsets within the line.
// - A UTF-8 byte-order mark at the start is skipped (line 1's columns count
//   from after it).
// - An integer literal beyond 64 bits is an error that says so (it would
//   lose precision as a double).
// - A line longer than kProbeBytes is first parsed on its first kProbeBytes:
//   one already wrong there is rejected without looking for its end, so
//   1 GB of garbage without a newline is not read to its end.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

// Bits for required/duplicate bookkeeping of the known fields.
enum FieldBit : unsigned {
  kIndex = 1u << 0,
  kTime = 1u << 1,
  kProcess = 1u << 2,
  kType = 1u << 3,
  kF = 1u << 4,
  kKey = 1u << 5,
  kValue = 1u << 6,
  kError = 1u << 7,
  kNode = 1u << 8,
};

FieldBit FieldOf(std::string_view name) {
  switch (name.size()) {
    case 1:
      return name == "f" ? kF : FieldBit{};
    case 3:
      return name == "key" ? kKey : FieldBit{};
    case 4:
      if (name == "time") return kTime;
      if (name == "type") return kType;
      if (name == "node") return kNode;
      return FieldBit{};
    case 5:
      if (name == "index") return kIndex;
      if (name == "value") return kValue;
      if (name == "error") return kError;
      return FieldBit{};
    case 7:
      return name == "process" ? kProcess : FieldBit{};
    default:
      return FieldBit{};
  }
}

// Shares one Value per distinct string key across events: a history has
// few keys and many events, and Values share their string node. Bounded,
// so a file of distinct keys costs no more than without it.
class KeyCache {
 public:
  Value Get(std::string_view text) {
    std::uint64_t h = HashOf(text);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.value.is_null()) {
        Value v = Value::String(std::string(text));
        if (count_ < kMaxKeys) {
          slot.hash = h;
          slot.value = v;
          if (++count_ * 2 > slots_.size()) Grow();
        }
        return v;
      }
      if (slot.hash == h && slot.value.as_string() == text) return slot.value;
    }
  }

 private:
  static constexpr std::size_t kMaxKeys = 1 << 16;
  struct Slot {
    std::uint64_t hash = 0;
    Value value;  // a string, or null when the slot is empty
  };
  // FNV-1a, then a multiply to spread the low bits (keys are short).
  static std::uint64_t HashOf(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (char c : s) {
      h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    return (h ^ (h >> 32)) * 0x9e3779b97f4a7c15ULL >> 16;
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    std::size_t mask = slots_.size() - 1;
    for (Slot& s : old) {
      if (s.value.is_null()) continue;
      std::size_t i = s.hash & mask;
      while (!slots_[i].value.is_null()) i = (i + 1) & mask;
      slots_[i] = std::move(s);
    }
  }
  std::vector<Slot> slots_ = std::vector<Slot>(64);
  std::size_t count_ = 0;
};

struct LineError {
  std::size_t offset = 0;  // 0-based byte offset in the line
  std::string message;
  bool truncated = false;  // the line ends inside a value
};

class EventParser {
 public:
  EventParser(std::string_view line, std::int64_t expected_index,
              KeyCache& keys)
      : line_(line), p_(line), expected_index_(expected_index), keys_(keys) {
    p_.set_exact_integers(true);
  }

  bool Parse(Event& e, LineError& err);

 private:
  bool FromParser(LineError& err) {
    err.offset = p_.error_offset();
    err.message = p_.error();
    err.truncated = p_.hit_end();
    return false;
  }
  bool Fail(LineError& err, std::size_t offset, std::string message) {
    err.offset = offset;
    err.message = std::move(message);
    err.truncated = false;
    return false;
  }
  bool ParseField(std::string_view name, FieldBit bit, std::size_t at, Event& e,
                  LineError& err);
  // Reads a string literal (p_ at '"'). Fast path: plain ASCII without
  // escapes is returned as a view into the line; otherwise the decoded text
  // is stored in `buffer` and viewed.
  bool ReadString(std::string& buffer, std::string_view& out, LineError& err);
  // Reads a number or other value where an integer is expected. On return
  // *is_int says whether it was an integer (value in *out); when not,
  // scratch_ holds the value for the error message.
  bool ReadInt(std::int64_t* out, bool* is_int, LineError& err);

  std::string_view line_;
  JsonParser p_;
  std::int64_t expected_index_;
  KeyCache& keys_;
  Value scratch_;
  std::string name_;
  std::string type_;
  std::vector<std::size_t> late_extras_;  // name offsets past the 16th extra
};

bool EventParser::ReadString(std::string& buffer, std::string_view& out,
                             LineError& err) {
  std::size_t start = p_.pos() + 1;
  for (std::size_t i = start; i < line_.size(); ++i) {
    auto c = static_cast<unsigned char>(line_[i]);
    if (c == '"') {
      out = line_.substr(start, i - start);
      p_.set_pos(i + 1);
      return true;
    }
    if (c == '\\' || c < 0x20 || c >= 0x80) break;
  }
  if (!p_.ParseString(buffer)) return FromParser(err);
  out = buffer;
  return true;
}

bool EventParser::ReadInt(std::int64_t* out, bool* is_int, LineError& err) {
  // Fast path: -?[0-9]{1,18} not followed by a fraction or exponent.
  std::size_t i = p_.pos();
  bool neg = i < line_.size() && line_[i] == '-';
  if (neg) ++i;
  std::size_t digits_at = i;
  std::int64_t v = 0;
  while (i < line_.size() && line_[i] >= '0' && line_[i] <= '9' &&
         i - digits_at < 18) {
    v = v * 10 + (line_[i] - '0');
    ++i;
  }
  std::size_t n = i - digits_at;
  bool plain = n > 0 && !(n > 1 && line_[digits_at] == '0') &&
               (i >= line_.size() ||
                (line_[i] != '.' && line_[i] != 'e' && line_[i] != 'E' &&
                 !(line_[i] >= '0' && line_[i] <= '9')));
  if (plain && i < line_.size()) {
    p_.set_pos(i);
    *out = neg ? -v : v;
    *is_int = true;
    return true;
  }
  if (!p_.ParseValue(scratch_)) return FromParser(err);
  *is_int = scratch_.is_int();
  if (*is_int) *out = scratch_.as_int();
  return true;
}

bool EventParser::ParseField(std::string_view name, FieldBit bit,
                             std::size_t at, Event& e, LineError& err) {
  switch (bit) {
    case kIndex: {
      std::int64_t v = 0;
      bool is_int = false;
      if (!ReadInt(&v, &is_int, err)) return false;
      if (!is_int) {
        return Fail(err, at,
                    "\"index\" must be an integer (the event's "
                    "0-based position in the file), not " +
                        std::string(KindName(scratch_)));
      }
      if (v != expected_index_) {
        return Fail(err, at,
                    "\"index\" is " + std::to_string(v) +
                        " but this is event number " +
                        std::to_string(expected_index_) +
                        " (0-based, blank lines not counted); indexes must "
                        "count the events from 0 without gaps: renumber the "
                        "file or fix the writer");
      }
      e.index = v;
      return true;
    }
    case kTime: {
      std::int64_t v = 0;
      bool is_int = false;
      if (!ReadInt(&v, &is_int, err)) return false;
      if (!is_int && scratch_.is_null()) return true;
      if (!is_int || v < 0) {
        return Fail(err, at,
                    "\"time\" must be an integer >= 0 "
                    "(nanoseconds since the test started), not " +
                        (is_int ? std::string("negative")
                                : std::string(KindName(scratch_))) +
                        "; omit the field when unknown");
      }
      e.time = v;
      return true;
    }
    case kProcess: {
      std::int64_t v = 0;
      bool is_int = false;
      if (!ReadInt(&v, &is_int, err)) return false;
      if (is_int && v >= 0) {
        e.process = v;
        return true;
      }
      if (!is_int && scratch_.is_string() &&
          scratch_.as_string() == "nemesis") {
        e.process = kNemesisProcess;
        return true;
      }
      return Fail(
          err, at,
          "\"process\" must be an integer >= 0 or the "
          "string \"nemesis\", not " +
              (is_int ? std::string("a negative integer") : scratch_.ToJson()));
    }
    case kType: {
      if (p_.peek() != '"') {
        if (!p_.ParseValue(scratch_)) return FromParser(err);
        return Fail(err, at,
                    "\"type\" must be one of the strings \"invoke\", "
                    "\"ok\", \"fail\", \"info\", not " +
                        std::string(KindName(scratch_)));
      }
      std::string_view t;
      if (!ReadString(type_, t, err)) return false;
      if (auto parsed = ParseEventType(t)) {
        e.type = *parsed;
      } else {
        std::string shown;
        AppendJsonString(shown, t);
        return Fail(err, at,
                    "\"type\" must be \"invoke\", \"ok\", \"fail\" "
                    "or \"info\" (lower case), not " +
                        shown);
      }
      return true;
    }
    case kF:
      if (p_.peek() != '"') {
        if (!p_.ParseValue(scratch_)) return FromParser(err);
        return Fail(err, at,
                    "\"f\" must be a string (the operation name, "
                    "e.g. \"read\"), not " +
                        std::string(KindName(scratch_)));
      }
      {
        std::string_view f;
        if (!ReadString(type_, f, err)) return false;
        e.f.assign(f);
      }
      if (e.f.empty()) {
        return Fail(err, at, "\"f\" must be a non-empty operation name");
      }
      return true;
    case kKey:
      if (p_.peek() == '"') {
        std::string_view k;
        if (!ReadString(type_, k, err)) return false;
        e.key = keys_.Get(k);
        return true;
      }
      if (!p_.ParseValue(e.key)) return FromParser(err);
      if (!e.key.is_null() && !e.key.is_string() && !e.key.is_int()) {
        return Fail(err, at,
                    "\"key\" must be a string, an integer or null, "
                    "not " +
                        std::string(KindName(e.key)));
      }
      return true;
    case kValue: {
      // Fast paths for the common scalars; e.value starts out null.
      std::string_view rest = line_.substr(p_.pos());
      if (rest.substr(0, 4) == "null" && (rest.size() == 4 || rest[4] == ',' ||
                                          rest[4] == '}' || rest[4] == ' ')) {
        p_.set_pos(p_.pos() + 4);
        return true;
      }
      char c = p_.peek();
      if (c == '-' || (c >= '0' && c <= '9')) {
        std::int64_t v = 0;
        bool is_int = false;
        if (!ReadInt(&v, &is_int, err)) return false;
        e.value = is_int ? Value::Int(v) : std::move(scratch_);
        return true;
      }
      if (!p_.ParseValue(e.value)) return FromParser(err);
      return true;
    }
    case kError:
    case kNode: {
      std::string& target = bit == kError ? e.error : e.node;
      if (p_.peek() == '"') {
        if (!p_.ParseString(target)) return FromParser(err);
        return true;
      }
      if (!p_.ParseValue(scratch_)) return FromParser(err);
      if (scratch_.is_null()) return true;
      return Fail(err, at,
                  "\"" + std::string(name) +
                      "\" must be a string (or null, or absent), "
                      "not " +
                      std::string(KindName(scratch_)));
    }
  }
  // Unknown field (duplicates were rejected by Parse): goes to extra.
  Value v;
  if (!p_.ParseValue(v)) return FromParser(err);
  e.extra.emplace_back(std::string(name), std::move(v));
  return true;
}

bool EventParser::Parse(Event& e, LineError& err) {
  p_.SkipSpace();
  if (p_.peek() != '{') {
    return Fail(err, p_.pos(),
                "each line must be one JSON object (an event, starting with "
                "'{'); see docs/history-format.md");
  }
  p_.set_pos(p_.pos() + 1);
  unsigned seen = 0;
  p_.SkipSpace();
  if (p_.peek() == '}') {
    p_.set_pos(p_.pos() + 1);
  } else {
    while (true) {
      p_.SkipSpace();
      if (p_.at_end()) {
        Fail(err, line_.size(), "the line ends inside the event object");
        err.truncated = true;
        return false;
      }
      std::size_t name_at = p_.pos();
      if (p_.peek() != '"') {
        return Fail(err, name_at,
                    "expected a field name in double quotes, e.g. \"f\"");
      }
      std::string_view name;
      if (!ReadString(name_, name, err)) return false;
      p_.SkipSpace();
      if (p_.at_end()) {
        Fail(err, line_.size(), "the line ends after a field name");
        err.truncated = true;
        return false;
      }
      if (p_.peek() != ':') {
        return Fail(err, p_.pos(), "expected ':' after the field name");
      }
      p_.set_pos(p_.pos() + 1);
      p_.SkipSpace();
      std::size_t value_at = p_.pos();
      FieldBit bit = FieldOf(name);
      if (bit == FieldBit{}) {
        if (e.extra.size() < kLinearDuplicateCheck) {
          for (const auto& field : e.extra) {
            if (field.first == name) {
              return Fail(err, name_at,
                          "duplicate field \"" + std::string(name) +
                              "\"; each field may appear once per event");
            }
          }
        } else {
          late_extras_.push_back(name_at);
        }
      } else {
        if ((seen & bit) != 0) {
          return Fail(err, name_at,
                      "duplicate field \"" + std::string(name) +
                          "\"; each field may appear once per "
                          "event");
        }
        seen |= bit;
      }
      if (!ParseField(name, bit, value_at, e, err)) return false;
      p_.SkipSpace();
      if (p_.at_end()) {
        Fail(err, line_.size(),
             "the line ends inside the event object "
             "(missing '}')");
        err.truncated = true;
        return false;
      }
      char c = p_.peek();
      if (c == ',') {
        p_.set_pos(p_.pos() + 1);
        continue;
      }
      if (c == '}') {
        p_.set_pos(p_.pos() + 1);
        break;
      }
      return Fail(err, p_.pos(), "expected ',' or '}' after a field value");
    }
  }
  std::size_t close = p_.pos() - 1;
  if (!late_extras_.empty()) {
    std::size_t dup = FirstDuplicateField(e.extra);
    if (dup < e.extra.size()) {
      return Fail(err,
                  dup >= kLinearDuplicateCheck
                      ? late_extras_[dup - kLinearDuplicateCheck]
                      : close,
                  "duplicate field \"" + e.extra[dup].first +
                      "\"; each field may appear once per event");
    }
  }
  p_.SkipSpace();
  if (!p_.at_end()) {
    return Fail(err, p_.pos(),
                "unexpected text after the event object; "
                "write exactly one JSON object per line");
  }
  struct Required {
    FieldBit bit;
    const char* what;
  };
  static constexpr Required kRequired[] = {
      {kIndex, "\"index\" (int: the event's 0-based position)"},
      {kProcess, "\"process\" (int >= 0 or \"nemesis\")"},
      {kType, "\"type\" (\"invoke\", \"ok\", \"fail\" or \"info\")"},
      {kF, "\"f\" (string: the operation name)"},
      {kValue, "\"value\" (any JSON; null when there is none)"},
  };
  for (const Required& r : kRequired) {
    if ((seen & r.bit) == 0) {
      return Fail(err, close,
                  std::string("missing required field ") + r.what +
                      "; every event needs index, process, type, f and "
                      "value");
    }
  }
  return true;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

// Calls fn(line, terminated) for each line of `text` (memchr is
// vectorized); stops when fn returns false. A "\r" before "\n" is kept.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const char* nl = static_cast<const char*>(
        std::memchr(text.data() + pos, '\n', text.size() - pos));
    bool terminated = nl != nullptr;
    std::size_t end =
        terminated ? static_cast<std::size_t>(nl - text.data()) : text.size();
    if (!fn(text.substr(pos, end - pos), terminated)) return;
    pos = terminated ? end + 1 : end;
  }
}

// Lines longer than this are parsed on their first kProbeBytes before
// their end is looked for (ParseLines).
constexpr std::size_t kProbeBytes = 1u << 20;

// The next line of `text` from `pos`: [pos, *end) without the newline;
// *terminated says whether a newline ends it. When no newline comes within
// kProbeBytes, probe(first kProbeBytes of the line) is asked first and a
// false answer stops the search there (*end = pos + kProbeBytes, not
// terminated): the caller has its error without the rest being read.
template <typename Probe>
void NextLine(std::string_view text, std::size_t pos, std::size_t* end,
              bool* terminated, Probe&& probe) {
  const std::size_t rest = text.size() - pos;
  const std::size_t window = std::min(rest, kProbeBytes);
  const char* nl =
      static_cast<const char*>(std::memchr(text.data() + pos, '\n', window));
  if (nl == nullptr && rest > window) {
    if (!probe(text.substr(pos, window))) {
      *end = pos + window;
      *terminated = false;
      return;
    }
    nl = static_cast<const char*>(
        std::memchr(text.data() + pos + window, '\n', rest - window));
  }
  *terminated = nl != nullptr;
  *end = *terminated ? static_cast<std::size_t>(nl - text.data()) : text.size();
}

std::size_t CountEventLines(std::string_view text) {
  std::size_t n = 0;
  ForEachLine(text, [&](std::string_view line, bool) {
    if (!IsBlank(line)) ++n;  // as ParseRange decides (IsBlank skips \r)
    return true;
  });
  return n;
}

// What parsing one run of whole lines found. Lines and indexes absolute.
struct RangeResult {
  std::size_t parsed = 0;  // events stored in the slots
  std::int64_t lines = 0;  // lines seen
  std::int64_t blank = 0;
  std::int64_t first_blank = 0;
  bool failed = false;
  bool stopped = false;  // the sink asked to stop
  ReadError error;
  std::string truncated_warning;  // non-empty: the last line was ignored
};

// Parses the lines of `text` (starting at line line_base + 1 and event
// index_base): event number n (0-based, in this range) is parsed into
// slot(n), a fresh Event, and done(that event, offset just past its line)
// is called once it parsed; parsing stops (r.stopped) when done returns
// false.
template <typename Slot, typename Done>
RangeResult ParseLines(std::string_view text, std::int64_t line_base,
                       std::int64_t index_base, Slot&& slot, Done&& done) {
  RangeResult r;
  LineError err;
  KeyCache keys;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::int64_t line_no = line_base + ++r.lines;
    auto index = index_base + static_cast<std::int64_t>(r.parsed);
    std::size_t end = 0;
    bool terminated = false;
    // A line of more than kProbeBytes: an object already malformed in its
    // first kProbeBytes (not merely cut short there) is the error.
    NextLine(text, pos, &end, &terminated, [&](std::string_view head) {
      Event scratch;
      EventParser probe(head, index, keys);
      return probe.Parse(scratch, err) || err.truncated;
    });
    std::string_view line = text.substr(pos, end - pos);
    const std::size_t next = terminated ? end + 1 : end;
    if (!terminated && end < text.size()) {  // the probe failed
      r.failed = true;
      r.error.line = line_no;
      r.error.column = static_cast<std::int64_t>(err.offset) + 1;
      r.error.message = std::move(err.message);
      return r;
    }
    pos = next;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsBlank(line)) {
      if (r.blank++ == 0) r.first_blank = line_no;
      continue;
    }
    EventParser parser(line, index, keys);
    Event& e = slot(r.parsed);
    if (parser.Parse(e, err)) {
      e.line = line_no;
      ++r.parsed;
      if (!done(e, next)) {
        r.stopped = true;
        return r;
      }
      continue;
    }
    if (!terminated && err.truncated) {
      r.truncated_warning =
          "line " + std::to_string(line_no) +
          ": ignored a truncated last line (no newline at the end, JSON cut "
          "short: " +
          err.message + "); this is what a killed writer leaves behind";
      return r;
    }
    r.failed = true;
    r.error.line = line_no;
    r.error.column = static_cast<std::int64_t>(err.offset) + 1;
    r.error.message = std::move(err.message);
    return r;
  }
  return r;
}

// ParseLines into slots[0, capacity) of a pre-sized history.
RangeResult ParseRange(std::string_view text, std::int64_t line_base,
                       std::int64_t index_base, Event* slots,
                       std::size_t capacity) {
  return ParseLines(
      text, line_base, index_base,
      [&](std::size_t n) -> Event& {
        if (n >= capacity) std::abort();  // counted before: cannot happen
        return slots[n];
      },
      [](const Event&, std::size_t) { return true; });
}

// The warnings of a whole text's lines parsed as one range, in
// ParseJsonl's order (the truncated last line, then the blank lines).
void AddWarnings(const RangeResult& last, std::int64_t blank,
                 std::int64_t first_blank, ReadResult& result) {
  if (!last.truncated_warning.empty()) {
    result.warnings.push_back(last.truncated_warning);
  }
  if (blank > 0) {
    result.warnings.push_back("ignored " + std::to_string(blank) +
                              " blank line(s), the first at line " +
                              std::to_string(first_blank));
  }
}

// Below this size one thread parses the whole text.
constexpr std::size_t kParallelBytes = 8u << 20;

}  // namespace

ReadResult ParseJsonl(std::string_view text) {
  ReadResult result;
  text.remove_prefix(ByteOrderMarkLength(text));
  // Two halves split at a line boundary, parsed by two threads into their
  // slots of one pre-sized history (each event's expected index is known
  // from the count of event lines before it).
  std::string_view first = text, second;
  if (text.size() >= kParallelBytes &&
      std::thread::hardware_concurrency() > 1) {
    const char* nl = static_cast<const char*>(std::memchr(
        text.data() + text.size() / 2, '\n', text.size() - text.size() / 2));
    if (nl != nullptr) {
      std::size_t cut = static_cast<std::size_t>(nl - text.data()) + 1;
      first = text.substr(0, cut);
      second = text.substr(cut);
    }
  }
  std::size_t n1 = CountEventLines(first);
  std::size_t n2 = second.empty() ? 0 : CountEventLines(second);
  result.history.resize(n1 + n2);
  RangeResult a, b;
  if (second.empty()) {
    a = ParseRange(first, 0, 0, result.history.data(), n1);
  } else {
    std::int64_t first_lines = 0;
    ForEachLine(first, [&](std::string_view, bool) {
      ++first_lines;
      return true;
    });
    auto parse_second = [&] {
      b = ParseRange(second, first_lines, static_cast<std::int64_t>(n1),
                     result.history.data() + n1, n2);
    };
    std::thread other;
    try {
      other = std::thread(parse_second);
    } catch (const std::system_error&) {
      // No thread available: parse the second half afterwards.
    }
    a = ParseRange(first, 0, 0, result.history.data(), n1);
    if (other.joinable()) {
      other.join();
    } else {
      parse_second();
    }
  }
  if (a.failed) {
    result.history.resize(a.parsed);
    result.ok = false;
    result.error = std::move(a.error);
    return result;
  }
  std::size_t kept = second.empty() ? a.parsed : n1 + b.parsed;
  result.history.resize(kept);
  if (b.failed) {
    result.ok = false;
    result.error = std::move(b.error);
    return result;
  }
  const RangeResult& last = second.empty() ? a : b;
  AddWarnings(last, a.blank + b.blank,
              a.blank > 0 ? a.first_blank : b.first_blank, result);
  return result;
}

ReadResult StreamJsonl(std::string_view text, const EventSink& sink) {
  ReadResult result;
  const std::size_t bom = ByteOrderMarkLength(text);
  Event event;
  RangeResult r = ParseLines(
      text.substr(bom), 0, 0,
      [&](std::size_t) -> Event& {
        event = Event{};  // the parser expects a fresh event
        return event;
      },
      [&](const Event& e, std::size_t read_to) {
        return sink(e, bom + read_to);
      });
  if (r.failed) {
    result.ok = false;
    result.error = std::move(r.error);
    return result;
  }
  result.stopped = r.stopped;
  if (!r.stopped) AddWarnings(r, r.blank, r.first_blank, result);
  return result;
}

std::size_t CountJsonlEvents(std::string_view text) {
  return CountEventLines(text.substr(ByteOrderMarkLength(text)));
}

ReadResult ParseHistory(std::string_view text, HistoryFormat format) {
  switch (format) {
    case HistoryFormat::kJsonl:
      return ParseJsonl(text);
    case HistoryFormat::kJepsenEdn:
      return ParseJepsenEdn(text, EdnOptions{});
    case HistoryFormat::kPorcupine:
      return ParsePorcupineLog(text);
  }
  return ParseJsonl(text);
}

ReadResult StreamHistory(std::string_view text, HistoryFormat format,
                         const EventSink& sink) {
  switch (format) {
    case HistoryFormat::kJsonl:
      return StreamJsonl(text, sink);
    case HistoryFormat::kJepsenEdn:
      return StreamJepsenEdn(text, sink);
    case HistoryFormat::kPorcupine:
      return StreamPorcupineLog(text, sink);
  }
  return StreamJsonl(text, sink);
}

std::string ToString(const ReadError& error) {
  std::string out = "line " + std::to_string(error.line);
  if (error.column > 0) out += ", column " + std::to_string(error.column);
  out += ": ";
  out += error.message;
  return out;
}

}  // namespace faultline::checkers

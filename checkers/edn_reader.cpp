// Jepsen history.edn reader (see history_io.h and docs/history-formats.md).
//
// The text is a sequence of EDN forms, each an op map or a vector/list of op
// maps (so both one-map-per-line files and a single [...] of maps read). A
// top-level vector is read item by item: each op goes to the sink as soon
// as it is read, and nothing after a malformed one is read. Events get
// index = position and line = the line their map starts on; a differing
// :index is reported once as a warning. An error in an op's field points at
// that field's value (line and column), also in maps that span lines.
//
// The end of the text, when it cuts the last op map short (or leaves the
// top-level vector without its ']'), is what a killed writer leaves: the
// complete ops are read and a warning says what was ignored. A map cut
// short after which another op map begins on a later line is not that (a
// '}' or '"' is missing earlier): an error at the map that is not closed.
#include <string>
#include <utility>

#include "checkers/edn_parser.h"
#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

bool IsTuple(const Value& v) { return v.is_list() && v.as_list().size() == 2; }

// Decides whether client values are jepsen.independent [key value] tuples.
bool ShouldSplit(const History& h) {
  bool any = false;
  bool all_cas = true;
  bool nested = false;
  for (const Event& e : h) {
    if (e.is_nemesis()) continue;
    any = true;
    if (!e.key.is_null() || !IsTuple(e.value)) return false;
    // A transaction of two micro-ops is not a [key value] tuple.
    if (e.f == "txn") return false;
    if (e.f != "cas") all_cas = false;
    if (e.value.as_list()[1].is_list()) nested = true;
  }
  return any && (!all_cas || nested);
}

// True when `line` (its start) begins an op map: "{:type", "{:f",
// "#jepsen.history.Op{:index", ... after spaces and commas.
bool StartsOpMap(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t\r,");
  if (i == std::string_view::npos) return false;
  line.remove_prefix(i);
  if (line.starts_with("#")) {
    std::size_t brace = line.find('{');
    if (brace == std::string_view::npos || brace > 64) return false;
    line.remove_prefix(brace);
  }
  if (!line.starts_with("{")) return false;
  line.remove_prefix(1);
  line.remove_prefix(std::min(line.size(), line.find_first_not_of(" \t")));
  for (std::string_view key :
       {":type", ":f ", ":process", ":index", ":time", ":value"}) {
    if (line.starts_with(key)) return true;
  }
  return false;
}

// The line number (1-based) of the first line after the one holding `at`
// that begins an op map, or 0.
std::int64_t OpMapAfter(std::string_view text, std::size_t at,
                        LineCounter& lines) {
  std::size_t nl = text.find('\n', at);
  while (nl != std::string_view::npos) {
    std::size_t start = nl + 1;
    nl = text.find('\n', start);
    std::string_view line = text.substr(
        start, (nl == std::string_view::npos ? text.size() : nl) - start);
    if (StartsOpMap(line)) return lines.LineAt(start);
  }
  return 0;
}

class EdnStream {
 public:
  EdnStream(std::string_view text, const EventSink& sink)
      : text_(text),
        bom_(ByteOrderMarkLength(text)),
        p_(text),
        lines_(text, bom_),
        sink_(sink) {
    p_.set_pos(bom_);
  }

  ReadResult Run() {
    while (true) {
      p_.SkipSpace();
      if (p_.at_end()) break;
      const std::size_t start = p_.pos();
      const char c = text_[start];
      if (c == '[' || c == '(') {
        if (!Sequence(start, c == '[' ? ']' : ')')) break;
        continue;
      }
      Value form;
      if (!p_.ParseForm(form)) {
        CutOrError(start, nullptr);
        break;
      }
      if (!form.is_object()) {
        Error(start,
              "expected an op map {:type ..., :process ..., :f ...} or a "
              "vector of them, not " +
                  form.ToJson());
        break;
      }
      if (!Emit(form, start)) break;
    }
    return std::move(result_);
  }

 private:
  // A top-level vector (or list) of op maps at `start`, item by item.
  // False when reading ends (an error, the end of the text, a stop).
  bool Sequence(std::size_t start, char close) {
    p_.set_pos(start + 1);
    std::size_t items = 0;
    while (true) {
      p_.SkipSpace();
      if (p_.at_end()) {
        Warn(lines_.LineAt(start),
             "the vector of op maps that starts here is not closed (the "
             "text ends before its '" +
                 std::string(1, close) + "'); read its " +
                 std::to_string(items) +
                 " complete op map(s); this is what a killed writer leaves "
                 "behind");
        return false;
      }
      if (text_[p_.pos()] == close) {
        p_.set_pos(p_.pos() + 1);
        return true;
      }
      const std::size_t item_at = p_.pos();
      Value item;
      if (!p_.ParseForm(item)) {
        CutOrError(item_at, &start);
        return false;
      }
      if (!item.is_object()) {
        Error(item_at,
              "expected an op map {:type ..., :process ..., :f ...} "
              "in the vector, not " +
                  item.ToJson());
        return false;
      }
      if (!Emit(item, item_at)) return false;
      ++items;
    }
  }

  // The parser failed on the form at `start` (inside the vector at
  // *vector when non-null): a warning when the text ends inside it and no
  // op map starts after it, else an error.
  void CutOrError(std::size_t start, const std::size_t* vector) {
    if (!p_.hit_end()) {
      std::string message = p_.error();
      if (auto open = p_.unclosed_at()) {
        std::int64_t line = 0, column = 0;
        lines_.At(*open, line, column);
        message += ": the " +
                   std::string(text_[*open] == '{' ? "map" : "vector or list") +
                   " that starts at line " + std::to_string(line) +
                   ", column " + std::to_string(column) +
                   " is not closed before it (a '" +
                   std::string(text_[*open] == '{'   ? "}"
                               : text_[*open] == '(' ? ")"
                                                     : "]") +
                   "' is missing)";
      }
      Error(p_.error_offset(), std::move(message));
      return;
    }
    const std::int64_t line = lines_.LineAt(start);
    if (std::int64_t next = OpMapAfter(text_, start, lines_); next != 0) {
      Error(start, "the form that starts here is not closed (" + p_.error() +
                       ") but another op map starts at line " +
                       std::to_string(next) +
                       ": a closing '}', ']' or '\"' is missing in between");
      return;
    }
    std::string why =
        "ignored a truncated last op map (the text ends "
        "inside it: " +
        p_.error() + ")";
    if (vector != nullptr) {
      why += "; the vector that starts at line " +
             std::to_string(lines_.LineAt(*vector)) + " is not closed";
    }
    Warn(line, why + "; this is what a killed writer leaves behind");
  }

  // Hands the op map at `start` to the sink; false to stop reading.
  bool Emit(const Value& map, std::size_t start) {
    event_ = Event{};
    std::optional<std::int64_t> index;
    std::string field;
    std::string err = EventFromEdnMap(map, event_, &index, &field);
    if (!err.empty()) {
      std::size_t at = start;
      if (!field.empty()) {
        EdnParser again(text_);
        at = again.FieldValueAt(start, field).value_or(start);
      }
      Error(at, err);
      return false;
    }
    event_.index = static_cast<std::int64_t>(count_);
    event_.line = lines_.LineAt(start);
    if (index && *index != event_.index && !index_warned_) {
      index_warned_ = true;
      result_.warnings.push_back(
          "event " + std::to_string(count_) + " has :index " +
          std::to_string(*index) +
          "; events were renumbered by their position in the file");
    }
    ++count_;
    if (!sink_(event_, p_.pos())) {
      result_.stopped = true;
      return false;
    }
    return true;
  }

  void Error(std::size_t at, std::string message) {
    result_.ok = false;
    lines_.At(at, result_.error.line, result_.error.column);
    result_.error.message = std::move(message);
  }

  void Warn(std::int64_t line, const std::string& what) {
    result_.warnings.push_back("line " + std::to_string(line) + ": " + what);
  }

  std::string_view text_;
  std::size_t bom_;
  EdnParser p_;
  LineCounter lines_;
  const EventSink& sink_;
  ReadResult result_;
  Event event_;
  std::size_t count_ = 0;
  bool index_warned_ = false;
};

ReadError ErrorAt(const Event& e, std::string message) {
  return ReadError{LineOf(e), 0, std::move(message)};
}

}  // namespace

ReadResult StreamJepsenEdn(std::string_view text, const EventSink& sink) {
  return EdnStream(text, sink).Run();
}

void SplitJepsenTuples(ReadResult& read, TupleKeys tuples) {
  if (!read.ok) return;
  const bool split = tuples == TupleKeys::kSplit ||
                     (tuples == TupleKeys::kAuto && ShouldSplit(read.history));
  if (!split) return;
  for (Event& e : read.history) {
    if (e.is_nemesis()) continue;
    if (!IsTuple(e.value)) {
      read.ok = false;
      read.error = ErrorAt(
          e, "expected a jepsen.independent [key value] tuple as :value, not " +
                 e.value.ToJson());
      return;
    }
    Value key = e.value.as_list()[0];
    if (!key.is_string() && !key.is_int()) {
      read.ok = false;
      read.error = ErrorAt(
          e, "a tuple's key must be a string, keyword or integer, not " +
                 key.ToJson());
      return;
    }
    Value inner = e.value.as_list()[1];
    e.key = std::move(key);
    e.value = std::move(inner);
  }
  if (tuples == TupleKeys::kAuto) {
    read.warnings.push_back(
        "client values are [key value] tuples (jepsen.independent); split "
        "them into key and value");
  }
}

ReadResult ParseJepsenEdn(std::string_view text, const EdnOptions& options) {
  History history;
  ReadResult result = StreamJepsenEdn(text, [&](const Event& e, std::size_t) {
    history.push_back(e);
    return true;
  });
  if (!result.ok) return result;
  result.history = std::move(history);
  SplitJepsenTuples(result, options.tuples);
  return result;
}

}  // namespace faultline::checkers

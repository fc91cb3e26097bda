// Jepsen history.edn reader (see history_io.h and docs/history-formats.md).
//
// The text is a sequence of EDN forms, each an op map or a vector/list of op
// maps (so both one-map-per-line files and a single [...] of maps read).
// Events get index = position; a differing :index is reported once as a
// warning. A last form that starts on the last line, has no newline after
// it and is cut short is ignored with a warning; other errors fail.
#include <string>
#include <utility>

#include "checkers/edn_parser.h"
#include "checkers/history_io.h"

namespace faultline::checkers {
namespace {

struct Pending {
  Value map;
  std::size_t offset;  // where the form starts, for error positions
};

ReadResult Error(std::string_view text, std::size_t offset,
                 std::string message) {
  ReadResult r;
  r.ok = false;
  LineColumn(text, offset, r.error.line, r.error.column);
  r.error.message = std::move(message);
  return r;
}

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

}  // namespace

ReadResult ParseJepsenEdn(std::string_view text, const EdnOptions& options) {
  std::vector<Pending> forms;
  std::vector<std::string> warnings;
  EdnParser p(text);
  while (true) {
    p.SkipSpace();
    if (p.at_end()) break;
    std::size_t start = p.pos();
    Value form;
    if (!p.ParseForm(form)) {
      bool last_line = text.find('\n', start) == std::string_view::npos;
      if (p.hit_end() && last_line) {
        std::int64_t line = 0, col = 0;
        LineColumn(text, start, line, col);
        warnings.push_back("line " + std::to_string(line) +
                           ": ignored a truncated last form (" + p.error() +
                           ")");
        break;
      }
      return Error(text, p.error_offset(), p.error());
    }
    if (form.is_object()) {
      forms.push_back({std::move(form), start});
    } else if (form.is_list()) {
      for (const Value& item : form.as_list()) {
        forms.push_back({item, start});
      }
    } else {
      return Error(text, start,
                   "expected an op map {:type ..., :process ..., :f ...} "
                   "or a vector of them, not " +
                       form.ToJson());
    }
  }

  ReadResult result;
  result.warnings = std::move(warnings);
  result.history.reserve(forms.size());
  bool index_warned = false;
  for (std::size_t i = 0; i < forms.size(); ++i) {
    Event& e = result.history.emplace_back();
    std::optional<std::int64_t> index;
    std::string err = EventFromEdnMap(forms[i].map, e, &index);
    if (!err.empty()) {
      ReadResult bad = Error(text, forms[i].offset, err);
      bad.warnings = std::move(result.warnings);
      return bad;
    }
    e.index = static_cast<std::int64_t>(i);
    if (index && *index != e.index && !index_warned) {
      index_warned = true;
      result.warnings.push_back(
          "event " + std::to_string(i) + " has :index " +
          std::to_string(*index) +
          "; events were renumbered by their position in the file");
    }
  }

  bool split =
      options.tuples == TupleKeys::kSplit ||
      (options.tuples == TupleKeys::kAuto && ShouldSplit(result.history));
  if (split) {
    for (std::size_t i = 0; i < result.history.size(); ++i) {
      Event& e = result.history[i];
      if (e.is_nemesis()) continue;
      if (!IsTuple(e.value)) {
        ReadResult bad =
            Error(text, forms[i].offset,
                  "expected a jepsen.independent [key value] tuple as :value, "
                  "not " +
                      e.value.ToJson());
        bad.warnings = std::move(result.warnings);
        return bad;
      }
      Value key = e.value.as_list()[0];
      if (!key.is_string() && !key.is_int()) {
        ReadResult bad =
            Error(text, forms[i].offset,
                  "a tuple's key must be a string, keyword or integer, not " +
                      key.ToJson());
        bad.warnings = std::move(result.warnings);
        return bad;
      }
      Value inner = e.value.as_list()[1];
      e.key = std::move(key);
      e.value = std::move(inner);
    }
    if (options.tuples == TupleKeys::kAuto) {
      result.warnings.push_back(
          "client values are [key value] tuples (jepsen.independent); split "
          "them into key and value");
    }
  }
  return result;
}

}  // namespace faultline::checkers

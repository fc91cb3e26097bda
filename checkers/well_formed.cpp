// CheckWellFormed and WellFormedChecker (one event at a time; the former
// runs the latter over a History): the structural rules of
// docs/history-format.md that every checker relies on, plus per-model value
// shapes.
//
// Rules, in the order they are checked for each event (errors cite
// LineOf(event): its line in the file):
//  1. `index` equals the event's position in the history.
//  2. `process` is >= 0 or kNemesisProcess; `f` is non-empty.
//  3. `time`, when present, is >= 0. A time earlier than the latest earlier
//     time is not an error (Jepsen's histories step back by up to a
//     millisecond; the history's order is the file's): the first one is
//     kept as time_note().
//  Client events only (nemesis events skip 4-7 and the model rules):
//  4. An invoke needs the process to have no outstanding operation.
//  5. An invoke by a process that has completed an operation with `info`
//     is an error (the worker must continue under a fresh process id).
//  6. A completion (ok/fail/info) needs an outstanding invoke of the same
//     process with the same `f`; when both carry a non-null `key`, the keys
//     must be equal.
//  7. Model shapes (only when `model` is a known model):
//     register:      f is read or write.
//     cas-register:  f is read, write or cas.
//       read:  ok value int, string or null; the invoke's (and a
//              fail/info's) value is ignored, whatever it is.
//       write: value (every type) int or string.
//       cas:   value (every type) a 2-element array of int/string/null.
//     kv:            f is get, put or append.
//       get:   ok value a string; other values ignored.
//       put, append: value (every type) a string.
//     mutex:         f is acquire or release (values unconstrained, since
//                    lock workloads carry fencing tokens there).
//     list-append, rw-register: f is txn; value a list of [f, key, value]
//                    micro-ops, f "append" (list-append) or "w"
//                    (rw-register) with an int/string value, or "r";
//                    keys int or string; a read's invoke value is
//                    ignored; an ok read a list of ints/strings or null
//                    (list-append) or an int, string or null (rw-register).
//     Every other model name but "" (none): f "txn" is refused with a
//     pointer to list-append and rw-register (a transactional history
//     checked with a model that does not check transactions).
//  An invoke with no completion by the end is fine (it counts as info).
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "checkers/history_io.h"
#include "checkers/json_parser.h"

namespace faultline::checkers {
namespace {

enum class Model {
  kNone,
  kRegister,
  kCasRegister,
  kKv,
  kMutex,
  kListAppend,
  kRwRegister
};

Model ModelOf(std::string_view name) {
  if (name == "list-append") return Model::kListAppend;
  if (name == "rw-register") return Model::kRwRegister;
  if (name == "register") return Model::kRegister;
  if (name == "cas-register") return Model::kCasRegister;
  if (name == "kv") return Model::kKv;
  if (name == "mutex") return Model::kMutex;
  return Model::kNone;
}

struct ProcessState {
  bool outstanding = false;
  std::int64_t invoke_line = 0;  // line of the outstanding invoke
  std::string invoke_f;          // its f and key (for messages and rule 6)
  Value invoke_key;
  bool crashed = false;  // completed with info
  std::int64_t info_line = 0;
};

std::string Line(std::int64_t line) { return std::to_string(line); }

std::string Op(EventType type, const std::string& f, const Value& key) {
  std::string out = std::string(ToString(type)) + " " + f;
  if (!key.is_null()) out += " key " + key.ToJson();
  return out;
}

bool IsScalar(const Value& v) { return v.is_int() || v.is_string(); }

// The shape of a transaction (checkers/txn/txn.h): a list of [f, k, v].
std::string CheckTxnShape(bool append, const Event& e) {
  if (e.f != "txn") {
    return "unknown operation \"" + e.f + "\" for model " +
           (append ? "list-append" : "rw-register") +
           " (expected txn, whose value is a list of micro-ops)";
  }
  if (!e.value.is_list()) {
    return std::string("a txn value must be a list of micro-ops such as ") +
           (append ? "[[\"append\", 1, 5], [\"r\", 2, null]]"
                   : "[[\"w\", 1, 5], [\"r\", 2, null]]") +
           ", not " + std::string(KindName(e.value));
  }
  const char* write = append ? "append" : "w";
  std::size_t n = 0;
  for (const Value& m : e.value.as_list()) {
    ++n;
    const std::string at = "micro-op " + std::to_string(n) + " ";
    if (!m.is_list() || m.as_list().size() != 3 ||
        !m.as_list()[0].is_string()) {
      return at + "must be [f, key, value] with f \"" + write +
             "\" or \"r\", not " + m.ToJson();
    }
    const std::string& f = m.as_list()[0].as_string();
    const Value& k = m.as_list()[1];
    const Value& v = m.as_list()[2];
    if (f != write && f != "r") {
      return at + "has f \"" + f + "\"; expected \"" + write + "\" or \"r\"";
    }
    if (!IsScalar(k)) {
      return at + "has key " + k.ToJson() + "; a key is an integer or a string";
    }
    if (f == write) {
      if (!IsScalar(v)) {
        return at + "writes " + v.ToJson() +
               "; a written value is an integer or a string";
      }
      continue;
    }
    // A read's invoke value (null, or whatever the client put there) is
    // ignored: the completion carries what was read.
    if (e.type != EventType::kOk || v.is_null()) continue;
    if (append) {
      bool scalars = v.is_list();
      if (scalars) {
        for (const Value& x : v.as_list()) scalars = scalars && IsScalar(x);
      }
      if (!scalars) {
        return at + "read " + v.ToJson() +
               "; a list-append read returns the key's whole list of "
               "integers or strings (or null / [] when empty)";
      }
    } else if (!IsScalar(v)) {
      return at + "read " + v.ToJson() +
             "; a rw-register read returns an integer, a string or null";
    }
  }
  return {};
}

// Returns an empty string when the value fits the model, else what is wrong.
std::string CheckShape(Model model, const Event& e) {
  const Value& v = e.value;
  const bool ok = e.type == EventType::kOk;
  switch (model) {
    case Model::kNone:
      return {};
    case Model::kListAppend:
    case Model::kRwRegister:
      return CheckTxnShape(model == Model::kListAppend, e);
    case Model::kRegister:
    case Model::kCasRegister:
      if (e.f == "read") {
        if (ok) {
          if (IsScalar(v) || v.is_null()) return {};
          return "a read that completes ok must carry the value read (an "
                 "integer, a string, or null when absent), not " +
                 std::string(KindName(v));
        }
        return {};  // an invoke's or fail/info's value: ignored
      }
      if (e.f == "write") {
        if (IsScalar(v)) return {};
        return "a write's value must be the integer or string written, not " +
               std::string(KindName(v));
      }
      if (e.f == "cas" && model == Model::kCasRegister) {
        if (v.is_list() && v.as_list().size() == 2) {
          const Value& a = v.as_list()[0];
          const Value& b = v.as_list()[1];
          if ((IsScalar(a) || a.is_null()) && (IsScalar(b) || b.is_null())) {
            return {};
          }
        }
        return "a cas value must be [expected, new] (two integers or "
               "strings), not " +
               v.ToJson();
      }
      return "unknown operation \"" + e.f + "\" for model " +
             (model == Model::kRegister
                  ? "register (expected read or write)"
                  : "cas-register (expected read, write or cas)");
    case Model::kKv:
      if (e.f == "get") {
        if (ok) {
          if (v.is_string()) return {};
          return "a get that completes ok must carry the string read (\"\" "
                 "for a missing key), not " +
                 std::string(KindName(v));
        }
        return {};  // an invoke's or fail/info's value: ignored
      }
      if (e.f == "put" || e.f == "append") {
        if (v.is_string()) return {};
        return "a " + e.f + " value must be a string, not " +
               std::string(KindName(v));
      }
      return "unknown operation \"" + e.f +
             "\" for model kv (expected get, put or append)";
    case Model::kMutex:
      if (e.f == "acquire" || e.f == "release") return {};
      return "unknown operation \"" + e.f +
             "\" for model mutex (expected acquire or release)";
  }
  return {};
}

ReadError At(const Event& e, std::string message) {
  ReadError err;
  err.line = LineOf(e);
  err.column = 0;
  err.message = std::move(message);
  return err;
}

bool IsTxnModel(Model m) {
  return m == Model::kListAppend || m == Model::kRwRegister;
}

}  // namespace

bool IsKnownModel(std::string_view model) {
  return ModelOf(model) != Model::kNone;
}

WellFormedChecker::WellFormedChecker(std::string_view model)
    : model_name_(model), model_(static_cast<int>(ModelOf(model))) {}

WellFormedChecker::~WellFormedChecker() = default;
WellFormedChecker::WellFormedChecker(WellFormedChecker&&) noexcept = default;
WellFormedChecker& WellFormedChecker::operator=(WellFormedChecker&&) noexcept =
    default;

struct WellFormedChecker::Processes {
  std::unordered_map<std::int64_t, ProcessState> by_id;
};

const std::optional<ReadError>& WellFormedChecker::Add(const Event& e) {
  if (!error_) error_ = Check(e);
  ++position_;
  return error_;
}

std::optional<ReadError> WellFormedChecker::Check(const Event& e) {
  const std::size_t i = position_;
  const auto model = static_cast<Model>(model_);
  const std::string& model_name = model_name_;
  if (!processes_) processes_ = std::make_unique<Processes>();
  auto& processes = processes_->by_id;
  if (e.index != static_cast<std::int64_t>(i)) {
    return At(e, "event has index " + std::to_string(e.index) +
                     " but is at position " + std::to_string(i) +
                     "; indexes count events from 0");
  }
  if (e.process < 0 && e.process != kNemesisProcess) {
    return At(e, "process " + std::to_string(e.process) +
                     " is negative; processes are >= 0 or \"nemesis\"");
  }
  if (e.f.empty()) return At(e, "event has an empty \"f\"");
  if (e.time) {
    if (*e.time < 0) return At(e, "time is negative");
    if (last_time_ && *e.time < *last_time_ && !time_note_) {
      time_note_ =
          At(e, "time " + std::to_string(*e.time) + " is " +
                    std::to_string(*last_time_ - *e.time) +
                    " ns earlier than time " + std::to_string(*last_time_) +
                    " at line " + Line(last_time_line_) +
                    "; the history's order is the file's (as Jepsen's "
                    "checkers read it), so operations are ordered by their "
                    "position in the file, not by time");
    }
    if (!last_time_ || *e.time >= *last_time_) {
      last_time_ = e.time;
      last_time_line_ = LineOf(e);
    }
  }
  if (e.is_nemesis()) return std::nullopt;
  if (e.f == "txn" && !model_name.empty() && !IsTxnModel(model)) {
    return At(
        e, Op(e.type, e.f, e.key) + " by process " + std::to_string(e.process) +
               ": a transaction (f txn, a list of micro-ops), which model " +
               model_name +
               " does not check; check transactional histories with --model "
               "list-append (micro-ops [\"append\", k, v] and [\"r\", k, "
               "nil]) or --model rw-register ([\"w\", k, v] and [\"r\", k, "
               "nil])");
  }
  ProcessState& ps = processes[e.process];
  const std::string proc = "process " + std::to_string(e.process);
  if (e.type == EventType::kInvoke) {
    if (ps.crashed) {
      return At(e, proc + " invokes " + e.f + " after its operation " +
                       "completed with info at line " + Line(ps.info_line) +
                       "; after an info the worker must continue under a "
                       "fresh process id");
    }
    if (ps.outstanding) {
      return At(e, proc + " invokes " + e.f + " while its " +
                       Op(EventType::kInvoke, ps.invoke_f, ps.invoke_key) +
                       " from line " + Line(ps.invoke_line) +
                       " is still outstanding; a process has at most one "
                       "operation in flight");
    }
    ps.outstanding = true;
    ps.invoke_line = LineOf(e);
    ps.invoke_f = e.f;
    ps.invoke_key = e.key;
  } else {
    if (!ps.outstanding) {
      return At(e, proc + " completes " + e.f + " (" +
                       std::string(ToString(e.type)) +
                       ") but has no outstanding invoke" +
                       (ps.crashed ? " (it already completed with info "
                                     "at line " +
                                         Line(ps.info_line) + ")"
                                   : std::string()));
    }
    if (ps.invoke_f != e.f) {
      return At(e, proc + " completes " + e.f + " but its outstanding " +
                       "invoke at line " + Line(ps.invoke_line) + " is " +
                       ps.invoke_f + "; a completion repeats its invoke's f");
    }
    if (!ps.invoke_key.is_null() && !e.key.is_null() &&
        ps.invoke_key != e.key) {
      return At(e, proc + " completes " + e.f + " on key " + e.key.ToJson() +
                       " but invoked it on key " + ps.invoke_key.ToJson() +
                       " at line " + Line(ps.invoke_line));
    }
    ps.outstanding = false;
    ps.invoke_key = Value();
    if (e.type == EventType::kInfo) {
      ps.crashed = true;
      ps.info_line = LineOf(e);
    }
  }
  std::string shape = CheckShape(model, e);
  if (!shape.empty()) {
    return At(e, Op(e.type, e.f, e.key) + " by " + proc + ": " + shape +
                     " (model " + model_name + ")");
  }
  return std::nullopt;
}

std::optional<ReadError> CheckWellFormed(const History& history,
                                         std::string_view model_name) {
  WellFormedChecker checker(model_name);
  for (const Event& e : history) {
    if (checker.Add(e)) break;
  }
  return checker.error();
}

}  // namespace faultline::checkers

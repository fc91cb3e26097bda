// Explanations of linearizability violations: the key, the longest
// linearizable prefix, the operations that could not be placed next and why,
// and the concurrent window around them; as text and as JSON.
#include <algorithm>
#include <unordered_set>

#include "checkers/linear_internal.h"

namespace faultline::checkers::linear {
namespace {

constexpr std::size_t kMaxPrefixLines = 12;
constexpr std::size_t kMaxWindow = 40;
// details_json keeps the prefix's length and its last ops only: a huge
// history's prefix would make the JSON as large as the history.
constexpr std::size_t kMaxPrefixJson = 20;

std::string OutcomeName(const Op& op) {
  switch (op.outcome) {
    case EventType::kOk:
      return "ok";
    case EventType::kInfo:
      return "info";
    case EventType::kFail:
      return "fail";
    case EventType::kInvoke:
      return "pending";
  }
  return "pending";
}

std::string KeyName(const Value& key) {
  return key.is_null() ? std::string("(no key)") : key.ToJson();
}

void AppendSeconds(std::string& out, const std::optional<std::int64_t>& ns) {
  if (!ns) {
    out += "null";
    return;
  }
  // Nine decimals, without locale or printf.
  std::int64_t v = *ns;
  if (v < 0) {
    out += "-";
    v = -v;
  }
  std::string frac = std::to_string(v % 1000000000);
  while (frac.size() < 9) frac.insert(frac.begin(), '0');
  out += std::to_string(v / 1000000000) + "." + frac;
}

}  // namespace

const std::string& OpNode(const Op& op) {
  if (op.ok != nullptr && !op.ok->node.empty()) return op.ok->node;
  return op.inv->node;
}

std::string Seconds(std::int64_t ns) {
  bool neg = ns < 0;
  std::int64_t c = ((neg ? -ns : ns) + 5000000) / 10000000;  // centiseconds
  std::string frac = std::to_string(c % 100);
  if (frac.size() < 2) frac.insert(frac.begin(), '0');
  return std::string(neg ? "-" : "") + std::to_string(c / 100) + "." + frac +
         " s";
}

std::string OpLine(const Model& model, const Op& op) {
  std::string out =
      "p" + std::to_string(op.process()) + " " + model.DescribeOp(op.Make());
  if (!OpNode(op).empty()) out += " on " + OpNode(op);
  out += "  [";
  if (op.inv->time) {
    std::string from = Seconds(*op.inv->time);
    if (op.ok != nullptr && op.ok->time) {
      out += from.substr(0, from.size() - 2) + ".." + Seconds(*op.ok->time);
    } else {
      out += "from " + from;
    }
    out += ", ";
  }
  out += "event " + std::to_string(op.invoke_index());
  if (op.complete_index >= 0) {
    out += ".." + std::to_string(op.complete_index) + " " + OutcomeName(op);
  } else {
    out += ", never completed";
  }
  if (op.closed) out += ", crashed but observed: closed";
  out += "]";
  return out;
}

void AppendOpJson(std::string& out, const Op& op) {
  out += "{\"index\":" + std::to_string(op.invoke_index());
  out += ",\"complete_index\":" + std::to_string(op.complete_index);
  out += ",\"process\":" + std::to_string(op.process());
  out += ",\"f\":";
  AppendJsonString(out, op.inv->f);
  out += ",\"value\":";
  op.inv->value.AppendJson(out);
  out += ",\"output\":";
  if (op.completed()) {
    op.ok->value.AppendJson(out);
  } else {
    out += "null";
  }
  out += ",\"type\":\"" + OutcomeName(op) + "\"";
  out += ",\"closed\":";
  out += op.closed ? "true" : "false";
  out += ",\"node\":";
  if (OpNode(op).empty()) {
    out += "null";
  } else {
    AppendJsonString(out, OpNode(op));
  }
  out += ",\"call_s\":";
  AppendSeconds(out, op.inv->time);
  out += ",\"return_s\":";
  AppendSeconds(out, op.ok != nullptr ? op.ok->time : std::nullopt);
  out += "}";
}

Explanation Explain(const Partition& p, const Model& model, StateTable& table,
                    const SegmentResult& failed) {
  Explanation ex;
  std::vector<char> in_prefix(p.ops.size(), 0);
  for (std::size_t i : failed.best_prefix) in_prefix[i] = 1;
  // Copies: table.Step below may intern new states and move the table's.
  const Value state = table.Get(failed.best_state);
  const Value start = table.Get(failed.best_start);

  // The op whose return the prefix could not get past: the unlinearized
  // mandatory op of the segment that returns first.
  std::size_t blocker = failed.seg_end;
  for (std::size_t i = failed.seg_begin; i < failed.seg_end; ++i) {
    if (in_prefix[i] != 0 || !p.ops[i].mandatory()) continue;
    if (blocker == failed.seg_end || p.ops[i].ret < p.ops[blocker].ret) {
      blocker = i;
    }
  }
  std::int64_t horizon =
      blocker == failed.seg_end ? kNever : p.ops[blocker].ret;

  struct Stuck {
    std::size_t op;
    bool rejected;
    std::string why;
  };
  std::vector<Stuck> stuck;
  std::int64_t window_lo = horizon;
  for (std::size_t i = failed.seg_begin; i < failed.seg_end; ++i) {
    if (in_prefix[i] != 0 || p.ops[i].call >= horizon) continue;
    std::int64_t ns = table.Step(failed.best_state, i);
    Stuck s{i, ns < 0, ""};
    if (ns < 0) {
      s.why = model.WhyRejected(state, p.ops[i].Make());
    } else {
      s.why = "could take effect (leaving " +
              model.DescribeState(table.Get(static_cast<std::uint32_t>(ns))) +
              "), but then no order of the remaining operations works";
    }
    stuck.push_back(std::move(s));
    window_lo = std::min(window_lo, p.ops[i].call);
  }
  // Rejected first, the blocker first among them.
  std::stable_sort(stuck.begin(), stuck.end(),
                   [&](const Stuck& a, const Stuck& b) {
                     if (a.rejected != b.rejected) return a.rejected;
                     return a.op == blocker && b.op != blocker;
                   });

  std::vector<std::size_t> window;
  for (std::size_t i = failed.seg_begin; i < failed.seg_end; ++i) {
    const Op& op = p.ops[i];
    if (op.call < horizon && op.ret > window_lo) window.push_back(i);
    if (window.size() >= kMaxWindow) break;
  }

  std::string key = KeyName(p.key);
  if (!stuck.empty() && stuck.front().rejected) {
    ex.summary = stuck.front().why;
  } else {
    ex.summary = "no order of the concurrent operations is consistent";
  }
  ex.blocker = blocker == failed.seg_end ? SIZE_MAX : blocker;
  ex.state = state;
  ex.at = horizon;
  for (const Stuck& s : stuck) {
    if (s.rejected) ex.rejected.push_back(s.op);
  }
  // The blocker first (it sorts first among the rejected), then by return.
  std::stable_sort(ex.rejected.begin(), ex.rejected.end(),
                   [&](std::size_t a, std::size_t b) {
                     if ((a == blocker) != (b == blocker)) return a == blocker;
                     return p.ops[a].ret < p.ops[b].ret;
                   });
  if (blocker != failed.seg_end) {
    const Op& b = p.ops[blocker];
    if (b.ok != nullptr) {
      ex.at_index = b.ok->index;
    } else {
      // A closed crashed op: its deadline is the return of its first
      // observer.
      for (const Op& o : p.ops) {
        if (o.ok != nullptr && o.ret == b.ret) {
          ex.at_index = o.ok->index;
          break;
        }
      }
    }
  }

  std::string& t = ex.text;
  t += "key " + key + ": not linearizable (model " + std::string(model.name()) +
       ")\n";
  if (failed.seg_begin > 0) {
    t += "The history of this key is quiescent before event " +
         std::to_string(p.ops[failed.seg_begin].invoke_index()) +
         "; the earlier operations linearize, leaving " +
         model.DescribeState(start) + ".\n";
  }
  t += "Longest linearizable prefix found (" +
       std::to_string(failed.best_prefix.size()) + " ops), ending in " +
       model.DescribeState(state) + ":\n";
  std::size_t skip = failed.best_prefix.size() > kMaxPrefixLines
                         ? failed.best_prefix.size() - kMaxPrefixLines
                         : 0;
  if (skip > 0) t += "  ... " + std::to_string(skip) + " earlier ops\n";
  for (std::size_t k = skip; k < failed.best_prefix.size(); ++k) {
    t += "  " + OpLine(model, p.ops[failed.best_prefix[k]]) + "\n";
  }
  if (blocker != failed.seg_end) {
    t += "Could not place next (one of these must precede the return of " +
         OpLine(model, p.ops[blocker]) + "):\n";
  } else {
    t += "Could not place next:\n";
  }
  for (const Stuck& s : stuck) {
    t += "  " + OpLine(model, p.ops[s.op]) + "\n      " + s.why + "\n";
  }
  t += "Concurrent window (operations overlapping in time):\n";
  for (std::size_t i : window) t += "  " + OpLine(model, p.ops[i]) + "\n";

  std::string& j = ex.json;
  j += "\"key\":";
  p.key.AppendJson(j);
  j += ",\"start_state\":";
  AppendJsonString(j, model.DescribeState(start));
  j += ",\"state\":";
  AppendJsonString(j, model.DescribeState(state));
  const std::size_t n = failed.best_prefix.size();
  j += ",\"prefix_length\":" + std::to_string(n);
  j += ",\"prefix\":[";
  for (std::size_t k = n > kMaxPrefixJson ? n - kMaxPrefixJson : 0; k < n;
       ++k) {
    if (j.back() != '[') j += ",";
    AppendOpJson(j, p.ops[failed.best_prefix[k]]);
  }
  j += "],\"stuck\":[";
  for (std::size_t k = 0; k < stuck.size(); ++k) {
    if (k > 0) j += ",";
    j += "{\"op\":";
    AppendOpJson(j, p.ops[stuck[k].op]);
    j += ",\"rejected\":";
    j += stuck[k].rejected ? "true" : "false";
    j += ",\"why\":";
    AppendJsonString(j, stuck[k].why);
    j += "}";
  }
  j += "],\"window\":[";
  for (std::size_t k = 0; k < window.size(); ++k) {
    if (k > 0) j += ",";
    AppendOpJson(j, p.ops[window[k]]);
  }
  j += "]";
  return ex;
}

}  // namespace faultline::checkers::linear

// Brute-force serial-order search for transactional histories (checkers/
// txn/txn_reference.h). Deliberately independent of the checker: it reads
// the History itself and shares only the Workload enum.
#include "checkers/txn/txn_reference.h"

#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace faultline::checkers::txn {
namespace {

constexpr std::uint32_t kNull = 0xffffffffu;  // rw-register: never written

enum class Kind : std::uint8_t { kWrite, kRead };  // append and w are writes

struct RefMop {
  Kind kind = Kind::kRead;
  std::uint32_t key = 0;
  std::uint32_t value = kNull;      // write: value; rw read: value read
  std::vector<std::uint32_t> list;  // list-append read: the list read
};

struct RefTxn {
  bool ok = false;    // committed for sure, reads checked
  bool fail = false;  // never committed
  std::int64_t invoke = 0;
  std::int64_t complete = -1;  // -1: never completed
  std::vector<RefMop> mops;
};

class Interner {
 public:
  std::uint32_t Id(const Value& v) {
    auto [it, fresh] = ids_.emplace(v, static_cast<std::uint32_t>(ids_.size()));
    (void)fresh;
    return it->second;
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(ids_.size()); }

 private:
  std::map<Value, std::uint32_t> ids_;
};

struct Parsed {
  std::vector<RefTxn> txns;
  std::uint32_t keys = 0;
  std::string error;
};

std::string At(const Event& e, const std::string& why) {
  return "event " + std::to_string(e.index) + ": " + why;
}

// Micro-ops of `v` into `out`; with_reads: read results are known.
bool ParseMops(const Value& v, Workload workload, bool with_reads,
               Interner& keys, Interner& values, std::vector<RefMop>& out,
               std::string& why) {
  if (!v.is_list()) {
    why = "a txn value must be a list of micro-ops";
    return false;
  }
  const char* write_f = workload == Workload::kListAppend ? "append" : "w";
  for (const Value& m : v.as_list()) {
    if (!m.is_list() || m.as_list().size() != 3 ||
        !m.as_list()[0].is_string()) {
      why = "a micro-op must be [f, key, value]";
      return false;
    }
    const Value::List& l = m.as_list();
    RefMop mop;
    mop.key = keys.Id(l[1]);
    if (l[0].as_string() == write_f) {
      mop.kind = Kind::kWrite;
      mop.value = values.Id(l[2]);
    } else if (l[0].as_string() == "r") {
      mop.kind = Kind::kRead;
      if (with_reads) {
        if (workload == Workload::kRwRegister) {
          mop.value = l[2].is_null() ? kNull : values.Id(l[2]);
        } else if (l[2].is_list()) {
          for (const Value& x : l[2].as_list())
            mop.list.push_back(values.Id(x));
        } else if (!l[2].is_null()) {
          why = "a list-append read must return a list or null";
          return false;
        }
      }
    } else {
      why = "unknown micro-op f \"" + l[0].as_string() + "\"";
      return false;
    }
    out.push_back(std::move(mop));
  }
  return true;
}

Parsed Parse(const History& history, Workload workload) {
  Parsed p;
  Interner keys;
  Interner values;
  std::unordered_map<std::int64_t, std::size_t> open;  // process -> txn
  std::vector<const Event*> invokes;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const Event& e = history[i];
    if (e.is_nemesis()) continue;
    if (e.f != "txn") {
      p.error = At(e, "f must be \"txn\"");
      return p;
    }
    const auto pos = static_cast<std::int64_t>(i);
    if (e.is_invoke()) {
      if (open.count(e.process) != 0) {
        p.error = At(e, "process already has an outstanding txn");
        return p;
      }
      open[e.process] = p.txns.size();
      RefTxn t;
      t.invoke = pos;
      p.txns.push_back(std::move(t));
      invokes.push_back(&e);
      continue;
    }
    auto it = open.find(e.process);
    if (it == open.end()) {
      p.error = At(e, "completion without an outstanding invoke");
      return p;
    }
    RefTxn& t = p.txns[it->second];
    t.complete = pos;
    t.ok = e.type == EventType::kOk;
    t.fail = e.type == EventType::kFail;
    std::string why;
    const Value& v = t.ok ? e.value : invokes[it->second]->value;
    if (!ParseMops(v, workload, t.ok, keys, values, t.mops, why)) {
      p.error = At(e, why);
      return p;
    }
    open.erase(it);
  }
  for (const auto& [process, txn] : open) {
    (void)process;
    std::string why;
    if (!ParseMops(invokes[txn]->value, workload, false, keys, values,
                   p.txns[txn].mops, why)) {
      p.error = At(*invokes[txn], why);
      return p;
    }
  }
  p.keys = keys.size();
  return p;
}

// The search over one model. Candidates are indexed 0..n-1.
class Search {
 public:
  Search(const std::vector<const RefTxn*>& txns, std::uint32_t keys,
         Workload workload, bool strict, std::uint64_t max_steps,
         std::uint64_t& steps)
      : txns_(txns),
        list_(workload == Workload::kListAppend),
        max_steps_(max_steps),
        steps_(steps),
        lists_(keys),
        regs_(keys, kNull),
        pred_(txns.size(), 0) {
    for (std::size_t i = 0; i < txns.size(); ++i) {
      if (txns[i]->ok) ok_mask_ |= 1u << i;
      if (!strict) continue;
      for (std::size_t j = 0; j < txns.size(); ++j) {
        if (txns[j]->ok && txns[j]->complete < txns[i]->invoke) {
          pred_[i] |= 1u << j;
        }
      }
    }
  }

  bool Run() { return Dfs(0); }
  bool gave_up() const { return gave_up_; }

 private:
  bool Dfs(std::uint32_t mask) {
    if ((mask & ok_mask_) == ok_mask_) return true;
    std::string key = StateKey(mask);
    if (failed_.count(key) != 0) return false;
    for (std::size_t i = 0; i < txns_.size(); ++i) {
      const std::uint32_t bit = 1u << i;
      if ((mask & bit) != 0 || (pred_[i] & ~mask) != 0) continue;
      if (++steps_ > max_steps_) {
        gave_up_ = true;
        return false;
      }
      std::size_t undo = undo_.size();
      bool applied = Apply(*txns_[i]);
      if (applied && Dfs(mask | bit)) return true;
      Undo(undo);
      if (gave_up_) return false;
    }
    failed_.insert(std::move(key));
    return false;
  }

  // Executes `t`; false at the first read that disagrees (ok txns only).
  // Every write is logged in undo_ either way.
  bool Apply(const RefTxn& t) {
    for (const RefMop& m : t.mops) {
      if (m.kind == Kind::kWrite) {
        if (list_) {
          lists_[m.key].push_back(m.value);
        } else {
          undo_.push_back({m.key, regs_[m.key]});
          regs_[m.key] = m.value;
          continue;
        }
        undo_.push_back({m.key, kNull});
      } else if (t.ok) {
        if (list_ ? lists_[m.key] != m.list : regs_[m.key] != m.value) {
          return false;
        }
      }
    }
    return true;
  }

  void Undo(std::size_t to) {
    while (undo_.size() > to) {
      auto [key, old] = undo_.back();
      undo_.pop_back();
      if (list_) {
        lists_[key].pop_back();
      } else {
        regs_[key] = old;
      }
    }
  }

  std::string StateKey(std::uint32_t mask) const {
    std::string s;
    auto put = [&s](std::uint32_t x) {
      char b[4];
      std::memcpy(b, &x, 4);
      s.append(b, 4);
    };
    put(mask);
    if (list_) {
      for (const auto& l : lists_) {
        put(static_cast<std::uint32_t>(l.size()));
        for (std::uint32_t x : l) put(x);
      }
    } else {
      for (std::uint32_t x : regs_) put(x);
    }
    return s;
  }

  const std::vector<const RefTxn*>& txns_;
  bool list_;
  std::uint64_t max_steps_;
  std::uint64_t& steps_;
  bool gave_up_ = false;
  std::vector<std::vector<std::uint32_t>> lists_;
  std::vector<std::uint32_t> regs_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> undo_;
  std::vector<std::uint32_t> pred_;
  std::uint32_t ok_mask_ = 0;
  std::unordered_set<std::string> failed_;
};

}  // namespace

ReferenceResult CheckTxnReference(const History& history, Workload workload,
                                  const ReferenceOptions& options) {
  ReferenceResult r;
  Parsed p = Parse(history, workload);
  if (!p.error.empty()) {
    r.error = p.error;
    return r;
  }
  // Fail txns never commit; an info txn that writes nothing changes nothing.
  std::vector<const RefTxn*> cands;
  for (const RefTxn& t : p.txns) {
    if (t.fail) continue;
    bool writes = false;
    for (const RefMop& m : t.mops) writes |= m.kind == Kind::kWrite;
    if (t.ok || writes) cands.push_back(&t);
  }
  const int limit = options.max_txns < 32 ? options.max_txns : 32;
  if (static_cast<int>(cands.size()) > limit) {
    r.error = std::to_string(cands.size()) +
              " candidate transactions; the reference checks at most " +
              std::to_string(limit);
    return r;
  }
  Search strict(cands, p.keys, workload, true, options.max_steps, r.steps);
  r.strict_serializable = strict.Run();
  if (strict.gave_up()) {
    r.gave_up = true;
    return r;
  }
  if (r.strict_serializable) {
    r.serializable = true;
    return r;
  }
  Search plain(cands, p.keys, workload, false, options.max_steps, r.steps);
  r.serializable = plain.Run();
  r.gave_up = plain.gave_up();
  return r;
}

}  // namespace faultline::checkers::txn

// TxnExtractor, ExtractTxns, TxnName and DescribeTxn
// (checkers/txn/txn_internal.h): history events turned, one at a time, into
// the compact TxnSet the inference works on.
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "checkers/txn/flat_map.h"
#include "checkers/txn/infer_common.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

// Interns scalar Values (keys, or appended/written/read values) into a
// vector. Integers, the common case, go through a flat map; anything else
// through an unordered_map keyed by Value.
class Interner {
 public:
  explicit Interner(std::vector<Value>* out) : out_(out) {}

  void Reserve(std::size_t n) {
    ints_.Reserve(n);
    out_->reserve(n);
  }

  std::uint32_t Intern(const Value& v) {
    if (v.is_int()) {
      auto next = static_cast<std::uint32_t>(out_->size());
      std::uint32_t had =
          ints_.Insert(static_cast<std::uint64_t>(v.as_int()), next);
      if (had != FlatMap64::kAbsent) return had;
      out_->push_back(v);
      return next;
    }
    auto [it, inserted] =
        others_.try_emplace(v, static_cast<std::uint32_t>(out_->size()));
    if (inserted) out_->push_back(v);
    return it->second;
  }

 private:
  std::vector<Value>* out_;
  FlatMap64 ints_;
  std::unordered_map<Value, std::uint32_t, ValueHash> others_;
};

bool IsScalar(const Value& v) { return v.is_int() || v.is_string(); }

}  // namespace

// The incremental ExtractTxns: the state between two Adds.
class TxnExtractor::Impl {
 public:
  explicit Impl(Workload workload)
      : workload_(workload),
        keys_(&result_.set.keys),
        values_(&result_.set.values) {}

  // Guesses sized for Jepsen's generators (1-4 micro-ops per txn, short
  // reads): enough to grow rarely, not so much to waste memory.
  void Reserve(std::size_t events) {
    TxnSet& s = result_.set;
    s.txns.reserve(events / 2 + 1);
    s.mops.reserve(events * 3 / 2 + 16);
    values_.Reserve(events / 2 + 16);
  }

  void Add(const Event& e) {
    const std::size_t i = next_++;
    if (result_.error) return;
    TxnSet& s = result_.set;
    if (e.is_nemesis()) return;
    if (e.f != "txn") {
      return Fail(e, "client operation with f \"" + e.f + "\"; a " +
                         WorkloadName() +
                         " history holds only transactions (f \"txn\")");
    }
    if (e.is_invoke()) {
      Txn t;
      t.process = e.process;
      t.invoke_index = static_cast<std::int64_t>(i);
      t.invoke_line = TxnLine(e);
      t.mop_begin = static_cast<std::uint32_t>(s.mops.size());
      if (!ParseMops(e.value, /*ok=*/false, t)) return Fail(e, why_);
      auto id = static_cast<TxnId>(s.txns.size());
      s.txns.push_back(t);
      // A second invoke while one is open (not well-formed): the first
      // is left as never completed.
      pending_[e.process] = id;
      return;
    }
    auto it = pending_.find(e.process);
    if (it == pending_.end()) {
      return Fail(e, std::string("a completion (") +
                         std::string(ToString(e.type)) + ") by process " +
                         std::to_string(e.process) +
                         " with no transaction of that process open");
    }
    Txn& t = s.txns[it->second];
    pending_.erase(it);
    t.complete_index = static_cast<std::int64_t>(i);
    if (e.type == EventType::kOk) {
      t.status = Status::kOk;
      if (!ParseMops(e.value, /*ok=*/true, t)) return Fail(e, why_);
    } else {
      t.status = e.type == EventType::kFail ? Status::kFail : Status::kInfo;
    }
  }

  std::size_t events() const { return next_; }
  bool failed() const { return result_.error.has_value(); }
  Workload workload() const { return workload_; }

  // Frees the interners' maps and the caches too, as the end of
  // ExtractTxns did, so the inference starts with only the set in memory.
  ExtractResult Take() {
    ExtractResult out = std::move(result_);
    result_ = ExtractResult{};
    keys_ = Interner(&result_.set.keys);
    values_ = Interner(&result_.set.values);
    std::vector<std::vector<Cached>>().swap(cache_);
    std::unordered_map<std::int64_t, TxnId>().swap(pending_);
    return out;
  }

 private:
  std::string WorkloadName() const {
    return workload_ == Workload::kListAppend ? kListAppendChecker
                                              : kRwRegisterChecker;
  }

  // Keeps the error and drops what was extracted (as ExtractTxns did).
  void Fail(const Event& e, std::string message) {
    ExtractResult r;
    r.error = ReadError{LineOf(e), 0, std::move(message)};
    result_ = std::move(r);
    cache_.clear();
    cache_.shrink_to_fit();
    pending_.clear();
  }

  bool Bad(std::size_t n, const Value& mop, const std::string& what) {
    why_ = "transaction micro-op " + std::to_string(n + 1) + " (" +
           mop.ToJson() + ") " + what;
    return false;
  }

  // Parses an invocation's value into new mops (ok == false), or an ok
  // completion's value over the mops its invocation made (ok == true).
  bool ParseMops(const Value& value, bool ok, Txn& t) {
    TxnSet& s = result_.set;
    const bool la = workload_ == Workload::kListAppend;
    if (!value.is_list()) {
      why_ = std::string(
                 "a transaction's value must be a list of [f, key, "
                 "value] micro-ops, not ") +
             value.ToJson();
      return false;
    }
    const Value::List& list = value.as_list();
    if (ok && list.size() != t.mop_count) {
      why_ = "the completion has " + std::to_string(list.size()) +
             " micro-ops but its invocation (line " +
             std::to_string(t.invoke_line) + ") had " +
             std::to_string(t.mop_count);
      return false;
    }
    const char* write_f = la ? "append" : "w";
    for (std::size_t n = 0; n < list.size(); ++n) {
      const Value& m = list[n];
      if (!m.is_list() || m.as_list().size() != 3 ||
          !m.as_list()[0].is_string()) {
        return Bad(n, m, "is not a [f, key, value] list");
      }
      const Value::List& parts = m.as_list();
      const std::string& f = parts[0].as_string();
      Mop mop;
      if (f == write_f) {
        mop.kind = la ? MopKind::kAppend : MopKind::kWrite;
      } else if (f == "r") {
        mop.kind = MopKind::kRead;
      } else {
        return Bad(n, m,
                   std::string("has f \"") + f + "\"; expected \"" + write_f +
                       "\" or \"r\" in a " + WorkloadName() + " history");
      }
      if (!IsScalar(parts[1])) {
        return Bad(n, m, "has a key that is neither an integer nor a string");
      }
      mop.key = keys_.Intern(parts[1]);
      const Value& v = parts[2];
      if (mop.kind != MopKind::kRead) {
        if (!IsScalar(v)) {
          return Bad(n, m,
                     std::string("must ") + (la ? "append" : "write") +
                         " an integer or a string");
        }
        mop.value = values_.Intern(v);
      } else if (ok) {
        mop.read_known = true;
        if (la) {
          mop.read_begin = static_cast<std::uint32_t>(s.read_elems.size());
          if (v.is_list()) {
            const Value::List& elems = v.as_list();
            if (!ReadList(mop.key, elems)) {
              return Bad(n, m,
                         "read a list holding something other than "
                         "integers and strings");
            }
            mop.read_len = static_cast<std::uint32_t>(elems.size());
          } else if (!v.is_null()) {
            return Bad(n, m, "read something other than a list or null");
          }
        } else if (IsScalar(v)) {
          mop.value = values_.Intern(v);
        } else if (!v.is_null()) {
          return Bad(n, m,
                     "read something other than an integer, a string or "
                     "null");
        }
      }
      if (!ok) {
        s.mops.push_back(mop);
        continue;
      }
      Mop& inv = s.mops[t.mop_begin + n];
      if (inv.kind != mop.kind || inv.key != mop.key) {
        return Bad(n, m,
                   "differs in f or key from the invocation's (line " +
                       std::to_string(t.invoke_line) + ")");
      }
      inv = mop;
    }
    if (!ok) t.mop_count = static_cast<std::uint32_t>(list.size());
    return true;
  }

  // Appends a list read of `key` to read_elems, interned. The hot path:
  // reads of a key are mostly prefixes of one another, so each key keeps
  // the integers of its last read with their ids, and an element equal to
  // the cached one at its position needs no hash lookup. False when an
  // element is not a scalar.
  bool ReadList(KeyId key, const Value::List& elems) {
    if (key >= cache_.size()) cache_.resize(key + 1);
    std::vector<Cached>& cache = cache_[key];
    std::vector<ValueId>& out = result_.set.read_elems;
    bool caching = true;
    for (std::size_t j = 0; j < elems.size(); ++j) {
      const Value& x = elems[j];
      if (x.is_int()) {
        const std::int64_t raw = x.as_int();
        if (caching && j < cache.size() && cache[j].raw == raw) {
          out.push_back(cache[j].id);
          continue;
        }
        const ValueId id = values_.Intern(x);
        out.push_back(id);
        if (!caching) continue;
        if (j < cache.size()) {
          cache[j] = Cached{raw, id};
        } else {
          cache.push_back(Cached{raw, id});
        }
        continue;
      }
      if (!IsScalar(x)) return false;
      out.push_back(values_.Intern(x));
      if (caching) cache.resize(j);
      caching = false;
    }
    return true;
  }

  struct Cached {
    std::int64_t raw = 0;
    ValueId id = 0;
  };

  Workload workload_;
  std::vector<std::vector<Cached>> cache_;  // per key: see ReadList
  ExtractResult result_;
  Interner keys_;
  Interner values_;
  std::unordered_map<std::int64_t, TxnId> pending_;  // process → open txn
  std::size_t next_ = 0;  // the next event's position in the history
  std::string why_;
};

namespace {

void AppendRead(const TxnSet& set, const Mop& m, bool list_reads,
                std::string& out) {
  if (!m.read_known) {
    out += '?';
    return;
  }
  const SetView view = SetView::Of(set);
  out += list_reads
             ? view.List(set.read_elems.data() + m.read_begin, m.read_len)
             : view.Val(m.value);
}

// Whether the set's reads are whole lists (list-append): told by its first
// append or write; a history of reads only counts as list-append when some
// read returned a non-empty list.
bool ListReads(const TxnSet& set, const Txn& t) {
  auto kind_of = [](const Mop& m) -> int {
    if (m.kind == MopKind::kAppend) return 1;
    if (m.kind == MopKind::kWrite) return 0;
    if (m.read_known && m.read_len > 0) return 1;
    if (m.read_known && m.value != kNoValue) return 0;
    return -1;
  };
  for (std::uint32_t i = 0; i < t.mop_count; ++i) {
    int k = kind_of(set.mops[t.mop_begin + i]);
    if (k >= 0) return k == 1;
  }
  for (const Mop& m : set.mops) {
    int k = kind_of(m);
    if (k >= 0) return k == 1;
  }
  return false;
}

}  // namespace

TxnExtractor::TxnExtractor(Workload workload)
    : impl_(std::make_unique<Impl>(workload)) {}
TxnExtractor::~TxnExtractor() = default;
TxnExtractor::TxnExtractor(TxnExtractor&&) noexcept = default;
TxnExtractor& TxnExtractor::operator=(TxnExtractor&&) noexcept = default;
void TxnExtractor::Reserve(std::size_t events) { impl_->Reserve(events); }
void TxnExtractor::Add(const Event& e) { impl_->Add(e); }
std::size_t TxnExtractor::events() const { return impl_->events(); }
bool TxnExtractor::failed() const { return impl_->failed(); }
Workload TxnExtractor::workload() const { return impl_->workload(); }
ExtractResult TxnExtractor::Take() { return impl_->Take(); }

ExtractResult ExtractTxns(const History& history, Workload workload) {
  TxnExtractor extractor(workload);
  extractor.Reserve(history.size());
  for (const Event& e : history) {
    extractor.Add(e);
    if (extractor.failed()) break;
  }
  return extractor.Take();
}

std::string TxnName(TxnId id) { return "T" + std::to_string(id); }

std::string DescribeTxn(const TxnSet& set, TxnId id) {
  const Txn& t = set.txns[id];
  std::string out = TxnName(id);
  out += " (process " + std::to_string(t.process) + ", ";
  out += t.status == Status::kOk     ? "ok"
         : t.status == Status::kFail ? "fail"
                                     : "info";
  if (t.complete_index < 0) {
    out += ", event " + std::to_string(t.invoke_index) + ", never completed";
  } else {
    out += ", events " + std::to_string(t.invoke_index) + "-" +
           std::to_string(t.complete_index);
  }
  out += "):";
  const bool list_reads = ListReads(set, t);
  for (std::uint32_t i = 0; i < t.mop_count; ++i) {
    const Mop& m = set.mops[t.mop_begin + i];
    out += " [";
    out += m.kind == MopKind::kAppend  ? "append "
           : m.kind == MopKind::kWrite ? "w "
                                       : "r ";
    set.keys[m.key].AppendJson(out);
    out += ' ';
    if (m.kind == MopKind::kRead) {
      AppendRead(set, m, list_reads, out);
    } else {
      set.values[m.value].AppendJson(out);
    }
    out += ']';
  }
  return out;
}

}  // namespace faultline::checkers::txn

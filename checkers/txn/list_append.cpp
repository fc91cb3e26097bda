// InferListAppend (checkers/txn/txn_internal.h): Elle's inference for
// list-append histories. Reads return whole lists, so per key the longest
// read is the version order and every other read must be a prefix of it;
// consecutive elements give ww, the last element a read saw gives wr from
// its appender and rw to the appender of the next one. One rule of
// completeness more: an acknowledged append that no read ever showed must
// follow every read of its key (rw from each reader), and every element a
// read showed (ww from the appender of the last one). An info txn counts as
// committed (for this rule, and for edges) once a read showed any of its
// appends.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "checkers/txn/flat_map.h"
#include "checkers/txn/infer_common.h"
#include "checkers/txn/txn_internal.h"

namespace faultline::checkers::txn {
namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
// Reports of one type kept per key for the types a single fault can repeat
// on every later read (incompatible-order, G1b).
constexpr int kMaxPerKey = 8;

struct Append {
  TxnId txn = 0;
  KeyId key = 0;
  ValueId value = 0;
  std::uint32_t order = kNone;  // position in the key's version order
  bool last_in_txn = false;     // the txn's last append to this key
  bool observed = false;        // shown by some ok read of the key
  bool reported = false;        // a G1a about it was reported
};

// An ok read's external view: read_elems[begin, begin + len), the list
// without the reader's own earlier appends.
struct ExtRead {
  TxnId txn = 0;
  KeyId key = 0;
  std::uint32_t begin = 0;
  std::uint32_t len = 0;
  bool prefix = true;  // a prefix of the key's version order
};

// Per key: the version order (the longest external read) and how much of
// it is sound (up to the first duplicate element).
struct KeyOrder {
  std::uint32_t begin = 0;
  std::uint32_t len = 0;
  std::uint32_t valid_len = 0;
  TxnId reader = kNone;  // whose read it is; kNone when the key was not read
  bool conflict = false;
};

class ListAppendExplainer : public EdgeExplainer {
 public:
  SetView view;
  std::vector<Append> appends;
  FlatMap64 writers;  // PairKey(key, value) → index into appends
  std::vector<KeyOrder> orders;
  // Per txn: committed (ok, or info with an append that some read showed).
  std::vector<char> committed;

  std::uint32_t Writer(KeyId k, ValueId v) const {
    return writers.Find(PairKey(k, v));
  }

  // The external length of read mop `i` of txn `t` (its list without the
  // txn's own earlier appends to the key), or kNone when the list does not
  // end with them.
  std::uint32_t ExtLen(TxnId t, std::uint32_t i) const {
    const Mop& r = view.MopAt(t, i);
    std::vector<ValueId> own;
    for (std::uint32_t j = 0; j < i; ++j) {
      const Mop& m = view.MopAt(t, j);
      if (m.kind == MopKind::kAppend && m.key == r.key) own.push_back(m.value);
    }
    if (own.size() > r.read_len) return kNone;
    const ValueId* tail = view.elems + r.read_begin + r.read_len - own.size();
    if (!std::equal(own.begin(), own.end(), tail)) return kNone;
    return r.read_len - static_cast<std::uint32_t>(own.size());
  }

  // An append of committed `t` to `k` that no read showed, or kNone.
  std::uint32_t Unobserved(TxnId t, KeyId k) const {
    if (!committed[t]) return kNone;
    for (std::uint32_t i = 0; i < view.txns[t].mop_count; ++i) {
      const Mop& m = view.MopAt(t, i);
      if (m.kind != MopKind::kAppend || m.key != k) continue;
      std::uint32_t a = Writer(k, m.value);
      if (a != kNone && !appends[a].observed) return a;
    }
    return kNone;
  }

  std::string Why(TxnId from, TxnId to, EdgeBits kind) const override {
    std::string s;
    if (kind == kWW) s = WhyWW(from, to);
    if (kind == kWR) s = WhyWR(from, to);
    if (kind == kRW) s = WhyRW(from, to);
    if (s.empty()) {
      s = std::string(kind == kWW   ? "ww"
                      : kind == kWR ? "wr"
                                    : "rw") +
          " from " + TxnName(from) + " to " + TxnName(to) +
          ": no key found that shows it";
    }
    return s;
  }

 private:
  std::string Committed(TxnId t) const {
    return view.txns[t].status == Status::kOk
               ? "(acknowledged)"
               : "(committed: a read showed another of its appends)";
  }

  std::string WhyWW(TxnId from, TxnId to) const {
    for (std::uint32_t i = 0; i < view.txns[from].mop_count; ++i) {
      const Mop& m = view.MopAt(from, i);
      if (m.kind != MopKind::kAppend) continue;
      std::uint32_t a = Writer(m.key, m.value);
      if (a == kNone || appends[a].order == kNone) continue;
      const KeyOrder& o = orders[m.key];
      const ValueId* v = view.elems + o.begin;
      std::uint32_t p = appends[a].order;
      const std::string key = view.Key(m.key);
      if (p + 1 < o.valid_len) {
        std::uint32_t b = Writer(m.key, v[p + 1]);
        if (b == kNone || appends[b].txn != to) continue;
        return "ww on key " + key + ": " + TxnName(to) + " appended " +
               view.Val(v[p + 1]) + " right after " + TxnName(from) + "'s " +
               view.Val(v[p]) + " (key " + key + " read as [.. " +
               view.Val(v[p]) + " " + view.Val(v[p + 1]) + " ..] by " +
               TxnName(o.reader) + ")";
      }
      if (p + 1 == o.len && o.valid_len == o.len && !o.conflict) {
        std::uint32_t b = Unobserved(to, m.key);
        if (b == kNone) continue;
        return "ww on key " + key + ": " + TxnName(to) + " appended " +
               view.Val(appends[b].value) + " " + Committed(to) +
               ", which no read ever showed, so it follows " + view.Val(v[p]) +
               ", " + TxnName(from) +
               "'s append and the last element any read of key " + key +
               " showed";
      }
    }
    return "";
  }

  std::string WhyWR(TxnId from, TxnId to) const {
    for (std::uint32_t i = 0; i < view.txns[to].mop_count; ++i) {
      const Mop& m = view.MopAt(to, i);
      if (m.kind != MopKind::kRead || !m.read_known) continue;
      std::uint32_t n = ExtLen(to, i);
      if (n == kNone || n == 0) continue;
      ValueId x = view.elems[m.read_begin + n - 1];
      std::uint32_t a = Writer(m.key, x);
      if (a == kNone || appends[a].txn != from) continue;
      const std::string key = view.Key(m.key);
      return "wr on key " + key + ": " + TxnName(to) + " read key " + key +
             " as " + view.Tail(view.elems + m.read_begin, n) + ", and " +
             view.Val(x) + " was appended by " + TxnName(from);
    }
    return "";
  }

  std::string WhyRW(TxnId from, TxnId to) const {
    for (std::uint32_t i = 0; i < view.txns[from].mop_count; ++i) {
      const Mop& m = view.MopAt(from, i);
      if (m.kind != MopKind::kRead || !m.read_known) continue;
      std::uint32_t n = ExtLen(from, i);
      if (n == kNone) continue;
      const KeyOrder& o = orders[m.key];
      const std::string key = view.Key(m.key);
      if (n < o.valid_len) {
        ValueId y = view.elems[o.begin + n];
        std::uint32_t b = Writer(m.key, y);
        if (b != kNone && appends[b].txn == to) {
          return "rw on key " + key + ": " + TxnName(from) + " read key " +
                 key + " as " + view.Tail(view.elems + m.read_begin, n) +
                 ", which " + TxnName(to) + "'s append of " + view.Val(y) +
                 " follows";
        }
      }
      std::uint32_t b = Unobserved(to, m.key);
      if (b != kNone) {
        return "rw on key " + key + ": " + TxnName(from) + " read key " + key +
               " without " + view.Val(appends[b].value) + ", which " +
               TxnName(to) + " appended " + Committed(to) +
               " and no read ever showed, so " + TxnName(to) +
               "'s append follows every read";
      }
    }
    return "";
  }
};

class Inferrer {
 public:
  explicit Inferrer(const Limits& limits) : limits_(limits) {}

  Inference Run(ExtractResult extracted) {
    return RunInference<ListAppendExplainer>(
        std::move(extracted), Workload::kListAppend,
        [this](Inference& inf, ListAppendExplainer& ex) {
          inf_ = &inf;
          ex_ = &ex;
          if (ReadTxns()) Orders();
        });
  }

 private:
  const TxnSet& set() const { return inf_->set; }
  Status StatusOf(TxnId t) const { return set().txns[t].status; }
  bool Fails(std::uint32_t a) const {
    return StatusOf(ex_->appends[a].txn) == Status::kFail;
  }

  void Report(const char* type, std::vector<TxnId> txns, KeyId key,
              std::string text) {
    inf_->anomalies.push_back(
        Anomaly{type, std::move(txns), key, std::move(text)});
  }

  // True (and gave_up set) when a limit stops the inference
  // (LimitCheck::Step, with this inference's memory estimate).
  bool Stop(std::uint64_t done, std::uint64_t total, const char* verb,
            const char* noun) {
    inf_->gave_up = limits_.Step(done, total, verb, noun, [this] {
      return SetBytes(set()) + Bytes(ex_->appends) +
             ex_->writers.MemoryBytes() + Bytes(reads_) + Bytes(ex_->orders) +
             Bytes(by_key_) + inf_->graph.MemoryBytes() +
             inf_->anomalies.capacity() * sizeof(Anomaly);
    });
    return !inf_->gave_up.empty();
  }

  // Pass 1: registers every append (unique per key), checks each ok txn's
  // reads against its own earlier reads and appends (internal), and keeps
  // each ok read's external view. False when stopped or malformed.
  bool ReadTxns() {
    const TxnSet& s = set();
    std::size_t n_appends = 0;
    for (const Mop& m : s.mops) n_appends += m.kind == MopKind::kAppend;
    ex_->appends.reserve(n_appends);
    ex_->writers.Reserve(n_appends);
    reads_.reserve(s.mops.size() - n_appends);
    std::vector<std::uint32_t> idx;
    std::vector<ValueId> own;
    for (TxnId t = 0; t < s.txns.size(); ++t) {
      if (Stop(t, s.txns.size(), "reading", "transactions")) {
        return false;
      }
      const Txn& txn = s.txns[t];
      const Mop* mops = s.mops.data() + txn.mop_begin;
      if (!ForEachKeyGroup(mops, txn.mop_count, idx,
                           [&](const std::uint32_t* b, const std::uint32_t* e) {
                             return Group(t, mops, b, e, own);
                           })) {
        return false;
      }
    }
    return true;
  }

  // One txn's mops on one key, in order.
  bool Group(TxnId t, const Mop* mops, const std::uint32_t* begin,
             const std::uint32_t* end, std::vector<ValueId>& own) {
    const TxnSet& s = set();
    const bool ok = s.txns[t].status == Status::kOk;
    const KeyId key = mops[*begin].key;
    own.clear();
    const Mop* prev = nullptr;
    std::size_t since = 0;  // own[since..]: appended after prev
    bool reported = false;
    std::uint32_t last = kNone;
    for (const std::uint32_t* p = begin; p != end; ++p) {
      const Mop& m = mops[*p];
      if (m.kind == MopKind::kAppend) {
        auto a = static_cast<std::uint32_t>(ex_->appends.size());
        std::uint32_t had = ex_->writers.Insert(PairKey(key, m.value), a);
        if (had != FlatMap64::kAbsent) {
          inf_->error = ReadError{
              s.txns[t].invoke_line, 0,
              "value " + ex_->view.Val(m.value) + " is appended to key " +
                  ex_->view.Key(key) + " a second time (first by " +
                  TxnName(ex_->appends[had].txn) + ", invoked on line " +
                  std::to_string(s.txns[ex_->appends[had].txn].invoke_line) +
                  "); list-append needs every value appended to a key to be "
                  "unique over the history"};
          return false;
        }
        ex_->appends.push_back(Append{t, key, m.value});
        last = a;
        own.push_back(m.value);
        continue;
      }
      if (!ok || !m.read_known) continue;
      const ValueId* e = s.read_elems.data() + m.read_begin;
      const std::uint32_t n = m.read_len;
      const bool ends_with_own =
          own.size() <= n &&
          std::equal(own.begin(), own.end(), e + n - own.size());
      if (!reported) {
        if (prev != nullptr) {
          std::vector<ValueId> want(
              s.read_elems.data() + prev->read_begin,
              s.read_elems.data() + prev->read_begin + prev->read_len);
          want.insert(want.end(), own.begin() + since, own.end());
          if (want.size() != n || !std::equal(want.begin(), want.end(), e)) {
            ReportInternalAfterRead(t, key, *prev, own, since, m, want);
            reported = true;
          }
        } else if (!ends_with_own) {
          const SetView& v = ex_->view;
          Report("internal", {t}, key,
                 TxnName(t) + " appended " + v.List(own) + " to key " +
                     v.Key(key) + " and then read it as " + v.List(e, n) +
                     ", which does not end with its own appends (internal).");
          reported = true;
        }
      }
      if (ends_with_own) {
        reads_.push_back(ExtRead{t, key, m.read_begin,
                                 n - static_cast<std::uint32_t>(own.size())});
      }
      prev = &m;
      since = own.size();
    }
    if (last != kNone) ex_->appends[last].last_in_txn = true;
    if (ok && !reported) FutureReads(t, key, mops, begin, end);
    return true;
  }

  // A read that shows a value its own transaction appends only later: no
  // serial order explains it (values are unique per key).
  void FutureReads(TxnId t, KeyId key, const Mop* mops,
                   const std::uint32_t* begin, const std::uint32_t* end) {
    const TxnSet& s = set();
    for (const std::uint32_t* p = begin; p != end; ++p) {
      const Mop& r = mops[*p];
      if (r.kind != MopKind::kRead || !r.read_known) continue;
      const ValueId* e = s.read_elems.data() + r.read_begin;
      for (const std::uint32_t* q = p + 1; q != end; ++q) {
        const Mop& a = mops[*q];
        if (a.kind != MopKind::kAppend) continue;
        if (std::find(e, e + r.read_len, a.value) == e + r.read_len) continue;
        const SetView& v = ex_->view;
        Report("internal", {t}, key,
               TxnName(t) + " read key " + v.Key(key) + " as " +
                   v.List(e, r.read_len) + ", which shows " + v.Val(a.value) +
                   ", an append it made only later in the same transaction "
                   "(internal).");
        return;
      }
    }
  }

  void ReportInternalAfterRead(TxnId t, KeyId key, const Mop& prev,
                               const std::vector<ValueId>& own,
                               std::size_t since, const Mop& m,
                               const std::vector<ValueId>& want) {
    const SetView& v = ex_->view;
    std::string text = TxnName(t) + " read key " + v.Key(key) + " as " +
                       v.List(v.elems + prev.read_begin, prev.read_len);
    if (since < own.size()) {
      std::vector<ValueId> added(own.begin() + since, own.end());
      text += ", then appended " + v.List(added) + ",";
    }
    text += " and then read it as " +
            v.List(v.elems + m.read_begin, m.read_len) +
            "; it should have read " + v.List(want) +
            ", its own earlier read and appends (internal).";
    Report("internal", {t}, key, std::move(text));
  }

  // Pass 2, per key: version order, anomalies, edges.
  void Orders() {
    const TxnSet& s = set();
    const auto n_keys = static_cast<std::uint32_t>(s.keys.size());
    ex_->orders.assign(n_keys, KeyOrder{});
    // Reads, then appends, grouped by key (stable: txn order within a key).
    std::vector<std::uint32_t> read_start(n_keys + 1, 0);
    std::vector<std::uint32_t> append_start(n_keys + 1, 0);
    for (const ExtRead& r : reads_) ++read_start[r.key + 1];
    for (const Append& a : ex_->appends) ++append_start[a.key + 1];
    for (std::uint32_t k = 0; k < n_keys; ++k) {
      read_start[k + 1] += read_start[k];
      append_start[k + 1] += append_start[k];
    }
    by_key_.resize(reads_.size());
    {
      std::vector<std::uint32_t> fill(read_start.begin(), read_start.end() - 1);
      for (std::uint32_t i = 0; i < reads_.size(); ++i) {
        by_key_[fill[reads_[i].key]++] = i;
      }
    }
    std::vector<std::uint32_t> appends_by_key(ex_->appends.size());
    {
      std::vector<std::uint32_t> fill(append_start.begin(),
                                      append_start.end() - 1);
      for (std::uint32_t i = 0; i < ex_->appends.size(); ++i) {
        appends_by_key[fill[ex_->appends[i].key]++] = i;
      }
    }
    for (KeyId k = 0; k < n_keys; ++k) {
      if (Stop(k, 2 * n_keys, "inferring", "key steps")) return;
      Key(k, by_key_.data() + read_start[k],
          by_key_.data() + read_start[k + 1]);
    }
    // Committed: ok, or info with an append some read showed.
    ex_->committed.assign(s.txns.size(), 0);
    for (TxnId t = 0; t < s.txns.size(); ++t) {
      ex_->committed[t] = s.txns[t].status == Status::kOk;
    }
    for (const Append& a : ex_->appends) {
      if (a.observed && StatusOf(a.txn) == Status::kInfo) {
        ex_->committed[a.txn] = 1;
      }
    }
    for (KeyId k = 0; k < n_keys; ++k) {
      if (Stop(n_keys + k, 2 * n_keys, "inferring", "key steps")) return;
      KeyEdges(k, by_key_.data() + read_start[k],
               by_key_.data() + read_start[k + 1],
               appends_by_key.data() + append_start[k],
               appends_by_key.data() + append_start[k + 1]);
    }
  }

  // Phase 1 of a key: its version order, the reads that conflict with it,
  // and the anomalies of its elements; marks the appends reads showed.
  void Key(KeyId k, const std::uint32_t* rb, const std::uint32_t* re) {
    if (rb == re) return;
    const ValueId* elems = set().read_elems.data();
    const SetView& view = ex_->view;
    KeyOrder& o = ex_->orders[k];
    const ExtRead* longest = &reads_[*rb];
    for (const std::uint32_t* r = rb; r != re; ++r) {
      if (reads_[*r].len > longest->len) longest = &reads_[*r];
    }
    o.begin = longest->begin;
    o.len = longest->len;
    o.valid_len = o.len;
    o.reader = longest->txn;
    const ValueId* v = elems + o.begin;

    // Reads that are not prefixes of the version order.
    int conflicts = 0;
    for (const std::uint32_t* r = rb; r != re; ++r) {
      const ExtRead& x = reads_[*r];
      if (x.begin == o.begin) continue;
      const ValueId* e = elems + x.begin;
      std::uint32_t i = 0;
      while (i < x.len && e[i] == v[i]) ++i;
      if (i == x.len) continue;
      reads_[*r].prefix = false;
      o.conflict = true;
      Conflicting(k, x);
      if (conflicts++ < kMaxPerKey) {
        Report("incompatible-order", {x.txn, o.reader}, k,
               TxnName(x.txn) + " read key " + view.Key(k) + " as " +
                   view.List(e, x.len) + " and " + TxnName(o.reader) +
                   " read it as " + view.List(v, o.len) +
                   "; they differ at index " + std::to_string(i) + " (" +
                   view.Val(e[i]) + " vs " + view.Val(v[i]) +
                   "), so no single order of the appends to key " +
                   view.Key(k) + " explains both (incompatible-order).");
      }
    }

    // The version order's elements: writers, duplicates, garbage, G1a.
    for (std::uint32_t i = 0; i < o.len; ++i) {
      std::uint32_t a = ex_->Writer(k, v[i]);
      if (a == kNone) {
        const ExtRead& x = FirstReadPast(rb, re, i);
        Report("garbage-read", {x.txn}, k,
               TxnName(x.txn) + " read key " + view.Key(k) + " as " +
                   view.List(elems + x.begin, x.len) + "; " + view.Val(v[i]) +
                   " was never appended to key " + view.Key(k) +
                   " by any transaction (garbage-read).");
        continue;
      }
      Append& ap = ex_->appends[a];
      if (ap.order != kNone && o.valid_len == o.len) {
        o.valid_len = i;
        Report("duplicate-elements", {o.reader}, k,
               TxnName(o.reader) + " read key " + view.Key(k) + " as " +
                   view.List(v, o.len) + ", which holds " + view.Val(v[i]) +
                   " twice, at index " + std::to_string(ap.order) + " and " +
                   std::to_string(i) + " (duplicate-elements).");
        continue;
      }
      ap.observed = true;
      if (i < o.valid_len) ap.order = i;
      if (Fails(a) && !ap.reported) {
        ap.reported = true;
        const ExtRead& x = FirstReadPast(rb, re, i);
        ReportG1a(x, ap);
      }
    }
  }

  // Phase 2 of a key, once every key's observed appends are known: edges
  // and G1b.
  void KeyEdges(KeyId k, const std::uint32_t* rb, const std::uint32_t* re,
                const std::uint32_t* ab, const std::uint32_t* ae) {
    if (rb == re) return;
    const KeyOrder& o = ex_->orders[k];
    const ValueId* v = set().read_elems.data() + o.begin;
    // ww along the version order.
    for (std::uint32_t i = 0; i + 1 < o.valid_len; ++i) {
      std::uint32_t a = ex_->Writer(k, v[i]);
      std::uint32_t b = ex_->Writer(k, v[i + 1]);
      if (a == kNone || b == kNone || Fails(a) || Fails(b)) continue;
      inf_->graph.Add(ex_->appends[a].txn, ex_->appends[b].txn, kWW);
    }
    // wr and rw from each read; G1b.
    int g1b = 0;
    for (const std::uint32_t* r = rb; r != re; ++r) {
      if (!reads_[*r].prefix) continue;
      const ExtRead& x = reads_[*r];
      limits_.Count(1);
      if (x.len > o.valid_len) continue;
      if (x.len > 0) {
        std::uint32_t a = ex_->Writer(k, v[x.len - 1]);
        if (a != kNone && !Fails(a)) {
          const Append& ap = ex_->appends[a];
          inf_->graph.Add(ap.txn, x.txn, kWR);
          if (!ap.last_in_txn && ap.txn != x.txn && g1b++ < kMaxPerKey) {
            ReportG1b(x, ap);
          }
        }
      }
      if (x.len < o.valid_len) {
        std::uint32_t b = ex_->Writer(k, v[x.len]);
        if (b != kNone && !Fails(b)) {
          inf_->graph.Add(x.txn, ex_->appends[b].txn, kRW);
        }
      }
    }
    // Committed appends no read showed follow every read.
    const bool extend = !o.conflict && o.valid_len == o.len && o.len > 0;
    std::uint32_t last = extend ? ex_->Writer(k, v[o.len - 1]) : kNone;
    if (last != kNone && Fails(last)) last = kNone;
    for (const std::uint32_t* a = ab; a != ae; ++a) {
      const Append& ap = ex_->appends[*a];
      if (ap.observed || !ex_->committed[ap.txn]) continue;
      for (const std::uint32_t* r = rb; r != re; ++r) {
        if (!reads_[*r].prefix) continue;
        inf_->graph.Add(reads_[*r].txn, ap.txn, kRW);
      }
      limits_.Count(static_cast<std::uint64_t>(re - rb));
      if (last != kNone) inf_->graph.Add(ex_->appends[last].txn, ap.txn, kWW);
    }
  }

  // The first read (in txn order) of the key that is a prefix of the version
  // order and longer than `i`; the version order's own read when none is.
  const ExtRead& FirstReadPast(const std::uint32_t* rb, const std::uint32_t* re,
                               std::uint32_t i) const {
    for (const std::uint32_t* r = rb; r != re; ++r) {
      if (reads_[*r].prefix && reads_[*r].len > i) return reads_[*r];
    }
    return reads_[*rb];
  }

  // A read that is not a prefix of the version order: its elements are
  // still observed; garbage, aborted and duplicate elements are reported.
  void Conflicting(KeyId k, const ExtRead& x) {
    const SetView& view = ex_->view;
    const ValueId* e = set().read_elems.data() + x.begin;
    std::vector<ValueId> sorted(e, e + x.len);
    std::sort(sorted.begin(), sorted.end());
    auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end()) {
      Report("duplicate-elements", {x.txn}, k,
             TxnName(x.txn) + " read key " + view.Key(k) + " as " +
                 view.List(e, x.len) + ", which holds " + view.Val(*dup) +
                 " more than once (duplicate-elements).");
    }
    for (std::uint32_t i = 0; i < x.len; ++i) {
      std::uint32_t a = ex_->Writer(k, e[i]);
      if (a == kNone) {
        Report("garbage-read", {x.txn}, k,
               TxnName(x.txn) + " read key " + view.Key(k) + " as " +
                   view.List(e, x.len) + "; " + view.Val(e[i]) +
                   " was never appended to key " + view.Key(k) +
                   " by any transaction (garbage-read).");
        continue;
      }
      Append& ap = ex_->appends[a];
      ap.observed = true;
      if (Fails(a) && !ap.reported) {
        ap.reported = true;
        ReportG1a(x, ap);
      }
    }
  }

  void ReportG1a(const ExtRead& x, const Append& ap) {
    const SetView& view = ex_->view;
    Report("G1a", {x.txn, ap.txn}, ap.key,
           TxnName(x.txn) + " read key " + view.Key(ap.key) + " as " +
               view.List(view.elems + x.begin, x.len) + "; " +
               view.Val(ap.value) + " was appended by " + TxnName(ap.txn) +
               ", which failed (G1a: aborted read).");
  }

  void ReportG1b(const ExtRead& x, const Append& ap) {
    const SetView& view = ex_->view;
    ValueId later = kNoValue;
    const Txn& w = set().txns[ap.txn];
    bool past = false;
    for (std::uint32_t i = 0; i < w.mop_count && later == kNoValue; ++i) {
      const Mop& m = view.MopAt(ap.txn, i);
      if (m.kind != MopKind::kAppend || m.key != ap.key) continue;
      if (past) later = m.value;
      if (m.value == ap.value) past = true;
    }
    Report("G1b", {x.txn, ap.txn}, ap.key,
           TxnName(x.txn) + " read key " + view.Key(ap.key) + " as " +
               view.List(view.elems + x.begin, x.len) + "; " +
               view.Val(ap.value) + " was appended by " + TxnName(ap.txn) +
               ", which appended " + view.Val(later) + " to key " +
               view.Key(ap.key) + " after it, so " + TxnName(x.txn) + " saw " +
               TxnName(ap.txn) +
               "'s intermediate state (G1b: intermediate read).");
  }

  LimitCheck limits_;
  Inference* inf_ = nullptr;
  ListAppendExplainer* ex_ = nullptr;
  std::vector<ExtRead> reads_;
  std::vector<std::uint32_t> by_key_;
};

}  // namespace

Inference InferListAppend(const History& history, const Limits& limits) {
  return InferListAppend(ExtractTxns(history, Workload::kListAppend), limits);
}

Inference InferListAppend(ExtractResult extracted, const Limits& limits) {
  return Inferrer(limits).Run(std::move(extracted));
}

}  // namespace faultline::checkers::txn

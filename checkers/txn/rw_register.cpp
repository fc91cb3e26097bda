// InferRwRegister (checkers/txn/txn_internal.h): Elle's inference for
// read-write registers. Writes are unique per key, so a read names the
// transaction it read from (wr). The version order of a key is known only
// in pieces: the initial null precedes every write, and a committed
// transaction that read v and then wrote w puts v before w (ww from v's
// writer, rw from every other reader of v).
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

struct Write {
  TxnId txn = 0;
  KeyId key = 0;
  ValueId value = 0;
  bool last_in_txn = false;  // the txn's last write to this key
  bool observed = false;     // some ok txn read it
  bool reported = false;     // a G1a about it was reported
};

// A read of `key` before the txn's own write or read of it (external);
// value kNoValue: it read null. With `wrote` != kNone the txn later wrote
// `wrote` (its last write of the key): read value < wrote in the order.
struct ExtRead {
  KeyId key = 0;
  ValueId value = kNoValue;
  TxnId txn = 0;
  ValueId wrote = kNone;
};

// One txn's view of one key, recomputed by the explainer.
struct TxnKey {
  bool read = false;  // has an external read
  ValueId read_value = kNoValue;
  ValueId wrote = kNone;  // last write, kNone when none
};

class RwRegisterExplainer : public EdgeExplainer {
 public:
  SetView view;
  std::vector<Write> writes;
  FlatMap64 writers;  // PairKey(key, value) → index into writes

  std::uint32_t Writer(KeyId k, ValueId v) const {
    return v == kNoValue ? kNone : writers.Find(PairKey(k, v));
  }

  TxnKey Of(TxnId t, KeyId k) const {
    TxnKey r;
    bool touched = false;
    for (std::uint32_t i = 0; i < view.txns[t].mop_count; ++i) {
      const Mop& m = view.MopAt(t, i);
      if (m.key != k) continue;
      if (m.kind == MopKind::kWrite) {
        r.wrote = m.value;
      } else if (!touched && m.read_known) {
        r.read = true;
        r.read_value = m.value;
      }
      touched = true;
    }
    return r;
  }

  std::string Why(TxnId from, TxnId to, EdgeBits kind) const override {
    // The keys both touch, each once.
    std::vector<KeyId> keys;
    for (std::uint32_t i = 0; i < view.txns[from].mop_count; ++i) {
      keys.push_back(view.MopAt(from, i).key);
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (KeyId k : keys) {
      const TxnKey f = Of(from, k);
      const TxnKey t = Of(to, k);
      const std::string key = view.Key(k);
      if (kind == kWR && t.read && t.read_value != kNoValue) {
        std::uint32_t w = Writer(k, t.read_value);
        if (w != kNone && writes[w].txn == from) {
          return "wr on key " + key + ": " + TxnName(to) + " read " +
                 view.Val(t.read_value) + ", which " + TxnName(from) + " wrote";
        }
      }
      if (kind == kWW && t.read && t.wrote != kNone &&
          t.read_value != kNoValue) {
        std::uint32_t w = Writer(k, t.read_value);
        if (w != kNone && writes[w].txn == from) {
          return "ww on key " + key + ": " + TxnName(to) + " read " +
                 view.Val(t.read_value) + " and then wrote " +
                 view.Val(t.wrote) + ", so " + view.Val(t.wrote) + " follows " +
                 TxnName(from) + "'s " + view.Val(t.read_value);
        }
      }
      if (kind == kRW && f.read) {
        if (f.read_value == kNoValue && t.wrote != kNone) {
          return "rw on key " + key + ": " + TxnName(from) + " read key " +
                 key + " before any write (nil), and " + TxnName(to) +
                 " wrote " + view.Val(t.wrote);
        }
        if (f.read_value != kNoValue && t.read && t.wrote != kNone &&
            t.read_value == f.read_value) {
          return "rw on key " + key + ": " + TxnName(from) + " read " +
                 view.Val(f.read_value) + ", and " + TxnName(to) +
                 " (which read " + view.Val(f.read_value) + " and wrote " +
                 view.Val(t.wrote) + ") overwrote it";
        }
      }
    }
    return std::string(kind == kWW   ? "ww"
                       : kind == kWR ? "wr"
                                     : "rw") +
           " from " + TxnName(from) + " to " + TxnName(to) +
           ": no key found that shows it";
  }
};

class Inferrer {
 public:
  explicit Inferrer(const Limits& limits) : limits_(limits) {}

  Inference Run(ExtractResult extracted) {
    return RunInference<RwRegisterExplainer>(
        std::move(extracted), Workload::kRwRegister,
        [this](Inference& inf, RwRegisterExplainer& ex) {
          inf_ = &inf;
          ex_ = &ex;
          if (ReadTxns()) Edges();
        });
  }

 private:
  const TxnSet& set() const { return inf_->set; }
  Status StatusOf(TxnId t) const { return set().txns[t].status; }

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
      return SetBytes(set()) + Bytes(ex_->writes) + ex_->writers.MemoryBytes() +
             Bytes(reads_) + inf_->graph.MemoryBytes() +
             inf_->anomalies.capacity() * sizeof(Anomaly);
    });
    return !inf_->gave_up.empty();
  }

  // Pass 1: registers every write (unique per key), checks each ok txn's
  // reads against its own earlier reads and writes (internal), and keeps
  // the external reads. False when stopped or malformed.
  bool ReadTxns() {
    const TxnSet& s = set();
    std::size_t n_writes = 0;
    for (const Mop& m : s.mops) n_writes += m.kind == MopKind::kWrite;
    ex_->writes.reserve(n_writes);
    ex_->writers.Reserve(n_writes);
    reads_.reserve(s.mops.size() - n_writes);
    std::vector<std::uint32_t> idx;
    for (TxnId t = 0; t < s.txns.size(); ++t) {
      if (Stop(t, s.txns.size(), "reading", "transactions")) return false;
      const Txn& txn = s.txns[t];
      const Mop* mops = s.mops.data() + txn.mop_begin;
      if (!ForEachKeyGroup(mops, txn.mop_count, idx,
                           [&](const std::uint32_t* b, const std::uint32_t* e) {
                             return Group(t, mops, b, e);
                           })) {
        return false;
      }
    }
    return true;
  }

  bool Group(TxnId t, const Mop* mops, const std::uint32_t* begin,
             const std::uint32_t* end) {
    const TxnSet& s = set();
    const SetView& v = ex_->view;
    const bool ok = s.txns[t].status == Status::kOk;
    const KeyId key = mops[*begin].key;
    std::uint32_t last = kNone;
    bool wrote = false, read = false, reported = false;
    ValueId written = kNoValue, seen = kNoValue;
    std::uint32_t ext = kNone;  // index into reads_
    for (const std::uint32_t* p = begin; p != end; ++p) {
      const Mop& m = mops[*p];
      if (m.kind == MopKind::kWrite) {
        auto w = static_cast<std::uint32_t>(ex_->writes.size());
        std::uint32_t had = ex_->writers.Insert(PairKey(key, m.value), w);
        if (had != FlatMap64::kAbsent) {
          TxnId first = ex_->writes[had].txn;
          inf_->error = ReadError{
              s.txns[t].invoke_line, 0,
              "value " + v.Val(m.value) + " is written to key " + v.Key(key) +
                  " a second time (first by " + TxnName(first) +
                  ", invoked on line " +
                  std::to_string(s.txns[first].invoke_line) +
                  "); rw-register needs every value written to a key to be "
                  "unique over the history"};
          return false;
        }
        ex_->writes.push_back(Write{t, key, m.value});
        last = w;
        wrote = true;
        written = m.value;
        continue;
      }
      if (!ok || !m.read_known) continue;
      if (wrote) {
        if (m.value != written && !reported) {
          Report("internal", {t}, key,
                 TxnName(t) + " wrote " + v.Val(written) + " to key " +
                     v.Key(key) + " and then read it as " + v.Val(m.value) +
                     "; it should have read its own write (internal).");
          reported = true;
        }
      } else if (read) {
        if (m.value != seen && !reported) {
          Report("internal", {t}, key,
                 TxnName(t) + " read key " + v.Key(key) + " as " + v.Val(seen) +
                     " and then as " + v.Val(m.value) +
                     "; with no write of its own between, the two reads "
                     "should agree (internal).");
          reported = true;
        }
      } else {
        ext = static_cast<std::uint32_t>(reads_.size());
        reads_.push_back(ExtRead{key, m.value, t, kNone});
      }
      read = true;
      seen = m.value;
    }
    if (last != kNone) ex_->writes[last].last_in_txn = true;
    if (ext != kNone && wrote) reads_[ext].wrote = written;
    return true;
  }

  // Pass 2: wr per read; per (key, value read) the txns that then wrote
  // give ww from its writer and rw from its other readers; reads of null
  // give rw to every committed write of the key.
  void Edges() {
    const SetView& v = ex_->view;
    const TxnSet& s = set();
    // wr, garbage-read, G1a, G1b; marks observed writes.
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      if (Stop(i, reads_.size(), "reading", "reads")) return;
      const ExtRead& r = reads_[i];
      if (r.value == kNoValue) continue;
      std::uint32_t w = ex_->Writer(r.key, r.value);
      if (w == kNone) {
        Report("garbage-read", {r.txn}, r.key,
               TxnName(r.txn) + " read key " + v.Key(r.key) + " as " +
                   v.Val(r.value) + ", which no transaction wrote to key " +
                   v.Key(r.key) + " (garbage-read).");
        continue;
      }
      Write& wr = ex_->writes[w];
      if (wr.txn == r.txn) continue;  // read its own later write: no edge
      if (StatusOf(wr.txn) == Status::kFail) {
        if (!wr.reported) {
          wr.reported = true;
          Report("G1a", {r.txn, wr.txn}, r.key,
                 TxnName(r.txn) + " read key " + v.Key(r.key) + " as " +
                     v.Val(r.value) + ", which was written by " +
                     TxnName(wr.txn) + ", which failed (G1a: aborted read).");
        }
        continue;
      }
      wr.observed = true;
      inf_->graph.Add(wr.txn, r.txn, kWR);
      if (!wr.last_in_txn) {
        Report("G1b", {r.txn, wr.txn}, r.key,
               TxnName(r.txn) + " read key " + v.Key(r.key) + " as " +
                   v.Val(r.value) + ", which " + TxnName(wr.txn) +
                   " wrote and then overwrote in the same transaction, so " +
                   TxnName(r.txn) + " saw " + TxnName(wr.txn) +
                   "'s intermediate state (G1b: intermediate read).");
      }
    }
    // Group the reads by (key, value read).
    std::sort(reads_.begin(), reads_.end(),
              [](const ExtRead& a, const ExtRead& b) {
                if (a.key != b.key) return a.key < b.key;
                if (a.value != b.value) return a.value < b.value;
                return a.txn < b.txn;
              });
    // Committed writers per key (ok, or info with a write someone read),
    // for the readers of null.
    const auto n_keys = static_cast<std::uint32_t>(s.keys.size());
    std::vector<std::uint32_t> start(n_keys + 1, 0);
    for (const Write& w : ex_->writes) ++start[w.key + 1];
    for (std::uint32_t k = 0; k < n_keys; ++k) start[k + 1] += start[k];
    std::vector<char> is_committed(s.txns.size(), 0);
    for (TxnId t = 0; t < s.txns.size(); ++t) {
      is_committed[t] = s.txns[t].status == Status::kOk;
    }
    for (const Write& w : ex_->writes) {
      if (w.observed) is_committed[w.txn] = 1;
    }
    std::vector<TxnId> committed(ex_->writes.size(), kNone);
    {
      std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
      for (const Write& w : ex_->writes) {
        if (is_committed[w.txn]) committed[fill[w.key]++] = w.txn;
      }
    }
    std::vector<TxnId> after;  // txns that read the group's value and wrote
    for (std::size_t g = 0; g < reads_.size();) {
      std::size_t end = g;
      while (end < reads_.size() && reads_[end].key == reads_[g].key &&
             reads_[end].value == reads_[g].value) {
        ++end;
      }
      if (Stop(g, reads_.size(), "ordering", "reads")) return;
      Group2(g, end, committed.data() + start[reads_[g].key],
             committed.data() + start[reads_[g].key + 1], after);
      limits_.Count(end - g);
      g = end;
    }
  }

  void Group2(std::size_t g, std::size_t end, const TxnId* cb, const TxnId* ce,
              std::vector<TxnId>& after) {
    const SetView& v = ex_->view;
    const KeyId key = reads_[g].key;
    const ValueId value = reads_[g].value;
    after.clear();
    std::vector<ValueId> wrote;
    for (std::size_t i = g; i < end; ++i) {
      if (reads_[i].wrote != kNone) {
        after.push_back(reads_[i].txn);
        wrote.push_back(reads_[i].wrote);
      }
    }
    if (value == kNoValue) {
      // Every committed write of the key follows the initial state.
      for (std::size_t i = g; i < end; ++i) {
        for (const TxnId* c = cb; c != ce && *c != kNone; ++c) {
          inf_->graph.Add(reads_[i].txn, *c, kRW);
        }
        limits_.Count(static_cast<std::uint64_t>(ce - cb));
      }
    } else if (!after.empty()) {
      std::uint32_t w = ex_->Writer(key, value);
      if (w != kNone && StatusOf(ex_->writes[w].txn) != Status::kFail) {
        for (TxnId t : after) inf_->graph.Add(ex_->writes[w].txn, t, kWW);
      }
      for (std::size_t i = g; i < end; ++i) {
        for (TxnId t : after) inf_->graph.Add(reads_[i].txn, t, kRW);
      }
      limits_.Count((end - g) * after.size());
    }
    if (after.size() >= 2) {
      // Named in full up to kNamed txns, then counted.
      constexpr std::size_t kNamed = 6;
      const std::size_t shown = std::min(after.size(), kNamed);
      std::string names, values;
      for (std::size_t i = 0; i < shown; ++i) {
        const char* sep = i == 0                                    ? ""
                          : i + 1 == shown && shown == after.size() ? " and "
                                                                    : ", ";
        names += sep + TxnName(after[i]);
        values += sep + v.Val(wrote[i]);
      }
      if (shown < after.size()) {
        const std::string more =
            " and " + std::to_string(after.size() - shown) + " more";
        names += more + " transactions";
        values += more;
      }
      Report("lost-update", after, key,
             names + (after.size() == 2 ? " both" : " all") + " read key " +
                 v.Key(key) + " as " + v.Val(value) + " and then wrote it (" +
                 values +
                 "); in any serial order only one of them could have read " +
                 v.Val(value) +
                 ", so the other writes were lost "
                 "(lost-update).");
    }
  }

  LimitCheck limits_;
  Inference* inf_ = nullptr;
  RwRegisterExplainer* ex_ = nullptr;
  std::vector<ExtRead> reads_;
};

}  // namespace

Inference InferRwRegister(const History& history, const Limits& limits) {
  return InferRwRegister(ExtractTxns(history, Workload::kRwRegister), limits);
}

Inference InferRwRegister(ExtractResult extracted, const Limits& limits) {
  return Inferrer(limits).Run(std::move(extracted));
}

}  // namespace faultline::checkers::txn

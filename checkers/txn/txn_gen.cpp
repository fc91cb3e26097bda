// Simulated executions of small transactional histories, with injected
// anomalies (checkers/txn/txn_gen.h).
#include "checkers/txn/txn_gen.h"

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace faultline::checkers::txn {

std::string_view ToString(Injection i) {
  switch (i) {
    case Injection::kNone:
      return "none";
    case Injection::kStaleRead:
      return "stale-read";
    case Injection::kAbortedRead:
      return "aborted-read";
    case Injection::kIntermediateRead:
      return "intermediate-read";
    case Injection::kInternal:
      return "internal";
    case Injection::kReorder:
      return "reorder";
    case Injection::kGarbage:
      return "garbage";
    case Injection::kWriteSkew:
      return "write-skew";
    case Injection::kRealtime:
      return "realtime";
  }
  return "?";
}

namespace {

constexpr std::int64_t kGarbageBase = 1'000'000;

enum class Outcome : std::uint8_t { kOk, kFail, kInfo };

struct GMop {
  bool write = false;
  int key = 0;
  std::int64_t value = 0;  // write: the value written
  int version = 0;         // read: the key's version count it saw
  Value result;            // read of an ok txn: what it returned
};

struct GTxn {
  Outcome outcome = Outcome::kOk;
  bool commits = true;     // takes effect (ok; info that committed; the
                           // aborted-read injection's fail txn)
  bool info_event = true;  // info: an info completion is written
  std::vector<GMop> mops;
  int after = -1;        // may take effect only after this txn did
  int snapshot_of = -1;  // write skew: reads see the state before this
                         // txn's effect
  // Simulation state.
  bool invoked = false, effected = false, released = false;
  int slot = -1;
  std::int64_t process = 0;
  std::int64_t invoke_pos = -1, complete_pos = -1;
  std::vector<int> pre_versions;  // every key's version count before effect
};

struct Emitted {
  int txn;
  EventType type;
};

class Generator {
 public:
  explicit Generator(const GenOptions& o) : o_(o), rng_(o.seed) {
    list_ = o.workload == Workload::kListAppend;
    keys_ = std::max(1, o.keys);
    processes_ = std::max(1, o.processes);
    if (o.injection == Injection::kWriteSkew) {
      keys_ = std::max(2, keys_);
      processes_ = std::max(2, processes_);
    }
    lists_.resize(static_cast<std::size_t>(keys_));
    writes_.resize(static_cast<std::size_t>(keys_));
    versions_.assign(static_cast<std::size_t>(keys_), 0);
  }

  GenResult Run() {
    MakeTxns();
    Simulate();
    Materialize();
    GenResult r;
    if (o_.injection != Injection::kNone) r.injected = Inject(r.note);
    r.history = Emit();
    return r;
  }

 private:
  int Uni(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  double Real() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  int RandomKey() { return Uni(0, keys_ - 1); }

  GMop Write(int key) {
    GMop m;
    m.write = true;
    m.key = key;
    m.value = next_value_++;
    return m;
  }
  static GMop Read(int key) {
    GMop m;
    m.key = key;
    return m;
  }

  void MakeTxns() {
    const int n = std::max(1, o_.txns);
    txns_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      GTxn& t = txns_[i];
      double r = Real();
      if (i == 0 || r >= o_.fail_rate + o_.info_rate) {
        t.outcome = Outcome::kOk;
      } else if (r < o_.fail_rate) {
        t.outcome = Outcome::kFail;
        t.commits = false;
      } else {
        t.outcome = Outcome::kInfo;
        t.commits = Real() < 0.5;
        t.info_event = Real() < 0.7;
      }
      const int mops = Uni(1, std::max(1, o_.max_mops));
      for (int m = 0; m < mops; ++m) {
        t.mops.push_back(Real() < 0.5 ? Write(RandomKey()) : Read(RandomKey()));
      }
    }
    Force(n);
  }

  void SetOk(int i) {
    txns_[i].outcome = Outcome::kOk;
    txns_[i].commits = true;
  }

  // Shapes a few transactions so the chosen injection has a place.
  void Force(int n) {
    const int k = RandomKey();
    switch (o_.injection) {
      case Injection::kAbortedRead: {
        if (n < 2) return;
        const int f = Uni(0, n - 2);
        const int reader = Uni(f + 1, n - 1);
        GTxn& t = txns_[f];
        t.outcome = Outcome::kFail;
        t.commits = true;  // visible although it failed
        t.mops.push_back(Write(k));
        SetOk(reader);
        txns_[reader].mops.push_back(Read(k));
        txns_[reader].after = f;
        break;
      }
      case Injection::kIntermediateRead: {
        if (n < 2) return;
        const int w = Uni(0, n - 2);
        const int reader = Uni(w + 1, n - 1);
        SetOk(w);
        txns_[w].mops.push_back(Write(k));
        txns_[w].mops.push_back(Write(k));
        SetOk(reader);
        txns_[reader].mops.push_back(Read(k));
        break;
      }
      case Injection::kInternal: {
        const int i = Uni(0, n - 1);
        SetOk(i);
        txns_[i].mops.push_back(Real() < 0.5 ? Write(k) : Read(k));
        if (Real() < 0.5) txns_[i].mops.push_back(Write(RandomKey()));
        txns_[i].mops.push_back(Read(k));
        break;
      }
      case Injection::kReorder:
      case Injection::kGarbage:
      case Injection::kStaleRead:
        SetOk(n - 1);
        txns_[n - 1].mops.push_back(Read(k));
        break;
      case Injection::kWriteSkew: {
        if (n < 2) return;
        const int i = Uni(0, n - 2);
        int b = RandomKey();
        while (b == k) b = RandomKey();
        SetOk(i);
        SetOk(i + 1);
        txns_[i].mops = {Read(k), Write(b)};
        txns_[i + 1].mops = {Read(b), Write(k)};
        txns_[i + 1].after = i;
        txns_[i + 1].snapshot_of = i;
        skew_first_ = i;
        break;
      }
      case Injection::kRealtime: {
        SetOk(n - 1);
        txns_[n - 1].mops = {Read(k)};
        if (Real() < 0.5) txns_[n - 1].mops.push_back(Read(RandomKey()));
        break;
      }
      case Injection::kNone:
        break;
    }
  }

  bool CanEffect(const GTxn& t, int id) const {
    if (!t.invoked || t.effected || !t.commits) return false;
    if (t.after >= 0 && !txns_[t.after].effected) return false;
    // Write skew: the first txn waits until the second is running.
    if (id == skew_first_ && !txns_[id + 1].invoked) return false;
    return true;
  }

  bool CanRelease(const GTxn& t) const {
    if (!t.invoked || t.released) return false;
    if (t.outcome == Outcome::kInfo) return true;
    return t.effected || !t.commits;
  }

  void Effect(int id) {
    GTxn& t = txns_[id];
    t.effected = true;
    t.pre_versions = versions_;
    const std::vector<int>* snap =
        t.snapshot_of >= 0 ? &txns_[t.snapshot_of].pre_versions : nullptr;
    std::vector<bool> wrote(static_cast<std::size_t>(keys_), false);
    for (GMop& m : t.mops) {
      if (m.write) {
        (list_ ? lists_ : writes_)[m.key].push_back(m.value);
        ++versions_[m.key];
        wrote[m.key] = true;
      } else {
        m.version = snap != nullptr && !wrote[m.key] ? (*snap)[m.key]
                                                     : versions_[m.key];
      }
    }
  }

  void Simulate() {
    const int n = static_cast<int>(txns_.size());
    std::vector<int> slot_txn(static_cast<std::size_t>(processes_), -1);
    std::vector<std::int64_t> slot_proc(static_cast<std::size_t>(processes_));
    for (int s = 0; s < processes_; ++s) slot_proc[s] = s;
    int next = 0;
    // Actions: 0 invoke (on slot a), 1 effect txn a, 2 release txn a.
    std::vector<std::pair<int, int>> acts;
    for (;;) {
      acts.clear();
      if (next < n) {
        for (int s = 0; s < processes_; ++s) {
          if (slot_txn[s] < 0) acts.push_back({0, s});
        }
      }
      for (int i = 0; i < next; ++i) {
        if (CanEffect(txns_[i], i)) acts.push_back({1, i});
        if (CanRelease(txns_[i])) acts.push_back({2, i});
      }
      if (acts.empty()) break;
      auto [what, a] = acts[static_cast<std::size_t>(
          Uni(0, static_cast<int>(acts.size()) - 1))];
      if (what == 0) {
        GTxn& t = txns_[next];
        t.invoked = true;
        t.slot = a;
        t.process = slot_proc[a];
        slot_txn[a] = next;
        Log(next, EventType::kInvoke);
        ++next;
      } else if (what == 1) {
        Effect(a);
      } else {
        GTxn& t = txns_[a];
        t.released = true;
        slot_txn[t.slot] = -1;
        if (t.outcome == Outcome::kOk) {
          Log(a, EventType::kOk);
        } else if (t.outcome == Outcome::kFail) {
          Log(a, EventType::kFail);
        } else {
          if (t.info_event) Log(a, EventType::kInfo);
          slot_proc[t.slot] += processes_;  // a crashed process is replaced
        }
      }
    }
    // Info txns that commit but had not taken effect do so now.
    for (int i = 0; i < n; ++i) {
      if (CanEffect(txns_[i], i)) Effect(i);
    }
  }

  void Log(int txn, EventType type) {
    GTxn& t = txns_[txn];
    const auto pos = static_cast<std::int64_t>(log_.size());
    if (type == EventType::kInvoke) {
      t.invoke_pos = pos;
    } else {
      t.complete_pos = pos;
    }
    log_.push_back({txn, type});
  }

  Value ListValue(int key, int len) {
    if (len == 0 && Real() < 0.3) return Value::Null();
    Value::List l;
    for (int i = 0; i < len; ++i) l.push_back(Value::Int(lists_[key][i]));
    return Value::MakeList(std::move(l));
  }

  Value RegValue(int key, int version) const {
    return version == 0 ? Value::Null() : Value::Int(writes_[key][version - 1]);
  }

  Value ResultAt(int key, int version) {
    return list_ ? ListValue(key, version) : RegValue(key, version);
  }

  void Materialize() {
    for (GTxn& t : txns_) {
      if (t.outcome != Outcome::kOk) continue;
      for (GMop& m : t.mops) {
        if (!m.write) m.result = ResultAt(m.key, m.version);
      }
    }
  }

  struct ReadRef {
    int txn;
    int mop;
  };
  std::vector<ReadRef> OkReads() const {
    std::vector<ReadRef> out;
    for (int i = 0; i < static_cast<int>(txns_.size()); ++i) {
      if (txns_[i].outcome != Outcome::kOk || !txns_[i].effected) continue;
      for (int m = 0; m < static_cast<int>(txns_[i].mops.size()); ++m) {
        if (!txns_[i].mops[m].write) out.push_back({i, m});
      }
    }
    return out;
  }
  GMop& MopOf(ReadRef r) { return txns_[r.txn].mops[r.mop]; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(Uni(0, static_cast<int>(v.size()) - 1))];
  }
  static std::string Where(ReadRef r) {
    return "txn " + std::to_string(r.txn) + " mop " + std::to_string(r.mop);
  }

  bool Inject(std::string& note) {
    switch (o_.injection) {
      case Injection::kStaleRead:
        return InjectStale(note);
      case Injection::kAbortedRead:
        return InjectAborted(note);
      case Injection::kIntermediateRead:
        return InjectIntermediate(note);
      case Injection::kInternal:
        return InjectInternal(note);
      case Injection::kReorder:
        return InjectReorder(note);
      case Injection::kGarbage:
        return InjectGarbage(note);
      case Injection::kWriteSkew:
        return InjectWriteSkew(note);
      case Injection::kRealtime:
        return InjectRealtime(note);
      case Injection::kNone:
        return false;
    }
    return false;
  }

  bool InjectStale(std::string& note) {
    std::vector<ReadRef> c;
    for (ReadRef r : OkReads()) {
      if (MopOf(r).version > 0) c.push_back(r);
    }
    if (c.empty()) return false;
    ReadRef r = Pick(c);
    GMop& m = MopOf(r);
    const int v = Uni(0, m.version - 1);
    m.result = ResultAt(m.key, v);
    note = "stale read at " + Where(r) + ": version " + std::to_string(v) +
           " instead of " + std::to_string(m.version);
    return true;
  }

  bool InjectAborted(std::string& note) {
    for (const GTxn& t : txns_) {
      if (t.outcome != Outcome::kFail || !t.commits || !t.effected) continue;
      const GMop& w = t.mops.back();
      for (ReadRef r : OkReads()) {
        const GMop& m = MopOf(r);
        if (m.key != w.key) continue;
        const auto& vals = list_ ? lists_[m.key] : writes_[m.key];
        if (list_ ? std::find(vals.begin(), vals.begin() + m.version,
                              w.value) != vals.begin() + m.version
                  : m.version > 0 && vals[m.version - 1] == w.value) {
          note = "aborted write of " + std::to_string(w.value) + " seen at " +
                 Where(r);
          return true;
        }
      }
      note = "aborted write of " + std::to_string(w.value) + " never seen";
      return false;
    }
    return false;
  }

  bool InjectIntermediate(std::string& note) {
    for (int i = 0; i < static_cast<int>(txns_.size()); ++i) {
      const GTxn& t = txns_[i];
      const std::size_t n = t.mops.size();
      if (t.outcome != Outcome::kOk || n < 2 || !t.mops[n - 1].write ||
          !t.mops[n - 2].write || t.mops[n - 1].key != t.mops[n - 2].key) {
        continue;
      }
      const GMop& first = t.mops[n - 2];
      std::vector<ReadRef> c;
      for (ReadRef r : OkReads()) {
        if (r.txn != i && MopOf(r).key == first.key) c.push_back(r);
      }
      if (c.empty()) return false;
      ReadRef r = Pick(c);
      GMop& m = MopOf(r);
      if (list_) {
        const auto& l = lists_[m.key];
        const auto at = std::find(l.begin(), l.end(), first.value) - l.begin();
        m.result = ListValue(m.key, static_cast<int>(at) + 1);
      } else {
        m.result = Value::Int(first.value);
      }
      note = "intermediate value " + std::to_string(first.value) + " of txn " +
             std::to_string(i) + " read at " + Where(r);
      return true;
    }
    return false;
  }

  // Another txn's write to `key`, or garbage.
  std::int64_t OtherWrite(int txn, int key) {
    for (int i = 0; i < static_cast<int>(txns_.size()); ++i) {
      if (i == txn || !txns_[i].effected) continue;
      for (const GMop& m : txns_[i].mops) {
        if (m.write && m.key == key) return m.value;
      }
    }
    return kGarbageBase + key;
  }

  bool InjectInternal(std::string& note) {
    for (int i = 0; i < static_cast<int>(txns_.size()); ++i) {
      GTxn& t = txns_[i];
      if (t.outcome != Outcome::kOk || !t.effected) continue;
      GMop& last = t.mops.back();
      if (last.write) continue;
      bool earlier = false;
      for (std::size_t m = 0; m + 1 < t.mops.size(); ++m) {
        earlier |= t.mops[m].key == last.key;
      }
      if (!earlier) continue;
      if (last.version > 0) {
        last.result = ResultAt(last.key, last.version - 1);
      } else if (list_) {
        last.result = Value::MakeList({Value::Int(OtherWrite(i, last.key))});
      } else {
        last.result = Value::Int(OtherWrite(i, last.key));
      }
      note = "txn " + std::to_string(i) + "'s last read changed to " +
             last.result.ToJson();
      return true;
    }
    return false;
  }

  bool InjectReorder(std::string& note) {
    std::vector<ReadRef> reads = OkReads();
    if (list_) {
      std::vector<std::pair<ReadRef, bool>> c;  // bool: another read shows
      for (ReadRef a : reads) {
        if (MopOf(a).version < 2) continue;
        bool witness = false;
        for (ReadRef b : reads) {
          witness |= (b.txn != a.txn || b.mop != a.mop) &&
                     MopOf(b).key == MopOf(a).key &&
                     MopOf(b).version >= MopOf(a).version;
        }
        c.push_back({a, witness});
      }
      if (c.empty()) return false;
      std::vector<std::pair<ReadRef, bool>> best;
      for (auto& x : c) {
        if (x.second) best.push_back(x);
      }
      auto [r, witness] = Pick(best.empty() ? c : best);
      GMop& m = MopOf(r);
      Value::List l = m.result.as_list();
      std::swap(l[l.size() - 1], l[l.size() - 2]);
      m.result = Value::MakeList(std::move(l));
      note = "last two elements swapped at " + Where(r) +
             (witness ? "" : " (no other read shows the order)");
      return true;
    }
    std::vector<std::pair<ReadRef, ReadRef>> c;
    for (ReadRef a : reads) {
      for (ReadRef b : reads) {
        const GMop& x = MopOf(a);
        const GMop& y = MopOf(b);
        if (a.txn < b.txn && x.key == y.key && x.version > 0 && y.version > 0 &&
            x.version != y.version) {
          c.push_back({a, b});
        }
      }
    }
    if (c.empty()) return false;
    auto [a, b] = Pick(c);
    std::swap(MopOf(a).result, MopOf(b).result);
    note = "results of " + Where(a) + " and " + Where(b) + " swapped";
    return true;
  }

  bool InjectGarbage(std::string& note) {
    std::vector<ReadRef> reads = OkReads();
    if (reads.empty()) return false;
    ReadRef r = Pick(reads);
    GMop& m = MopOf(r);
    const std::int64_t g = kGarbageBase + next_value_;
    if (list_) {
      Value::List l = m.result.is_list() ? m.result.as_list() : Value::List{};
      if (!l.empty() && Real() < 0.5) {
        l[static_cast<std::size_t>(Uni(0, static_cast<int>(l.size()) - 1))] =
            Value::Int(g);
      } else {
        l.push_back(Value::Int(g));
      }
      m.result = Value::MakeList(std::move(l));
    } else {
      m.result = Value::Int(g);
    }
    note = "garbage " + std::to_string(g) + " at " + Where(r);
    return true;
  }

  bool InjectWriteSkew(std::string& note) {
    if (skew_first_ < 0) return false;
    const GTxn& a = txns_[skew_first_];
    const GTxn& b = txns_[skew_first_ + 1];
    if (!a.effected || !b.effected) return false;
    note = "txns " + std::to_string(skew_first_) + " and " +
           std::to_string(skew_first_ + 1) + " each miss the other's write";
    return true;
  }

  bool InjectRealtime(std::string& note) {
    std::vector<std::pair<int, int>> c;  // (reader, writer)
    for (int r = 0; r < static_cast<int>(txns_.size()); ++r) {
      const GTxn& rt = txns_[r];
      if (rt.outcome != Outcome::kOk || !rt.effected) continue;
      bool read_only = true;
      for (const GMop& m : rt.mops) read_only &= !m.write;
      if (!read_only) continue;
      for (int w = 0; w < static_cast<int>(txns_.size()); ++w) {
        const GTxn& wt = txns_[w];
        if (wt.outcome != Outcome::kOk || wt.complete_pos >= rt.invoke_pos) {
          continue;
        }
        bool overlap = false;
        for (const GMop& x : wt.mops) {
          for (const GMop& y : rt.mops) overlap |= x.write && x.key == y.key;
        }
        if (overlap) c.push_back({r, w});
      }
    }
    if (c.empty()) return false;
    auto [r, w] = Pick(c);
    for (GMop& m : txns_[r].mops) {
      m.result = ResultAt(m.key, txns_[w].pre_versions[m.key]);
    }
    note = "read-only txn " + std::to_string(r) +
           " reads the state from before txn " + std::to_string(w) +
           ", which completed before it began";
    return true;
  }

  Value MopsValue(const GTxn& t, bool with_reads) const {
    Value::List l;
    for (const GMop& m : t.mops) {
      Value f = Value::String(m.write ? (list_ ? "append" : "w") : "r");
      Value v = m.write ? Value::Int(m.value)
                        : (with_reads ? m.result : Value::Null());
      l.push_back(Value::MakeList({std::move(f), Value::Int(m.key), v}));
    }
    return Value::MakeList(std::move(l));
  }

  History Emit() const {
    History h;
    h.reserve(log_.size());
    for (const Emitted& e : log_) {
      const GTxn& t = txns_[e.txn];
      Event ev;
      ev.index = static_cast<std::int64_t>(h.size());
      ev.time = ev.index * 1000;
      ev.process = t.process;
      ev.type = e.type;
      ev.f = "txn";
      ev.value = MopsValue(t, e.type == EventType::kOk);
      if (e.type == EventType::kInfo) ev.error = "timeout";
      h.push_back(std::move(ev));
    }
    return h;
  }

  GenOptions o_;
  std::mt19937_64 rng_;
  bool list_ = true;
  int keys_ = 1;
  int processes_ = 1;
  std::int64_t next_value_ = 1;
  int skew_first_ = -1;
  std::vector<GTxn> txns_;
  std::vector<Emitted> log_;
  std::vector<std::vector<std::int64_t>> lists_;   // list-append: final lists
  std::vector<std::vector<std::int64_t>> writes_;  // rw-register: versions
  std::vector<int> versions_;                      // current version counts
};

}  // namespace

GenResult GenerateTxnHistory(const GenOptions& options) {
  return Generator(options).Run();
}

}  // namespace faultline::checkers::txn

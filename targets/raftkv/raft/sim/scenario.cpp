#include "targets/raftkv/raft/sim/scenario.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "targets/raftkv/raft/sim/cluster.h"

namespace faultline::raftkv::raft::sim {
namespace {

constexpr Nanos kMs = 1'000'000;

using Words = std::vector<std::string>;
using Error = std::optional<std::string>;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

bool ParseU64(const std::string& s, std::uint64_t* out) {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// A message filter: link (0 = any end) and type name.
struct Filter {
  NodeId from = kNone, to = kNone;
  std::string type;  // lower case; empty = any
  std::uint64_t max = 0;
  bool operator()(const Message& m) const {
    return (from == kNone || m.from == from) && (to == kNone || m.to == to) &&
           (type.empty() || Lower(ToString(m.type)) == type);
  }
};

class Runner {
 public:
  explicit Runner(std::string name) : name_(std::move(name)) {
    Config& b = opt_.base;
    b.election_timeout = 100 * kMs;
    b.heartbeat_interval = 10 * kMs;
    b.follower_lease = 60 * kMs;
    b.lease_guard = 2 * kMs;
  }
  ScenarioResult Run(const std::string& text);

 private:
  Error Exec(const Words& w);
  Error Setup(const Words& w);
  Error Expect(const Words& w);
  Error Node(const std::string& s, NodeId* n) const;
  Error Num(const std::string& s, std::uint64_t* v) const;
  Error ParseFilter(const Words& w, std::size_t from, Filter* f) const;
  void Step(Nanos d, const std::vector<NodeId>& tick, bool deliver);
  std::uint64_t DeliverAll(const Filter& f);
  Error NeedCluster() const {
    if (!c_) return std::string("no cluster yet (`nodes N` first)");
    return std::nullopt;
  }

  std::string name_;
  ClusterOptions opt_;
  std::uint64_t seed_ = 1;
  std::unique_ptr<Cluster> c_;
  std::set<Violation> allowed_;
  std::set<std::pair<NodeId, NodeId>> held_;
  bool trace_ = false;
};

Error Runner::Num(const std::string& s, std::uint64_t* v) const {
  if (!ParseU64(s, v)) return "not a number: '" + s + "'";
  return std::nullopt;
}

Error Runner::Node(const std::string& s, NodeId* n) const {
  std::uint64_t v = 0;
  if (!ParseU64(s, &v) || v == 0 || !c_ || v > c_->ids().size()) {
    return "not a node: '" + s + "'";
  }
  *n = v;
  return std::nullopt;
}

Error Runner::ParseFilter(const Words& w, std::size_t i, Filter* f) const {
  for (; i < w.size(); ++i) {
    const std::string& t = w[i];
    const auto arrow = t.find("->");
    if (arrow != std::string::npos) {
      const std::string a = t.substr(0, arrow), b = t.substr(arrow + 2);
      if (a != "*") {
        if (auto e = Node(a, &f->from)) return e;
      }
      if (b != "*") {
        if (auto e = Node(b, &f->to)) return e;
      }
    } else if (t == "max" && i + 1 < w.size()) {
      if (auto e = Num(w[++i], &f->max)) return e;
    } else {
      bool known = false;
      for (int k = 0; k <= static_cast<int>(MsgType::kReadIndexResp); ++k) {
        if (Lower(ToString(static_cast<MsgType>(k))) == Lower(t)) known = true;
      }
      if (!known) return "unknown message type '" + t + "'";
      f->type = Lower(t);
    }
  }
  return std::nullopt;
}

std::uint64_t Runner::DeliverAll(const Filter& f) {
  // Held links deliver only when the filter names the link exactly.
  const bool exact = f.from != kNone && f.to != kNone;
  auto pred = [&](const Message& m) {
    return f(m) && (exact || held_.count({m.from, m.to}) == 0);
  };
  std::uint64_t n = 0;
  while (f.max == 0 || n < f.max) {
    std::optional<Message> m = c_->net().TakeFirst(pred);
    if (!m) break;
    c_->Deliver(*m);
    c_->Observe();
    if (++n > 1'000'000) break;  // a livelock; the caller's expects fail
  }
  return n;
}

void Runner::Step(Nanos d, const std::vector<NodeId>& tick, bool deliver) {
  for (Nanos t = 0; t < d; t += kMs) {
    c_->clock().Advance(kMs);
    for (NodeId n : tick.empty() ? c_->ids() : tick) c_->TickNode(n);
    if (deliver) DeliverAll(Filter{});
    c_->Observe();
  }
}

Error Runner::Setup(const Words& w) {
  if (w.size() != 3) return std::string("usage: set KEY VALUE");
  if (c_) return std::string("`set` must come before `nodes`");
  const std::string& k = w[1];
  const std::string& v = w[2];
  Config& b = opt_.base;
  std::uint64_t x = 0;
  auto onoff = [&](bool* out) -> Error {
    if (v != "on" && v != "off") return "expected on|off, got '" + v + "'";
    *out = v == "on";
    return std::nullopt;
  };
  if (k == "pre-vote") return onoff(&b.pre_vote);
  if (k == "check-quorum") return onoff(&b.check_quorum);
  if (k == "read-mode") {
    auto m = ParseReadMode(v);
    if (!m) return "unknown read mode '" + v + "'";
    b.read_mode = *m;
    return std::nullopt;
  }
  if (k == "unsafe") {
    auto u = ParseUnsafe(v);
    if (!u) return "unknown unsafe switch '" + v + "'";
    b.unsafe = *u;
    return std::nullopt;
  }
  if (auto e = Num(v, &x)) return e;
  const auto ms = static_cast<Nanos>(x) * kMs;
  if (k == "election-ms") {
    b.election_timeout = ms;
  } else if (k == "heartbeat-ms") {
    b.heartbeat_interval = ms;
  } else if (k == "follower-lease-ms") {
    b.follower_lease = ms;
  } else if (k == "guard-ms") {
    b.lease_guard = ms;
  } else if (k == "max-append") {
    b.max_append_entries = x;
  } else if (k == "snapshot-every") {
    opt_.snapshot_every = x;
  } else if (k == "chunk-bytes") {
    b.snapshot_chunk_bytes = x;
  } else if (k == "seed") {
    seed_ = x;
  } else {
    return "unknown setting '" + k + "'";
  }
  return std::nullopt;
}

Error Runner::Exec(const Words& w) {
  const std::string& cmd = w[0];
  if (cmd == "set") return Setup(w);
  if (cmd == "allow") {
    if (w.size() != 2) return std::string("usage: allow KIND");
    auto v = ParseViolation(w[1]);
    if (!v) return "unknown violation '" + w[1] + "'";
    allowed_.insert(*v);
    return std::nullopt;
  }
  if (cmd == "trace") {
    trace_ = w.size() > 1 && w[1] == "on";
    if (c_) {
      c_->trace = trace_
                      ? [](const std::string&
                               l) { std::fprintf(stderr, "%s\n", l.c_str()); }
                      : std::function<void(const std::string&)>();
    }
    return std::nullopt;
  }
  if (cmd == "nodes") {
    std::uint64_t n = 0;
    if (w.size() != 2) return std::string("usage: nodes N");
    if (auto e = Num(w[1], &n)) return e;
    if (n < 1 || n > 9) return std::string("nodes: 1..9");
    if (c_) return std::string("cluster already started");
    opt_.nodes = n;
    c_ = std::make_unique<Cluster>(seed_, opt_);
    if (trace_) {
      c_->trace = [](const std::string& l) {
        std::fprintf(stderr, "%s\n", l.c_str());
      };
    }
    return std::nullopt;
  }
  if (auto e = NeedCluster()) return e;
  Cluster& c = *c_;

  if (cmd == "tick") {
    std::uint64_t ms = 0;
    if (w.size() < 2) return std::string("usage: tick MS [on N...]");
    if (auto e = Num(w[1], &ms)) return e;
    std::vector<NodeId> only;
    if (w.size() > 2) {
      if (w[2] != "on" || w.size() < 4)
        return std::string("usage: tick MS on N...");
      for (std::size_t i = 3; i < w.size(); ++i) {
        NodeId n = 0;
        if (auto e = Node(w[i], &n)) return e;
        only.push_back(n);
      }
    }
    Step(static_cast<Nanos>(ms) * kMs, only, false);
    return std::nullopt;
  }
  if (cmd == "campaign") {
    NodeId n = 0;
    if (w.size() != 2) return std::string("usage: campaign N");
    if (auto e = Node(w[1], &n)) return e;
    if (!c.Up(n)) return std::string("node is down");
    const Nanos limit = 20 * opt_.base.election_timeout;
    const std::uint64_t before = c.campaigns(n);
    for (Nanos t = 0; t < limit; t += kMs) {
      Step(kMs, {n}, false);
      if (!c.Up(n)) break;
      if (c.campaigns(n) > before) return std::nullopt;
      if (c.StatusOf(n).role == Role::kLeader) return std::nullopt;
    }
    return std::string("node never campaigned");
  }
  if (cmd == "deliver" || cmd == "drop") {
    Filter f;
    if (auto e = ParseFilter(w, 1, &f)) return e;
    if (cmd == "drop") {
      c.net().Discard(f);
    } else {
      DeliverAll(f);
    }
    return std::nullopt;
  }
  if (cmd == "run") {
    if (w.size() >= 3 && w[1] == "until" && w[2] == "leader") {
      NodeId want = kNone;
      std::uint64_t within = 5000;
      std::size_t i = 3;
      if (i < w.size() && w[i] != "within") {
        if (auto e = Node(w[i++], &want)) return e;
      }
      if (i + 1 < w.size() && w[i] == "within") {
        if (auto e = Num(w[i + 1], &within)) return e;
      }
      for (std::uint64_t t = 0; t < within; ++t) {
        Step(kMs, {}, true);
        const NodeId l = c.Leader();
        if (l != kNone && (want == kNone || l == want)) return std::nullopt;
      }
      return "no leader" + (want ? " " + std::to_string(want) : std::string()) +
             " within " + std::to_string(within) + " ms";
    }
    std::uint64_t ms = 0;
    if (w.size() != 2) return std::string("usage: run MS | run until leader");
    if (auto e = Num(w[1], &ms)) return e;
    Step(static_cast<Nanos>(ms) * kMs, {}, true);
    return std::nullopt;
  }
  if (cmd == "partition") {
    std::vector<std::vector<NodeId>> groups(1);
    for (std::size_t i = 1; i < w.size(); ++i) {
      if (w[i] == "|") {
        groups.emplace_back();
        continue;
      }
      NodeId n = 0;
      if (auto e = Node(w[i], &n)) return e;
      groups.back().push_back(n);
    }
    c.net().Partition(groups, c.ids());
    return std::nullopt;
  }
  if (cmd == "heal") {
    c.net().Heal();
    return std::nullopt;
  }
  if (cmd == "hold" || cmd == "release") {
    Filter f;
    if (w.size() != 2) return "usage: " + cmd + " A->B";
    if (auto e = ParseFilter(w, 1, &f)) return e;
    if (f.from == kNone || f.to == kNone) return cmd + " A->B";
    if (cmd == "hold") {
      held_.insert({f.from, f.to});
    } else {
      held_.erase({f.from, f.to});
    }
    return std::nullopt;
  }
  if (cmd == "cut") {
    Filter f;
    if (w.size() != 2) return std::string("usage: cut A->B");
    if (auto e = ParseFilter(w, 1, &f)) return e;
    if (f.from == kNone || f.to == kNone) return std::string("cut A->B");
    c.net().Cut(f.from, f.to);
    return std::nullopt;
  }
  NodeId n = 0;
  if (w.size() < 2) return "usage: " + cmd + " N ...";
  if (auto e = Node(w[1], &n)) return e;
  if (cmd == "isolate") {
    c.net().Isolate(n, c.ids());
    return std::nullopt;
  }
  if (cmd == "crash") {
    c.Crash(n);
    return std::nullopt;
  }
  if (cmd == "restart") {
    c.Restart(n);
    return std::nullopt;
  }
  if (cmd == "skew") {
    if (w.size() != 3) return std::string("usage: skew N RATE");
    const double rate = std::strtod(w[2].c_str(), nullptr);
    if (!(rate > 0)) return std::string("rate must be > 0");
    c.clock().SetRate(n, rate);
    return std::nullopt;
  }
  if (cmd == "propose") {
    if (w.size() != 4 && !(w.size() == 5 && w[4] == "fails")) {
      return std::string("usage: propose N KEY VALUE [fails]");
    }
    const bool want_ok = w.size() == 4;
    ProposeResult r = c.Propose(n, w[2], w[3]);
    c.Observe();
    if (r.ok != want_ok) {
      return std::string(r.ok ? "accepted" : "refused (" + r.error + ")") +
             ", expected " + (want_ok ? "accepted" : "refused");
    }
    return std::nullopt;
  }
  if (cmd == "read") {
    if (w.size() != 3 && !(w.size() == 4 && w[3] == "local")) {
      return std::string("usage: read N KEY [local]");
    }
    if (!c.Up(n)) return std::string("node is down");
    c.Read(n, w[2], w.size() == 4);
    c.Observe();
    return std::nullopt;
  }
  if (cmd == "transfer") {
    NodeId to = 0;
    if (w.size() != 3) return std::string("usage: transfer N TO");
    if (auto e = Node(w[2], &to)) return e;
    if (!c.TransferLeadership(n, to)) return std::string("transfer refused");
    c.Observe();
    return std::nullopt;
  }
  if (cmd == "compact") {
    if (!c.Up(n)) return std::string("node is down");
    const Index at = c.kv(n).applied();
    c.node(n)->Compact(at, c.kv(n).Serialize());
    return std::nullopt;
  }
  return "unknown command '" + cmd + "'";
}

Error Runner::Expect(const Words& w) {
  if (w.size() < 2) return std::string("usage: expect WHAT ...");
  const std::string& what = w[1];
  if (what == "violation") {
    if (w.size() != 3) return std::string("usage: expect violation KIND");
    auto v = ParseViolation(w[2]);
    if (!v) return "unknown violation '" + w[2] + "'";
    const auto& f = c_ ? c_->checker().finding() : std::nullopt;
    if (!f) return "no violation found, expected " + w[2];
    if (f->kind != *v) return "found " + f->what + ", expected " + w[2];
    return std::nullopt;
  }
  if (auto e = NeedCluster()) return e;
  Cluster& c = *c_;
  if (what == "ok") {
    if (const auto& f = c.checker().finding()) return "violation: " + f->what;
    return std::nullopt;
  }
  if (what == "no-leader") {
    const NodeId l = c.Leader();
    if (l != kNone) return "node " + std::to_string(l) + " leads";
    return std::nullopt;
  }
  if (w.size() < 3) return "usage: expect " + what + " N ...";
  if (what == "failed-reads") {
    std::uint64_t v = 0;
    if (auto e = Num(w[2], &v)) return e;
    if (c.failed_reads() != v) {
      return std::to_string(c.failed_reads()) + " reads failed, expected " +
             w[2];
    }
    return std::nullopt;
  }
  NodeId n = 0;
  if (auto e = Node(w[2], &n)) return e;
  if (what == "unserved") {
    if (c.PendingReads() == 0) return std::string("no read is pending");
    return std::nullopt;
  }
  if (what == "not-served") {
    for (const ServedRead& r : c.served()) {
      if (r.node == n) {
        return "node " + std::to_string(n) + " served '" + r.key +
               "' = " + r.value.value_or("nil");
      }
    }
    return std::nullopt;
  }

  const bool up = c.Up(n);
  const Status st = c.StatusOf(n);
  auto num_at = [&](std::size_t i, std::uint64_t* v) -> Error {
    if (i >= w.size()) return "usage: expect " + what + " N VALUE";
    return Num(w[i], v);
  };
  auto mismatch = [&](const std::string& field, std::uint64_t got,
                      std::uint64_t want) -> Error {
    if (got == want) return std::nullopt;
    return "node " + std::to_string(n) + " " + field + " is " +
           std::to_string(got) + ", expected " + std::to_string(want);
  };
  if (what == "leader") {
    if (!up || st.role != Role::kLeader) {
      return "node " + std::to_string(n) + " is " +
             (up ? ToString(st.role) : "down") + " (term " +
             std::to_string(st.term) + "), expected leader";
    }
    if (w.size() == 5 && w[3] == "term") {
      std::uint64_t t = 0;
      if (auto e = Num(w[4], &t)) return e;
      return mismatch("term", st.term, t);
    }
    return std::nullopt;
  }
  if (what == "not-leader") {
    if (up && st.role == Role::kLeader) {
      return "node " + std::to_string(n) + " leads term " +
             std::to_string(st.term);
    }
    return std::nullopt;
  }
  if (!up) return "node " + std::to_string(n) + " is down";
  std::uint64_t v = 0;
  if (what == "role") {
    if (w.size() != 4) return std::string("usage: expect role N ROLE");
    if (w[3] != ToString(st.role)) {
      return "node " + std::to_string(n) + " is " + ToString(st.role) +
             ", expected " + w[3];
    }
    return std::nullopt;
  }
  if (what == "term-above") {
    if (auto e = num_at(3, &v)) return e;
    if (st.term > v) return std::nullopt;
    return "node " + std::to_string(n) + " term is " + std::to_string(st.term) +
           ", expected > " + std::to_string(v);
  }
  if (what == "term" || what == "vote" || what == "commit" ||
      what == "applied" || what == "last" || what == "snapshot") {
    if (auto e = num_at(3, &v)) return e;
    if (what == "term") return mismatch("term", st.term, v);
    if (what == "vote") return mismatch("vote", st.vote, v);
    if (what == "commit") return mismatch("commit", st.commit, v);
    if (what == "applied") return mismatch("applied", c.kv(n).applied(), v);
    if (what == "last") return mismatch("last index", st.last_index, v);
    if (c.disk(n).SnapIndex() < v) {
      return "node " + std::to_string(n) + " snapshot index is " +
             std::to_string(c.disk(n).SnapIndex()) +
             ", expected >= " + std::to_string(v);
    }
    return std::nullopt;
  }
  if (what == "value" || what == "served") {
    if (w.size() != 5) return "usage: expect " + what + " N KEY VALUE|nil";
    std::optional<std::string> got;
    if (what == "value") {
      got = c.kv(n).Get(w[3]);
    } else {
      const auto& s = c.served();
      auto it = std::find_if(s.rbegin(), s.rend(), [&](const ServedRead& r) {
        return r.node == n && r.key == w[3];
      });
      if (it == s.rend()) {
        return "no read of '" + w[3] + "' served on node " + std::to_string(n);
      }
      got = it->value;
      // Consumed: the next `expect served` looks at later reads only.
      auto& all = c.served();
      all.erase(
          std::remove_if(all.begin(), all.end(),
                         [&](const ServedRead& r) { return r.node == n; }),
          all.end());
    }
    const std::string g = got.value_or("nil");
    if (g != w[4]) {
      return "node " + std::to_string(n) + " " + what + " '" + w[3] +
             "' = " + g + ", expected " + w[4];
    }
    return std::nullopt;
  }
  if (what == "lease") {
    if (w.size() != 4)
      return std::string("usage: expect lease N valid|invalid");
    const bool want = w[3] == "valid";
    if (st.follower_lease_valid != want) {
      return "node " + std::to_string(n) + " lease is " +
             (st.follower_lease_valid ? "valid" : "invalid") + ", expected " +
             w[3];
    }
    return std::nullopt;
  }
  return "unknown expectation '" + what + "'";
}

ScenarioResult Runner::Run(const std::string& text) {
  ScenarioResult res;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    Words w;
    std::istringstream ws(line);
    for (std::string t; ws >> t;) w.push_back(t);
    if (w.empty()) continue;
    ++res.commands;
    Error err = w[0] == "expect" ? Expect(w) : Exec(w);
    if (!err && c_ && c_->checker().finding() &&
        allowed_.count(c_->checker().finding()->kind) == 0) {
      err = "invariant violated: " + c_->checker().finding()->what;
    }
    if (err) {
      std::string cmd;
      for (const auto& t : w) cmd += (cmd.empty() ? "" : " ") + t;
      res.ok = false;
      res.error =
          name_ + ":" + std::to_string(lineno) + ": `" + cmd + "`: " + *err;
      return res;
    }
  }
  return res;
}

}  // namespace

ScenarioResult RunScenario(const std::string& name, const std::string& text) {
  Runner r(name);
  return r.Run(text);
}

ScenarioResult RunScenarioFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    ScenarioResult r;
    r.ok = false;
    r.error = path + ": cannot open";
    return r;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const auto slash = path.find_last_of('/');
  return RunScenario(slash == std::string::npos ? path : path.substr(slash + 1),
                     ss.str());
}

}  // namespace faultline::raftkv::raft::sim

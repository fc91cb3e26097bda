#include "targets/raftkv/server/flags.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace faultline::raftkv::server {
namespace {

// One flag setting with where it came from, for error messages.
struct Setting {
  std::string name;
  std::string value;
  bool has_value = false;
  std::string where;  // "--name" or "FILE:LINE: name"
};

// Raw state collected before validation (peers need --listen to resolve).
struct Raw {
  Options o;
  std::string peers;
  std::string peers_where;
  bool have_id = false, have_peers = false, have_dir = false;
};

using Setter = std::function<std::string(Raw*, const std::string&)>;

struct FlagDef {
  const char* name;
  bool boolean;
  Setter set;  // returns "" or "expected ..., got ..."
};

std::string Got(const std::string& v) { return ", got '" + v + "'"; }

std::string FormatNumber(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

bool ParseInt(const std::string& s, long long lo, long long hi,
              long long* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

Setter IntFlag(int Options::*field, long long lo, long long hi) {
  return [=](Raw* r, const std::string& v) -> std::string {
    long long x = 0;
    if (!ParseInt(v, lo, hi, &x))
      return "expected an integer in [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]" + Got(v);
    r->o.*field = static_cast<int>(x);
    return "";
  };
}

// A decimal number in [lo, hi] ("0.2", "1e-3").
Setter DoubleFlag(double Options::*field, double lo, double hi) {
  return [=](Raw* r, const std::string& v) -> std::string {
    errno = 0;
    char* end = nullptr;
    const double x = v.empty() ? 0 : std::strtod(v.c_str(), &end);
    if (v.empty() || errno != 0 || *end != '\0' || !(x >= lo && x <= hi))
      return "expected a number in [" + FormatNumber(lo) + ", " +
             FormatNumber(hi) + "]" + Got(v);
    r->o.*field = x;
    return "";
  };
}

Setter NegatedBool(bool Options::*field) {
  return [=](Raw* r, const std::string& v) -> std::string {
    if (v == "true" || v == "1" || v == "yes") {
      r->o.*field = false;
    } else if (v == "false" || v == "0" || v == "no") {
      r->o.*field = true;
    } else {
      return "expected true or false" + Got(v);
    }
    return "";
  };
}

const std::vector<FlagDef>& Flags() {
  static const std::vector<FlagDef> defs = {
      {"id", false,
       [](Raw* r, const std::string& v) -> std::string {
         long long x = 0;
         if (!ParseInt(v, 1, 9, &x)) return "expected an id in 1..9" + Got(v);
         r->o.id = static_cast<raft::NodeId>(x);
         r->have_id = true;
         return "";
       }},
      {"peers", false,
       [](Raw* r, const std::string& v) -> std::string {
         r->peers = v;
         r->have_peers = true;
         return "";
       }},
      {"listen", false,
       [](Raw* r, const std::string& v) -> std::string {
         if (!ParseHostPort(v, &r->o.listen))
           return "expected HOST:PORT" + Got(v);
         return "";
       }},
      {"data-dir", false,
       [](Raw* r, const std::string& v) -> std::string {
         if (v.empty()) return "expected a directory" + Got(v);
         r->o.data_dir = v;
         r->have_dir = true;
         return "";
       }},
      {"read-mode", false,
       [](Raw* r, const std::string& v) -> std::string {
         auto m = raft::ParseReadMode(v);
         if (!m) return "expected readindex, lease or follower-lease" + Got(v);
         r->o.read_mode = *m;
         return "";
       }},
      {"heartbeat-ms", false, IntFlag(&Options::heartbeat_ms, 1, 60000)},
      {"election-ms", false, IntFlag(&Options::election_ms, 2, 600000)},
      {"follower-lease-ms", false,
       IntFlag(&Options::follower_lease_ms, 1, 600000)},
      {"lease-drift-bound", false,
       DoubleFlag(&Options::lease_drift_bound, 0, 0.5)},
      {"no-pre-vote", true, NegatedBool(&Options::pre_vote)},
      {"no-check-quorum", true, NegatedBool(&Options::check_quorum)},
      {"snapshot-entries", false,
       [](Raw* r, const std::string& v) -> std::string {
         long long x = 0;
         if (!ParseInt(v, 1, 1LL << 40, &x))
           return "expected a positive integer" + Got(v);
         r->o.snapshot_entries = static_cast<std::uint64_t>(x);
         return "";
       }},
      {"request-timeout-ms", false,
       IntFlag(&Options::request_timeout_ms, 1, 3600000)},
      {"max-append-entries", false,
       IntFlag(&Options::max_append_entries, 1, 65536)},
      {"max-inflight", false, IntFlag(&Options::max_inflight, 1, 4096)},
      {"unsafe", false,
       [](Raw* r, const std::string& v) -> std::string {
         auto u = raft::ParseUnsafe(v);
         if (!u)
           return "expected none, vote-not-persisted, leader-read-no-quorum, "
                  "follower-lease-no-margin, commit-old-terms, "
                  "lock-token-per-term, log-not-synced or txn-not-atomic" +
                  Got(v);
         r->o.unsafe = *u;
         return "";
       }},
      {"log-level", false,
       [](Raw* r, const std::string& v) -> std::string {
         auto l = ParseLogLevel(v);
         if (!l) return "expected debug, info or warn" + Got(v);
         r->o.log_level = *l;
         return "";
       }},
  };
  return defs;
}

const FlagDef* Find(const std::string& name) {
  for (const auto& d : Flags())
    if (name == d.name) return &d;
  return nullptr;
}

std::string Trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Applies one setting; returns "" or the full error line.
std::string Apply(Raw* raw, const Setting& s) {
  const FlagDef* d = Find(s.name);
  if (d == nullptr) return s.where + ": unknown flag (see --help)";
  std::string value = s.value;
  if (d->boolean && !s.has_value) value = "true";
  if (!d->boolean && !s.has_value) return s.where + ": expects a value";
  std::string err = d->set(raw, value);
  if (!err.empty()) return s.where + ": " + err;
  return "";
}

std::string ReadConfig(const std::string& path, std::vector<Setting>* out) {
  std::ifstream in(path);
  if (!in) return "--config " + path + ": cannot read the file";
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = Trim(line);
    if (line.empty()) continue;
    Setting s;
    std::size_t eq = line.find('=');
    s.name = Trim(line.substr(0, eq));
    if (eq != std::string::npos) {
      s.value = Trim(line.substr(eq + 1));
      s.has_value = true;
    }
    if (s.name.rfind("--", 0) == 0) s.name = s.name.substr(2);
    s.where = path + ":" + std::to_string(n) + ": " + s.name;
    if (s.name == "config")
      return s.where + ": a config file cannot include another";
    if (s.name.empty())
      return path + ":" + std::to_string(n) + ": expected 'name = value'";
    out->push_back(s);
  }
  return "";
}

// Parses --peers once --listen is final.
std::string ParsePeers(Raw* raw) {
  std::map<raft::NodeId, Peer> peers;
  std::stringstream ss(raw->peers);
  std::string item;
  const std::string w = raw->peers_where + ": ";
  while (std::getline(ss, item, ',')) {
    item = Trim(item);
    std::size_t eq = item.find('=');
    long long id = 0;
    if (eq == std::string::npos || !ParseInt(item.substr(0, eq), 1, 9, &id))
      return w + "expected id=host:port[/client] with id in 1..9, got '" +
             item + "'";
    Peer p;
    p.id = static_cast<raft::NodeId>(id);
    std::string addr = item.substr(eq + 1);
    std::string client;
    std::size_t slash = addr.find('/');
    if (slash != std::string::npos) {
      client = addr.substr(slash + 1);
      addr.resize(slash);
    }
    if (!ParseHostPort(addr, &p.raft))
      return w + "expected host:port for member " + std::to_string(id) +
             ", got '" + addr + "'";
    if (client.empty()) {
      p.client = {p.raft.host, raw->o.listen.port};
    } else if (client.find(':') == std::string::npos) {
      long long port = 0;
      if (!ParseInt(client, 1, 65535, &port))
        return w + "expected a client port or host:port after '/' for member " +
               std::to_string(id) + ", got '" + client + "'";
      p.client = {p.raft.host, static_cast<int>(port)};
    } else if (!ParseHostPort(client, &p.client)) {
      return w + "expected a client host:port after '/' for member " +
             std::to_string(id) + ", got '" + client + "'";
    }
    if (!peers.emplace(p.id, p).second)
      return w + "member " + std::to_string(id) + " is listed twice";
  }
  if (peers.empty()) return w + "expected at least one member";
  raw->o.peers = std::move(peers);
  return "";
}

}  // namespace

bool ParseHostPort(const std::string& s, HostPort* out) {
  std::size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  long long port = 0;
  if (!ParseInt(s.substr(colon + 1), 1, 65535, &port)) return false;
  std::string host = s.substr(0, colon);
  if (host.find_first_of(" ,/=") != std::string::npos) return false;
  out->host = host;
  out->port = static_cast<int>(port);
  return true;
}

FlagsResult ParseFlags(const std::vector<std::string>& args) {
  FlagsResult res;
  std::vector<Setting> cmdline;
  std::string config;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      res.help = true;
      return res;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      res.error = "unexpected argument '" + a + "' (flags start with --)";
      return res;
    }
    Setting s;
    std::size_t eq = a.find('=');
    s.name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    s.where = "--" + s.name;
    if (eq != std::string::npos) {
      s.value = a.substr(eq + 1);
      s.has_value = true;
    } else {
      const FlagDef* d = Find(s.name);
      if (d == nullptr && s.name != "config") {
        res.error = s.where + ": unknown flag (see --help)";
        return res;
      }
      bool boolean = d != nullptr && d->boolean;
      if (!boolean && (s.name == "config" || d != nullptr)) {
        if (i + 1 >= args.size()) {
          res.error = s.where + ": expects a value";
          return res;
        }
        s.value = args[++i];
        s.has_value = true;
      }
    }
    if (s.name == "config") {
      config = s.value;
      continue;
    }
    cmdline.push_back(s);
  }
  Raw raw;
  std::vector<Setting> all;
  if (!config.empty()) {
    std::string err = ReadConfig(config, &all);
    if (!err.empty()) {
      res.error = err;
      return res;
    }
  }
  all.insert(all.end(), cmdline.begin(), cmdline.end());
  for (const Setting& s : all) {
    std::string err = Apply(&raw, s);
    if (!err.empty()) {
      res.error = err;
      return res;
    }
    if (s.name == "peers") raw.peers_where = s.where;
  }
  if (!raw.have_id) {
    res.error = "--id: required (this node's id, 1..9)";
    return res;
  }
  if (!raw.have_peers) {
    res.error = "--peers: required (id=host:port of every member)";
    return res;
  }
  if (!raw.have_dir) {
    res.error = "--data-dir: required (where the WAL and snapshots live)";
    return res;
  }
  if (std::string err = ParsePeers(&raw); !err.empty()) {
    res.error = err;
    return res;
  }
  Options& o = raw.o;
  if (o.peers.count(o.id) == 0) {
    res.error = "--id: " + std::to_string(o.id) + " is not a member of --peers";
    return res;
  }
  if (o.election_ms <= o.heartbeat_ms) {
    res.error = "--election-ms: must be greater than --heartbeat-ms (" +
                std::to_string(o.election_ms) +
                " <= " + std::to_string(o.heartbeat_ms) + ")";
    return res;
  }
  if (o.follower_lease_ms >= o.election_ms) {
    res.error = "--follower-lease-ms: must be less than --election-ms (" +
                std::to_string(o.follower_lease_ms) +
                " >= " + std::to_string(o.election_ms) + ")";
    return res;
  }
  res.options = std::move(o);
  res.ok = true;
  return res;
}

std::string Usage() {
  return R"(usage: raftkv --id N --peers LIST --data-dir DIR [flags]

  --id N                  this node's id, 1..9, a key of --peers (required)
  --peers LIST            id=host:port[/client],... of every member's peer
                          (Raft) port; /client is the member's client address
                          (port or host:port), default: peer host + --listen
                          port (required)
  --listen HOST:PORT      client (RESP) address (default 127.0.0.1:6379)
  --data-dir DIR          WAL and snapshots; created if absent (required)
  --read-mode MODE        readindex (default), lease or follower-lease
  --heartbeat-ms N        leader heartbeat interval (default 50)
  --election-ms N         election timeout, randomized in [N, 2N) (default 500)
  --follower-lease-ms N   read lease granted to followers (default 300)
  --lease-drift-bound E   clock-rate error the leases assume: every clock
                          runs within [1/(1+E), 1+E] of real time, 0..0.5
                          (default 0.001)
  --no-pre-vote           disable PreVote
  --no-check-quorum       disable CheckQuorum
  --snapshot-entries N    snapshot every N applied entries (default 10000)
  --request-timeout-ms N  undecided requests answer -TIMEOUT (default 5000)
  --max-append-entries N  entries per append message (default 256)
  --max-inflight N        unacknowledged appends per follower (default 64)
  --unsafe NAME           turn off one safety mechanism (default none)
  --log-level L           debug, info (default) or warn
  --config FILE           name = value lines; the command line wins
)";
}

}  // namespace faultline::raftkv::server

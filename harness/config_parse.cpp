// YAML -> TestSpec, field by field, with one precise error per problem.
// Cross-field rules live in config_validate.cpp.
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness/config_internal.h"

namespace faultline::harness::config_internal {
namespace {

Origin OriginOf(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return Origin{m.line + 1, m.column + 1, ""};
}

std::string Shorten(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\t') ch = ' ';
  }
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

bool IsNothing(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }
bool IsPlain(const YAML::Node& n) { return n.IsScalar() && n.Tag() == "?"; }

// "got ..." phrase describing what the user wrote.
std::string Got(const YAML::Node& n) {
  if (IsNothing(n)) return "no value";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (!IsPlain(n)) return "the quoted text \"" + Shorten(n.Scalar()) + "\"";
  return "`" + Shorten(n.Scalar()) + "`";
}

std::optional<long long> ParseInt(const std::string& s) {
  std::string_view v = s;
  if (!v.empty() && v[0] == '+') v.remove_prefix(1);
  long long out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) {
    return std::nullopt;
  }
  return out;
}

bool LooksInteger(const std::string& s) {
  std::string_view v = s;
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) v.remove_prefix(1);
  if (v.empty()) return false;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return false;
  }
  return true;
}

std::optional<double> ParseDouble(std::string_view v) {
  if (!v.empty() && v[0] == '+') v.remove_prefix(1);
  double out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() ||
      !std::isfinite(out)) {
    return std::nullopt;
  }
  return out;
}

// "90s", "2m", "500ms", "1h", "1.5s" -> seconds.
std::optional<double> ParseDurationText(std::string_view v) {
  struct Unit {
    std::string_view suffix;
    double seconds;
  };
  // "ms" before "s" and "m": the longest suffix wins.
  static constexpr Unit kUnits[] = {
      {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}};
  for (const Unit& u : kUnits) {
    if (v.size() > u.suffix.size() && v.ends_with(u.suffix)) {
      auto num = ParseDouble(v.substr(0, v.size() - u.suffix.size()));
      if (!num) return std::nullopt;
      return *num * u.seconds;
    }
  }
  return std::nullopt;
}

struct Item {
  YAML::Node key;
  YAML::Node value;
  std::string path;  // "cluster.nodes"
  std::string name;  // "nodes"
};

struct FieldDef {
  std::string key;
  std::function<void(const Item&)> handle;
};

// Inclusive/exclusive numeric range, for messages and checks.
struct Range {
  double lo;
  double hi;
  bool lo_open = false;  // lo < v instead of lo <= v
  std::string unit;      // "", " s", " ms"

  bool Contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && v <= hi;
  }
  std::string Describe() const {
    if (lo_open) {
      return "a value > " + FormatNumber(lo) + unit +
             " and <= " + FormatNumber(hi) + unit;
    }
    return "a value from " + FormatNumber(lo) + " to " + FormatNumber(hi) +
           unit;
  }
};

class Parser {
 public:
  Parser(TestSpec* spec, Provenance* prov, Diagnostics* diag)
      : spec_(spec), prov_(prov), diag_(diag) {}

  void Run(const YAML::Node& root);

 private:
  Origin ValueOrigin(const Item& it) const {
    Origin o = OriginOf(it.value);
    // yaml-cpp places an empty value at the next token; the key is clearer.
    if (IsNothing(it.value) || !o.from_file()) return OriginOf(it.key);
    return o;
  }
  void Error(const Item& it, std::string message, std::string hint = "") {
    prov_->bad.insert(it.path);
    diag_->Add(ValueOrigin(it), it.path + ": " + std::move(message),
               std::move(hint));
  }
  void Record(const Item& it) { prov_->at[it.path] = ValueOrigin(it); }

  void WalkMap(const YAML::Node& map, const std::string& prefix,
               const Origin& where, const std::vector<FieldDef>& fields);
  void UnknownKey(const std::string& prefix, const std::string& key,
                  const Origin& where, const std::vector<FieldDef>& fields);

  bool Int(const Item& it, long long lo, long long hi, int* out,
           const std::string& range_hint = "");
  bool Seed(const Item& it, std::uint64_t* out);
  bool Number(const Item& it, const Range& r, double* out,
              const std::string& range_hint = "");
  bool Seconds(const Item& it, const Range& r, double* out);
  bool Millis(const Item& it, long long lo, long long hi, int* out,
              const std::string& range_hint = "");
  bool Bool(const Item& it, bool* out);
  bool Text(const Item& it, bool allow_empty, std::string* out);
  bool Enum(const Item& it, const std::vector<KnownName>& known,
            const std::string& what, std::string* out);
  bool EnumList(const Item& it, const std::vector<KnownName>& known,
                const std::string& what, std::vector<std::string>* out);
  bool TextList(const Item& it, std::vector<std::string>* out);

  void Cluster(const Item& it);
  void Target(const Item& it);
  void Workload(const Item& it);
  void Mix(const Item& it);
  void Nemesis(const Item& it);
  void Checker(const Item& it);

  TestSpec* spec_;
  Provenance* prov_;
  Diagnostics* diag_;
};

// Every key of every section, for "belongs under" hints.
const std::vector<std::pair<std::string, std::string>>& AllKeys() {
  static const std::vector<std::pair<std::string, std::string>> kKeys = {
      {"", "name"},
      {"", "description"},
      {"", "seed"},
      {"", "time_limit"},
      {"", "recovery"},
      {"", "store"},
      {"", "expect"},
      {"", "cluster"},
      {"", "target"},
      {"", "workload"},
      {"", "nemesis"},
      {"", "checker"},
      {"cluster", "provider"},
      {"cluster", "nodes"},
      {"cluster", "subnet"},
      {"target", "pre_vote"},
      {"target", "heartbeat_ms"},
      {"target", "election_timeout_ms"},
      {"target", "serializable_reads"},
      {"target", "binary"},
      {"target", "extra_args"},
      {"workload", "keys"},
      {"workload", "concurrency"},
      {"workload", "rate"},
      {"workload", "mix"},
      {"workload", "op_timeout_ms"},
      {"workload.mix", "read"},
      {"workload.mix", "write"},
      {"workload.mix", "cas"},
      {"nemesis", "faults"},
      {"nemesis", "interval"},
      {"nemesis", "duration"},
      {"nemesis", "partitions"},
      {"nemesis", "targets"},
      {"checker", "timeout"},
      {"checker", "memory_limit_mb"},
      {"checker", "threads"},
  };
  return kKeys;
}

void Parser::UnknownKey(const std::string& prefix, const std::string& key,
                        const Origin& where,
                        const std::vector<FieldDef>& fields) {
  std::vector<std::string> here;
  for (const FieldDef& f : fields) here.push_back(f.key);
  const std::string section =
      prefix.empty() ? "at the top level" : "in `" + prefix + ":`";
  std::string message = "unknown key `" + Shorten(key) + "` " + section;
  std::string hint;
  if (std::string guess = DidYouMean(key, here); !guess.empty()) {
    hint = "did you mean `" + guess + "`?";
  } else {
    for (const auto& [other, k] : AllKeys()) {
      if (k == key && other != prefix) {
        hint = "`" + key + "` belongs " +
               (other.empty() ? std::string("at the top level")
                              : "under `" + other + ":`");
        break;
      }
    }
  }
  if (hint.empty()) hint = "valid keys here: " + JoinNames(here);
  diag_->Add(where, message, hint);
}

void Parser::WalkMap(const YAML::Node& map, const std::string& prefix,
                     const Origin& where, const std::vector<FieldDef>& fields) {
  if (IsNothing(map)) return;  // `cluster:` with nothing under it: defaults
  if (!map.IsMap()) {
    prov_->bad.insert(prefix);
    diag_->Add(
        where,
        (prefix.empty() ? std::string("config") : prefix) +
            ": expected a mapping of `key: value` lines, got " + Got(map),
        "valid keys: " + [&] {
          std::vector<std::string> k;
          for (const FieldDef& f : fields) k.push_back(f.key);
          return JoinNames(k);
        }());
    return;
  }
  std::map<std::string, Origin> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node& k = it->first;
    const Origin key_at = OriginOf(k);
    if (!k.IsScalar()) {
      diag_->Add(key_at, "expected a key name, got " + Got(k),
                 "keys are plain words such as `nodes`");
      continue;
    }
    const std::string name = k.Scalar();
    if (auto dup = seen.find(name); dup != seen.end()) {
      diag_->Add(key_at,
                 "duplicate key `" + Shorten(name) + "` (first set at line " +
                     std::to_string(dup->second.line) + ")",
                 "a mapping may set each key once; remove one of them");
      continue;
    }
    seen[name] = key_at;
    const FieldDef* def = nullptr;
    for (const FieldDef& f : fields) {
      if (f.key == name) def = &f;
    }
    if (def == nullptr) {
      UnknownKey(prefix, name, key_at, fields);
      continue;
    }
    Item item{k, it->second, prefix.empty() ? name : prefix + "." + name, name};
    def->handle(item);
  }
}

bool Parser::Int(const Item& it, long long lo, long long hi, int* out,
                 const std::string& range_hint) {
  const YAML::Node& v = it.value;
  const std::string example =
      "e.g. `" + it.name + ": " + std::to_string(*out) + "`";
  if (!IsPlain(v) || !LooksInteger(v.Scalar())) {
    Error(it, "expected an integer, got " + Got(v),
          "write a whole number without quotes, " + example);
    return false;
  }
  auto n = ParseInt(v.Scalar());
  if (!n || *n < lo || *n > hi) {
    Error(it,
          Shorten(v.Scalar()) + " is out of range; expected an integer from " +
              std::to_string(lo) + " to " + std::to_string(hi),
          range_hint);
    return false;
  }
  *out = static_cast<int>(*n);
  Record(it);
  return true;
}

bool Parser::Seed(const Item& it, std::uint64_t* out) {
  const YAML::Node& v = it.value;
  if (!IsPlain(v) || !LooksInteger(v.Scalar())) {
    Error(it, "expected a non-negative integer, got " + Got(v),
          "write a whole number without quotes, e.g. `seed: 42`, or leave "
          "`seed` out to draw a random one");
    return false;
  }
  std::string_view s = v.Scalar();
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || p != s.data() + s.size()) {
    Error(it, Shorten(v.Scalar()) +
                  " is out of range; expected an integer from 0 to " +
                  std::to_string(std::numeric_limits<std::uint64_t>::max()));
    return false;
  }
  *out = n;
  Record(it);
  return true;
}

bool Parser::Number(const Item& it, const Range& r, double* out,
                    const std::string& range_hint) {
  const YAML::Node& v = it.value;
  std::optional<double> n;
  if (IsPlain(v)) n = ParseDouble(v.Scalar());
  if (!n) {
    Error(it, "expected a number, got " + Got(v),
          "write a number without quotes, e.g. `" + it.name + ": " +
              FormatNumber(*out) + "`");
    return false;
  }
  if (!r.Contains(*n)) {
    Error(it,
          Shorten(v.Scalar()) + " is out of range; expected " + r.Describe(),
          range_hint);
    return false;
  }
  *out = *n;
  Record(it);
  return true;
}

bool Parser::Seconds(const Item& it, const Range& r, double* out) {
  const YAML::Node& v = it.value;
  std::optional<double> n;
  if (IsPlain(v)) n = ParseDouble(v.Scalar());
  if (!n && v.IsScalar()) n = ParseDurationText(v.Scalar());
  if (!n) {
    Error(it, "expected a duration, got " + Got(v),
          "write seconds as a number (`" + it.name + ": " + FormatNumber(*out) +
              "`) or with a unit: ms, s, m, h (`" + it.name + ": 90s`)");
    return false;
  }
  if (!r.Contains(*n)) {
    Error(it,
          Shorten(v.Scalar()) + " is out of range; expected " + r.Describe());
    return false;
  }
  *out = *n;
  Record(it);
  return true;
}

bool Parser::Millis(const Item& it, long long lo, long long hi, int* out,
                    const std::string& range_hint) {
  const YAML::Node& v = it.value;
  std::optional<double> ms;
  if (IsPlain(v) && LooksInteger(v.Scalar())) {
    if (auto n = ParseInt(v.Scalar())) ms = static_cast<double>(*n);
  } else if (v.IsScalar() && !LooksInteger(v.Scalar())) {
    if (auto s = ParseDurationText(v.Scalar())) ms = *s * 1000.0;
  }
  if (!ms) {
    Error(it, "expected a duration in milliseconds, got " + Got(v),
          "write whole milliseconds (`" + it.name + ": " +
              std::to_string(*out) + "`) or use a unit (`" + it.name +
              ": 2s`)");
    return false;
  }
  if (*ms != std::floor(*ms) || *ms < static_cast<double>(lo) ||
      *ms > static_cast<double>(hi)) {
    Error(it,
          Shorten(v.Scalar()) +
              " is out of range; expected whole milliseconds from " +
              std::to_string(lo) + " to " + std::to_string(hi),
          range_hint);
    return false;
  }
  *out = static_cast<int>(*ms);
  Record(it);
  return true;
}

bool Parser::Bool(const Item& it, bool* out) {
  const YAML::Node& v = it.value;
  if (IsPlain(v)) {
    std::string s = v.Scalar();
    for (char& ch : s) ch = static_cast<char>(std::tolower(ch));
    if (s == "true" || s == "false") {
      *out = s == "true";
      Record(it);
      return true;
    }
    if (s == "yes" || s == "no" || s == "on" || s == "off" || s == "y" ||
        s == "n") {
      Error(it, "expected true or false, got " + Got(v),
            "write `" + it.name + ": " +
                (s == "yes" || s == "on" || s == "y" ? "true" : "false") + "`");
      return false;
    }
  }
  Error(it, "expected true or false, got " + Got(v),
        std::string("write `") + it.name + ": " + (*out ? "true" : "false") +
            "` (no quotes)");
  return false;
}

bool Parser::Text(const Item& it, bool allow_empty, std::string* out) {
  const YAML::Node& v = it.value;
  if (!v.IsScalar()) {
    Error(it, "expected text, got " + Got(v),
          "write `" + it.name + ": <text>` on one line");
    return false;
  }
  if (!allow_empty && v.Scalar().empty()) {
    Error(it, "must not be empty", "");
    return false;
  }
  *out = v.Scalar();
  Record(it);
  return true;
}

bool Parser::Enum(const Item& it, const std::vector<KnownName>& known,
                  const std::string& what, std::string* out) {
  const YAML::Node& v = it.value;
  const std::vector<std::string> names = Names(known);
  if (!v.IsScalar()) {
    Error(it, "expected a " + what + " name, got " + Got(v),
          "one of: " + JoinNames(names));
    return false;
  }
  const std::string& s = v.Scalar();
  for (const std::string& n : names) {
    if (n == s) {
      *out = s;
      Record(it);
      return true;
    }
  }
  std::string guess = DidYouMean(s, names);
  Error(it,
        "unknown " + what + " \"" + Shorten(s) +
            "\"; expected one of: " + JoinNames(names),
        guess.empty() ? "" : "did you mean \"" + guess + "\"?");
  return false;
}

bool Parser::EnumList(const Item& it, const std::vector<KnownName>& known,
                      const std::string& what, std::vector<std::string>* out) {
  const YAML::Node& v = it.value;
  const std::vector<std::string> names = Names(known);
  if (!v.IsSequence()) {
    Error(it, "expected a list of " + what + " names, got " + Got(v),
          "write a list, e.g. `" + it.name + ": [" +
              (out->empty() ? names.front() : (*out)[0]) +
              "]`; one of: " + JoinNames(names));
    return false;
  }
  std::vector<std::string> result;
  bool ok = true;
  Record(it);
  for (std::size_t i = 0; i < v.size(); ++i) {
    Item elem{it.key, v[i], it.path + "[" + std::to_string(i) + "]", it.name};
    std::string name;
    if (!Enum(elem, known, what, &name)) {
      ok = false;
      continue;
    }
    if (std::find(result.begin(), result.end(), name) != result.end()) {
      Error(elem, what + " \"" + name + "\" is listed twice",
            "list each " + what + " once");
      ok = false;
      continue;
    }
    result.push_back(name);
  }
  if (!ok) {
    prov_->bad.insert(it.path);
    return false;
  }
  *out = std::move(result);
  return true;
}

bool Parser::TextList(const Item& it, std::vector<std::string>* out) {
  const YAML::Node& v = it.value;
  if (!v.IsSequence()) {
    Error(it, "expected a list of text, got " + Got(v),
          "write a list, e.g. `" + it.name + ": [\"--snapshot-count=1000\"]`");
    return false;
  }
  std::vector<std::string> result;
  bool ok = true;
  Record(it);
  for (std::size_t i = 0; i < v.size(); ++i) {
    Item elem{it.key, v[i], it.path + "[" + std::to_string(i) + "]", it.name};
    std::string s;
    if (!Text(elem, /*allow_empty=*/false, &s)) {
      ok = false;
      continue;
    }
    result.push_back(std::move(s));
  }
  if (!ok) {
    prov_->bad.insert(it.path);
    return false;
  }
  *out = std::move(result);
  return true;
}

void Parser::Cluster(const Item& it) {
  Record(it);
  ClusterSpec& c = spec_->cluster;
  WalkMap(it.value, "cluster", ValueOrigin(it),
          {
              {"provider",
               [&](const Item& x) {
                 static const std::vector<KnownName> kProviders = {
                     {"netns", "network namespaces on this machine", 1}};
                 Enum(x, kProviders, "cluster provider", &c.provider);
               }},
              {"nodes",
               [&](const Item& x) {
                 Int(x, 1, 9, &c.nodes,
                     "faultline runs 1 to 9 nodes; etcd is usually tested "
                     "with 3 or 5");
               }},
              {"subnet",
               [&](const Item& x) {
                 std::string text;
                 if (!Text(x, false, &text)) return;
                 auto cidr = ParseCidr(text);
                 if (!cidr) {
                   Error(x, "expected an IPv4 network like 10.77.0.0/24, got " +
                                Got(x.value));
                   return;
                 }
                 const std::uint32_t a = cidr->address;
                 const bool is_private = (a >> 24) == 10 ||
                                         (a >> 20) == ((172u << 4) | 1u) ||
                                         (a >> 16) == ((192u << 8) | 168u);
                 if (!is_private) {
                   Error(x,
                         text +
                             " is not a private network; expected a "
                             "subnet of 10.0.0.0/8, 172.16.0.0/12 or "
                             "192.168.0.0/16",
                         "faultline only creates networks on private "
                         "addresses, e.g. `subnet: 10.77.0.0/24`");
                   return;
                 }
                 if (cidr->prefix < 16 || cidr->prefix > 29) {
                   Error(x,
                         "prefix /" + std::to_string(cidr->prefix) +
                             " is out of range; expected /16 to /29",
                         "e.g. `subnet: 10.77.0.0/24`");
                   return;
                 }
                 const std::uint32_t mask = ~std::uint32_t{0}
                                            << (32 - cidr->prefix);
                 if ((a & ~mask) != 0) {
                   Cidr net{a & mask, cidr->prefix};
                   Error(x,
                         text +
                             " has host bits set; a subnet is written "
                             "with its network address",
                         "did you mean " + FormatCidr(net) + "?");
                   return;
                 }
                 c.subnet = text;
               }},
          });
}

void Parser::Target(const Item& it) {
  Record(it);
  TargetSpec& t = spec_->target;
  EtcdSpec& e = t.etcd;
  WalkMap(
      it.value, "target", ValueOrigin(it),
      {
          {"name",
           [&](const Item& x) { Enum(x, Known().targets, "target", &t.name); }},
          {"pre_vote", [&](const Item& x) { Bool(x, &e.pre_vote); }},
          {"heartbeat_ms",
           [&](const Item& x) {
             Millis(x, 10, 5000, &e.heartbeat_ms,
                    "etcd's default is 100; keep it near the round-trip "
                    "time between nodes");
           }},
          {"election_timeout_ms",
           [&](const Item& x) {
             Millis(x, 50, 50000, &e.election_timeout_ms,
                    "etcd accepts at most 50000; its default is 1000");
           }},
          {"serializable_reads",
           [&](const Item& x) { Bool(x, &e.serializable_reads); }},
          {"binary", [&](const Item& x) { Text(x, false, &e.binary); }},
          {"extra_args",
           [&](const Item& x) {
             if (!TextList(x, &e.extra_args)) return;
             static const std::set<std::string> kReserved = {
                 "--name",
                 "--data-dir",
                 "--listen-client-urls",
                 "--listen-peer-urls",
                 "--advertise-client-urls",
                 "--initial-advertise-peer-urls",
                 "--initial-cluster",
                 "--initial-cluster-state",
                 "--initial-cluster-token",
                 "--heartbeat-interval",
                 "--election-timeout",
                 "--pre-vote"};
             for (std::size_t i = 0; i < e.extra_args.size(); ++i) {
               std::string flag = e.extra_args[i];
               if (flag.starts_with("-") && !flag.starts_with("--")) {
                 flag = "-" + flag;  // etcd accepts -flag as --flag
               }
               flag = flag.substr(0, flag.find('='));
               if (kReserved.count(flag) != 0) {
                 Item elem{x.key, x.value[i],
                           x.path + "[" + std::to_string(i) + "]", x.name};
                 Error(elem,
                       flag +
                           " is set by faultline itself and cannot "
                           "be overridden",
                       "use the target keys (heartbeat_ms, "
                       "election_timeout_ms, pre_vote) instead");
                 prov_->bad.insert(x.path);
               }
             }
           }},
      });
}

void Parser::Mix(const Item& it) {
  Record(it);
  WorkloadSpec& w = spec_->workload;
  const Range weight{0, 1e9, false, ""};
  WalkMap(it.value, "workload.mix", ValueOrigin(it),
          {
              {"read", [&](const Item& x) { Number(x, weight, &w.read); }},
              {"write", [&](const Item& x) { Number(x, weight, &w.write); }},
              {"cas", [&](const Item& x) { Number(x, weight, &w.cas); }},
          });
}

void Parser::Workload(const Item& it) {
  Record(it);
  WorkloadSpec& w = spec_->workload;
  WalkMap(
      it.value, "workload", ValueOrigin(it),
      {
          {"name",
           [&](const Item& x) {
             Enum(x, Known().workloads, "workload", &w.name);
           }},
          {"keys", [&](const Item& x) { Int(x, 1, 100000, &w.keys); }},
          {"concurrency",
           [&](const Item& x) { Int(x, 1, 1000, &w.concurrency); }},
          {"rate",
           [&](const Item& x) {
             Number(x, Range{0, 1e6, false, ""}, &w.rate, "0 means no limit");
           }},
          {"mix", [&](const Item& x) { Mix(x); }},
          {"op_timeout_ms",
           [&](const Item& x) { Millis(x, 1, 600000, &w.op_timeout_ms); }},
      });
}

void Parser::Nemesis(const Item& it) {
  Record(it);
  NemesisSpec& n = spec_->nemesis;
  WalkMap(it.value, "nemesis", ValueOrigin(it),
          {
              {"faults",
               [&](const Item& x) {
                 EnumList(x, Known().faults, "fault", &n.faults);
               }},
              {"interval",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, false, " s"}, &n.interval_s);
               }},
              {"duration",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &n.duration_s);
               }},
              {"partitions",
               [&](const Item& x) {
                 EnumList(x, Known().partition_shapes, "partition shape",
                          &n.partitions);
               }},
              {"targets",
               [&](const Item& x) {
                 EnumList(x, Known().node_selectors, "node selector",
                          &n.targets);
               }},
          });
}

void Parser::Checker(const Item& it) {
  Record(it);
  CheckerSpec& c = spec_->checker;
  WalkMap(it.value, "checker", ValueOrigin(it),
          {
              {"timeout",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &c.timeout_s);
               }},
              {"memory_limit_mb",
               [&](const Item& x) {
                 Int(x, 0, 1 << 20, &c.memory_limit_mb,
                     "0 means the checker's default bound");
               }},
              {"threads",
               [&](const Item& x) {
                 Int(x, 0, 1024, &c.threads, "0 means all cores");
               }},
          });
}

void Parser::Run(const YAML::Node& root) {
  if (IsNothing(root)) {
    diag_->Add(Origin{}, "the config is empty",
               "a config is a YAML mapping with at least `name: <test-name>`");
    return;
  }
  const Origin root_at = OriginOf(root);
  prov_->at[""] = root_at;
  bool have_name = false;
  TestSpec& s = *spec_;
  WalkMap(root, "", root_at,
          {
              {"name",
               [&](const Item& x) {
                 have_name = true;
                 std::string name;
                 if (!Text(x, false, &name)) return;
                 static const std::regex kName("[a-z0-9][a-z0-9-]*");
                 if (name.size() > 64 || !std::regex_match(name, kName)) {
                   std::string fixed;
                   for (char ch : name) {
                     ch = static_cast<char>(std::tolower(ch));
                     bool keep =
                         (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
                     if (keep) {
                       fixed += ch;
                     } else if (!fixed.empty() && fixed.back() != '-') {
                       fixed += '-';
                     }
                   }
                   while (!fixed.empty() && fixed.back() == '-') {
                     fixed.pop_back();
                   }
                   if (fixed.size() > 64) fixed.resize(64);
                   Error(x,
                         "\"" + Shorten(name) +
                             "\" is not a valid test name; expected lowercase "
                             "letters, digits and '-', starting with a "
                             "letter or digit, at most 64 characters",
                         fixed.empty() ? "e.g. `name: etcd-register`"
                                       : "e.g. `name: " + fixed + "`");
                   return;
                 }
                 s.name = name;
               }},
              {"description",
               [&](const Item& x) { Text(x, true, &s.description); }},
              {"seed",
               [&](const Item& x) {
                 if (Seed(x, &s.seed)) s.seed_given = true;
               }},
              {"time_limit",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &s.time_limit_s);
               }},
              {"recovery",
               [&](const Item& x) {
                 Seconds(x, Range{0, 3600, false, " s"}, &s.recovery_s);
               }},
              {"store", [&](const Item& x) { Text(x, false, &s.store_dir); }},
              {"expect",
               [&](const Item& x) {
                 static const std::vector<KnownName> kExpect = {
                     {"valid", "", 1}, {"invalid", "", 1}};
                 std::string e;
                 if (Enum(x, kExpect, "expected verdict", &e)) s.expect = e;
               }},
              {"cluster", [&](const Item& x) { Cluster(x); }},
              {"target", [&](const Item& x) { Target(x); }},
              {"workload", [&](const Item& x) { Workload(x); }},
              {"nemesis", [&](const Item& x) { Nemesis(x); }},
              {"checker", [&](const Item& x) { Checker(x); }},
          });
  if (root.IsMap() && !have_name) {
    diag_->Add(root_at, "missing required key `name`",
               "add a test name at the top level, e.g. `name: etcd-register`");
  }
}

// The first tab in the leading whitespace of lines 1..last_line (1-based).
std::optional<Origin> FirstIndentTab(std::string_view text, int last_line) {
  int line = 1;
  std::size_t start = 0;
  while (start <= text.size() && line <= last_line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    for (std::size_t i = start; i < end; ++i) {
      if (text[i] == '\t') {
        return Origin{line, static_cast<int>(i - start) + 1, ""};
      }
      if (text[i] != ' ') break;
    }
    start = end + 1;
    ++line;
  }
  return std::nullopt;
}

}  // namespace

void ParseText(std::string_view text, TestSpec* spec, Provenance* prov,
               Diagnostics* diag) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::ParserException& e) {
    std::string hint;
    if (e.msg.find("tab") != std::string::npos) {
      hint = "indent with spaces; YAML does not allow tabs for indentation";
    } else if (e.msg.find("map") != std::string::npos) {
      hint =
          "check the indentation and that every `key: value` has a space "
          "after the colon";
    } else if (e.msg.find("flow") != std::string::npos) {
      hint = "check that every [ and { has its closing ] or }";
    }
    Origin at;
    if (e.mark.line >= 0) at = Origin{e.mark.line + 1, e.mark.column + 1, ""};
    // yaml-cpp often reports a tab-indented line as some other problem
    // further on; name the tab when one precedes the error.
    if (auto tab = FirstIndentTab(text, at.line)) {
      diag->Add(
          *tab,
          "invalid YAML: tab character in indentation (parser: " + e.msg + ")",
          "indent with spaces; YAML does not allow tabs for "
          "indentation");
      return;
    }
    diag->Add(at, "invalid YAML: " + e.msg, hint);
    return;
  } catch (const YAML::Exception& e) {
    Origin at;
    if (e.mark.line >= 0) at = Origin{e.mark.line + 1, e.mark.column + 1, ""};
    diag->Add(at, "invalid YAML: " + e.msg);
    return;
  }
  if (docs.size() > 1) {
    diag->Add(OriginOf(docs[1]),
              "the file holds " + std::to_string(docs.size()) +
                  " YAML documents; expected exactly one",
              "remove the `---` separator and merge or split the configs");
    return;
  }
  Parser parser(spec, prov, diag);
  parser.Run(docs.empty() ? YAML::Node() : docs[0]);
}

}  // namespace faultline::harness::config_internal

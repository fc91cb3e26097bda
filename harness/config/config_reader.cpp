// Typed YAML value readers for the config loader (config_reader.h).
#include "harness/config/config_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace faultline::harness::config_internal {

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

namespace {

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

}  // namespace

Origin YamlReader::ValueOrigin(const Item& it) const {
  Origin o = OriginOf(it.value);
  // yaml-cpp places an empty value at the next token; the key is clearer.
  if (IsNothing(it.value) || !o.from_file()) return OriginOf(it.key);
  return o;
}

void YamlReader::Error(const Item& it, std::string message, std::string hint) {
  prov_->bad.insert(it.path);
  diag_->Add(ValueOrigin(it), it.path + ": " + std::move(message),
             std::move(hint));
}

void YamlReader::UnknownKey(const std::string& prefix, const std::string& key,
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

void YamlReader::WalkMap(const YAML::Node& map, const std::string& prefix,
                         const Origin& where,
                         const std::vector<FieldDef>& fields) {
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
    // Copies: the iterator hands out a temporary pair proxy.
    const YAML::Node k = it->first;
    const YAML::Node v = it->second;
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
    Item item{k, v, prefix.empty() ? name : prefix + "." + name, name};
    def->handle(item);
  }
}

bool YamlReader::Int(const Item& it, long long lo, long long hi, int* out,
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

bool YamlReader::Seed(const Item& it, std::uint64_t* out) {
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

bool YamlReader::Number(const Item& it, const Range& r, double* out,
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

bool YamlReader::Seconds(const Item& it, const Range& r, double* out) {
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

bool YamlReader::Millis(const Item& it, long long lo, long long hi, int* out,
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

bool YamlReader::Bool(const Item& it, bool* out) {
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

bool YamlReader::Text(const Item& it, bool allow_empty, std::string* out) {
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

bool YamlReader::Enum(const Item& it, const std::vector<KnownName>& known,
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

bool YamlReader::EnumList(const Item& it, const std::vector<KnownName>& known,
                          const std::string& what,
                          std::vector<std::string>* out) {
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

bool YamlReader::TextList(const Item& it, std::vector<std::string>* out,
                          bool allow_empty) {
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
    if (!Text(elem, allow_empty, &s)) {
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

}  // namespace faultline::harness::config_internal

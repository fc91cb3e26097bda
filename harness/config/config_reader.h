// Internal to the config loader: a YAML reader that turns one value at a
// time into a typed field, recording where it came from (Provenance) and
// reporting one precise error per problem (Diagnostics). Used by
// config_parse.cpp, implemented in config_reader.cpp. Not a public
// interface; includes yaml-cpp, so only config*.cpp may include it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness/config/config_internal.h"

namespace faultline::harness::config_internal {

// Position of a node (1-based), or a default Origin when yaml-cpp has none.
Origin OriginOf(const YAML::Node& n);
// At most 40 characters of `s`, on one line.
std::string Shorten(std::string s);
// Absent or null (`key:` with nothing after it, `~`, `null`).
bool IsNothing(const YAML::Node& n);
// An unquoted scalar (only those may be numbers or booleans).
bool IsPlain(const YAML::Node& n);
// What the user wrote, for "got ..." in messages: "`five`", "a list", ...
std::string Got(const YAML::Node& n);

// Every (section, key) the schema knows; section "" is the top level.
// Defined beside the schema in config_parse.cpp.
const std::vector<std::pair<std::string, std::string>>& AllKeys();

// One `key: value` pair being read.
struct Item {
  YAML::Node key;
  YAML::Node value;
  std::string path;  // "cluster.nodes", "nemesis.faults[1]"
  std::string name;  // "nodes"
};

struct FieldDef {
  std::string key;
  std::function<void(const Item&)> handle;
};

// Numeric range, for checks and messages.
struct Range {
  double lo;
  double hi;
  bool lo_open = false;  // lo < v instead of lo <= v
  std::string unit;      // "" or " s"

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

// Typed readers. Each returns true and sets *out (and the provenance) when
// the value is acceptable; otherwise it reports one error at the value,
// marks the path bad and leaves *out (the default) untouched. The current
// *out is used as the example in hints.
class YamlReader {
 public:
  YamlReader(Provenance* prov, Diagnostics* diag) : prov_(prov), diag_(diag) {}

 protected:
  Origin ValueOrigin(const Item& it) const;
  void Error(const Item& it, std::string message, std::string hint = "");
  void Record(const Item& it) { prov_->at[it.path] = ValueOrigin(it); }

  // Calls the handler of each key of `map` (null: nothing to do); reports
  // non-mappings, non-scalar keys, duplicate and unknown keys.
  void WalkMap(const YAML::Node& map, const std::string& prefix,
               const Origin& where, const std::vector<FieldDef>& fields);

  bool Int(const Item& it, long long lo, long long hi, int* out,
           const std::string& range_hint = "");
  bool Seed(const Item& it, std::uint64_t* out);
  bool Number(const Item& it, const Range& r, double* out,
              const std::string& range_hint = "");
  // Seconds: a plain number, or text with a unit (ms, s, m, h).
  bool Seconds(const Item& it, const Range& r, double* out);
  // Whole milliseconds: a plain integer, or text with a unit.
  bool Millis(const Item& it, long long lo, long long hi, int* out,
              const std::string& range_hint = "");
  bool Bool(const Item& it, bool* out);
  bool Text(const Item& it, bool allow_empty, std::string* out);
  bool Enum(const Item& it, const std::vector<KnownName>& known,
            const std::string& what, std::string* out);
  // A list of distinct known names (may be empty).
  bool EnumList(const Item& it, const std::vector<KnownName>& known,
                const std::string& what, std::vector<std::string>* out);
  bool TextList(const Item& it, std::vector<std::string>* out,
                bool allow_empty = false);

  Provenance* prov_;
  Diagnostics* diag_;

 private:
  void UnknownKey(const std::string& prefix, const std::string& key,
                  const Origin& where, const std::vector<FieldDef>& fields);
};

}  // namespace faultline::harness::config_internal

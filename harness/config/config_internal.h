// Internal to the config loader (config*.cpp): shared between the parser,
// the cross-field validator and the describer. Not a public interface.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/config/config.h"

namespace faultline::harness::config_internal {

// Where a value came from: a place in the file, a command-line flag, or
// nowhere (a default).
struct Origin {
  int line = 0;      // 1-based; 0: not from the file
  int column = 0;    // 1-based
  std::string flag;  // e.g. "--nodes 1" when set by an override
  bool from_flag() const { return !flag.empty(); }
  bool from_file() const { return line > 0; }
};

// Provenance of the spec's fields, keyed by dotted path as users write it:
// "cluster.nodes", "nemesis.partitions", "nemesis.partitions[2]".
struct Provenance {
  std::map<std::string, Origin> at;
  std::set<std::string> bad;  // paths whose value was rejected

  Origin Of(const std::string& path) const;
  bool AnyBad(std::initializer_list<std::string> paths) const;
  // The origin to blame for an error involving `paths`: the first one set
  // by a flag, else the first one set in the file, else a default Origin.
  Origin Blame(std::initializer_list<std::string> paths) const;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}
  // An error at `origin`; a flag origin prefixes the message with the flag.
  void Add(const Origin& origin, std::string message, std::string hint = "");
  bool empty() const { return errors_.empty(); }
  std::size_t size() const { return errors_.size(); }
  std::vector<ConfigError> Take() { return std::move(errors_); }

 private:
  std::string file_;
  std::vector<ConfigError> errors_;
};

struct Cidr {
  std::uint32_t address = 0;  // host byte order
  int prefix = 0;
};
// Parses "a.b.c.d" (strict dotted quad: four numbers 0..255 of 1 to 3
// digits, no sign, nothing else) into host byte order.
std::optional<std::uint32_t> ParseIpv4(std::string_view text);
// Parses "a.b.c.d/p" (a ParseIpv4 address, prefix 0..32).
std::optional<Cidr> ParseCidr(std::string_view text);
std::string FormatCidr(const Cidr& c);

// Shortest text that parses back to exactly `v` ("60", "0.5", "1e-05").
std::string FormatNumber(double v);

std::vector<std::string> Names(const std::vector<KnownName>& known);
std::string JoinNames(const std::vector<std::string>& names);

// Parses the YAML root into `spec`, recording provenance and errors.
void ParseText(std::string_view text, TestSpec* spec, Provenance* prov,
               Diagnostics* diag);
// Applies and range-checks overrides; records flag origins.
void ApplyOverrides(const Overrides& o, TestSpec* spec, Provenance* prov,
                    Diagnostics* diag);
// Rules that involve more than one field (docs/config.md, "Cross-field").
void ValidateCrossField(const TestSpec& spec, const Provenance& prov,
                        Diagnostics* diag);

}  // namespace faultline::harness::config_internal

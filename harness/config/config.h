// Config loading and strict validation: YAML campaign file -> TestSpec.
// The schema and every rule are documented for users in docs/config.md.
//
// Loading is pure with respect to the machine: it reads the config file (for
// LoadConfigFile) and, when no seed is given, draws one from
// std::random_device; it starts nothing and creates nothing. Each problem is
// reported as one ConfigError naming file:line:column, what was expected and
// how to fix it. All problems found are reported, not just the first (except
// that a YAML syntax error, a NUL byte or nesting deeper than
// kMaxConfigDepth stops loading); FormatErrors prints the first
// kMaxPrintedErrors of them and counts the rest.
//
// Thread-safety: every function here is safe to call concurrently; the
// tables returned by Known() are immutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/config/spec.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

struct ConfigError {
  std::string file;     // path or display name of the config
  int line = 0;         // 1-based; 0 when the error has no place in the file
  int column = 0;       // 1-based; 0 when line is 0
  std::string message;  // one line; starts with "--flag value: " when a
                        // command-line override caused the error
  std::string hint;     // how to fix it; may be empty

  // "file:line:col: error: message\n  hint: hint" (no trailing newline).
  // Without a line: "file: error: message". Without a hint: one line.
  std::string Format() const;
};

// Command-line overrides, applied after the file is parsed and before
// cross-field validation. Errors they cause name the flag as the CLI spells
// it: --time-limit, --seed, --concurrency, --nodes, --store, --cluster.
struct Overrides {
  std::optional<double> time_limit_s;    // --time-limit
  std::optional<std::uint64_t> seed;     // --seed
  std::optional<int> concurrency;        // --concurrency
  std::optional<int> nodes;              // --nodes
  std::optional<std::string> store_dir;  // --store
  // --cluster: the provider (netns | docker); `--cluster docker` alone runs
  // against the containers faultline-n1 .. faultline-n<nodes>.
  std::optional<std::string> cluster;
};

// FormatErrors prints at most this many errors.
inline constexpr std::size_t kMaxPrintedErrors = 50;
// Lists and mappings nested deeper than this are an error (a config needs a
// handful of levels; yaml-cpp itself gives up near 500).
inline constexpr int kMaxConfigDepth = 64;

struct LoadResult {
  std::optional<TestSpec> spec;     // set iff errors is empty
  std::vector<ConfigError> errors;  // in file order, then cross-field ones

  bool ok() const { return spec.has_value(); }
  // The first kMaxPrintedErrors errors' Format(), one after another,
  // newline-terminated; when there are more, then the line
  // "... and N more errors" (N: how many were not printed).
  std::string FormatErrors() const;
};

// Loads and validates the YAML config at `path`. spec->source_file = path.
LoadResult LoadConfigFile(const std::string& path,
                          const Overrides& overrides = {});

// Same, from text; `display_name` is used in messages and as source_file.
LoadResult LoadConfigText(std::string_view text,
                          const std::string& display_name,
                          const Overrides& overrides = {});

// Convenience for callers that only need a message: the spec, or an Error
// whose message is FormatErrors() (without the final newline).
Result<TestSpec> LoadConfig(const std::string& path,
                            const Overrides& overrides = {});

// The resolved spec as commented YAML (every field, defaults included), e.g.
// stored in the run directory as config.yaml. Loading it back gives a spec
// equal to `spec` except source_file, and seed_given becomes true (the seed
// is written out so that the run can be reproduced).
std::string DescribeSpec(const TestSpec& spec);

// Names the config accepts, for `faultline list` and for messages.
struct KnownName {
  std::string name;
  std::string description;  // one line
  int min_nodes = 1;        // smallest cluster.nodes it makes sense for
};
struct KnownNames {
  std::vector<KnownName> targets;           // target.name
  std::vector<KnownName> workloads;         // workload.name
  std::vector<KnownName> faults;            // nemesis.faults
  std::vector<KnownName> partition_shapes;  // nemesis.partitions
  std::vector<KnownName> node_selectors;    // nemesis.targets
};
const KnownNames& Known();

// Human-readable listing of Known(), grouped, one name per line.
std::string FormatKnownNames();

// Whether `n` uses a disk fault (power-loss, torn-write, fsync-error,
// disk-full, slow-disk), so the run needs the lazy file system on its nodes.
bool UsesDiskFaults(const NemesisSpec& n);

// Smallest cluster size a partition shape or node selector works on, or 0 if
// `name` is not a known shape/selector.
int MinNodesForShape(std::string_view shape);
int MinNodesForSelector(std::string_view selector);

// The candidate closest to `word` by edit distance if it is close enough to
// be a plausible typo, else "". Used for did-you-mean hints.
std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& candidates);

}  // namespace faultline::harness

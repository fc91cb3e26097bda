// Config loading entry points, error formatting and command-line overrides.
// Parsing is in config_parse.cpp, cross-field rules in config_validate.cpp,
// DescribeSpec and the name tables in config_describe.cpp.
#include "harness/config/config.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "harness/config/config_internal.h"

namespace faultline::harness {

std::string ConfigError::Format() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  out += ": error: " + message;
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

std::string LoadResult::FormatErrors() const {
  std::string out;
  const std::size_t shown = std::min(errors.size(), kMaxPrintedErrors);
  for (std::size_t i = 0; i < shown; ++i) out += errors[i].Format() + "\n";
  if (const std::size_t more = errors.size() - shown; more > 0) {
    out += "... and " + std::to_string(more) + " more error" +
           (more == 1 ? "" : "s") + "\n";
  }
  return out;
}

namespace config_internal {

Origin Provenance::Of(const std::string& path) const {
  auto it = at.find(path);
  return it == at.end() ? Origin{} : it->second;
}

bool Provenance::AnyBad(std::initializer_list<std::string> paths) const {
  for (const std::string& p : paths) {
    if (bad.count(p) != 0) return true;
  }
  return false;
}

Origin Provenance::Blame(std::initializer_list<std::string> paths) const {
  for (const std::string& p : paths) {
    if (Of(p).from_flag()) return Of(p);
  }
  for (const std::string& p : paths) {
    if (Of(p).from_file()) return Of(p);
  }
  return Origin{};
}

void Diagnostics::Add(const Origin& origin, std::string message,
                      std::string hint) {
  ConfigError e;
  e.file = file_;
  if (origin.from_flag()) {
    e.message = origin.flag + ": " + std::move(message);
  } else {
    e.line = origin.line;
    e.column = origin.line > 0 ? origin.column : 0;
    e.message = std::move(message);
  }
  e.hint = std::move(hint);
  errors_.push_back(std::move(e));
}

void ApplyOverrides(const Overrides& o, TestSpec* spec, Provenance* prov,
                    Diagnostics* diag) {
  if (o.time_limit_s) {
    const double v = *o.time_limit_s;
    const Origin at{0, 0, "--time-limit " + FormatNumber(v)};
    if (!(v > 0 && v <= 86400)) {
      diag->Add(at, "time_limit must be > 0 and <= 86400 seconds",
                "e.g. --time-limit 120");
      prov->bad.insert("time_limit");
    } else {
      spec->time_limit_s = v;
      prov->at["time_limit"] = at;
    }
  }
  if (o.seed) {
    spec->seed = *o.seed;
    spec->seed_given = true;
    prov->at["seed"] = Origin{0, 0, "--seed " + std::to_string(*o.seed)};
  }
  if (o.concurrency) {
    const int v = *o.concurrency;
    const Origin at{0, 0, "--concurrency " + std::to_string(v)};
    if (v < 1 || v > 1000) {
      diag->Add(at, "workload.concurrency must be from 1 to 1000",
                "e.g. --concurrency 10");
      prov->bad.insert("workload.concurrency");
    } else {
      spec->workload.concurrency = v;
      prov->at["workload.concurrency"] = at;
    }
  }
  if (o.nodes) {
    const int v = *o.nodes;
    const Origin at{0, 0, "--nodes " + std::to_string(v)};
    if (v < 1 || v > 9) {
      diag->Add(at, "cluster.nodes must be from 1 to 9",
                "etcd is usually tested with --nodes 3 or --nodes 5");
      prov->bad.insert("cluster.nodes");
    } else {
      spec->cluster.nodes = v;
      prov->at["cluster.nodes"] = at;
    }
  }
  if (o.cluster) {
    const Origin at{0, 0, "--cluster " + *o.cluster};
    if (*o.cluster != "netns" && *o.cluster != "docker") {
      diag->Add(at, "unknown cluster provider '" + *o.cluster + "'",
                "expected netns (namespaces on this machine) or docker "
                "(running containers, docs/docker.md)");
      prov->bad.insert("cluster.provider");
    } else {
      spec->cluster.provider = *o.cluster;
      prov->at["cluster.provider"] = at;
    }
  }
  if (o.store_dir) {
    const Origin at{0, 0, "--store \"" + *o.store_dir + "\""};
    if (o.store_dir->empty()) {
      diag->Add(at, "the store directory must not be empty",
                "e.g. --store store");
      prov->bad.insert("store");
    } else {
      spec->store_dir = *o.store_dir;
      prov->at["store"] = at;
    }
  }
}

}  // namespace config_internal

LoadResult LoadConfigText(std::string_view text,
                          const std::string& display_name,
                          const Overrides& overrides) {
  using namespace config_internal;
  TestSpec spec;
  spec.source_file = display_name;
  Provenance prov;
  Diagnostics diag(display_name);
  try {
    ParseText(text, &spec, &prov, &diag);
  } catch (const std::exception& e) {
    // Not expected (ParseText catches yaml-cpp's exceptions); never let one
    // escape the loader.
    LoadResult result;
    result.errors.push_back(ConfigError{
        display_name, 0, 0,
        std::string("internal error while reading the config: ") + e.what(),
        "please report this with the config file"});
    return result;
  }
  const bool parsed = !prov.at.empty();  // false: YAML syntax error or empty
  ApplyOverrides(overrides, &spec, &prov, &diag);
  if (parsed) ValidateCrossField(spec, prov, &diag);

  LoadResult result;
  if (!diag.empty()) {
    result.errors = diag.Take();
    return result;
  }
  if (!spec.seed_given) {
    std::random_device rd;
    spec.seed = (std::uint64_t{rd()} << 32) ^ std::uint64_t{rd()};
  }
  result.spec = std::move(spec);
  return result;
}

LoadResult LoadConfigFile(const std::string& path, const Overrides& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    LoadResult result;
    ConfigError e;
    e.file = path;
    e.message = std::string("cannot read the config: ") +
                (err != 0 ? std::strerror(err) : "open failed");
    e.hint = "check the path; ready-made configs are under configs/";
    result.errors.push_back(std::move(e));
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  LoadResult result = LoadConfigText(text.str(), path, overrides);
  // target: process: exec clients run in (or relative to) the config
  // file's directory, wherever faultline was started.
  if (result.spec && result.spec->target.name == "process") {
    std::string& cwd = result.spec->target.process.client.cwd;
    std::error_code ec;
    const std::filesystem::path dir =
        std::filesystem::absolute(std::filesystem::path(path), ec)
            .parent_path();
    std::string& config_dir = result.spec->target.process.config_dir;
    if (!ec && config_dir.empty()) config_dir = dir.string();
    if (!ec && (cwd.empty() || cwd[0] != '/'))
      cwd = (dir / cwd).lexically_normal().string();
    if (!cwd.empty() && cwd.size() > 1 && cwd.back() == '/') cwd.pop_back();
  }
  return result;
}

Result<TestSpec> LoadConfig(const std::string& path,
                            const Overrides& overrides) {
  LoadResult r = LoadConfigFile(path, overrides);
  if (r.ok()) return std::move(*r.spec);
  std::string message = r.FormatErrors();
  if (!message.empty() && message.back() == '\n') message.pop_back();
  return Error{std::move(message)};
}

}  // namespace faultline::harness

// faultline suite [PATH...]: runs every known-anomaly config (each with its
// `expect`) N times and prints, per config, how many runs gave the expected
// verdict. PATH is a config file or a directory of *.yaml files (not
// recursive); the default is configs/known.
//
// Exit code: 0 when every run gave its expected verdict, 1 when one did not
// (or a run could not complete), 254 for bad input (nothing is started: every
// config is loaded and preflighted first), 255 when the suite itself failed,
// 128 + the signal (130 SIGINT, 143 SIGTERM) when interrupted: the current
// run heals and tears down, no further run starts, the tally so far prints.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "cli/campaign.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/signals.h"
#include "harness/config/config.h"
#include "reports/results.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

struct SuiteOptions {
  std::vector<std::string> paths;
  int runs = 1;
  double time_limit = 0;
  std::uint64_t seed = 0;
  std::string store;
  std::string json;
  std::string index_dir;
  CLI::Option* time_limit_opt = nullptr;
  CLI::Option* seed_opt = nullptr;
  CLI::Option* store_opt = nullptr;
};

// One config's tally.
struct Row {
  std::string name;
  std::string path;
  std::string expect;
  int runs = 0;
  int matched = 0;
  int valid = 0;
  int invalid = 0;
  int unknown = 0;
  int errors = 0;  // no verdict: setup failure, internal error, abort
  double seconds = 0;
  std::vector<std::string> run_dirs;
};

// The config files PATH names: itself, or the *.yaml files of a directory
// in name order. Errors say which path and why.
harness::Result<std::vector<std::string>> Expand(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const auto ext = entry.path().extension();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
        out.push_back(entry.path().string());
      }
    }
    if (ec) return harness::Fail(path + ": cannot list: " + ec.message());
    std::sort(out.begin(), out.end());
    if (out.empty()) {
      return harness::Fail(path + ": no *.yaml config in this directory");
    }
    return out;
  }
  if (!fs::exists(path, ec)) {
    return harness::Fail(path +
                         ": no such file or directory (give config files or "
                         "a directory of them, e.g. configs/known)");
  }
  return std::vector<std::string>{path};
}

const char* Word(checkers::Validity v) {
  switch (v) {
    case checkers::Validity::kValid:
      return "valid";
    case checkers::Validity::kInvalid:
      return "invalid";
    default:
      return "unknown";
  }
}

// The overall verdict stored in RUN_DIR/results.json, or nullopt.
std::optional<checkers::Validity> StoredVerdict(const std::string& run_dir) {
  if (run_dir.empty()) return std::nullopt;
  std::ifstream in(run_dir + "/results.json");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  auto summary = reports::ParseResultsJson(text.str());
  if (!summary || summary->aborted) return std::nullopt;
  return reports::OverallValidity(*summary);
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string SuiteJson(const std::vector<Row>& rows, int runs_each) {
  std::string out = "{\"schema\":\"faultline.suite/1\",\"runs_each\":" +
                    std::to_string(runs_each) + ",\"configs\":[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (i > 0) out += ",";
    out += "{\"name\":" + JsonString(r.name) +
           ",\"config\":" + JsonString(r.path) +
           ",\"expect\":" + JsonString(r.expect) +
           ",\"runs\":" + std::to_string(r.runs) +
           ",\"matched\":" + std::to_string(r.matched) +
           ",\"valid\":" + std::to_string(r.valid) +
           ",\"invalid\":" + std::to_string(r.invalid) +
           ",\"unknown\":" + std::to_string(r.unknown) +
           ",\"errors\":" + std::to_string(r.errors) + ",\"run_dirs\":[";
    for (std::size_t j = 0; j < r.run_dirs.size(); ++j) {
      if (j > 0) out += ",";
      out += JsonString(r.run_dirs[j]);
    }
    out += "]}";
  }
  return out + "]}\n";
}

std::string Table(const std::vector<Row>& rows) {
  std::size_t width = 6;
  for (const Row& r : rows) width = std::max(width, r.name.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-7s  %7s  %5s  %7s  %7s  %5s  %7s\n",
                static_cast<int>(width), "config", "expect", "matched", "valid",
                "invalid", "unknown", "error", "avg s");
  out += line;
  for (const Row& r : rows) {
    const std::string matched =
        std::to_string(r.matched) + "/" + std::to_string(r.runs);
    std::snprintf(line, sizeof line,
                  "%-*s  %-7s  %7s  %5d  %7d  %7d  %5d  %7.0f%s\n",
                  static_cast<int>(width), r.name.c_str(), r.expect.c_str(),
                  matched.c_str(), r.valid, r.invalid, r.unknown, r.errors,
                  r.runs > 0 ? r.seconds / r.runs : 0.0,
                  r.matched == r.runs ? "" : "  <- not as expected");
    out += line;
  }
  return out;
}

int DoSuite(const SuiteOptions& o) {
  harness::Overrides ov;
  if (o.time_limit_opt->count()) ov.time_limit_s = o.time_limit;
  if (o.seed_opt->count()) ov.seed = o.seed;
  if (o.store_opt->count()) ov.store_dir = o.store;

  // Load and preflight everything before starting anything.
  std::vector<std::string> paths = o.paths;
  if (paths.empty()) paths.push_back("configs/known");
  std::vector<harness::TestSpec> specs;
  std::vector<Row> rows;
  bool bad = false;
  for (const auto& path : paths) {
    auto files = Expand(path);
    if (!files) {
      std::fprintf(stderr, "faultline suite: %s\n", files.error().c_str());
      bad = true;
      continue;
    }
    for (const auto& file : *files) {
      auto loaded = harness::LoadConfigFile(file, ov);
      if (!loaded.ok()) {
        std::fputs(loaded.FormatErrors().c_str(), stderr);
        bad = true;
        continue;
      }
      if (!loaded.spec->expect) {
        std::fprintf(stderr,
                     "faultline suite: %s: no `expect:` in this config; a "
                     "suite compares each verdict with it (add `expect: "
                     "valid` or `expect: invalid` at the top level)\n",
                     file.c_str());
        bad = true;
        continue;
      }
      std::string missing = Preflight(*loaded.spec);
      if (!missing.empty()) {
        std::fprintf(stderr, "faultline suite: %s: %s\n", file.c_str(),
                     missing.c_str());
        bad = true;
        continue;
      }
      Row row;
      row.name = loaded.spec->name;
      row.path = file;
      row.expect = *loaded.spec->expect;
      rows.push_back(row);
      specs.push_back(*loaded.spec);
    }
  }
  if (bad) return kExitUsage;

  SignalWatcher signals;
  CampaignOptions co;
  co.signals = &signals;
  co.index_dir = o.index_dir;
  // The global --quiet, -v and colour rules (cli/output.h) for every run.
  const Console console = CurrentConsole();
  co.verbosity = console.verbosity;
  co.color = console.color;
  co.status_line = console.verbosity >= 0;
  const int total = static_cast<int>(specs.size()) * o.runs;
  int done = 0;
  std::vector<std::string> lines;
  for (std::size_t c = 0; c < specs.size(); ++c) {
    for (int i = 0; i < o.runs && !signals.abort()->load(); ++i) {
      harness::TestSpec spec = specs[c];
      if (i > 0) spec.seed = specs[c].seed + static_cast<std::uint64_t>(i);
      const auto started = std::chrono::steady_clock::now();
      auto r = RunCampaign(spec, co);
      const double seconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - started)
                                 .count();
      Row& row = rows[c];
      ++row.runs;
      row.seconds += seconds;
      row.run_dirs.push_back(r.run_dir);
      auto verdict =
          signals.abort()->load() ? std::nullopt : StoredVerdict(r.run_dir);
      std::string got = "error (exit " + std::to_string(r.exit_code) + ")";
      if (verdict) {
        got = Word(*verdict);
        if (*verdict == checkers::Validity::kValid) ++row.valid;
        if (*verdict == checkers::Validity::kInvalid) ++row.invalid;
        if (*verdict == checkers::Validity::kUnknown) ++row.unknown;
        if (got == row.expect) ++row.matched;
      } else {
        ++row.errors;
      }
      ++done;
      char line[1024];
      std::snprintf(line, sizeof line,
                    "[%d/%d] %s #%d (seed %llu): expected %s, got %s: %s "
                    "(%.0f s) %s",
                    done, total, spec.name.c_str(), i + 1,
                    static_cast<unsigned long long>(spec.seed),
                    row.expect.c_str(), got.c_str(),
                    got == row.expect ? "as expected" : "NOT as expected",
                    seconds, r.run_dir.c_str());
      lines.push_back(line);
      std::printf("\nsuite %s\n", line);
      std::fflush(stdout);
    }
  }

  int matched = 0;
  int runs = 0;
  for (const Row& r : rows) {
    matched += r.matched;
    runs += r.runs;
  }
  std::printf("\nsuite: %zu config%s, %d run%s, %d as expected\n", rows.size(),
              rows.size() == 1 ? "" : "s", runs, runs == 1 ? "" : "s", matched);
  for (const auto& l : lines) std::printf("  %s\n", l.c_str());
  std::printf("\n%s", Table(rows).c_str());
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << SuiteJson(rows, o.runs);
    if (!out) {
      std::fprintf(stderr, "faultline suite: cannot write %s\n",
                   o.json.c_str());
      return kExitInternal;
    }
    std::printf("suite results: %s\n", o.json.c_str());
  }
  if (int sig = signals.first().number; sig != 0) {
    std::printf("interrupted by %s: %d of %d runs done\n",
                signals.first().name.c_str(), done, total);
    return 128 + sig;
  }
  return matched == runs && runs == total ? 0 : 1;
}

}  // namespace

void AddSuiteCommand(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<SuiteOptions>();
  auto* cmd = root.add_subcommand(
      "suite",
      "Run known-anomaly configs and print expected versus actual verdicts");
  cmd->add_option("path", o->paths,
                  "Config files or directories of *.yaml (default "
                  "configs/known)");
  cmd->add_option("--runs", o->runs, "Runs per config (seeds seed, seed+1...)")
      ->check(CLI::Range(1, 10000));
  o->time_limit_opt = cmd->add_option("--time-limit", o->time_limit,
                                      "Seconds per run (overrides time_limit)");
  o->seed_opt =
      cmd->add_option("--seed", o->seed, "First seed of every config's runs");
  o->store_opt =
      cmd->add_option("--store", o->store, "Store directory (overrides store)");
  cmd->add_option("--json", o->json,
                  "Also write the tally as JSON (schema faultline.suite/1)");
  cmd->add_option("--index-dir", o->index_dir,
                  "Directory listing active runs for 'heal --all' "
                  "(default /run/faultline/active)");
  cmd->footer(
      "Every config must have `expect: valid|invalid`. Each run is stored "
      "like\n`faultline run` stores it. Ctrl-C stops the current run (it "
      "heals and tears\ndown) and prints the tally so far.\n\n"
      "Exit code: 0 when every run gave its expected verdict, else 1; 254 "
      "for bad\ninput (nothing started); 130 (SIGINT) or 143 (SIGTERM) when "
      "interrupted.\n\nExamples:\n"
      "  faultline suite\n"
      "  faultline suite configs/known --runs 5 --json suite.json\n"
      "  faultline suite configs/known/raftkv-*.yaml --time-limit 60");
  cmd->callback([o, &exit_code] { exit_code = DoSuite(*o); });
}

}  // namespace faultline::cli

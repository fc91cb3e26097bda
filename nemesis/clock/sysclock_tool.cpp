#include "nemesis/clock/sysclock_tool.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace faultline::nemesis {
namespace {

std::optional<std::int64_t> ParseInt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<std::int64_t>(v);
}

}  // namespace

SysclockParse ParseSysclockArgs(const std::vector<std::string>& argv) {
  SysclockParse out;
  SysclockArgs a;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--state") {
      if (i + 1 >= argv.size()) {
        out.error = "--state needs a file";
        return out;
      }
      a.state = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (rest.empty()) {
    out.error = "missing command (show, bump, strobe or reset)";
    return out;
  }
  a.command = rest[0];
  rest.erase(rest.begin());
  std::size_t want = a.command == "bump"                           ? 1
                     : a.command == "strobe"                       ? 3
                     : a.command == "show" || a.command == "reset" ? 0
                                                                   : 99;
  if (want == 99) {
    out.error =
        "unknown command '" + a.command + "' (show, bump, strobe or reset)";
    return out;
  }
  if (a.state.empty()) {
    out.error = a.command + " needs --state FILE";
    return out;
  }
  if (rest.size() != want) {
    out.error = a.command + " takes " + std::to_string(want) +
                " number(s) after the options, got " +
                std::to_string(rest.size());
    return out;
  }
  std::vector<std::int64_t> n;
  for (const auto& s : rest) {
    auto v = ParseInt(s);
    if (!v) {
      out.error = "'" + s + "' is not an integer (milliseconds)";
      return out;
    }
    n.push_back(*v);
  }
  if (!n.empty()) {
    a.delta_ms = n[0];
    if (a.delta_ms == 0 || a.delta_ms > kSysclockMaxDeltaMs ||
        a.delta_ms < -kSysclockMaxDeltaMs) {
      out.error = "delta " + rest[0] + " ms must be non-zero and within 1 day";
      return out;
    }
  }
  if (a.command == "strobe") {
    a.period_ms = n[1];
    a.duration_ms = n[2];
    if (a.period_ms < 10 || a.period_ms > 3'600'000) {
      out.error = "period " + rest[1] + " ms is outside 10 ms .. 1 h";
      return out;
    }
    if (a.duration_ms < 1 || a.duration_ms > kSysclockMaxDeltaMs) {
      out.error = "duration " + rest[2] + " ms is outside 1 ms .. 1 day";
      return out;
    }
  }
  out.args = a;
  return out;
}

std::string FormatSysclockState(const SysclockState& s) {
  return "faultline-clock 1 baseline_ns=" + std::to_string(s.baseline_ns) +
         " boot_id=" + s.boot_id + "\n";
}

std::optional<SysclockState> ParseSysclockState(const std::string& text) {
  std::istringstream in(text);
  std::string magic, version;
  if (!(in >> magic >> version) || magic != "faultline-clock" || version != "1")
    return std::nullopt;
  std::string rest;
  std::getline(in, rest);
  auto kv = ParseSysclockLine(rest);
  auto base = kv.find("baseline_ns");
  auto boot = kv.find("boot_id");
  if (base == kv.end() || boot == kv.end() || boot->second.empty())
    return std::nullopt;
  auto v = ParseInt(base->second);
  if (!v) return std::nullopt;
  return SysclockState{*v, boot->second};
}

SplitNs SplitStep(std::int64_t step_ns) {
  constexpr std::int64_t kNs = 1'000'000'000;
  SplitNs s;
  s.sec = step_ns / kNs;
  s.nsec = step_ns % kNs;
  if (s.nsec < 0) {  // C++ truncates toward zero; timex wants nsec >= 0
    s.nsec += kNs;
    s.sec -= 1;
  }
  return s;
}

std::map<std::string, std::string> ParseSysclockLine(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  bool first = true;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq == std::string::npos) {
      if (first) out["what"] = word;
    } else {
      out[word.substr(0, eq)] = word.substr(eq + 1);
    }
    first = false;
  }
  return out;
}

}  // namespace faultline::nemesis

#include "harness/ledger/ledger_names.h"

#include <set>
#include <sstream>

#include "harness/process/process.h"

namespace faultline::harness {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// ShortRunId's alphabet and length (harness/cluster/netns.h).
bool IsShortId(std::string_view s) {
  if (s.empty() || s.size() > 8) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

// A node number: 1..9999, no leading zero.
bool IsIndex(std::string_view s) {
  if (s.empty() || s.size() > 4 || s[0] == '0') return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// `s` = prefix + <id> + sep + <i>; the id never holds '-'.
bool IdThenIndex(std::string_view s, std::string_view prefix,
                 std::string_view sep) {
  if (!StartsWith(s, prefix)) return false;
  s.remove_prefix(prefix.size());
  auto at = s.find(sep);
  if (at == std::string_view::npos) return false;
  return IsShortId(s.substr(0, at)) && IsIndex(s.substr(at + sep.size()));
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '/'))
    if (!part.empty()) out.push_back(part);
  return out;
}

// "" when the entry's path follows the rule of its kind (see the header).
std::string PathReason(const LedgerEntry& e) {
  const std::vector<std::string> parts = Components(e.name);
  for (const auto& p : parts)
    if (p == "..") return "path '" + e.name + "' has a '..' component";
  auto ours = [](const std::string& s) { return StartsWith(s, "faultline-"); };
  const std::size_t n = parts.size();
  if (e.kind == "dir") {
    if (n == 0 || !ours(parts[n - 1]))
      return "'" + e.name + "' is not a faultline-* scratch directory";
    return "";
  }
  if (e.kind == "mount") {
    bool in_scratch = false;
    for (const auto& p : parts) in_scratch = in_scratch || ours(p);
    if (e.name.empty() || e.name.front() != '/' || !in_scratch)
      return "'" + e.name +
             "' is not a mount point inside a faultline-* directory";
    return "";
  }
  const char* leaf = e.kind == "faketime" ? "faketime" : "sysclock.state";
  if (n < 2 || parts[n - 1] != leaf || !ours(parts[n - 2]))
    return "'" + e.name + "' is not a faultline-*/" + leaf +
           (e.kind == "faketime" ? " directory" : " file");
  return "";
}

void Log(std::vector<std::string>* log, std::string line) {
  if (log) log->push_back(std::move(line));
}

// The words as one line, quoted where iptables -S would quote them.
std::string Quoted(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) {
    if (!s.empty()) s += ' ';
    if (w.find_first_of(" \t\"") == std::string::npos && !w.empty()) {
      s += w;
      continue;
    }
    s += '"';
    for (char c : w) {
      if (c == '"' || c == '\\') s += '\\';
      s += c;
    }
    s += '"';
  }
  return s;
}

}  // namespace

bool IsFaultlineNamespace(std::string_view s) {
  return IdThenIndex(s, "fl-", "-n");
}

bool IsFaultlineBridge(std::string_view s) {
  return StartsWith(s, "flb-") && IsShortId(s.substr(4));
}

bool IsFaultlineVeth(std::string_view s) { return IdThenIndex(s, "flv-", "-"); }

std::string RefusalReason(const LedgerEntry& e) {
  const bool remote = !e.remote.empty();
  if (e.kind == "netns") {
    if (!IsFaultlineNamespace(e.name))
      return "namespace '" + e.name +
             "' is not one faultline creates (fl-<id>-n<i>)";
    return "";
  }
  if (e.kind == "bridge" || e.kind == "hostrule") {
    if (!IsFaultlineBridge(e.name))
      return "bridge '" + e.name + "' is not one faultline creates (flb-<id>)";
    return "";
  }
  if (e.kind == "veth") {
    if (!IsFaultlineVeth(e.name))
      return "link '" + e.name +
             "' is not one faultline creates (flv-<id>-<i>)";
    return "";
  }
  if (e.kind == "iptables") {
    if (!e.name.empty() && !IsFaultlineTag(e.name))
      return "iptables chain '" + e.name +
             "' is not one faultline creates (faultline-<x>)";
    if (remote) return "";
    if (e.netns.empty())
      return "iptables entry names no namespace and no node (the "
             "controller's own rules are never faultline's)";
    if (!IsFaultlineNamespace(e.netns))
      return "namespace '" + e.netns +
             "' is not one faultline creates (fl-<id>-n<i>)";
    return "";
  }
  if (e.kind == "dir" || e.kind == "faketime" || e.kind == "sysclock" ||
      e.kind == "mount")
    return PathReason(e);
  return "";
}

std::vector<std::string> SplitIptablesLine(const std::string& line) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false, quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\\' && i + 1 < line.size() &&
          (line[i + 1] == '"' || line[i + 1] == '\\')) {
        word += line[++i];
      } else if (c == '"') {
        quoted = false;
      } else {
        word += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (in_word) out.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '"') {
      quoted = true;
    } else {
      word += c;
    }
  }
  if (in_word) out.push_back(word);
  return out;
}

std::vector<std::vector<std::string>> TagHealCommands(
    const std::string& iptables_s, const std::string& tag) {
  auto matches = [&](const std::string& name) {
    return tag.empty() ? IsFaultlineTag(name) : name == tag;
  };
  std::vector<std::vector<std::string>> lines;
  std::set<std::string> chains;  // the tag's chains that exist
  {
    std::istringstream in(iptables_s);
    for (std::string line; std::getline(in, line);) {
      auto words = SplitIptablesLine(line);
      if (words.size() == 2 && words[0] == "-N" && matches(words[1]))
        chains.insert(words[1]);
      if (words.size() >= 2 && words[0] == "-A") lines.push_back(words);
    }
  }
  std::vector<std::vector<std::string>> out;
  for (const auto& words : lines) {
    if (chains.count(words[1]) || matches(words[1]))
      continue;  // inside one of the tag's chains: the flush empties it
    bool ours = false;
    for (std::size_t i = 2; i + 1 < words.size(); ++i) {
      const std::string& opt = words[i];
      if ((opt == "-j" || opt == "-g" || opt == "--comment") &&
          matches(words[i + 1]))
        ours = true;
    }
    if (!ours) continue;
    std::vector<std::string> del = {"-D"};
    del.insert(del.end(), words.begin() + 1, words.end());
    out.push_back(std::move(del));
  }
  for (const auto& chain : chains) {
    out.push_back({"-F", chain});
    out.push_back({"-X", chain});
  }
  return out;
}

Status HealIptablesTag(const IptablesRunner& run, const std::string& tag,
                       const std::string& where,
                       std::vector<std::string>* log) {
  const std::string what =
      tag.empty() ? "faultline's iptables chains and rules" : "iptables " + tag;
  std::string problem;
  for (int round = 0; round < 3; ++round) {
    auto list = run({"-w", "-S"});
    if (!list.ok())
      return Fail("iptables -S on " + where + ": " + DescribeResult(list));
    const auto plan = TagHealCommands(list.out, tag);
    if (plan.empty()) {
      if (round == 0) Log(log, "no " + what + " left on " + where);
      return Ok();
    }
    problem.clear();
    for (const auto& cmd : plan) {
      std::vector<std::string> args = {"-w"};
      args.insert(args.end(), cmd.begin(), cmd.end());
      auto r = run(args);
      if (r.ok()) {
        Log(log, "iptables " + Quoted(cmd) + " on " + where);
      } else if (problem.empty()) {
        // Often a rule another heal removed first; the next listing tells.
        problem = "iptables " + Quoted(cmd) + ": " + DescribeResult(r);
      }
    }
  }
  return Fail("cannot remove " + what + " on " + where + ": " +
              (problem.empty() ? "still listed" : problem));
}

}  // namespace faultline::harness

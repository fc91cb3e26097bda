// What `faultline heal` may touch: the naming rules faultline follows when
// it creates a resource, and the iptables commands that remove exactly
// faultline's rules. Heal acts only on names that pass these rules, so a
// ledger that was edited by hand (or written by something else) cannot make
// it flush, kill or delete what belongs to someone else.
//
// Names faultline creates (harness/cluster/netns.h, nemesis/net/):
//   namespace  fl-<id>-n<i>    <id> = ShortRunId: 1..8 of [a-z0-9], i >= 1
//   bridge     flb-<id>        (also the name of a hostrule entry)
//   veth       flv-<id>-<i>
//   iptables   a tag faultline-<x> (x: 1..18 of [a-z0-9-], 28 characters
//              at most, iptables' limit for a chain name): the name of a
//              fault's own chain (faultline-part, faultline-delay,
//              faultline-fig8) or the comment its rules carry in INPUT
//              (faultline-loss)
//   dir        a path whose last component starts with "faultline-"
//   faketime   .../faultline-*/faketime
//   sysclock   .../faultline-*/sysclock.state
//   mount      an absolute path with a component that starts with
//              "faultline-" (a data directory inside a run's scratch or node
//              directory)
// Paths must not contain a ".." component.
//
// Thread-safety: every function may be called from any thread; only
// HealIptablesTag does I/O (through the runner it is given).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/interfaces/result.h"
#include "harness/ledger/ledger.h"
#include "harness/process/process.h"

namespace faultline::harness {

// A fault's iptables tag: "faultline-" then 1..18 of [a-z0-9-]. constexpr,
// so the nemesis can check its chain names at compile time.
constexpr bool IsFaultlineTag(std::string_view s) {
  constexpr std::string_view kPrefix = "faultline-";
  if (s.size() <= kPrefix.size() || s.size() > 28) return false;
  if (s.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : s.substr(kPrefix.size()))
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return false;
  return true;
}

bool IsFaultlineNamespace(std::string_view s);  // fl-<id>-n<i>
bool IsFaultlineBridge(std::string_view s);     // flb-<id>
bool IsFaultlineVeth(std::string_view s);       // flv-<id>-<i>

// Why heal must leave `e` alone: "" when every namespace, link, chain and
// path the entry names follows the rules above (and it names where it
// applies: an iptables entry needs a namespace or a remote node; it is never
// the controller's own host). Kinds without names (process, stop, healed,
// closed) and unknown kinds pass.
std::string RefusalReason(const LedgerEntry& e);

// Splits one line of `iptables -S` into its words; "..." quoting (with \"
// and \\ inside), as iptables prints comments with spaces, is undone.
std::vector<std::string> SplitIptablesLine(const std::string& line);

// The iptables commands (each without "iptables -w") that remove faultline's
// tag `tag` from the filter table listed by `iptables_s` (the output of
// `iptables -S`): a "-D" for every rule outside the tag's chain that jumps
// (-j/-g) to chain `tag` or carries the comment `tag`, then "-F tag" and
// "-X tag" when that chain exists. An empty `tag` means every faultline tag
// (IsFaultlineTag), for ledger entries that name none (older ledgers,
// figure8). Rules, chains and comments of any other name are never in the
// result. Empty when nothing of the tag is left.
std::vector<std::vector<std::string>> TagHealCommands(
    const std::string& iptables_s, const std::string& tag);

// Runs `iptables <args>` where a fault's rules live (a namespace, a node).
using IptablesRunner =
    std::function<CommandResult(const std::vector<std::string>& args)>;

// Removes faultline's tag `tag` ("" = every faultline tag) with `run`: lists
// the filter table (`-w -S`), runs TagHealCommands (each with -w), and lists
// again, until nothing of the tag is left (at most three rounds). Nothing
// else is touched. Succeeds when nothing of the tag was there. Logs each
// command to `log` (when not null); `where` names the place in messages.
Status HealIptablesTag(const IptablesRunner& run, const std::string& tag,
                       const std::string& where, std::vector<std::string>* log);

}  // namespace faultline::harness

// Cross-field rules: combinations of individually valid values that cannot
// work (docs/config.md, "Cross-field rules"). Each error is placed on the
// value most likely to be the mistake: a command-line flag first, then a
// value written in the file, never on a default the user did not write.
#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "harness/config/config_internal.h"

namespace faultline::harness::config_internal {

namespace {

// 0..max, written with 1 to 3 digits.
std::optional<int> SmallNumber(std::string_view s, int max) {
  if (s.empty() || s.size() > 3) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0 || v > max) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::optional<std::uint32_t> ParseIpv4(std::string_view addr) {
  std::uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const auto dot = addr.find('.');
    std::string_view part = i < 3 ? addr.substr(0, dot) : addr;
    if ((i < 3) == (dot == std::string_view::npos)) return std::nullopt;
    auto v = SmallNumber(part, 255);
    if (!v) return std::nullopt;
    out = (out << 8) | static_cast<std::uint32_t>(*v);
    if (i < 3) addr.remove_prefix(dot + 1);
  }
  return out;
}

std::optional<Cidr> ParseCidr(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto address = ParseIpv4(text.substr(0, slash));
  if (!address) return std::nullopt;
  auto prefix = SmallNumber(text.substr(slash + 1), 32);
  if (!prefix) return std::nullopt;
  return Cidr{*address, *prefix};
}

std::string FormatCidr(const Cidr& c) {
  return std::to_string(c.address >> 24) + "." +
         std::to_string((c.address >> 16) & 255) + "." +
         std::to_string((c.address >> 8) & 255) + "." +
         std::to_string(c.address & 255) + "/" + std::to_string(c.prefix);
}

namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// How to get `need` nodes, in the user's terms (flag or file).
std::string MoreNodes(const Provenance& prov, int need) {
  if (prov.Of("cluster.nodes").from_flag()) {
    return "pass --nodes " + std::to_string(need) + " or more";
  }
  return "set cluster.nodes to " + std::to_string(need) + " or more";
}

// Names (shapes or selectors) from `names` that need more than `nodes`.
struct Misfit {
  std::size_t index;
  std::string name;
  int min_nodes;
};

std::vector<Misfit> Misfits(const std::vector<std::string>& names, int nodes,
                            int (*min_nodes)(std::string_view)) {
  std::vector<Misfit> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int need = min_nodes(names[i]);
    if (need > nodes) out.push_back({i, names[i], need});
  }
  return out;
}

std::vector<std::string> Fitting(const std::vector<KnownName>& known,
                                 int nodes) {
  std::vector<std::string> out;
  for (const KnownName& k : known) {
    if (k.min_nodes <= nodes) out.push_back(k.name);
  }
  return out;
}

// Shapes/selectors that need more nodes than the cluster has. `list_path`
// is "nemesis.partitions" or "nemesis.targets".
void CheckFit(const std::vector<std::string>& names,
              const std::vector<KnownName>& known, const std::string& what,
              const std::string& list_path, int nodes,
              int (*min_nodes)(std::string_view), const Provenance& prov,
              Diagnostics* diag) {
  const std::vector<Misfit> misfits = Misfits(names, nodes, min_nodes);
  if (misfits.empty()) return;
  const std::string fit = JoinNames(Fitting(known, nodes));
  const Origin nodes_at = prov.Of("cluster.nodes");
  const std::string nodes_text = "cluster.nodes is " + std::to_string(nodes);
  if (!nodes_at.from_flag() && prov.Of(list_path).from_file()) {
    // The list was written in the file: point at each misfit entry.
    for (const Misfit& m : misfits) {
      diag->Add(prov.Blame({list_path + "[" + std::to_string(m.index) + "]",
                            list_path}),
                list_path + ": " + what + " \"" + m.name +
                    "\" needs at least " + std::to_string(m.min_nodes) +
                    " nodes, but " + nodes_text,
                "use " + what + "s that fit " + std::to_string(nodes) +
                    " nodes (" + fit + "), or " + MoreNodes(prov, m.min_nodes));
    }
    return;
  }
  // The list is the default (or the node count came from a flag): one error
  // on the node count.
  std::vector<std::string> bad;
  int need = 0;
  for (const Misfit& m : misfits) {
    bad.push_back(m.name);
    need = std::max(need, m.min_nodes);
  }
  diag->Add(prov.Blame({"cluster.nodes", list_path}),
            list_path + " has " + JoinNames(bad) + ", which need" +
                (bad.size() == 1 ? "s" : "") + " at least " +
                std::to_string(need) + " nodes, but " + nodes_text,
            "set " + list_path + " to " + what + "s that fit " +
                std::to_string(nodes) + " nodes (" + fit + "), or " +
                MoreNodes(prov, need));
}

// --- per-fault settings (NemesisSpec::entries) ---------------------------

// The disk faults (nemesis/disk/disk_fault.h): they run on the lazy file
// system the campaign mounts over each node's data directory.
constexpr const char* kDiskFaults[] = {"power-loss", "torn-write",
                                       "fsync-error", "disk-full", "slow-disk"};

// The kinds of the faults that take a setting from the nemesis level: every
// plain entry, and mapping entries for which `sets` is false.
std::vector<std::string> GlobalKinds(const NemesisSpec& n,
                                     bool (*sets)(const FaultSettings&)) {
  if (n.entries.empty()) return n.faults;
  std::vector<std::string> out;
  for (const FaultEntry& e : n.entries)
    for (const FaultSettings& f : e.faults)
      if (e.plain || !sets(f)) out.push_back(f.fault);
  return out;
}

bool SetsTargets(const FaultSettings& f) { return f.targets.has_value(); }
bool SetsPartitions(const FaultSettings& f) { return f.partitions.has_value(); }
bool SetsClock(const FaultSettings& f) {
  return f.clock_offset_ms.has_value() || f.clock_rate.has_value();
}

// The settings a mapping entry gives its faults itself.
void CheckFaultEntries(const TestSpec& s, const Provenance& prov,
                       Diagnostics* diag) {
  const NemesisSpec& n = s.nemesis;
  const int nodes = s.cluster.nodes;
  if (prov.AnyBad({"nemesis.faults", "cluster.nodes"})) return;
  for (std::size_t i = 0; i < n.entries.size(); ++i) {
    const FaultEntry& e = n.entries[i];
    if (e.plain) continue;
    for (std::size_t j = 0; j < e.faults.size(); ++j) {
      const FaultSettings& f = e.faults[j];
      const std::string at =
          "nemesis.faults[" + std::to_string(i) + "]" +
          (e.together ? ".together[" + std::to_string(j) + "]" : "");
      if (f.partitions) {
        if (nodes < 2) {
          diag->Add(prov.Blame({"cluster.nodes", at}),
                    "a partition needs at least 2 nodes, but cluster.nodes "
                    "is " +
                        std::to_string(nodes),
                    "remove this partition, or " + MoreNodes(prov, 2));
        } else {
          CheckFit(*f.partitions, Known().partition_shapes, "partition shape",
                   at + ".partitions", nodes, &MinNodesForShape, prov, diag);
        }
      }
      if (f.targets)
        CheckFit(*f.targets, Known().node_selectors, "node selector",
                 at + ".targets", nodes, &MinNodesForSelector, prov, diag);
      if (f.fault == "clock" && SetsClock(f) &&
          !prov.AnyBad({"nemesis.clock_offset_ms", "nemesis.clock_rate"})) {
        const long long offset = f.clock_offset_ms.value_or(n.clock_offset_ms);
        const double rate = f.clock_rate.value_or(n.clock_rate);
        if (offset == 0 && rate == 1.0)
          diag->Add(prov.Blame({at}),
                    "this clock fault has clock_offset_ms 0 and clock_rate "
                    "1, so it would not change any clock",
                    "set `clock_offset_ms: 5000` (a step) and/or "
                    "`clock_rate: 2` (a drift)");
        if (n.clock_monotonic && offset < 0)
          diag->Add(prov.Blame({at, "nemesis.clock_monotonic"}),
                    "clock_offset_ms is negative while clock_monotonic is "
                    "true: that steps CLOCK_MONOTONIC back",
                    "use a positive clock_offset_ms, a clock_rate below 1, "
                    "or `clock_monotonic: false`");
      }
    }
  }
}

// --- end per-fault settings ---

void CheckNemesis(const TestSpec& s, const Provenance& prov,
                  Diagnostics* diag) {
  const NemesisSpec& n = s.nemesis;
  const int nodes = s.cluster.nodes;
  if (prov.AnyBad({"nemesis.faults", "cluster.nodes"})) return;
  const std::vector<std::string> shape_kinds = GlobalKinds(n, &SetsPartitions);
  const std::vector<std::string> target_kinds = GlobalKinds(n, &SetsTargets);

  if (Has(shape_kinds, "partition") && !prov.AnyBad({"nemesis.partitions"})) {
    if (n.partitions.empty()) {
      diag->Add(prov.Blame({"nemesis.partitions", "nemesis.faults"}),
                "nemesis.partitions is empty, but nemesis.faults has "
                "partition",
                "list at least one shape, e.g. `partitions: [one, leader]`, "
                "or remove partition from nemesis.faults");
    } else if (nodes < 2) {
      diag->Add(
          prov.Blame({"cluster.nodes", "nemesis.faults"}),
          "a partition needs at least 2 nodes, but cluster.nodes is " +
              std::to_string(nodes),
          "remove partition from nemesis.faults, or " + MoreNodes(prov, 2));
    } else {
      CheckFit(n.partitions, Known().partition_shapes, "partition shape",
               "nemesis.partitions", nodes, &MinNodesForShape, prov, diag);
    }
  }

  if (Has(n.faults, "kill-voter") && nodes < 3) {
    diag->Add(
        prov.Blame({"cluster.nodes", "nemesis.faults"}),
        "kill-voter needs at least 3 nodes (a candidate and a voter "
        "besides the killed leader), but cluster.nodes is " +
            std::to_string(nodes),
        "remove kill-voter from nemesis.faults, or " + MoreNodes(prov, 3));
  }

  // figure8 (nemesis/scenarios/figure8.h) plays a 3-node scenario and reads the
  // commit and last log index only raftkv reports.
  if (Has(n.faults, "figure8") && nodes != 3) {
    diag->Add(prov.Blame({"cluster.nodes", "nemesis.faults"}),
              "figure8 needs exactly 3 nodes (an old leader, a lonely "
              "leader and the voter they share), but cluster.nodes is " +
                  std::to_string(nodes),
              "set cluster.nodes to 3, or remove figure8 from "
              "nemesis.faults");
  }
  if (Has(n.faults, "figure8") && !prov.AnyBad({"target.name"}) &&
      s.target.name != "raftkv") {
    diag->Add(prov.Blame({"target.name", "nemesis.faults"}),
              "figure8 reads each node's commit and last log index, which "
              "only the raftkv target reports, but target.name is " +
                  s.target.name,
              "use target raftkv, or remove figure8 from nemesis.faults");
  }

  bool disk_kinds = false;
  for (const char* k : kDiskFaults)
    disk_kinds = disk_kinds || Has(target_kinds, k);
  const bool hits_nodes = Has(target_kinds, "pause") ||
                          Has(target_kinds, "kill") ||
                          Has(target_kinds, "delay") ||
                          Has(target_kinds, "kill-voter") || disk_kinds;
  if (hits_nodes && !prov.AnyBad({"nemesis.targets"})) {
    if (n.targets.empty()) {
      diag->Add(prov.Blame({"nemesis.targets", "nemesis.faults"}),
                "nemesis.targets is empty, but nemesis.faults has pause, "
                "kill, kill-voter, delay or a disk fault",
                "list at least one node selector, e.g. `targets: [one]`, or "
                "remove pause, kill, kill-voter and delay from "
                "nemesis.faults");
    } else {
      CheckFit(n.targets, Known().node_selectors, "node selector",
               "nemesis.targets", nodes, &MinNodesForSelector, prov, diag);
    }
  }

  if (!n.faults.empty() && !prov.AnyBad({"nemesis.interval", "time_limit"}) &&
      n.interval_s >= s.time_limit_s) {
    diag->Add(prov.Blame({"nemesis.interval", "time_limit"}),
              "nemesis.interval (" + FormatNumber(n.interval_s) +
                  " s) is not shorter than time_limit (" +
                  FormatNumber(s.time_limit_s) +
                  " s), so no fault would ever start",
              std::string(prov.Of("time_limit").from_flag()
                              ? "pass a --time-limit longer than "
                                "nemesis.interval"
                              : "shorten nemesis.interval, lengthen "
                                "time_limit") +
                  ", or set `faults: []` for a run without faults");
  }
}

// The loss and clock faults (nemesis/net/loss.h, harness/clock/clock.h).
void CheckLossAndClock(const TestSpec& s, const Provenance& prov,
                       Diagnostics* diag) {
  const NemesisSpec& n = s.nemesis;
  if (prov.AnyBad({"nemesis.faults"})) return;
  const bool loss = Has(n.faults, "loss"), clock = Has(n.faults, "clock");
  const bool strobe = Has(n.faults, "strobe");
  const std::vector<std::string> target_kinds = GlobalKinds(n, &SetsTargets);
  if ((Has(target_kinds, "loss") || Has(target_kinds, "clock") ||
       Has(target_kinds, "strobe")) &&
      n.targets.empty() && !prov.AnyBad({"nemesis.targets"})) {
    diag->Add(prov.Blame({"nemesis.targets", "nemesis.faults"}),
              std::string("nemesis.targets is empty, but nemesis.faults has ") +
                  (loss    ? "loss"
                   : clock ? "clock"
                           : "strobe"),
              "list at least one node selector, e.g. `targets: [one]`");
  }
  if (!clock && !strobe) return;
  // Targets whose processes read time through libc, so libfaketime can
  // move their clocks. Not etcd: Go reads the vDSO and ignores it.
  // ZooKeeper: the JVM reads libc's clocks; Redis: with the faketime shim
  // preloaded first (targets/redis/faketime_shim.c).
  static const std::vector<std::string> kClockTargets = {"raftkv", "zookeeper",
                                                         "redis", "process"};
  const std::string kind = clock ? "clock" : "strobe";
  // System clocks (CheckSystemClock) move every process, etcd too.
  if (n.clock_mode == "faketime" &&
      std::find(kClockTargets.begin(), kClockTargets.end(), s.target.name) ==
          kClockTargets.end() &&
      !prov.AnyBad({"target.name"})) {
    diag->Add(
        prov.Blame({"nemesis.faults", "target.name"}),
        "the " + kind + " fault cannot move the clocks of " + s.target.name +
            (s.target.name == "etcd"
                 ? " (Go reads time through the vDSO, which "
                   "libfaketime does not reach)"
                 : "") +
            "; it works for " + JoinNames(kClockTargets),
        "remove " + kind + " from nemesis.faults, or set target.name to " +
            JoinNames(kClockTargets));
  }
  // --- strobe (nemesis/clock/strobe.h) ---
  if (strobe && n.clock_monotonic &&
      !prov.AnyBad({"nemesis.clock_monotonic"})) {
    diag->Add(prov.Blame({"nemesis.faults", "nemesis.clock_monotonic"}),
              "nemesis.faults has strobe while clock_monotonic is true: "
              "every flip back would step CLOCK_MONOTONIC back, which no "
              "real clock does",
              "set `clock_monotonic: false` (the strobe then moves the wall "
              "clock only), or remove strobe from nemesis.faults");
  }
  if (!clock) return;
  if (prov.AnyBad({"nemesis.clock_offset_ms", "nemesis.clock_rate",
                   "nemesis.clock_monotonic"}))
    return;
  if (Has(GlobalKinds(n, &SetsClock), "clock") && n.clock_offset_ms == 0 &&
      n.clock_rate == 1.0) {
    diag->Add(prov.Blame({"nemesis.faults", "nemesis.clock_offset_ms",
                          "nemesis.clock_rate"}),
              "nemesis.faults has clock, but clock_offset_ms is 0 and "
              "clock_rate is 1, so the fault would not change any clock",
              "set `clock_offset_ms: 5000` (a step) and/or `clock_rate: 2` "
              "(a drift)");
  }
  if (Has(GlobalKinds(n, &SetsClock), "clock") && n.clock_monotonic &&
      n.clock_offset_ms < 0) {
    diag->Add(
        prov.Blame({"nemesis.clock_offset_ms", "nemesis.clock_monotonic"}),
        "clock_offset_ms is negative while clock_monotonic is true: "
        "that steps CLOCK_MONOTONIC back, which no real clock does",
        "use a positive clock_offset_ms, a clock_rate below 1 to slow "
        "the clock, or `clock_monotonic: false`");
  }
}

// System clocks (nemesis.clock_mode: system, docs/faults.md "System
// clocks"): ssh nodes only, allowed by the cluster, stepped, never drifted.
void CheckSystemClock(const TestSpec& s, const Provenance& prov,
                      Diagnostics* diag) {
  const NemesisSpec& n = s.nemesis;
  const std::string& provider = s.cluster.provider;
  if (prov.AnyBad(
          {"cluster.provider", "cluster.system_clock", "nemesis.clock_mode"}))
    return;
  const bool asked = prov.Of("cluster.system_clock").from_file();
  if (provider != "ssh" && (asked || n.clock_mode == "system")) {
    diag->Add(prov.Blame({n.clock_mode == "system" ? "nemesis.clock_mode"
                                                   : "cluster.system_clock",
                          "cluster.provider"}),
              "system clock faults need provider ssh: " +
                  std::string(provider == "docker"
                                  ? "docker containers share the host "
                                    "kernel's clock"
                                  : "netns nodes share the controller's "
                                    "kernel clock") +
                  ", so stepping one node's clock would step the whole "
                  "machine's",
              "remove `clock_mode: system` and `system_clock` (clock faults "
              "then use libfaketime per process), or use provider ssh");
    return;
  }
  if (n.clock_mode != "system") return;
  if (s.cluster.system_clock != "allow") {
    diag->Add(prov.Blame({"nemesis.clock_mode", "cluster.system_clock"}),
              "clock_mode: system steps the real clock of every process on "
              "the nodes, and cluster.system_clock does not allow it",
              "add `system_clock: allow` under cluster: if the nodes' clocks "
              "may be moved (stop NTP daemons there first), or use "
              "`clock_mode: faketime`");
  }
  if (n.clock_monotonic && !prov.AnyBad({"nemesis.clock_monotonic"})) {
    diag->Add(prov.Blame({"nemesis.clock_monotonic", "nemesis.clock_mode"}),
              "clock_monotonic is true, but the kernel's CLOCK_MONOTONIC "
              "cannot be stepped (clock_mode: system moves CLOCK_REALTIME)",
              "set `clock_monotonic: false`, or use `clock_mode: faketime`");
  }
  bool rate = Has(GlobalKinds(n, &SetsClock), "clock") && n.clock_rate != 1.0;
  for (const FaultEntry& e : n.entries)
    for (const FaultSettings& f : e.faults)
      rate = rate || (f.clock_rate && *f.clock_rate != 1.0);
  if (rate && !prov.AnyBad({"nemesis.clock_rate", "nemesis.faults"})) {
    diag->Add(prov.Blame({"nemesis.clock_rate", "nemesis.clock_mode"}),
              "clock_rate is not 1, but clock_mode: system steps the nodes' "
              "clocks and cannot make them run faster or slower",
              "remove clock_rate (use clock_offset_ms for a step), or use "
              "`clock_mode: faketime`");
  }
}

// --- provider: ssh ----------------------------------------------------------
// `nodes` as a list of hosts and the ssh-only keys belong to provider ssh;
// `subnet` to netns; ssh needs the list; `--nodes` cannot resize it. Returns
// true when the cluster is an ssh one (the netns subnet rules then do not
// apply).
bool CheckSshCluster(const TestSpec& s, const Provenance& prov,
                     Diagnostics* diag) {
  const ClusterSpec& c = s.cluster;
  if (prov.AnyBad({"cluster.provider"})) return true;
  static const char* const kSshKeys[] = {
      "user", "key",           "port",    "known_hosts", "host_key_policy",
      "sudo", "controller_ip", "work_dir"};
  if (c.provider != "ssh") {
    const Origin hosts_at = prov.Of("cluster.hosts");
    if (hosts_at.from_file()) {
      diag->Add(hosts_at,
                "cluster.nodes is a list of hosts, but cluster.provider is " +
                    c.provider + ", which creates its own nodes",
                "set `provider: ssh` to use these hosts, or give a count, "
                "e.g. `nodes: 3`");
    }
    for (const char* key : kSshKeys) {
      const Origin at = prov.Of(std::string("cluster.") + key);
      if (!at.from_file()) continue;
      diag->Add(at,
                std::string("cluster.") + key +
                    " is a key of provider ssh, but cluster.provider is " +
                    c.provider,
                std::string("set `provider: ssh` or remove `") + key + "`");
    }
    return false;
  }
  if (prov.Of("cluster.subnet").from_file()) {
    diag->Add(prov.Of("cluster.subnet"),
              "cluster.subnet is for provider netns; ssh nodes keep the "
              "addresses listed in cluster.nodes",
              "remove `subnet`");
  }
  if (prov.AnyBad({"cluster.nodes"})) return true;
  if (c.hosts.empty()) {
    diag->Add(prov.Blame({"cluster.nodes", "cluster.provider"}),
              "provider ssh needs cluster.nodes as a list of the hosts to "
              "reach, not a count",
              "e.g. `nodes: [10.0.0.2, 10.0.0.3, 10.0.0.4]` or `nodes: "
              "[{name: n1, address: 10.0.0.2}, ...]`");
    return true;
  }
  const Origin nodes_at = prov.Of("cluster.nodes");
  if (nodes_at.from_flag() && c.nodes != static_cast<int>(c.hosts.size())) {
    diag->Add(nodes_at,
              "the ssh cluster has the " + std::to_string(c.hosts.size()) +
                  " hosts listed in cluster.nodes; --nodes cannot change that",
              "drop --nodes, or edit the host list");
  }
  return true;
}
// --- end provider: ssh ------------------------------------------------------

// The disk faults need the target's durable data in the directory the
// lazy file system is mounted over: <node dir>/data on every target; for
// target: process, {dir}/data, which some process must be given.
void CheckDisk(const TestSpec& s, const Provenance& prov, Diagnostics* diag) {
  const NemesisSpec& n = s.nemesis;
  if (prov.AnyBad({"nemesis.faults", "target.name"}) || !UsesDiskFaults(n))
    return;
  if (s.target.name != "process" || prov.AnyBad({"target.processes"})) return;
  // {data} is {dir}/data (harness/config/template.h).
  auto in_data = [](const std::string& t) {
    return t.find("{data}") != std::string::npos ||
           t.find("{dir}/data") != std::string::npos;
  };
  bool mentions = false;
  for (const ProcessDef& d : s.target.process.processes) {
    for (const std::string& a : d.argv) mentions = mentions || in_data(a);
    for (const std::string& a : d.bootstrap_args)
      mentions = mentions || in_data(a);
    for (const auto& [name, value] : d.env)
      mentions = mentions || in_data(value);
    mentions = mentions || in_data(d.cwd);
  }
  if (!mentions) {
    diag->Add(prov.Blame({"target.processes", "nemesis.faults"}),
              "the disk faults mount their file system over {data} (that is "
              "{dir}/data) on each node, but no process of target.processes "
              "is given it (in argv, env or cwd), so the system's data would "
              "not be on it and a power loss would lose nothing",
              "keep the system's data in {data}, e.g. `argv: [mydb, "
              "--data-dir, \"{data}\"]`, or remove the disk faults");
  }
}

void CheckCluster(const TestSpec& s, const Provenance& prov,
                  Diagnostics* diag) {
  if (CheckSshCluster(s, prov, diag)) return;
  if (prov.AnyBad({"cluster.subnet", "cluster.nodes"})) return;
  auto cidr = ParseCidr(s.cluster.subnet);
  if (!cidr) return;  // the default always parses; a bad value is flagged
  const long long usable = (1LL << (32 - cidr->prefix)) - 2;
  const int nodes = s.cluster.nodes;
  if (usable >= nodes + 1) return;
  // Smallest prefix with room for the nodes and the controller.
  int prefix = cidr->prefix;
  while (prefix > 16 && (1LL << (32 - prefix)) - 2 < nodes + 1) --prefix;
  const std::uint32_t mask = ~std::uint32_t{0} << (32 - prefix);
  const Cidr bigger{cidr->address & mask, prefix};
  const Origin nodes_at = prov.Of("cluster.nodes");
  const Origin at = nodes_at.from_flag()
                        ? nodes_at
                        : prov.Blame({"cluster.subnet", "cluster.nodes"});
  diag->Add(at,
            "cluster.subnet " + s.cluster.subnet + " has " +
                std::to_string(usable) + " usable addresses, too few for " +
                std::to_string(nodes) + " nodes plus the controller",
            "use a larger subnet, e.g. `subnet: " + FormatCidr(bigger) +
                "`, or at most " + std::to_string(usable - 1) + " nodes");
}

// provider: docker: its keys need the provider, and a container list must
// match `nodes` when both are given.
void CheckDockerCluster(const TestSpec& s, const Provenance& prov,
                        Diagnostics* diag) {
  const ClusterSpec& c = s.cluster;
  if (c.provider != "docker") {
    if (prov.AnyBad({"cluster.provider"})) return;
    for (const char* key : {"containers", "docker_host", "network"}) {
      const std::string path = std::string("cluster.") + key;
      if (prov.at.count(path) == 0) continue;
      diag->Add(prov.Of(path),
                path +
                    " is a key of the docker provider, but "
                    "cluster.provider is " +
                    c.provider,
                std::string("set `provider: docker` (nodes are running "
                            "containers), or remove `") +
                    key + "`");
    }
    return;
  }
  if (c.containers.empty() ||
      prov.AnyBad({"cluster.nodes", "cluster.containers"})) {
    return;
  }
  if (c.nodes != static_cast<int>(c.containers.size())) {
    diag->Add(prov.Blame({"cluster.nodes", "cluster.containers"}),
              "cluster.nodes is " + std::to_string(c.nodes) + " but " +
                  std::to_string(c.containers.size()) +
                  " containers are listed",
              "list one container per node, or leave out `nodes` (the list "
              "sets it)");
  }
}

void CheckRaftkv(const TestSpec& s, const Provenance& prov, Diagnostics* diag) {
  const RaftkvSpec& r = s.target.raftkv;
  const bool timing_bad =
      prov.AnyBad({"target.heartbeat_ms", "target.election_timeout_ms"});
  if (!timing_bad && r.election_timeout_ms < 3 * r.heartbeat_ms) {
    diag->Add(
        prov.Blame({"target.election_timeout_ms", "target.heartbeat_ms"}),
        "target.election_timeout_ms (" + std::to_string(r.election_timeout_ms) +
            ") must be at least 3 x target.heartbeat_ms (" +
            std::to_string(r.heartbeat_ms) +
            ") = " + std::to_string(3 * r.heartbeat_ms) +
            "; followers would start elections between heartbeats",
        "raise election_timeout_ms to " + std::to_string(10 * r.heartbeat_ms) +
            " (10x the heartbeat) or lower heartbeat_ms");
  }
  if (!timing_bad && !prov.AnyBad({"target.follower_lease_ms"}) &&
      r.follower_lease_ms >= r.election_timeout_ms) {
    diag->Add(
        prov.Blame({"target.follower_lease_ms", "target.election_timeout_ms"}),
        "target.follower_lease_ms (" + std::to_string(r.follower_lease_ms) +
            ") must be shorter than target.election_timeout_ms (" +
            std::to_string(r.election_timeout_ms) +
            "); a follower's read lease may not outlive the leader's",
        "e.g. follower_lease_ms: " +
            std::to_string(r.election_timeout_ms * 3 / 5));
  }
  const bool leased = r.read_mode == "lease" || r.read_mode == "follower-lease";
  if (leased && !r.check_quorum &&
      !prov.AnyBad({"target.read_mode", "target.check_quorum"})) {
    diag->Add(prov.Blame({"target.check_quorum", "target.read_mode"}),
              "target.read_mode " + r.read_mode +
                  " needs target.check_quorum: true (the leader lease is "
                  "kept by CheckQuorum heartbeats)",
              "set `check_quorum: true` or `read_mode: readindex`");
  }
  if (r.unsafe == "follower-lease-no-margin" &&
      r.read_mode != "follower-lease" &&
      !prov.AnyBad({"target.unsafe", "target.read_mode"})) {
    diag->Add(prov.Blame({"target.unsafe", "target.read_mode"}),
              "target.unsafe follower-lease-no-margin has no effect unless "
              "target.read_mode is follower-lease (read_mode is " +
                  r.read_mode + ")",
              "set `read_mode: follower-lease`");
  }
}

void CheckRedis(const TestSpec& s, const Provenance& prov, Diagnostics* diag) {
  const int replicas = s.cluster.nodes - 1;
  const int wanted = s.target.redis.min_replicas_to_write;
  if (wanted > replicas &&
      !prov.AnyBad({"target.min_replicas_to_write", "cluster.nodes"})) {
    diag->Add(prov.Blame({"target.min_replicas_to_write", "cluster.nodes"}),
              "target.min_replicas_to_write (" + std::to_string(wanted) +
                  ") is more than the " + std::to_string(replicas) +
                  " replicas of a " + std::to_string(s.cluster.nodes) +
                  "-node cluster; the primary would refuse every write",
              "set min_replicas_to_write to at most " +
                  std::to_string(replicas) + " (0 turns it off)");
  }
}

void CheckZookeeper(const TestSpec& s, const Provenance& prov,
                    Diagnostics* diag) {
  const ZookeeperSpec& z = s.target.zookeeper;
  const int ttl = s.workload.ttl_ms;
  const bool leased =
      s.workload.name == "lock" || s.workload.name == "election";
  if (!leased ||
      prov.AnyBad({"target.tick_ms", "workload.ttl_ms", "workload.name"})) {
    return;
  }
  // The lock's lease is the session, and the server clamps a session
  // timeout to 2..20 ticks: say so rather than run with another lease.
  if (ttl < 2 * z.tick_ms || ttl > 20 * z.tick_ms) {
    diag->Add(prov.Blame({"workload.ttl_ms", "target.tick_ms"}),
              "workload.ttl_ms (" + std::to_string(ttl) +
                  ") is the ZooKeeper session timeout, which the servers "
                  "clamp to 2..20 x target.tick_ms (" +
                  std::to_string(2 * z.tick_ms) + ".." +
                  std::to_string(20 * z.tick_ms) + " ms)",
              "set ttl_ms within that range, or tick_ms to about ttl_ms / "
              "10");
  }
}

// target: process. Every fault that acts on processes finds one, and what
// needs the nodes' own view of who leads has a status command.
void CheckProcess(const TestSpec& s, const Provenance& prov,
                  Diagnostics* diag) {
  const ProcessSpec& p = s.target.process;
  if (prov.AnyBad({"target.processes", "nemesis.faults"})) return;
  const NemesisSpec& n = s.nemesis;
  for (const char* kind : {"pause", "kill", "clock"}) {
    bool used = Has(n.faults, kind);
    if (std::string(kind) == "kill")
      used = used || Has(n.faults, "kill-voter") ||
             Has(n.faults, "power-loss") || Has(n.faults, "torn-write");
    if (std::string(kind) == "clock") used = used || Has(n.faults, "strobe");
    if (!used || (n.clock_mode == "system" && std::string(kind) == "clock"))
      continue;
    bool found = false;
    for (const ProcessDef& d : p.processes)
      found = found || Has(d.faults, kind);
    if (!found) {
      diag->Add(prov.Blame({"nemesis.faults", "target.processes"}),
                std::string("nemesis.faults has ") + kind +
                    ", but no process of target.processes takes it (their "
                    "`faults` lists leave it out)",
                std::string("add ") + kind +
                    " to the `faults` of the process it should act on, or "
                    "remove it from nemesis.faults");
    }
  }
  if (p.status_client && !p.status.empty()) {
    diag->Add(prov.Blame({"target.status.client", "target.status"}),
              "target.status has both a command and client: true",
              "keep one: the command, or client: true to ask the exec "
              "client (an operation f: status)");
  }
  if (p.status_client && p.client.protocol != "exec") {
    diag->Add(prov.Blame({"target.status.client", "target.status"}),
              "target.status.client asks the client who leads, which only "
              "protocol exec can answer (this client speaks " +
                  p.client.protocol + ")",
              "use `status: {command: [...]}` instead, or an exec client "
              "that answers f: status (docs/exec-protocol.md)");
  }
  if (p.has_status()) return;
  // Which selectors the faults really use: the nemesis-level lists apply
  // to faults that act on nodes (targets) or partition (partitions).
  const bool node_faults = Has(n.faults, "pause") || Has(n.faults, "kill") ||
                           Has(n.faults, "delay") || Has(n.faults, "loss") ||
                           Has(n.faults, "clock") || Has(n.faults, "strobe") ||
                           UsesDiskFaults(n);
  bool leader = (node_faults &&
                 (Has(n.targets, "leader") || Has(n.targets, "follower"))) ||
                (Has(n.faults, "partition") && Has(n.partitions, "leader"));
  for (const FaultEntry& e : n.entries) {
    for (const FaultSettings& f : e.faults) {
      if (f.targets &&
          (Has(*f.targets, "leader") || Has(*f.targets, "follower")))
        leader = true;
      if (f.partitions && Has(*f.partitions, "leader")) leader = true;
    }
  }
  std::string needs;
  if (leader) needs = "a leader or follower selector";
  if (Has(n.faults, "kill-voter")) needs = "the kill-voter fault";
  if (s.workload.observe_ms > 0) needs = "workload.observe_ms";
  if (!needs.empty()) {
    diag->Add(prov.Blame({"nemesis.targets", "nemesis.partitions",
                          "workload.observe_ms", "target"}),
              needs +
                  " needs each node's own view of who leads, but "
                  "target.status has no command",
              "add `status: {command: [...]}` printing {\"role\": ..., "
              "\"term\": ..., \"leader\": ...} (docs/targets/process.md), "
              "or `status: {client: true}` if the exec client answers f: "
              "status, or use the one/minority/majority selectors");
  }
}

void CheckTarget(const TestSpec& s, const Provenance& prov, Diagnostics* diag) {
  if (s.target.name == "process") {
    CheckProcess(s, prov, diag);
    return;
  }
  if (s.target.name == "zookeeper") {
    CheckZookeeper(s, prov, diag);
    return;
  }
  if (s.target.name == "redis") {
    CheckRedis(s, prov, diag);
    return;
  }
  if (s.target.name == "raftkv") {
    CheckRaftkv(s, prov, diag);
    return;
  }
  const EtcdSpec& e = s.target.etcd;
  if (prov.AnyBad({"target.heartbeat_ms", "target.election_timeout_ms"})) {
    return;
  }
  if (e.election_timeout_ms < 5 * e.heartbeat_ms) {
    diag->Add(
        prov.Blame({"target.election_timeout_ms", "target.heartbeat_ms"}),
        "target.election_timeout_ms (" + std::to_string(e.election_timeout_ms) +
            ") must be at least 5 x target.heartbeat_ms (" +
            std::to_string(e.heartbeat_ms) +
            ") = " + std::to_string(5 * e.heartbeat_ms) +
            "; etcd refuses to start otherwise",
        "raise election_timeout_ms to " + std::to_string(10 * e.heartbeat_ms) +
            " (etcd recommends 10x the heartbeat) or lower "
            "heartbeat_ms");
  }
}

void CheckWorkload(const TestSpec& s, const Provenance& prov,
                   Diagnostics* diag) {
  const WorkloadSpec& w = s.workload;
  if (w.name == "lock" || w.name == "election") {
    // The targets whose client implements acquire/renew/release (elections
    // run on the same client).
    static const std::vector<std::string> kLockTargets = {
        "etcd", "raftkv", "redis", "zookeeper", "process"};
    const bool has_lock_client =
        std::find(kLockTargets.begin(), kLockTargets.end(), s.target.name) !=
        kLockTargets.end();
    if (!has_lock_client && !prov.AnyBad({"workload.name"}) &&
        !prov.AnyBad({"target.name"})) {
      diag->Add(prov.Blame({"workload.name", "target.name"}),
                "the " + w.name + " workload has a client for " +
                    JoinNames(kLockTargets) + " only, not " + s.target.name,
                "set target.name to one of " + JoinNames(kLockTargets));
    }
    return;  // the mix is not used
  }
  if (w.name == "list-append" || w.name == "rw-register") {
    // The targets whose client runs transactions (docs/transactions.md has
    // the table); the process target through its exec protocol only.
    static const std::vector<std::string> kTxnTargets = {
        "etcd", "process", "raftkv", "redis", "zookeeper"};
    const bool names_ok =
        !prov.AnyBad({"workload.name"}) && !prov.AnyBad({"target.name"});
    if (std::find(kTxnTargets.begin(), kTxnTargets.end(), s.target.name) ==
            kTxnTargets.end() &&
        names_ok) {
      diag->Add(prov.Blame({"workload.name", "target.name"}),
                "the " + w.name + " workload has a transaction client for " +
                    JoinNames(kTxnTargets) + " only, not " + s.target.name,
                "set target.name to one of " + JoinNames(kTxnTargets) +
                    " (docs/transactions.md lists what each target supports)");
    } else if (s.target.name == "process" && names_ok &&
               s.target.process.client.protocol != "exec" &&
               !prov.AnyBad({"target.client.protocol"})) {
      diag->Add(prov.Blame({"target.client.protocol", "workload.name"}),
                "the " + w.name +
                    " workload needs an exec client on the "
                    "process target; the " +
                    s.target.process.client.protocol +
                    " client runs the register and lock workloads only",
                "set target.client.protocol to exec and give "
                "target.client.command (docs/exec-protocol.md, transactions)");
    }
    if (w.min_txn_length > w.max_txn_length &&
        !prov.AnyBad({"workload.min_txn_length", "workload.max_txn_length"})) {
      diag->Add(
          prov.Blame({"workload.min_txn_length", "workload.max_txn_length"}),
          "workload.min_txn_length (" + std::to_string(w.min_txn_length) +
              ") is more than workload.max_txn_length (" +
              std::to_string(w.max_txn_length) + ")",
          "make min_txn_length at most max_txn_length");
    }
    if (w.read + w.write <= 0 &&
        !prov.AnyBad({"workload.mix.read", "workload.mix.write"})) {
      diag->Add(prov.Blame({"workload.mix", "workload"}),
                "workload.mix: read and write are both 0, so a transaction "
                "has no micro-op to run (cas is not used by " +
                    w.name + ")",
                "give read or write a weight > 0, e.g. `mix: {read: 50, "
                "write: 50}`");
    }
    return;
  }
  if (w.name == "set" || w.name == "bank" || w.name == "counter") {
    // The targets whose client has the collection operations
    // (docs/collections.md); the process target through its exec protocol
    // only.
    static const std::vector<std::string> kCollectionTargets = {
        "etcd", "process", "raftkv", "redis", "zookeeper"};
    const bool names_ok =
        !prov.AnyBad({"workload.name"}) && !prov.AnyBad({"target.name"});
    if (std::find(kCollectionTargets.begin(), kCollectionTargets.end(),
                  s.target.name) == kCollectionTargets.end() &&
        names_ok) {
      diag->Add(prov.Blame({"workload.name", "target.name"}),
                "the " + w.name + " workload has a client for " +
                    JoinNames(kCollectionTargets) + " only, not " +
                    s.target.name,
                "set target.name to one of " + JoinNames(kCollectionTargets) +
                    " (docs/collections.md lists what each target supports)");
    } else if (s.target.name == "process" && names_ok &&
               s.target.process.client.protocol != "exec" &&
               !prov.AnyBad({"target.client.protocol"})) {
      diag->Add(prov.Blame({"target.client.protocol", "workload.name"}),
                "the " + w.name +
                    " workload needs an exec client on the "
                    "process target; the " +
                    s.target.process.client.protocol +
                    " client runs the register and lock workloads only",
                "set target.client.protocol to exec and give "
                "target.client.command (docs/exec-protocol.md, "
                "collections)");
    }
    if (w.read + w.write <= 0 &&
        !prov.AnyBad({"workload.mix.read", "workload.mix.write"})) {
      const std::string update = w.name == "bank" ? "transfer" : "add";
      diag->Add(prov.Blame({"workload.mix", "workload"}),
                "workload.mix: read and write are both 0, so the " + w.name +
                    " workload has nothing to run (write weighs the " + update +
                    "s; cas is not used)",
                "give read or write a weight > 0, e.g. `mix: {read: 20, "
                "write: 80}`");
    }
    return;
  }
  if (prov.AnyBad(
          {"workload.mix.read", "workload.mix.write", "workload.mix.cas"})) {
    return;
  }
  if (w.read + w.write + w.cas <= 0) {
    diag->Add(prov.Blame({"workload.mix", "workload"}),
              "workload.mix: every weight is 0, so there is no operation to "
              "run",
              "give at least one of read, write, cas a weight > 0, e.g. "
              "`mix: {read: 50, write: 30, cas: 20}`");
  }
}

}  // namespace

void ValidateCrossField(const TestSpec& spec, const Provenance& prov,
                        Diagnostics* diag) {
  CheckCluster(spec, prov, diag);
  CheckDockerCluster(spec, prov, diag);
  CheckTarget(spec, prov, diag);
  CheckWorkload(spec, prov, diag);
  CheckNemesis(spec, prov, diag);
  CheckLossAndClock(spec, prov, diag);
  CheckSystemClock(spec, prov, diag);
  CheckFaultEntries(spec, prov, diag);
  CheckDisk(spec, prov, diag);
}

}  // namespace faultline::harness::config_internal

namespace faultline::harness {

bool UsesDiskFaults(const NemesisSpec& n) {
  for (const char* k : config_internal::kDiskFaults)
    if (std::find(n.faults.begin(), n.faults.end(), k) != n.faults.end())
      return true;
  return false;
}

}  // namespace faultline::harness

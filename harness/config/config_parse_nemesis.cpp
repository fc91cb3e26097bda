// The nemesis section of the config: nemesis.* keys, and nemesis.faults
// entries as names, mappings with per-fault settings and together groups
// (with the `same` selector of harness/run/fault_group.h).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/config/config_parser.h"
#include "harness/run/fault_group.h"

namespace faultline::harness::config_internal {

namespace {

// nemesis.partition_mode values.
const std::vector<KnownName>& PartitionModes() {
  static const std::vector<KnownName> kModes = {
      {"drop", "packets are dropped silently", 1},
      {"reset", "TCP segments are answered with a TCP reset", 1}};
  return kModes;
}

}  // namespace

void Parser::Nemesis(const Item& it) {
  Record(it);
  NemesisSpec& n = spec_->nemesis;
  WalkMap(it.value, "nemesis", ValueOrigin(it),
          {
              {"faults",
               [&](const Item& x) {
                 // Names only (or not a list: EnumList says what is
                 // wrong) keep the old reading.
                 bool plain = true;
                 for (std::size_t i = 0;
                      x.value.IsSequence() && plain && i < x.value.size(); ++i)
                   plain = !x.value[i].IsMap();
                 if (plain) {
                   EnumList(x, Known().faults, "fault", &n.faults);
                 } else {
                   ParseFaultEntries(x, &n);
                 }
               }},
              {"partition_mode",
               [&](const Item& x) {
                 Enum(x, PartitionModes(), "partition mode", &n.partition_mode);
               }},
              {"interval",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, false, " s"}, &n.interval_s);
               }},
              {"duration",
               [&](const Item& x) {
                 Seconds(x, Range{0, 86400, true, " s"}, &n.duration_s);
               }},
              {"partitions",
               [&](const Item& x) {
                 std::vector<std::string> unused;
                 if (SameList(x, false, &unused)) return;
                 EnumList(x, Known().partition_shapes, "partition shape",
                          &n.partitions);
               }},
              {"targets",
               [&](const Item& x) {
                 std::vector<std::string> unused;
                 if (SameList(x, false, &unused)) return;
                 EnumList(x, Known().node_selectors, "node selector",
                          &n.targets);
               }},
              {"delay_ms",
               [&](const Item& x) { Millis(x, 1, 10000, &n.delay_ms); }},
              {"loss_probability",
               [&](const Item& x) {
                 Number(x, Range{0, 1, true, ""}, &n.loss_probability,
                        "a share of packets: 0.3 drops about 3 in 10");
               }},
              {"clock_offset_ms",
               [&](const Item& x) {
                 int ms = 0;
                 if (Millis(x, -86400000, 86400000, &ms,
                            "at most one day either way"))
                   n.clock_offset_ms = ms;
               }},
              {"clock_rate",
               [&](const Item& x) {
                 Number(x, Range{0.01, 100, false, ""}, &n.clock_rate,
                        "1 is real speed, 2 twice as fast, 0.5 half");
               }},
              {"clock_monotonic",
               [&](const Item& x) { Bool(x, &n.clock_monotonic); }},
              {"clock_mode",
               [&](const Item& x) {
                 static const std::vector<KnownName> kModes = {
                     {"faketime", "libfaketime in the target's processes", 1},
                     {"system", "the nodes' real system clocks (ssh)", 1}};
                 Enum(x, kModes, "clock mode", &n.clock_mode);
               }},
              {"clock_strobe_delta_ms",
               [&](const Item& x) {
                 int ms = 0;
                 if (Millis(x, 1, 86400000, &ms, "at most one day"))
                   n.clock_strobe_delta_ms = ms;
               }},
              {"clock_strobe_period_ms",
               [&](const Item& x) {
                 int ms = 0;
                 if (Millis(x, 10, 3600000, &ms, "10 ms to one hour"))
                   n.clock_strobe_period_ms = ms;
               }},
              {"fsync_errors",
               [&](const Item& x) {
                 Int(x, 1, 1000000, &n.fsync_errors,
                     "how many of the next fsyncs fail with EIO");
               }},
              {"disk_latency_ms",
               [&](const Item& x) {
                 Millis(x, 1, 60000, &n.disk_latency_ms, "at most a minute");
               }},
              {"disk_writeback_ms",
               [&](const Item& x) {
                 Millis(x, 0, 3600000, &n.disk_writeback_ms,
                        "0 (never by age) to one hour; Linux: 30000");
               }},
              {"disk_namespace",
               [&](const Item& x) {
                 static const std::vector<KnownName> kModes = {
                     {"dir-fsync",
                      "a create, rename or unlink is durable once its "
                      "directory is fsynced (POSIX)",
                      1},
                     {"any-fsync",
                      "... once anything is fsynced after it (ext4's "
                      "journal)",
                      1}};
                 Enum(x, kModes, "disk namespace mode", &n.disk_namespace);
               }},
          });
}

// --- nemesis.faults entries as mappings (per-fault settings) -------------

void Parser::ParseFaultEntries(const Item& it, NemesisSpec* n) {
  Record(it);
  std::vector<harness::FaultEntry> entries;
  std::vector<std::string> kinds;
  // The plain names seen so far: a repeated one is reported once per
  // repetition (a long list of one alias stays linear, not quadratic).
  std::set<std::string> plain_seen;
  bool ok = true;
  for (std::size_t i = 0; i < it.value.size(); ++i) {
    Item elem{it.key, it.value[i], it.path + "[" + std::to_string(i) + "]",
              it.name};
    harness::FaultEntry entry;
    if (!ParseFaultEntry(elem, &entry)) {
      ok = false;
      continue;
    }
    if (entry.plain && !plain_seen.insert(entry.faults[0].fault).second) {
      Error(elem, "fault \"" + entry.faults[0].fault + "\" is listed twice",
            "list each plain fault once; to run it with other settings "
            "too, write a mapping such as `{fault: " +
                entry.faults[0].fault + ", targets: [leader]}`");
      ok = false;
    }
    for (const auto& f : entry.faults)
      if (std::find(kinds.begin(), kinds.end(), f.fault) == kinds.end())
        kinds.push_back(f.fault);
    entries.push_back(std::move(entry));
  }
  if (!ok) {
    prov_->bad.insert(it.path);
    return;
  }
  n->faults = std::move(kinds);
  n->entries = std::move(entries);
}

bool Parser::ParseFaultEntry(const Item& it, harness::FaultEntry* out) {
  if (it.value.IsScalar()) {
    FaultSettings f;
    if (!Enum(it, Known().faults, "fault", &f.fault)) return false;
    out->plain = true;
    out->faults.push_back(std::move(f));
    return true;
  }
  if (!it.value.IsMap()) {
    Error(it, "expected a fault name or a mapping, got " + Got(it.value),
          "e.g. `- pause`, `- {fault: pause, targets: [leader]}` or "
          "`- together: [{fault: clock}, {fault: partition}]`");
    return false;
  }
  Record(it);
  if (!it.value["together"]) {
    const std::size_t before = diag_->size();
    FaultSettings f;
    if (!ParseFaultMember(it, false, &f, &out->duration_s)) return false;
    out->faults.push_back(std::move(f));
    return diag_->size() == before;
  }
  // {together: [...], duration: ...}
  const std::size_t before = diag_->size();
  bool have_list = false;
  WalkMap(
      it.value, it.path, ValueOrigin(it),
      {{"together", [&](const Item& x) { ParseTogether(x, out, &have_list); }},
       {"duration", [&](const Item& x) {
          double d = 0;
          if (Seconds(x, Range{0, 86400, true, " s"}, &d)) out->duration_s = d;
        }}});
  if (!have_list && diag_->size() == before)
    Error(it, "`together` needs a list of faults",
          "e.g. `together: [{fault: clock}, {fault: partition}]`");
  out->together = true;
  return diag_->size() == before;
}

// The list of a `together` entry (at least two faults, each kind once).
void Parser::ParseTogether(const Item& x, harness::FaultEntry* out,
                           bool* have_list) {
  Record(x);
  if (!x.value.IsSequence() || x.value.size() < 2) {
    Error(x,
          "expected a list of at least two faults to apply at "
          "once, got " +
              Got(x.value),
          "e.g. `together: [{fault: clock, targets: [minority]}, "
          "{fault: partition, partitions: [halves]}]`");
    return;
  }
  *have_list = true;
  for (std::size_t i = 0; i < x.value.size(); ++i) {
    Item m{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]", x.name};
    FaultSettings f;
    if (m.value.IsScalar()) {
      if (Enum(m, Known().faults, "fault", &f.fault))
        out->faults.push_back(std::move(f));
      continue;
    }
    if (!m.value.IsMap()) {
      Error(m, "expected a fault name or a mapping, got " + Got(m.value),
            "e.g. `{fault: partition, partitions: [halves]}`");
      continue;
    }
    Record(m);
    std::optional<double> unused;
    if (ParseFaultMember(m, true, &f, &unused))
      out->faults.push_back(std::move(f));
  }
  if (out->faults.size() == x.value.size()) CheckSameInGroup(x, *out);
  // Two faults of one kind, or two that stop/start the same
  // processes, would undo each other. Each fault is reported once, against
  // the first earlier one it clashes with (the first index of each kind
  // seen), so a long group stays linear.
  std::map<std::string, std::size_t> first_of;
  for (std::size_t i = 0; i < out->faults.size(); ++i) {
    const std::string& a = out->faults[i].fault;
    auto is_process = [](const std::string& k) {
      return k == "pause" || k == "kill" || k == "power-loss" ||
             k == "torn-write";
    };
    std::optional<std::size_t> clash;
    for (const auto& [kind, j] : first_of) {
      if ((kind == a || (is_process(a) && is_process(kind))) &&
          (!clash || j < *clash))
        clash = j;
    }
    first_of.emplace(a, i);
    if (clash) {
      const std::string& b = out->faults[*clash].fault;
      Error(Item{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                 x.name},
            "`together` has " + b + " and " + a +
                (a == b ? "; a group applies each kind once"
                        : ", which act on the same processes"),
            "keep one of them in this group, or put the other in "
            "its own entry");
    }
    if (a == "kill-voter")
      Error(Item{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                 x.name},
            "kill-voter cannot be combined with other faults (it "
            "delays, kills and restarts nodes of its own)",
            "put kill-voter in its own entry of nemesis.faults");
    if (a == "figure8")
      Error(Item{x.key, x.value[i], x.path + "[" + std::to_string(i) + "]",
                 x.name},
            "figure8 cannot be combined with other faults (it delays, "
            "cuts and pauses nodes of its own)",
            "put figure8 in its own entry of nemesis.faults");
  }
}

bool Parser::SameList(const Item& x, bool in_group,
                      std::vector<std::string>* out) {
  if (!x.value.IsSequence()) return false;
  for (std::size_t i = 0; i < x.value.size(); ++i) {
    const YAML::Node& e = x.value[i];
    if (!e.IsScalar() || e.Scalar() != harness::kSameNodes) continue;
    const Item at{x.key, e, x.path + "[" + std::to_string(i) + "]", x.name};
    if (!in_group) {
      Error(at,
            "`same` means the nodes the first fault of a `together` group "
            "acted on, so it only fits a later fault of such a group",
            "e.g. `together: [{fault: clock, targets: [follower]}, "
            "{fault: partition, partitions: [same]}]`, or use a selector "
            "such as `one`");
    } else if (x.value.size() != 1) {
      Error(at, "`same` cannot be drawn among other choices",
            "write `" + x.name + ": [same]` alone, or leave `same` out");
    } else {
      *out = {harness::kSameNodes};
    }
    return true;
  }
  return false;
}

void Parser::CheckSameInGroup(const Item& x, const harness::FaultEntry& group) {
  auto is_same = [](const FaultSettings& f) {
    const auto& list = f.fault == "partition" ? f.partitions : f.targets;
    return list && *list == std::vector<std::string>{harness::kSameNodes};
  };
  auto key_of = [&](std::size_t i) {
    const char* key =
        group.faults[i].fault == "partition" ? "partitions" : "targets";
    const std::string at = x.path + "[" + std::to_string(i) + "]";
    const YAML::Node member = x.value[i];
    const YAML::Node list = member[key];
    return Item{list, list, at + "." + key, key};
  };
  const FaultSettings& first = group.faults[0];
  if (is_same(first)) {
    Error(key_of(0),
          "`same` on the first fault of a group: there is no earlier "
          "fault whose nodes it could take",
          "draw the nodes here (e.g. `targets: [follower]`) and write "
          "`same` on the faults after it");
    return;
  }
  for (std::size_t i = 1; i < group.faults.size(); ++i) {
    if (!is_same(group.faults[i])) continue;
    if (first.fault == "partition") {
      Error(key_of(i),
            "`same` takes the nodes the group's first fault acted on, but "
            "the first fault is a partition, which cuts by shape and "
            "names no single set of nodes",
            "put a fault that draws nodes with `targets` first (e.g. "
            "`{fault: clock, targets: [follower]}`), then `{fault: "
            "partition, partitions: [same]}`");
    } else if (group.faults[i].fault == "partition" && first.targets &&
               *first.targets == std::vector<std::string>{"all"}) {
      Error(key_of(i),
            "`partitions: [same]` would cut off every node: the group's "
            "first fault acts on `all`",
            "give the first fault a selector that leaves nodes out, e.g. "
            "`targets: [minority]`");
    }
  }
}

bool Parser::ParseFaultMember(const Item& it, bool in_group, FaultSettings* out,
                              std::optional<double>* duration) {
  const std::size_t before = diag_->size();
  bool have_fault = false;
  std::vector<FieldDef> fields = {
      {"fault",
       [&](const Item& x) {
         have_fault = Enum(x, Known().faults, "fault", &out->fault);
       }},
      {"targets",
       [&](const Item& x) {
         std::vector<std::string> v;
         if (SameList(x, in_group, &v)) {
           if (!v.empty()) out->targets = std::move(v);
           return;
         }
         if (!EnumList(x, Known().node_selectors, "node selector", &v)) return;
         if (v.empty()) {
           Error(x, "targets is empty",
                 "list at least one node selector, or leave `targets` out "
                 "to use nemesis.targets");
           return;
         }
         out->targets = std::move(v);
       }},
      {"partitions",
       [&](const Item& x) {
         std::vector<std::string> v;
         if (SameList(x, in_group, &v)) {
           if (!v.empty()) out->partitions = std::move(v);
           return;
         }
         if (!EnumList(x, Known().partition_shapes, "partition shape", &v))
           return;
         if (v.empty()) {
           Error(x, "partitions is empty",
                 "list at least one shape, or leave `partitions` out to use "
                 "nemesis.partitions");
           return;
         }
         out->partitions = std::move(v);
       }},
      {"partition_mode",
       [&](const Item& x) {
         std::string m;
         if (Enum(x, PartitionModes(), "partition mode", &m))
           out->partition_mode = m;
       }},
      {"delay_ms",
       [&](const Item& x) {
         int ms = 0;
         if (Millis(x, 1, 10000, &ms)) out->delay_ms = ms;
       }},
      {"loss_probability",
       [&](const Item& x) {
         double p = 0.3;
         if (Number(x, Range{0, 1, true, ""}, &p,
                    "a share of packets: 0.3 drops about 3 in 10"))
           out->loss_probability = p;
       }},
      {"clock_offset_ms",
       [&](const Item& x) {
         int ms = 0;
         if (Millis(x, -86400000, 86400000, &ms, "at most one day either way"))
           out->clock_offset_ms = ms;
       }},
      {"clock_rate",
       [&](const Item& x) {
         double r = 1;
         if (Number(x, Range{0.01, 100, false, ""}, &r,
                    "1 is real speed, 2 twice as fast, 0.5 half"))
           out->clock_rate = r;
       }},
      {"duration",
       [&](const Item& x) {
         if (in_group) {
           Error(x, "a fault inside `together` has no duration of its own",
                 "set `duration:` on the together entry, beside `together:`");
           return;
         }
         double d = 0;
         if (Seconds(x, Range{0, 86400, true, " s"}, &d)) *duration = d;
       }},
  };
  WalkMap(it.value, it.path, ValueOrigin(it), fields);
  if (!have_fault && diag_->size() == before) {
    Error(it, "this fault has no `fault:` key",
          "name the fault kind, e.g. `{fault: pause, targets: [leader]}`; "
          "one of: " +
              JoinNames(Names(Known().faults)));
  }
  if (diag_->size() != before) return false;
  // Settings that the fault would ignore are mistakes.
  auto unused = [&](const char* key, bool applies) {
    if (applies || !it.value[key]) return;
    Error(Item{it.value[key], it.value[key], it.path + "." + key, key},
          std::string("`") + key + "` does not apply to the " + out->fault +
              " fault",
          out->fault == "partition" && std::string(key) == "targets"
              ? "a partition picks nodes by shape: use `partitions: "
                "[one]` or `partitions: [leader]`"
              : std::string("remove `") + key + "`");
  };
  const std::string& k = out->fault;
  unused("targets", k != "partition");
  unused("partitions", k == "partition");
  unused("partition_mode", k == "partition");
  unused("delay_ms", k == "delay" || k == "kill-voter" || k == "figure8");
  unused("loss_probability", k == "loss");
  unused("clock_offset_ms", k == "clock");
  unused("clock_rate", k == "clock");
  return diag_->size() == before;
}

// --- end nemesis.faults entries ---

}  // namespace faultline::harness::config_internal

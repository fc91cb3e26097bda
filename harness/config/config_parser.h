// Internal to the config loader: the schema parser (YAML sections ->
// TestSpec fields, with each field's range and hint), shared by its three
// source files: config_parse.cpp (the document, cluster, workload, checker),
// config_parse_targets.cpp (target.*) and config_parse_nemesis.cpp
// (nemesis.*, the fault entries and together groups). Generic value reading
// is YamlReader (config_reader.h); cross-field rules are in
// config_validate.cpp. Not a public interface.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/config/config_reader.h"

namespace faultline::harness::config_internal {

// Reads one YAML document into *spec, recording where each value came from
// in *prov and every error in *diag (Run; one Parser per document).
class Parser : public YamlReader {
 public:
  Parser(TestSpec* spec, Provenance* prov, Diagnostics* diag)
      : YamlReader(prov, diag), spec_(spec) {}

  void Run(const YAML::Node& root);

 private:
  void Cluster(const Item& it);
  // provider: docker
  static bool IsDockerName(const std::string& s);
  void DockerContainers(const Item& x);
  void DockerHost(const Item& x);
  // provider: ssh: `nodes` as a list of hosts, and the ssh-only keys.
  void SshHosts(const Item& it);
  std::vector<FieldDef> SshFields();
  void Target(const Item& it);
  std::vector<FieldDef> EtcdFields();
  std::vector<FieldDef> RaftkvFields();
  std::vector<FieldDef> ZookeeperFields();
  std::vector<FieldDef> RedisFields();
  // target: process (config_parse_process.cpp).
  std::vector<FieldDef> ProcessFields();
  void Ports(const Item& it);
  void Lists(const Item& it);
  void Files(const Item& it);
  void Setup(const Item& it);
  void Processes(const Item& it);
  void ProcessItem(const Item& it, ProcessDef* p);
  void ProcessReady(const Item& it, ProcessReadySpec* r);
  void Status(const Item& it);
  void Client(const Item& it);
  // Where a template's placeholders may point: a node's process (every
  // placeholder), one peer of a list, the controller (no node files), a
  // resp command (the operation's words too).
  enum class TemplateUse { kNode, kPeer, kController, kResp };
  void Template(const Item& it, const std::string& text, TemplateUse use);
  bool TemplateList(const Item& it, std::vector<std::string>* out,
                    TemplateUse use);
  void TemplateEnv(const Item& it,
                   std::vector<std::pair<std::string, std::string>>* out,
                   TemplateUse use);
  Origin TemplateOrigin(const Item& it, std::size_t offset) const;
  // Checks the templates and port references read from the section.
  void FinishProcess(const Item& target);
  // The keys of target `name` (etcd's for an unknown name).
  std::vector<FieldDef> FieldsOf(const std::string& name);
  // Reports a key of another target than the one named (`name_known`:
  // target.name is a known target, else its own error says enough).
  FieldDef Foreign(const std::string& key, const std::string& owner,
                   const std::string& chosen, bool name_known);
  // extra_args: reports (and marks bad) every flag in `reserved`.
  void ReservedFlags(const Item& x, const std::vector<std::string>& args,
                     const std::set<std::string>& reserved,
                     const std::string& hint);
  void Workload(const Item& it);
  void Mix(const Item& it);
  void Nemesis(const Item& it);
  // nemesis.faults with mappings (per-fault settings, together groups).
  void ParseFaultEntries(const Item& it, NemesisSpec* n);
  bool ParseFaultEntry(const Item& it, harness::FaultEntry* out);
  void ParseTogether(const Item& x, harness::FaultEntry* out, bool* have_list);
  bool ParseFaultMember(const Item& it, bool in_group, FaultSettings* out,
                        std::optional<double>* duration);
  // `same` in a targets/partitions list (harness/run/fault_group.h): false when
  // the list does not name it; else true, reporting misuse, with *out =
  // {"same"} when it is used right.
  bool SameList(const Item& x, bool in_group, std::vector<std::string>* out);
  // `same` in a together group: not on the first fault, and only after a
  // first fault that acts on nodes.
  void CheckSameInGroup(const Item& x, const harness::FaultEntry& group);
  void Checker(const Item& it);

  TestSpec* spec_;
  struct PendingTemplate {
    Item item;
    std::string text;
    TemplateUse use;
  };
  struct PendingPort {
    Item item;
    std::string name;
  };
  std::vector<PendingTemplate> pending_templates_;
  std::vector<PendingPort> pending_ports_;
  std::set<const ProcessDef*> process_faults_given_;
};

}  // namespace faultline::harness::config_internal

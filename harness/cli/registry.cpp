#include "harness/cli/registry.h"

#include <unistd.h>

#include "harness/netns.h"
#include "nemesis/netns_nemesis.h"
#include "targets/etcd/etcd_target.h"
#include "workloads/register.h"

namespace faultline::cli {

harness::Result<std::unique_ptr<harness::Target>> MakeTarget(
    const harness::TestSpec& spec, harness::Ledger* ledger,
    const std::string& work_dir) {
  if (spec.target.name == "etcd") {
    return std::unique_ptr<harness::Target>(
        std::make_unique<targets::etcd::EtcdTarget>(
            spec.target.etcd, spec.workload, ledger, work_dir));
  }
  return harness::Fail("unknown target " + spec.target.name);
}

harness::Result<std::unique_ptr<harness::Workload>> MakeWorkload(
    const harness::TestSpec& spec) {
  if (spec.workload.name == "register") {
    return workloads::MakeRegisterWorkload(spec.workload);
  }
  return harness::Fail("unknown workload " + spec.workload.name);
}

std::unique_ptr<harness::Nemesis> MakeNemesis(const harness::TestSpec& spec,
                                              harness::Cluster& cluster,
                                              harness::Target& target,
                                              harness::Ledger& ledger) {
  (void)spec;
  return std::make_unique<nemesis::NetnsNemesis>(cluster, target, ledger);
}

std::string FindTargetBinary(const harness::TestSpec& spec) {
  if (spec.target.name == "etcd") {
    const std::string& b = spec.target.etcd.binary;
    if (b.find('/') != std::string::npos) {
      return access(b.c_str(), X_OK) == 0 ? b : "";
    }
    return harness::FindSystemTool(b);
  }
  return "";
}

}  // namespace faultline::cli

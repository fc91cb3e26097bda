#include "cli/refusal.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/config/config.h"
#include "harness/ledger/ledger.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;

bool ParseCidr(const std::string& text, std::uint32_t* net, int* len) {
  unsigned a, b, c, d;
  int l;
  char tail;
  if (std::sscanf(text.c_str(), "%u.%u.%u.%u/%d%c", &a, &b, &c, &d, &l,
                  &tail) != 5)
    return false;
  if (a > 255 || b > 255 || c > 255 || d > 255 || l < 0 || l > 32) return false;
  *net = (a << 24) | (b << 16) | (c << 8) | d;
  *len = l;
  return true;
}

std::uint32_t Mask(int len) {
  return len == 0 ? 0u : ~std::uint32_t{0} << (32 - len);
}

}  // namespace

bool CidrOverlap(const std::string& a, const std::string& b) {
  std::uint32_t na, nb;
  int la, lb;
  if (!ParseCidr(a, &na, &la) || !ParseCidr(b, &nb, &lb)) return false;
  // Two networks overlap when they agree on the shorter prefix.
  std::uint32_t m = Mask(std::min(la, lb));
  return (na & m) == (nb & m);
}

std::vector<std::string> RunsHoldingSubnet(const std::string& index_dir,
                                           const std::string& subnet,
                                           const std::string& except_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(index_dir, ec)) return out;
  std::string except;
  if (!except_dir.empty())
    except = fs::weakly_canonical(except_dir, ec).string();
  for (const auto& item : fs::directory_iterator(index_dir, ec)) {
    std::ifstream in(item.path());
    std::string ledger;
    if (!in || !std::getline(in, ledger) || ledger.empty()) continue;
    fs::path run = fs::path(ledger).parent_path();
    std::error_code ec2;
    std::string run_dir = fs::weakly_canonical(run, ec2).string();
    if (ec2 || run_dir == except) continue;
    auto loaded = harness::LoadConfigFile((run / "config.yaml").string());
    if (!loaded.ok()) continue;
    const auto& cluster = loaded.spec->cluster;
    if (cluster.provider != "netns") continue;
    if (CidrOverlap(cluster.subnet, subnet)) out.push_back(run_dir);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string HolderNote(const std::vector<std::string>& holders) {
  if (holders.empty()) return "";
  std::string note = holders.size() == 1 ? "The subnet is held by the run "
                                         : "The subnet is held by the runs ";
  for (std::size_t i = 0; i < holders.size(); ++i) {
    if (i > 0) note += ", ";
    note += holders[i];
  }
  note +=
      " (still listed as active); if it is not running any more, `faultline "
      "heal " +
      holders.front() + "` removes what it left";
  if (holders.size() > 1) note += " (likewise for the others)";
  note += ".";
  return note;
}

bool LedgerAllHealed(const std::string& path) {
  auto entries = harness::ReadLedger(path);
  if (!entries.ok()) return false;
  std::set<long> healed;
  for (const auto& e : *entries)
    if (e.kind == "healed") healed.insert(e.ref);
  for (const auto& e : *entries) {
    if (e.kind == "healed" || e.kind == "closed") continue;
    if (healed.count(e.seq) == 0) return false;
  }
  return true;
}

}  // namespace faultline::cli

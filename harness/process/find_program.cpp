#include "harness/process/find_program.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

namespace faultline::harness {
namespace {

bool Accessible(const std::string& path, Access access) {
  return ::access(path.c_str(), access == Access::kRead ? R_OK : X_OK) == 0;
}

}  // namespace

std::string FindSystemTool(std::string_view name) {
  std::vector<std::string> dirs;
  if (const char* path = getenv("PATH")) {
    std::istringstream in(path);
    std::string dir;
    while (std::getline(in, dir, ':'))
      if (!dir.empty()) dirs.push_back(dir);
  }
  for (const char* d : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"})
    dirs.emplace_back(d);
  for (const auto& dir : dirs) {
    std::string candidate = dir + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string FindBesideSelf(std::string_view name, Access access) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::string candidate = (self.parent_path() / name).string();
  return Accessible(candidate, access) ? candidate : "";
}

std::string FindCompanion(std::string_view configured, std::string_view name,
                          CompanionLookup lookup) {
  if (!configured.empty()) {
    const std::string path(configured);
    return Accessible(path, lookup.access) ? path : "";
  }
  if (std::string beside = FindBesideSelf(name, lookup.access); !beside.empty())
    return beside;
  return lookup.search_path ? FindSystemTool(name) : "";
}

}  // namespace faultline::harness

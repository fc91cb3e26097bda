#include "harness/ledger/ledger_mount.h"

#include <sstream>

namespace faultline::harness {

namespace {

// /proc/mounts writes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view o = s.substr(i + 1, 3);
      bool octal = o.size() == 3;
      for (char c : o) octal = octal && c >= '0' && c <= '7';
      if (octal) {
        out += static_cast<char>((o[0] - '0') * 64 + (o[1] - '0') * 8 +
                                 (o[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string Trimmed(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

void Log(std::vector<std::string>* log, std::string line) {
  if (log) log->push_back(std::move(line));
}

}  // namespace

bool LazyfsMountedAt(std::string_view mounts, const std::string& path) {
  const std::string want = Trimmed(path);
  std::istringstream in{std::string(mounts)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string device, where, type;
    if (!(fields >> device >> where >> type)) continue;
    if (type == kLazyfsType && Trimmed(Unescape(where)) == want) return true;
  }
  return false;
}

Status UnmountLazyfs(const MountRunner& run, std::string_view mounts,
                     const std::string& path, const std::string& where,
                     std::vector<std::string>* log) {
  if (!LazyfsMountedAt(mounts, path)) {
    Log(log, "lazy file system at " + path + where + " already unmounted");
    return Ok();
  }
  CommandResult r = run({"umount", "-l", path});
  if (r.ok()) {
    Log(log, "umount -l " + path + where);
    return Ok();
  }
  CommandResult f = run({"fusermount3", "-u", "-z", path});
  if (f.ok()) {
    Log(log, "fusermount3 -u -z " + path + where);
    return Ok();
  }
  return Fail("cannot unmount the lazy file system at " + path + where +
              ": umount: " + DescribeResult(r) +
              "; fusermount3: " + DescribeResult(f));
}

}  // namespace faultline::harness

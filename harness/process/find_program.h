// Finding programs: the system's own tools on PATH and in the sbin
// directories, and the companions faultline ships beside its own
// executable (raftkv, faultline-netdelay, faultline-clock, the faketime
// shim), which are built into the same directory as `faultline`.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <string>
#include <string_view>

namespace faultline::harness {

// The first executable `name` on PATH, then in /usr/sbin, /sbin, /usr/bin
// and /bin (root's tools are often outside a user's PATH); "" if none.
std::string FindSystemTool(std::string_view name);

enum class Access { kExecute, kRead };

// `name` in the directory of the running executable (/proc/self/exe), when
// it is there with `access`; "" otherwise.
std::string FindBesideSelf(std::string_view name,
                           Access access = Access::kExecute);

struct CompanionLookup {
  Access access = Access::kExecute;
  bool search_path = true;  // fall back to FindSystemTool(name)
};

// A companion program: `configured` when it is set (a path the user gave,
// taken as it is: "" when it is missing or lacks `access`); otherwise `name`
// beside the running executable, then, when `lookup.search_path`, on PATH.
std::string FindCompanion(std::string_view configured, std::string_view name,
                          CompanionLookup lookup = {});

}  // namespace faultline::harness

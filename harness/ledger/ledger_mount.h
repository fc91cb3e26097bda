// The ledger's `mount` entries: a lazy file system (faultline-lazyfs, the
// disk faults' FUSE daemon, nemesis/disk/) mounted over a node's data
// directory. Heal unmounts it, and only it: the path must be mounted with
// the file system type kLazyfsType, else nothing is done (a mount of anyone
// else's at that path stays).
//
// Thread-safety: the functions keep no state; Unmount does I/O only through
// the runner it is given.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/interfaces/result.h"
#include "harness/process/process.h"

namespace faultline::harness {

// The type /proc/mounts shows for faultline-lazyfs (subtype of fuse).
inline constexpr std::string_view kLazyfsType = "fuse.faultline-lazyfs";

// Whether `mounts` (the text of /proc/mounts or /proc/self/mounts) lists a
// mount of type kLazyfsType at exactly `path` (octal escapes such as \040
// undone; trailing slashes of `path` ignored).
bool LazyfsMountedAt(std::string_view mounts, const std::string& path);

// Runs a command where the mount lives (the controller, or a node).
using MountRunner =
    std::function<CommandResult(const std::vector<std::string>& argv)>;

// Unmounts the lazy file system at `path` if `mounts` (read just before)
// lists it: `umount -l path`, falling back to `fusermount3 -u -z path`.
// Succeeds when it was not mounted (nothing to do). Logs what it did to
// `log` (when not null); `where` names the place in messages.
Status UnmountLazyfs(const MountRunner& run, std::string_view mounts,
                     const std::string& path, const std::string& where,
                     std::vector<std::string>* log);

}  // namespace faultline::harness

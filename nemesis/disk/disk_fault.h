// The disk faults' names (nemesis/disk/disk_fault.cpp implements them as
// NetnsNemesis members, on the lazy file system of LazyfsNodes):
//   power-loss  SIGKILL the chosen nodes' processes, drop every write their
//               file system holds that was never made durable (and undo its
//               namespace operations not made durable), restart them at Stop
//   torn-write  the same, but each file keeps a random prefix of its
//               unsynced writes, the first lost one possibly cut
//   fsync-error the next FaultStep::fsync_errors fsyncs on the chosen nodes
//               fail with EIO (and lose the file's unsynced data, as Linux
//               does); heals by cancelling what is left
//   disk-full   writes that grow a file fail with ENOSPC until healed
//   slow-disk   every file system operation on the chosen nodes waits
//               FaultStep::disk_latency_ms until healed
// Pure.
#pragma once

#include <string_view>

namespace faultline::nemesis::disk {

inline bool IsCrashDiskFault(std::string_view kind) {
  return kind == "power-loss" || kind == "torn-write";
}
inline bool IsDiskFault(std::string_view kind) {
  return IsCrashDiskFault(kind) || kind == "fsync-error" ||
         kind == "disk-full" || kind == "slow-disk";
}

}  // namespace faultline::nemesis::disk

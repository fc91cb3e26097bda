// LazyfsNodes: the lazy file system (faultline-lazyfs, nemesis/programs/
// lazyfs_main.cpp) on the nodes of a run that uses a disk fault. Mount puts
// it over a node's data directory (harness::DurableData), Control sends it
// one command of its control protocol (nemesis/disk/control.h), UnmountAll
// takes every mount down at teardown.
//
// On each node, beside the data directory <data>:
//   <data>.lazyfs/backing   what "reached the disk" (the data directory's
//                           files at mount time are moved here: durable)
//   <data>.lazyfs/trash     unlinked or replaced files a crash may bring back
//   <data>.lazyfs/control.sock, lazyfs.log (remote nodes; netns nodes log to
//                           <run dir>/lazyfs-<node>.log)
//
//   netns  the controller's faultline-lazyfs, spawned in the controller's
//          own namespaces (the mount is seen by every node namespace, which
//          share the controller's file systems); commands run on the
//          controller.
//   remote (ssh, docker) a copy uploaded to <node dir>/lazyfs-<node>/ by
//          Prepare, started and commanded through the node's Remote. The node
//          needs /dev/fuse, the right to mount (root, or sudo; a container
//          needs --device /dev/fuse --cap-add SYS_ADMIN) and umount or
//          fusermount3; Prepare checks each and names what is missing.
//
// Ledger: a `mount` entry (the data directory) before the daemon starts, a
// `process` entry for the daemon once it runs; `faultline heal` kills the
// daemon, then unmounts (harness/ledger/ledger_mount.h). UnmountAll marks
// both healed.
//
// Thread-safety: every method may be called from any thread (one mutex for
// the table of mounts; commands to different nodes may overlap).
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "checkers/value.h"
#include "harness/cluster/cluster.h"
#include "harness/interfaces/result.h"
#include "harness/ledger/ledger.h"

namespace faultline::nemesis::disk {

class LazyfsNodes {
 public:
  // `namespace_mode`: "dir-fsync" or "any-fsync" (the daemon's --namespace).
  LazyfsNodes(harness::Ledger& ledger, std::string namespace_mode);
  LazyfsNodes(const LazyfsNodes&) = delete;
  LazyfsNodes& operator=(const LazyfsNodes&) = delete;

  // The controller's faultline-lazyfs; "" (default): beside the running
  // executable, then PATH. Call before Prepare.
  void SetBinary(std::string path) { binary_ = std::move(path); }
  // The run's directory on remote nodes. Call before Prepare.
  void SetNodeDir(std::string dir) { node_dir_ = std::move(dir); }
  // > 0: the daemons write held writes back once they are this old
  // (--writeback-ms). Call before Mount.
  void SetWritebackMs(int ms) { writeback_ms_ = ms; }
  std::string BinaryPath() const;

  // Checks that every node can take the file system (the binary runs there,
  // /dev/fuse exists, umount or fusermount3 is there) and copies the binary
  // to remote nodes. The error names the node and what it lacks.
  harness::Status Prepare(const std::vector<harness::Node>& nodes);

  // Mounts the file system over `data_dir` on `node` (created if missing;
  // its files are moved into the backing first) and returns once the daemon
  // answers `status`, within 10 s. On failure, a daemon that was started
  // stays in the table (and the ledger): UnmountAll, or `faultline heal`,
  // stops it and unmounts.
  harness::Status Mount(const harness::Node& node, const std::string& data_dir);

  // Sends `command` (e.g. "drop", "torn 7", "fsync-error 2") to the node's
  // daemon; the answer line parsed. Fails when the node has no mount, the
  // daemon cannot be reached or the answer says "ok": false.
  harness::Result<checkers::Value> Control(const harness::Node& node,
                                           const std::string& command);

  bool Mounted(const std::string& node_name) const;

  // Stops every daemon (SIGTERM: the daemon unmounts; held writes are
  // discarded), unmounts what is still mounted, marks the ledger entries
  // healed. With `keep_dir`, first makes everything durable (`sync`: the
  // files as the system left them) and afterwards copies each node's
  // backing directory to <keep_dir>/<node>/ (for a run that ended invalid).
  // Tries every node; the error names each that failed. Idempotent.
  harness::Status UnmountAll(const std::string& keep_dir);

 private:
  struct MountState {
    harness::Node node;
    std::string data_dir;
    std::string binary;  // on the node
    pid_t pid = 0;
    long mount_seq = -1;
    long proc_seq = -1;
  };

  bool IsRemote(const harness::Node& node) const;
  harness::CommandResult Run(const harness::Node& node,
                             const std::vector<std::string>& argv,
                             int timeout_ms = 15000) const;
  harness::Status PrepareOne(const harness::Node& node);
  harness::Status StopOne(MountState& m, const std::string& keep_dir);
  std::string LogPath(const harness::Node& node,
                      const std::string& data_dir) const;

  harness::Ledger& ledger_;
  const std::string namespace_mode_;
  std::string binary_;
  std::string node_dir_;
  int writeback_ms_ = 0;
  mutable std::mutex mu_;
  std::map<std::string, std::string> copies_;  // remote node -> binary there
  std::map<std::string, MountState> mounts_;   // node name -> its mount
};

}  // namespace faultline::nemesis::disk

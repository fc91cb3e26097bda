// The fault ledger: an append-only JSONL file in the run directory that
// records every resource a run creates and every fault it applies, BEFORE it
// takes effect (fsync'd). `faultline heal` replays it to undo everything
// after a controller crash, SIGKILL included.
//
// Entry kinds and their undo action:
//   bridge   {name}              ip link del <name>
//   veth     {name}              ip link del <name>
//   netns    {name}              kill every pid in it, ip netns del <name>
//   process  {pid,start_time}    SIGKILL (only if start_time still matches)
//   iptables {name,netns}        in that namespace: delete every rule that
//                                jumps to chain <name> or carries the
//                                comment <name>, then flush and delete chain
//                                <name> (TagHealCommands, ledger_names.h);
//                                the namespace's other rules and chains
//                                stay. Without a name (ledgers written
//                                before names were recorded, figure8): the
//                                same for every faultline-* chain and comment
//   stop     {pid,start_time}    SIGCONT (only if start_time still matches)
//   hostrule {name}              iptables -D FORWARD -i <name> -o <name>
//                                -j ACCEPT on the host (bridge <name>)
//   faketime {name}              remove the clock fault's directory <name>
//                                (only a "faultline-*/faketime" one) and
//                                libfaketime's /dev/shm files of dead pids
//   mount    {name}              the lazy file system (disk faults) at <name>
//                                is unmounted (umount -l), only when
//                                /proc/self/mounts lists it there with type
//                                fuse.faultline-lazyfs (ledger_mount.h); after
//                                process entries (its daemon is one), before
//                                dir entries
//   disk     {name,node}         a disk fault <name> (power-loss, fsync-error,
//                                ...) was applied to the node's lazy file
//                                system; nothing of its own to undo: it ends
//                                when the daemon is killed and the mount
//                                entry unmounted (only logged)
//   dir      {name}              remove the directory tree <name>; only done
//                                when its last component starts with
//                                "faultline-" (a run's scratch directory)
//   healed   {ref}               the entry `ref` was undone, by the run or
//                                by a heal (which appends one per entry it
//                                undid, so a second heal does nothing)
//   closed   {}                  the run ended and healed itself
//
// Heal acts only on names that follow faultline's naming rules
// (harness/ledger/ledger_names.h): an entry naming another namespace, link,
// chain or path (a ledger edited by hand) is refused: logged, left alone,
// not marked healed, and the heal fails at the end.
//
// Entries for a node with its own process table (SSH) also carry `remote`,
// a RemoteDescriptor (harness/cluster/remote_descriptor.h), and are undone on
// that node through a Remote opened from it (harness/cluster/remote_factory.h):
//   process/stop  pid and start_time are the node's; the start time is read
//                 over the Remote (field 22 of /proc/<pid>/stat) and must
//                 still match before SIGKILL / SIGCONT is sent there
//   iptables      the same removal of chain <name>, run on the node
//   dir/faketime  `rm -rf` of the node path, same name rules as above
//   mount         the same unmount, with the node's /proc/self/mounts
//   sysclock {name}  the node's real clock was moved
//   (nemesis/clock/sysclock.h):
//                 `<dir of name>/faultline-clock reset --state <name>` puts
//                 it back to its recorded baseline (only for a name
//                 ".../faultline-*/sysclock.state"; after process entries,
//                 before dir entries)
// A node that cannot be reached makes the heal fail (the run stays listed
// as active, so a later heal retries).
//
// Active runs are also listed in an index directory (default
// /run/faultline/active, one file per run id holding the ledger's path), so
// `faultline heal --all` finds runs whose store directory it is not told.
//
// Thread-safety: Record/MarkHealed may be called from any thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "harness/cluster/remote_descriptor.h"
#include "harness/interfaces/result.h"

namespace faultline::harness {

struct LedgerEntry {
  long seq = 0;
  std::string kind;
  std::string name;   // bridge / veth / netns name
  std::string netns;  // iptables: the namespace the rules live in
  std::string node;   // for humans
  pid_t pid = 0;
  unsigned long long start_time = 0;
  long ref = 0;             // healed: the seq it undoes
  RemoteDescriptor remote;  // empty: the controller's own host/namespaces
  int line = 0;  // 1-based line in the file it was read from (not written)
};

std::string DefaultActiveIndexDir();  // "/run/faultline/active"

class Ledger {
 public:
  // Creates (truncates) the ledger at `path` and lists it in `index_dir`
  // under `run_id`.
  static Result<std::unique_ptr<Ledger>> Create(const std::string& path,
                                                const std::string& run_id,
                                                const std::string& index_dir);
  // Opens an existing ledger to append to it (a heal recording what it
  // undid): seqs continue after the highest one in the file; a torn last
  // line is cut off first. Not listed in any index.
  static Result<std::unique_ptr<Ledger>> Append(const std::string& path);
  ~Ledger();

  // Appends `entry` (its seq is assigned) and fsyncs; returns the seq, or
  // -1 when the entry could not be written durably (the caller must then not
  // create the resource).
  long Record(LedgerEntry entry);
  // Records that entry `seq` has been undone.
  void MarkHealed(long seq);
  // Records `closed` and removes the run from the active index.
  void Close();

  const std::string& path() const { return path_; }

 private:
  Ledger(std::string path, std::string index_file, int fd);
  std::mutex mu_;
  std::string path_;
  std::string index_file_;
  int fd_ = -1;
  long next_seq_ = 1;
};

// Reads a ledger; a torn last line is ignored.
Result<std::vector<LedgerEntry>> ReadLedger(const std::string& path);

// Undoes every entry not marked healed, in a safe order: SIGCONT stopped
// processes, remove the faults' iptables chains, kill processes, remove
// faketime files, delete veths, namespaces, bridges. Appends a `healed` entry
// to the ledger for every entry it undid (also when something else failed),
// so a second heal does nothing. With `index_dir`, and when everything was
// undone, removes the run from that active index. Reports what it did, one
// line per action, in `log` (nothing when there was nothing to do).
Status HealLedger(const std::string& path, std::vector<std::string>* log,
                  const std::string& index_dir = "");

// Heals every run listed in `index_dir`, then removes their index files.
Status HealAll(const std::string& index_dir, std::vector<std::string>* log);

// Undoes one entry with the action listed above (healed/closed: nothing;
// a refused name: an error, nothing done).
// Idempotent: a resource that is already gone counts as undone. Appends one
// line per action to `log` when it is not null. Used by HealLedger and by
// providers tearing down what they recorded.
Status UndoLedgerEntry(const LedgerEntry& entry, std::vector<std::string>* log);

// Undoes `entries` (healed/closed ones are ignored; the caller filters out
// what is already healed) in the safe order HealLedger uses; newest first
// within a kind. Tries every entry even after an error (a refused one
// included); the error names all that failed. `undone`, when not null, gets
// the seq of every entry that was undone (or found already gone).
Status UndoLedgerEntries(std::vector<LedgerEntry> entries,
                         std::vector<std::string>* log,
                         std::vector<long>* undone = nullptr);

}  // namespace faultline::harness

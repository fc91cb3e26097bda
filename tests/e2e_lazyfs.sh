#!/usr/bin/env bash
# faultline-lazyfs end to end: the real FUSE daemon mounted on temp dirs,
# driven through its ctl client, checked with real file operations:
# unsynced data and namespace changes are lost by `drop`, synced ones are
# kept (dir-fsync and any-fsync modes), torn keeps a prefix, fsync-error,
# disk-full and latency show up as errors and delays, SIGTERM unmounts and
# exits 0, and a SIGKILLed daemon's mount is cleaned by a lazy unmount.
source "$(dirname "$0")/lib.sh"
require_root
LAZYFS="$(dirname "$FAULTLINE_BIN")/faultline-lazyfs"
[ -x "$LAZYFS" ] || fail "this test needs faultline-lazyfs next to faultline ($LAZYFS); install libfuse3-dev and build it"
[ -c /dev/fuse ] || fail "this test needs /dev/fuse"

WORK="$(mktemp -d /tmp/faultline-lazyfs.XXXXXX)"
PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # (A dead FUSE mount fails stat, so globbing would not find it.)
  awk -v w="$WORK/" '$3 == "fuse.faultline-lazyfs" && index($2, w) == 1 {print $2}' \
    /proc/self/mounts | while read -r m; do umount -l "$m" || true; done
  rm -rf "$WORK"
  exit $rc
}
trap cleanup EXIT

# start_fs NAME [--namespace MODE] [TRASH]: mounts $WORK/NAME/mnt over
# $WORK/NAME/backing and waits for the control socket to answer `status`.
# Sets M (mount), BK (backing), SOCK, PID.
start_fs() {
  local name=$1 mode=$2 trash=${3:-$WORK/$1/trash}
  M="$WORK/$name/mnt" BK="$WORK/$name/backing" SOCK="$WORK/$name/ctl.sock"
  mkdir -p "$M" "$BK" "$trash"
  "$LAZYFS" mount --backing "$BK" --trash "$trash" --control "$SOCK" \
    --mount "$M" --log "$WORK/$name/log" --namespace "$mode" \
    >"$WORK/$name/out" 2>&1 &
  PID=$!
  PIDS+=("$PID")
  for _ in $(seq 100); do
    "$LAZYFS" ctl "$SOCK" status >/dev/null 2>&1 && return 0
    kill -0 "$PID" 2>/dev/null || fail "daemon $name died: $(cat "$WORK/$name/out")"
    sleep 0.05
  done
  fail "daemon $name never answered status"
}
ctl() { "$LAZYFS" ctl "$SOCK" "$@"; }
py() { "$PY" -c "$@"; }
# Python helpers for the file operations (M is passed as argv[1]).
HELP='
import os, sys, errno, time
M = sys.argv[1]
def put(name, data, sync=False, dirsync=False):
    with open(os.path.join(M, name), "w") as f:
        f.write(data); f.flush()
        if sync: os.fsync(f.fileno())
    if dirsync: fsync_dir(os.path.dirname(os.path.join(M, name)))
def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY); os.fsync(fd); os.close(fd)
def get(name):
    with open(os.path.join(M, name)) as f: return f.read()
def exists(name): return os.path.lexists(os.path.join(M, name))
'
run() { "$PY" -c "$HELP$1" "$M" "${@:2}"; }

# --- dir-fsync (the default) -------------------------------------------
start_fs dirmode dir-fsync
grep -q " $M fuse.faultline-lazyfs " /proc/self/mounts || fail "mount type is not fuse.faultline-lazyfs"
ctl status | grep -q '"namespace":"dir-fsync"' || fail "status does not say dir-fsync"

# Synced data (file and directory fsynced) survives; an unsynced append not.
run 'put("a", "x" * 100, sync=True, dirsync=True)
with open(os.path.join(M, "a"), "a") as f: f.write("unsynced")
assert get("a") == "x" * 100 + "unsynced"'
[ "$(stat -c %s "$BK/a")" -eq 100 ] || fail "the backing has the unsynced append already"
ans=$(ctl drop) || fail "drop: $ans"
echo "$ans" | grep -q '"dropped_writes":1' || fail "drop answer: $ans"
run 'assert get("a") == "x" * 100, get("a")' || fail "synced data not kept / unsynced not dropped"

# An open descriptor reads what survived, not the kernel's cached pages.
run 'fd = os.open(os.path.join(M, "a"), os.O_RDWR)
os.pwrite(fd, b"y" * 100, 0)
assert os.pread(fd, 100, 0) == b"y" * 100
print(fd)
os.system(sys.argv[2] + " ctl " + sys.argv[3] + " drop >/dev/null")
got = os.pread(fd, 100, 0)
assert got == b"x" * 100, got
m = __import__("mmap").mmap(fd, 100, prot=__import__("mmap").PROT_READ)
assert m[:100] == b"x" * 100' "$LAZYFS" "$SOCK" >/dev/null || fail "stale data after drop on an open descriptor (or mmap failed)"

# An O_SYNC write is durable at once (the file itself was made durable above).
run 'fd = os.open(os.path.join(M, "a"), os.O_WRONLY | os.O_SYNC)
os.pwrite(fd, b"S", 0); os.close(fd)'
ctl drop >/dev/null
run 'assert get("a") == "S" + "x" * 99, get("a")' || fail "an O_SYNC write was dropped"
run 'fd = os.open(os.path.join(M, "a"), os.O_WRONLY); os.pwrite(fd, b"x", 0); os.fsync(fd)'

# Create + fsync of the file but not of its directory: gone after drop.
run 'put("new", "data", sync=True)'
ans=$(ctl drop)
echo "$ans" | grep -q '"undone_ops":1' || fail "drop did not undo the create: $ans"
run 'assert not exists("new")' || fail "a file whose directory was never fsynced survived drop"
[ ! -e "$BK/new" ] || fail "the backing still has the undone file"

# Rename over an existing file without a directory fsync: old contents back.
run 'put("cfg", "old", sync=True, dirsync=True)
put("cfg.tmp", "new", sync=True)
os.rename(os.path.join(M, "cfg.tmp"), os.path.join(M, "cfg"))
assert get("cfg") == "new"'
ctl drop >/dev/null
run 'assert get("cfg") == "old", get("cfg"); assert not exists("cfg.tmp")' || fail "rename over a file not undone"
# ... and with the directory fsync, the rename is kept.
run 'put("cfg.tmp", "new", sync=True)
os.rename(os.path.join(M, "cfg.tmp"), os.path.join(M, "cfg")); fsync_dir(M)'
ctl drop >/dev/null
run 'assert get("cfg") == "new"' || fail "a rename made durable by fsync of the directory was undone"

# Unlink without a directory fsync: the file comes back.
run 'os.unlink(os.path.join(M, "cfg")); assert not exists("cfg")'
ctl status | grep -q '"namespace_pending":1' || fail "unlink not pending"
ctl drop >/dev/null
run 'assert get("cfg") == "new"' || fail "unlinked file not back after drop"
[ -z "$(ls -A "$WORK/dirmode/trash")" ] || fail "the trash is not empty after the undo"

# An open file unlinked (libfuse's hidden rename becomes the real unlink):
# fstat and writes still work on it, no hidden name shows, drop brings it
# back under its name; rename over an open file is undone the same way.
run 'put("open", "o", sync=True, dirsync=True)
fd = os.open(os.path.join(M, "open"), os.O_RDWR)
os.unlink(os.path.join(M, "open"))
os.pwrite(fd, b"more", 1)
assert os.fstat(fd).st_size == 5, os.fstat(fd).st_size
assert not [n for n in os.listdir(M) if n.startswith(".fuse")], os.listdir(M)
put("repl", "replacement")
fd2 = os.open(os.path.join(M, "cfg"), os.O_RDONLY)
os.rename(os.path.join(M, "repl"), os.path.join(M, "cfg"))
assert os.fstat(fd2).st_size == 3 and get("cfg") == "replacement"
os.close(fd); os.close(fd2)' || fail "unlinked or replaced open file"
[ -z "$(ls -A "$BK" | grep fuse_hidden)" ] || fail "a .fuse_hidden file reached the backing"
ctl drop >/dev/null
run 'assert get("open") == "o", get("open"); assert get("cfg") == "new"; assert not exists("repl")' ||
  fail "unlinked/replaced open files not back after drop"

# mkdir + file inside, both undone; the trash is never visible.
run 'os.mkdir(os.path.join(M, "d")); put("d/f", "z", sync=True)'
ctl drop >/dev/null
run 'assert not exists("d")' || fail "mkdir not undone"

# Torn: what survives of sequential unsynced appends is a prefix of them.
run 'put("t", "", sync=True, dirsync=True)
with open(os.path.join(M, "t"), "a") as f:
    for i in range(20): f.write(str(i) * 50); f.flush()'
ans=$(ctl torn 7) || fail "torn: $ans"
echo "$ans" | grep -q '"op":"torn"' || fail "torn answer: $ans"
run 'full = "".join(str(i) * 50 for i in range(20)); got = get("t")
assert full.startswith(got) and len(got) < len(full) or got == full, got' || fail "torn left something that is not a prefix"

# fsync-error 1: the next fsync fails with EIO, the one after works.
ctl fsync-error 1 >/dev/null
run 'fd = os.open(os.path.join(M, "a"), os.O_WRONLY)
os.write(fd, b"e")
try:
    os.fsync(fd); raise SystemExit("fsync did not fail")
except OSError as e:
    assert e.errno == errno.EIO, e
os.write(fd, b"f"); os.fsync(fd)' || fail "fsync-error"

# disk-full: a growing write fails with ENOSPC, a write inside the file not.
ctl disk-full on >/dev/null
run 'fd = os.open(os.path.join(M, "a"), os.O_WRONLY)
os.pwrite(fd, b"in", 0)
try:
    os.pwrite(fd, b"grow", 1000); raise SystemExit("growing write worked")
except OSError as e:
    assert e.errno == errno.ENOSPC, e' || fail "disk-full"

# latency: an operation takes at least the latency; heal clears all three.
ctl latency 300 >/dev/null
run 't0 = time.monotonic(); os.stat(os.path.join(M, "a"))
assert time.monotonic() - t0 >= 0.3, time.monotonic() - t0' || fail "latency not applied"
ans=$(ctl heal)
echo "$ans" | grep -q '"latency_ms":0' || fail "heal: $ans"
ctl status | grep -q '"disk_full":false' || fail "heal left disk-full on"
run 't0 = time.monotonic(); os.stat(os.path.join(M, "a")); assert time.monotonic() - t0 < 0.3' || fail "latency not healed"

# sync: everything durable, nothing left to undo.
run 'put("s", "synced by command")'
ans=$(ctl sync)
echo "$ans" | grep -q '"committed_ops":1' || fail "sync answer: $ans"
ctl drop >/dev/null
run 'assert get("s") == "synced by command"' || fail "sync did not make a file durable"

# ctl exit codes: 1 for an error answer, 2 without a daemon.
set +e
ctl bogus >/dev/null; rc1=$?
"$LAZYFS" ctl "$WORK/none.sock" status 2>/dev/null; rc2=$?
set -e
[ "$rc1" -eq 1 ] && [ "$rc2" -eq 2 ] || fail "ctl exit codes: $rc1 $rc2"

# SIGTERM: unmounted, exit 0.
kill -TERM "$PID"
set +e
wait "$PID"; rc=$?
set -e
[ "$rc" -eq 0 ] || fail "daemon exit status after SIGTERM: $rc"
! grep -q " $M fuse" /proc/self/mounts || fail "still mounted after SIGTERM"
[ ! -e "$SOCK" ] || fail "control socket left behind"

# A second daemon cannot mount on a non-empty dir: exit 2.
set +e
"$LAZYFS" mount --backing "$BK" --trash "$WORK/dirmode/trash" --control \
  "$WORK/x.sock" --mount "$BK" 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "mount on a non-empty dir: exit $rc"

# --- any-fsync, trash inside the backing -------------------------------
mkdir -p "$WORK/anymode/backing/.trash"
start_fs anymode any-fsync "$WORK/anymode/backing/.trash"
run 'assert not exists(".trash"); assert ".trash" not in os.listdir(M)' || fail "trash visible"
# "other" is created first and never synced: the fsync of "kept" commits
# its creation too (not its data).
run 'put("other", "o"); put("kept", "data", sync=True)'
ctl drop >/dev/null
run 'assert get("kept") == "data"; assert exists("other") and get("other") == ""' ||
  fail "any-fsync: an fsync did not make the earlier creates durable"

# Unmounted from outside: the daemon exits 0 (after undoing, as by drop).
anypid=$PID anym=$M
start_fs third dir-fsync
run 'put("gone", "g")'
umount "$M"
set +e
wait "$PID"; rc=$?
set -e
[ "$rc" -eq 0 ] || fail "daemon exit status after an outside unmount: $rc"
[ ! -e "$BK/gone" ] || fail "the pending create survived the exit"
PID=$anypid M=$anym

# SIGKILL: the mount is left broken; a lazy unmount cleans it.
kill -9 "$PID"
wait "$PID" 2>/dev/null || true
grep -q " $M fuse.faultline-lazyfs " /proc/self/mounts || fail "mount gone without unmount?"
umount -l "$M"
! grep -q " $M fuse" /proc/self/mounts || fail "umount -l did not clean the killed daemon's mount"

echo "e2e_lazyfs: OK"

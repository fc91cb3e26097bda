#!/usr/bin/env bash
# What the lazy file system of the disk faults (faultline-lazyfs,
# nemesis/disk/README.md) costs, measured on this machine.
#
# 1. File system: fio (psync, one job, --fallocate=none since fallocate
#    answers EOPNOTSUPP on lazyfs) on four places: tmpfs (/dev/shm), the
#    machine's disk (/var/tmp), lazyfs with its backing on tmpfs, lazyfs
#    with its backing on the disk (mounted by this script afresh for each
#    test, nothing else on it).
#      seq-write    64 MiB in 1 MiB writes, then one fsync: MB/s over the
#                   whole job, fsync included
#      rand-fsync   4 KiB random writes in a 16 MiB file, fsync after each
#                   (--fsync=1), 2000 writes or 10 s: writes/s (fsync time
#                   included), p50/p99 of the write and of the fsync
#      rand-nosync  the same without fsync, 10000 writes or 10 s (40 MB,
#                   below lazyfs' default bound of 64 MiB held, so all
#                   of them are held, none written back)
#    Each figure also as a ratio to tmpfs in the same round.
# 2. Targets: faultline runs raftkv and etcd (3 nodes, register workload,
#    concurrency 10, rate 0 = as fast as the clients go, -s seconds) twice:
#    "plain" with no faults, and "lazyfs" with `faults: [slow-disk]`
#    (disk_latency_ms 1 on one node for the last half second only), which
#    makes faultline mount the lazy file system over every node's data
#    directory for the whole run. The node directories are on /dev/shm, so
#    this is lazyfs over tmpfs. Prints invocations/s and ok/s over the
#    workload phase (results.json) and the lazyfs/plain ratio.
# Prints figures; asserts nothing.
#
# Usage: sudo bench/lazyfs_bench.sh [-n ROUNDS] [-b FAULTLINE] [-s SECONDS]
#                                   [-p fio|targets|all]
#   -n ROUNDS     repeat everything this many times (default 1)
#   -b FAULTLINE  the faultline binary (default: build/faultline);
#                 faultline-lazyfs is taken from next to it
#   -s SECONDS    workload seconds of each target run (default 20)
#   -p PART       only the fio part or only the target runs (default all)
# Needs root (FUSE mounts, network namespaces), /dev/fuse, fio, python3,
# and etcd for the etcd runs. The target runs use the subnets
# 10.77.150.0/24 (raftkv) and 10.77.151.0/24 (etcd). Everything it creates
# (mounts, daemons, files, run directories) is removed on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
faultline="$repo/build/faultline"
rounds=1
seconds=20
part=all
while getopts "n:b:s:p:" opt; do
  case "$opt" in
    n) rounds="$OPTARG" ;;
    b) faultline="$OPTARG" ;;
    s) seconds="$OPTARG" ;;
    p) part="$OPTARG" ;;
    *) sed -n 28,34p "$0" >&2; exit 2 ;;
  esac
done
die() { echo "lazyfs_bench: $*" >&2; exit 2; }
case "$part" in fio | targets | all) ;; *) die "-p fio|targets|all" ;; esac
[[ "$(id -u)" -eq 0 ]] || die "run as root (FUSE mounts, network namespaces)"
[[ -x "$faultline" ]] || die "no faultline at $faultline (-b)"
lazyfs="$(dirname "$faultline")/faultline-lazyfs"
[[ -x "$lazyfs" ]] || die "no faultline-lazyfs next to $faultline (needs libfuse3-dev)"
[[ -e /dev/fuse ]] || die "no /dev/fuse"
command -v fio >/dev/null || die "needs fio"
command -v python3 >/dev/null || die "needs python3"

shm="$(mktemp -d /dev/shm/faultline-lazyfs-bench.XXXXXX)"
disk="$(mktemp -d /var/tmp/faultline-lazyfs-bench.XXXXXX)"
work="$(mktemp -d /tmp/faultline-lazyfs-bench.XXXXXX)"
DAEMONS=()  # "pid mountpoint"

# unmount_all: SIGTERM each daemon by pid and wait for it (it unmounts);
# then `umount -l` a mount point /proc/mounts still lists as ours.
unmount_all() {
  local entry pid mnt
  for entry in "${DAEMONS[@]}"; do
    read -r pid mnt <<<"$entry"
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if awk -v m="$mnt" '$2 == m && $3 == "fuse.faultline-lazyfs" { f = 1 }
                        END { exit !f }' /proc/mounts; then
      umount -l "$mnt" || true
    fi
  done
  DAEMONS=()
}
cleanup() {
  set +e
  unmount_all
  rm -rf "$shm" "$disk" "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mount_lazyfs NAME BASE: mounts lazyfs at $work/mnt-NAME with its backing
# and trash under BASE; sets mnt_dir to it once `ctl status` answers.
mount_lazyfs() {
  local name="$1" base="$2" mnt="$work/mnt-$1" sock="$work/$1.sock" pid
  mkdir -p "$base/backing" "$base/trash" "$mnt"
  "$lazyfs" mount --backing "$base/backing" --trash "$base/trash" \
    --control "$sock" --mount "$mnt" --log "$work/$name.log" \
    >>"$work/$name.out" 2>&1 &
  pid=$!
  DAEMONS+=("$pid $mnt")
  for _ in $(seq 1 400); do
    if "$lazyfs" ctl "$sock" status >/dev/null 2>&1; then
      mnt_dir="$mnt"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.025
  done
  cat "$work/$name.out" >&2
  die "faultline-lazyfs did not come up at $mnt"
}

# fio_json DIR TEST > json: one fio job of TEST in DIR.
fio_json() {
  local dir="$1" test="$2"
  local common=(--name="$test" --directory="$dir" --ioengine=psync
    --fallocate=none --unlink=1 --output-format=json)
  case "$test" in
    seq-write) fio "${common[@]}" --rw=write --bs=1m --size=64m --end_fsync=1 ;;
    rand-fsync) fio "${common[@]}" --rw=randwrite --bs=4k --size=16m \
      --fsync=1 --number_ios=2000 --runtime=10 ;;
    rand-nosync) fio "${common[@]}" --rw=randwrite --bs=4k --size=16m \
      --number_ios=10000 --runtime=10 ;;
  esac
}

# fio_figures TEST < json: "FIGURE UNIT W50 W99 S50 S99" (latencies in us,
# "-" when there are none).
fio_figures() {
  python3 -c '
import json, sys
test = sys.argv[1]
job = json.load(sys.stdin)["jobs"][0]
w = job["write"]
def pct(lat, p):
    v = (lat or {}).get("percentile", {}).get(p)
    if not v:
        return "-"
    return "%.1f" % (v / 1000) if v < 10000 else "%.0f" % (v / 1000)
secs = job["job_runtime"] / 1000.0
if test == "seq-write":
    fig, unit = w["io_bytes"] / secs / 1e6, "MB/s"
else:
    fig, unit = w["total_ios"] / secs, "IOPS"
sync = job.get("sync", {}).get("lat_ns")
print("%.1f %s %s %s %s %s" % (fig, unit, pct(w["clat_ns"], "50.000000"),
      pct(w["clat_ns"], "99.000000"), pct(sync, "50.000000"),
      pct(sync, "99.000000")))
' "$1"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# fio_place PLACE TEST > json: TEST on PLACE; lazyfs is mounted afresh for
# each test (so no test meets the held writes of an earlier one: the
# unlinked files of earlier tests keep theirs until the unlink is durable)
# and unmounted after it.
fio_place() {
  local place="$1" test="$2" rc=0
  case "$place" in
    tmpfs) mkdir -p "$shm/plain" && fio_json "$shm/plain" "$test" || rc=$? ;;
    disk) mkdir -p "$disk/plain" && fio_json "$disk/plain" "$test" || rc=$? ;;
    lazyfs-tmpfs | lazyfs-disk)
      local base="$shm/lazy-$test"
      [[ "$place" == lazyfs-disk ]] && base="$disk/lazy-$test"
      mount_lazyfs "$place-$test" "$base"
      fio_json "$mnt_dir" "$test" || rc=$?
      unmount_all
      ;;
  esac
  return "$rc"
}

fio_part() {
  local r="$1" place test fig unit w50 w99 s50 s99
  declare -A base
  for place in tmpfs disk lazyfs-tmpfs lazyfs-disk; do
    for test in seq-write rand-fsync rand-nosync; do
      fio_place "$place" "$test" >"$work/fio.json" 2>"$work/fio.err" || {
        printf "%-5s %-13s %-11s fio failed: %s\n" "$r" "$place" "$test" \
          "$(tr '\n' ' ' <"$work/fio.err")"
        continue
      }
      read -r fig unit w50 w99 s50 s99 < <(fio_figures "$test" <"$work/fio.json")
      [[ "$place" == tmpfs ]] && base[$test]="$fig"
      printf "%-5s %-13s %-11s %10s %-4s %9s %9s %9s %9s %9s\n" "$r" "$place" \
        "$test" "$fig" "$unit" "$w50" "$w99" "$s50" "$s99" \
        "$(ratio "$fig" "${base[$test]:-0}")"
    done
  done
}

# config TARGET VARIANT SUBNET > yaml
config() {
  local target="$1" variant="$2" subnet="$3"
  cat <<EOF
name: bench-lazyfs-$target-$variant
time_limit: $seconds
recovery: 1
cluster:
  nodes: 3
  subnet: $subnet
target:
  name: $target
workload:
  name: register
  keys: 8
  concurrency: 10
  rate: 0
  mix: {read: 50, write: 30, cas: 20}
  op_timeout_ms: 2000
checker:
  timeout: 30
EOF
  if [[ "$variant" == lazyfs ]]; then
    cat <<EOF
nemesis:
  faults: [slow-disk]
  disk_latency_ms: 1
  targets: [one]
  interval: $(awk -v s="$seconds" 'BEGIN { print s - 1 }')
  duration: 0.5
EOF
  else
    printf 'nemesis:\n  faults: []\n'
  fi
}

# run_one TARGET VARIANT SUBNET: prints "INVOCATIONS/S OK/S VALID MOUNTS".
run_one() {
  local target="$1" variant="$2" subnet="$3"
  local yaml="$work/$target-$variant.yaml" out="$work/$target-$variant.json"
  config "$target" "$variant" "$subnet" >"$yaml"
  "$faultline" -q run --json "$yaml" --seed 1 --store "$work/store" \
    >"$out" 2>"$work/$target-$variant.err" || true
  python3 -c '
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    sys.stderr.write("lazyfs_bench: no results from " + sys.argv[1] + "\n")
    print("0 0 no-results 0"); sys.exit()
ops = j.get("evidence", {}).get("ops", {}).get("workload", {})
secs = sum(p["seconds"] for p in j.get("phases", []) if p["name"] == "workload")
n = sum(ops.get(k, 0) for k in ("ok", "fail", "info"))
mounts = 0
try:
    for line in open(j["run_dir"] + "/ledger.jsonl"):
        mounts += json.loads(line).get("kind") == "mount"
except Exception:
    pass
print("%.0f %.0f %s %d" % (n / secs if secs else 0, ops.get("ok", 0) / secs
      if secs else 0, j.get("valid"), mounts))
' "$out"
}

targets_part() {
  local r="$1" target subnet p_n p_ok p_v p_m l_n l_ok l_v l_m
  for target in raftkv etcd; do
    case "$target" in
      raftkv) subnet=10.77.150.0/24 ;;
      etcd) subnet=10.77.151.0/24 ;;
    esac
    read -r p_n p_ok p_v p_m < <(run_one "$target" plain "$subnet")
    read -r l_n l_ok l_v l_m < <(run_one "$target" lazyfs "$subnet")
    printf "%-5s %-7s %-7s %10s %10s %8s %7s\n" "$r" "$target" plain "$p_n" \
      "$p_ok" "$p_v" "$p_m"
    printf "%-5s %-7s %-7s %10s %10s %8s %7s   ratio %s (ok/s %s)\n" "$r" \
      "$target" lazyfs "$l_n" "$l_ok" "$l_v" "$l_m" "$(ratio "$l_n" "$p_n")" \
      "$(ratio "$l_ok" "$p_ok")"
  done
}

if [[ "$part" != targets ]]; then
  echo "File system (fio, psync, one job; latencies in microseconds)"
  printf "%-5s %-13s %-11s %10s %-4s %9s %9s %9s %9s %9s\n" round place test \
    figure "" "write p50" "write p99" "fsync p50" "fsync p99" "vs tmpfs"
  for ((r = 1; r <= rounds; r++)); do fio_part "$r"; done
fi
if [[ "$part" != fio ]]; then
  [[ "$part" == all ]] && echo
  echo "Targets (3 nodes, register, concurrency 10, rate 0, $seconds s;" \
    "node data on /dev/shm)"
  printf "%-5s %-7s %-7s %10s %10s %8s %7s\n" round target disk "invoc/s" \
    "ok/s" verdict mounts
  for ((r = 1; r <= rounds; r++)); do targets_part "$r"; done
fi

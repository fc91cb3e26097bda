#!/usr/bin/env bash
# The docker transport end to end: a private docker engine (own socket, data
# root and exec root, --iptables=false so the host's FORWARD policy stays as
# it is; tests/lib_docker.sh), the etcd node image built here without any
# registry (docker/build-images.sh etcd: the host's tools, etcd, this
# build's raftkv and faultline-netdelay libraries, libfaketime, python3), three
# containers faultline-n1..n3 on a user network in 10.77.75.0/24, and a full
# `faultline run --cluster docker`
# raftkv register test with partitions (iptables in the containers), pauses,
# kills, delays (faultline-netdelay copied into the containers; its log
# counts the packets it held) and clock faults (while one is active, `date`
# run in the container with raftkv's own libfaketime environment reads the
# +1 h clock) that must be valid. Then an etcd register test in the same
# containers (etcd from the image) with partitions, pauses and kills, valid
# and healed. Then `target: process` in the same containers (about 40 s):
# raftkv described in YAML, the image's raftkv and python3 running the
# server and the status script that `files` uploads, the Python exec client
# on the controller; 10 s with pause, kill, clock and a leader partition
# found through the status command, valid, every kind healed, nothing left
# in the containers (the faketime shim copied in, not the controller's path
# preloaded); then that run's controller SIGKILLed during a partition and a
# clock fault (`date` under the skewed server's own environment reads
# +30 s), and `faultline heal` removes the rules, servers, work
# directories and libfaketime files. Then a run whose controller is SIGKILLed
# during a partition and a delay is healed by `faultline heal` from its
# ledger alone (rules, raftkv and netdelay processes and work directories in
# the containers), and a stopped container is refused before anything
# starts. Then the disk faults (when faultline-lazyfs is built): refused
# (254) in containers without /dev/fuse; the containers made again with --device /dev/fuse --cap-add SYS_ADMIN, a 6 s
# raftkv run with power-loss of a majority through faultline-lazyfs copied
# into them, valid, every loss restored, no mount or daemon left, and a
# controller SIGKILLed during a power loss healed (about 60 s under load).
# Everything it made
# (containers, network, image, engine data, the engine itself) is removed on
# exit.
# Needs: root, docker.io (dockerd, docker), python3, libfaketime, etcd
# (etcd-server), the raftkv and faultline-netdelay binaries next to
# faultline; the disk phase faultline-lazyfs next to faultline and /dev/fuse
# (skipped without). Installs nothing. About 130-150 s without the disk
# phase (110 s without the process phase; python3 in the etcd image adds
# about 4 s to its build), 220 s with it on a loaded 2-core machine.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_docker.sh"
require_root
require_tool dockerd
require_tool docker
require_tool python3
RAFTKV="$(dirname "$FAULTLINE_BIN")/raftkv"  # copied into the nodes by the run
[ -x "$RAFTKV" ] || fail "no raftkv binary at $RAFTKV (build the 'raftkv' target)"
NETDELAY="$(dirname "$FAULTLINE_BIN")/faultline-netdelay"
[ -x "$NETDELAY" ] || fail "no faultline-netdelay at $NETDELAY (needs libnetfilter-queue-dev)"
FAKETIME_LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -r "$FAKETIME_LIB" ] || fail "this test needs libfaketime ($FAKETIME_LIB; apt-get install libfaketime)"

t0=$(date +%s)

# skewed_clock RUN: sets `cnode` (the node of RUN's first clock fault) and
# `off` (how many seconds `date` in its container reads ahead when run with
# the environment of that container's raftkv: its LD_PRELOAD and FAKETIME_*
# variables, read from /proc), after checking that libfaketime is mapped into
# that raftkv and that it has such an environment.
skewed_clock() {
  cnode=$("$PY" -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('f')=='start-clock' and e.get('type')=='info': print(e['value']['nodes'][0]); break" "$1/history.jsonl")
  local c="faultline-$cnode" rpid kv envs=()
  rpid=$(docker exec "$c" ps -eo pid=,comm= | awk '$2 == "raftkv" {print $1; exit}')
  [ -n "$rpid" ] || fail "no raftkv in $c during the clock fault"
  docker exec "$c" grep -q libfaketime "/proc/$rpid/maps" || fail "libfaketime is not mapped into raftkv in $c"
  while IFS= read -r kv; do envs+=(-e "$kv"); done < <(docker exec "$c" cat "/proc/$rpid/environ" |
    tr '\0' '\n' | grep -E '^(LD_PRELOAD|FAKETIME[A-Z_]*)=')
  [ "${#envs[@]}" -ge 4 ] || fail "raftkv in $c has no libfaketime environment"
  off=$(( $(docker exec "${envs[@]}" "$c" date +%s) - $(date +%s) ))
}

# faults_paired LABEL RUN KIND...: each KIND was started at least once in
# RUN's history and stopped as often as it was started.
faults_paired() {
  local label="$1" run_dir="$2" kind starts
  shift 2
  for kind in "$@"; do
    starts=$(grep -c "\"type\":\"info\",\"f\":\"start-$kind\"" "$run_dir/history.jsonl" || true)
    [ "$starts" -ge 1 ] || fail "$label: no $kind fault was applied"
    [ "$starts" = "$(grep -c "\"type\":\"info\",\"f\":\"stop-$kind\"" "$run_dir/history.jsonl" || true)" ] ||
      fail "$label: $kind: not every start has its stop"
  done
}
WORK="$(mktemp -d /tmp/faultline-e2e-docker.XXXXXX)"
STORE="$WORK/store"
INDEX="$WORK/active"
mkdir -p "$STORE" "$INDEX"
NET="faultline-e2e-$$"
IMAGE="faultline-e2e-$$/etcd:host"
SUBNET="10.77.75.0/24"
pid=""

cleanup() {
  local rc=$?
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null 2>&1 || true
  if [ -n "$DOCKERD_PID" ] && [ "$rc" -ne 0 ]; then
    for n in 1 2 3; do
      echo "== faultline-n$n: target logs" >&2
      docker exec "faultline-n$n" sh -c 'tail -n 20 /tmp/faultline-*/n*/*.log' >&2 2>/dev/null || true
    done
    tail -n 20 "$WORK/dockerd.log" >&2 || true
  fi
  docker_engine_stop
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

# --- a private engine ------------------------------------------------------
docker_engine_start "$WORK" || fail "the private docker engine did not start"
t_engine=$(date +%s)

# --- image, network, containers -------------------------------------------
# faultline copies the controller's raftkv and faultline-netdelay into the
# containers at setup; the image gets the libraries they load (libstdc++,
# libnetfilter_queue, ...) by carrying this build's copies too, libfaketime
# at the path the clock fault preloads, and etcd for the second run.
"$FAULTLINE_SOURCE_DIR/docker/build-images.sh" --build "$(dirname "$FAULTLINE_BIN")" \
  --prefix "faultline-e2e-$$" etcd >"$WORK/image.txt" 2>&1 ||
  { cat "$WORK/image.txt" >&2; fail "building the node image failed"; }
docker_image_made "$IMAGE"
t_image=$(date +%s)
docker_nodes_start "$IMAGE" "$NET" "$SUBNET" 3 || fail "the containers did not start"

# --- a full test over docker, with every fault kind ------------------------
# Seed 54 draws all five kinds in the first five steps
# (nemesis/schedule/schedule.h is deterministic per seed).
cat >"$WORK/docker.yaml" <<YAML
name: docker-register
time_limit: 25
recovery: 5
cluster: {nodes: 3, network: $NET}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 6, rate: 100}
nemesis: {faults: [partition, pause, kill, delay, clock], interval: 0.5, duration: 2.5, partitions: [one, leader, halves], delay_ms: 200, clock_offset_ms: 3600000}
YAML
"$FAULTLINE_BIN" run "$WORK/docker.yaml" --cluster docker --seed 54 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/run.txt" 2>&1 &
pid=$!
run="$STORE/docker-register/latest"
# While the clock fault is active: raftkv in the skewed container runs with
# libfaketime mapped, and `date` under its environment reads +1 h.
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock fault"
skewed_clock "$run"
[ "$off" -ge 3590 ] && [ "$off" -le 3610 ] || fail "date in faultline-$cnode under raftkv's environment is $off s off, expected +3600"
echo "clock +1 h on $cnode: date in the container reads ${off} s ahead"
set +e
wait "$pid"
rc=$?
set -e
pid=""
[ "$rc" -eq 0 ] || { tail -n 40 "$WORK/run.txt" >&2; fail "faultline run over docker exited $rc, expected 0 (valid)"; }
verdict=$(json_get "$run/results.json" "j['valid']")
[ "$verdict" = valid ] || fail "verdict is $verdict, expected valid"
validate_results "$run/results.json"
ok_ops=$(grep -c '"type":"ok"' "$run/history.jsonl" || true)
[ "$ok_ops" -ge 100 ] || fail "only $ok_ops ok operations"
parts=$(grep -c '"type":"info","f":"start-partition"' "$run/history.jsonl" || true)
[ "$parts" -ge 1 ] || fail "no partition was applied"
faults=$(grep -c '"type":"info","f":"start-' "$run/history.jsonl" || true)
faults_paired raftkv "$run" partition pause kill delay clock
# The delay ran in the containers: each delayed node's daemon held packets
# (its log, fetched from the container when it stopped).
for node in $(python3 -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('f')=='start-delay' and e.get('type')=='info': print(' '.join(e['value']['nodes']))" "$run/history.jsonl" | tr ' ' '\n' | sort -u); do
  held=$(sed -n 's/.*exiting; \([0-9]*\) packets delayed.*/\1/p' "$run/netdelay-$node.log" 2>/dev/null | tail -n 1)
  [ "${held:-0}" -gt 0 ] || fail "faultline-netdelay in faultline-$node delayed no packet"
  echo "delay on $node: $held packets held"
done
grep -q '"kind":"process".*"container":"faultline-n' "$run/ledger.jsonl" \
  || fail "no process entry for a container in the ledger"
# The partitions were real: the ledger holds iptables entries that name a
# container (kind docker), and the run healed and closed them.
grep -q '"kind":"iptables".*"container":"faultline-n' "$run/ledger.jsonl" \
  || fail "no iptables entry for a container in the ledger"
grep -q '"kind":"closed"' "$run/ledger.jsonl" \
  || { grep -i -A5 -E 'problem|warn|error' "$WORK/run.txt" >&2; fail "the run did not close its ledger"; }
# Nothing of the run is left in the containers (lib_docker.sh).
check_clean() {
  docker_nodes_clean "$1" 3 raftkv etcd faultline-netde || fail "$1: something of the run is left"
}
check_clean "after the run"
[ -s "$run/nodes/n1/raftkv.log" ] || fail "n1's raftkv log was not collected"
t_run=$(date +%s)

# --- etcd in the same containers: partitions, pauses and kills -------------
# Seed 7 draws kill, pause, partition in the first three steps (every
# config with three fault entries), all within the 12 s.
cat >"$WORK/etcd.yaml" <<YAML
name: docker-etcd
time_limit: 12
recovery: 3
cluster: {nodes: 3}
target: {name: etcd, binary: etcd}
workload: {name: register, keys: 4, concurrency: 6, rate: 100, op_timeout_ms: 1000}
nemesis: {faults: [partition, pause, kill], interval: 1, duration: 2, partitions: [one, leader, halves], targets: [one, leader]}
YAML
set +e
"$FAULTLINE_BIN" run "$WORK/etcd.yaml" --cluster docker --seed 7 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/etcd.txt" 2>&1
rc=$?
set -e
erun="$STORE/docker-etcd/latest"
[ "$rc" -eq 0 ] || { tail -n 40 "$WORK/etcd.txt" >&2; fail "the etcd run over docker exited $rc, expected 0 (valid)"; }
[ "$(json_get "$erun/results.json" "j['valid']")" = valid ] || fail "the etcd verdict is not valid"
validate_results "$erun/results.json"
etcd_ops=$(grep -c '"type":"ok"' "$erun/history.jsonl" || true)
[ "$etcd_ops" -ge 50 ] || fail "etcd: only $etcd_ops ok operations"
faults_paired etcd "$erun" partition pause kill
grep -q '"kind":"process".*"container":"faultline-n' "$erun/ledger.jsonl" ||
  fail "etcd: no process entry for a container in the ledger"
grep -q '"kind":"iptables".*"container":"faultline-n' "$erun/ledger.jsonl" ||
  fail "etcd: no iptables entry for a container in the ledger"
grep -q '"kind":"closed"' "$erun/ledger.jsonl" || fail "etcd: the run did not close its ledger"
check_clean "after the etcd run"
[ -s "$erun/nodes/n1/etcd.log" ] || fail "n1's etcd log was not collected"
t_etcd=$(date +%s)

# --- target process in the same containers ---------------------------------
# raftkv described in YAML (docs/targets/process.md): the image's raftkv
# started through the docker Remote, examples/raftkv/status.py uploaded to
# each container through `files` (braces doubled: the content is a
# template) and run there by the image's python3 as the status command, the
# Python exec client on the controller connecting to the containers'
# addresses. Seed 754 draws pause/one, kill/one, clock/one and
# partition/leader in the first four steps (the leader partition last: its
# leader lookup and heal are the slowest over docker exec).
# process_config NAME FAULTS DURATION TIME_LIMIT
process_config() {
  cat >"$WORK/$1.yaml" <<YAML
name: $1
time_limit: $4
recovery: 2
cluster: {nodes: 3, network: $NET}
$(process_raftkv_target raftkv)
workload: {name: register, keys: 4, concurrency: 4, rate: 60, op_timeout_ms: 1000}
nemesis: {faults: [$2], interval: 0.25, duration: $3, partitions: [leader, one], targets: [leader, one], clock_offset_ms: 30000}
YAML
}
process_config docker-process "partition, pause, kill, clock" 1 10
set +e
"$FAULTLINE_BIN" run "$WORK/docker-process.yaml" --cluster docker --seed 754 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/process.txt" 2>&1
rc=$?
set -e
prun="$STORE/docker-process/latest"
[ "$rc" -eq 0 ] || { tail -n 40 "$WORK/process.txt" >&2; fail "the process run over docker exited $rc, expected 0 (valid)"; }
[ "$(json_get "$prun/results.json" "j['valid']")" = valid ] || fail "the process verdict is not valid"
validate_results "$prun/results.json"
process_ops=$(grep -c '"type":"ok"' "$prun/history.jsonl" || true)
[ "$process_ops" -ge 50 ] || fail "process: only $process_ops ok operations"
faults_paired process "$prun" partition pause kill clock
# The leader partition found its leader through the status command.
grep -q '"f":"start-partition","value":{"kind":"partition","shape":"leader".*"leader_known":true' \
  "$prun/history.jsonl" || fail "process: no leader partition with a leader known from the status command"
grep -q '"kind":"process".*"container":"faultline-n' "$prun/ledger.jsonl" ||
  fail "process: no process entry for a container in the ledger"
grep -q '"kind":"closed"' "$prun/ledger.jsonl" || fail "process: the run did not close its ledger"
check_clean "after the process run"
[ -s "$prun/nodes/n1/server.log" ] || fail "n1's server log was not collected"
# The clock fault's processes preloaded the faketime shim copied into the
# containers, not the controller's path (ld.so would say so in their logs).
! grep -l "cannot be preloaded" "$prun"/nodes/*/server.log >&2 ||
  fail "process: a preloaded library is missing in the containers"
# A SIGKILLed controller during a partition and a clock fault: `faultline
# heal` stops the servers, removes the rules, the work directories and the
# libfaketime files the SIGKILLed servers left in /dev/shm.
process_config docker-process-kill "{together: [partition, clock]}" 600 600
"$FAULTLINE_BIN" run "$WORK/docker-process-kill.yaml" --cluster docker \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/out.txt" 2>&1 &
pid=$!
pkrun="$STORE/docker-process-kill/latest"
await_history "$pid" "$pkrun" '"type":"info","f":"start-clock"' "the process run's partition and clock"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
# The clock fault moved the skewed server's clock: `date` in its container,
# under that server's own libfaketime environment, reads +30 s.
skewed_clock "$pkrun"
[ "$off" -ge 25 ] && [ "$off" -le 35 ] ||
  fail "process: date under the skewed server's environment in faultline-$cnode is $off s off, expected +30"
echo "process: clock +30 s on $cnode: date under its server's environment reads $off s ahead"
drops=0
shm=0
for n in 1 2 3; do
  d=$(docker exec "faultline-n$n" iptables -S | grep -c DROP || true)
  drops=$((drops + d))
  d=$(docker exec "faultline-n$n" ls /dev/shm | grep -c faketime || true)
  shm=$((shm + d))
done
[ "$drops" -ge 1 ] || fail "process: no DROP rule in the containers before heal"
[ "$shm" -ge 1 ] || fail "process: no libfaketime file in the containers' /dev/shm before heal"
procs=$(docker exec faultline-n1 ps -eo comm= | grep -c raftkv || true)
[ "$procs" -ge 1 ] || fail "process: no raftkv running in faultline-n1 before heal"
"$FAULTLINE_BIN" heal "$pkrun" >"$WORK/heal.txt" 2>&1 ||
  { cat "$WORK/heal.txt" >&2; fail "faultline heal of the process run exited non-zero"; }
check_clean "after heal of the process run"
t_process=$(date +%s)

# --- SIGKILLed controller, then `faultline heal` ----------------------------
sed -e 's/^name: .*/name: docker-sigkill/' -e 's/^time_limit: .*/time_limit: 600/' \
  -e 's/^nemesis: .*/nemesis: {faults: [{together: [partition, delay]}], interval: 1, duration: 600, partitions: [halves], targets: [one]}/' \
  "$WORK/docker.yaml" >"$WORK/long.yaml"
"$FAULTLINE_BIN" run "$WORK/long.yaml" --cluster docker --store "$STORE" \
  --index-dir "$INDEX" >"$WORK/out.txt" 2>&1 &
pid=$!
krun="$STORE/docker-sigkill/latest"
await_history "$pid" "$krun" '"type":"info","f":"start-delay"' "the partition and delay"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
# Before healing, the leftovers are real (so the checks below can fail).
drops=0
queued=0
daemons=0
for n in 1 2 3; do
  d=$(docker exec "faultline-n$n" iptables -S | grep -c DROP || true)
  drops=$((drops + d))
  d=$(docker exec "faultline-n$n" iptables -S | grep -c NFQUEUE || true)
  queued=$((queued + d))
  d=$(docker exec "faultline-n$n" ps -eo comm= | grep -c faultline-netde || true)
  daemons=$((daemons + d))
done
[ "$drops" -ge 1 ] || fail "no DROP rule in the containers before heal"
[ "$queued" -ge 1 ] && [ "$daemons" -ge 1 ] ||
  fail "no delay in the containers before heal ($queued NFQUEUE rules, $daemons daemons)"
procs=$(docker exec faultline-n1 ps -eo comm= | grep -c raftkv || true)
[ "$procs" -ge 1 ] || fail "no raftkv running in faultline-n1 before heal"
"$FAULTLINE_BIN" heal "$krun" >"$WORK/heal.txt" 2>&1 \
  || { cat "$WORK/heal.txt" >&2; fail "faultline heal exited non-zero"; }
check_clean "after heal"
t_heal=$(date +%s)

# --- docker failures are errors, not answers -------------------------------
docker stop -t 1 faultline-n3 >/dev/null
set +e
"$FAULTLINE_BIN" run "$WORK/docker.yaml" --cluster docker --time-limit 5 \
  --store "$STORE" --index-dir "$INDEX" >"$WORK/stopped.txt" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a run with a stopped container exited 0"
grep -q "faultline-n3 is not running" "$WORK/stopped.txt" \
  || { cat "$WORK/stopped.txt" >&2; fail "the stopped container was not named"; }

# --- the disk faults in containers that take FUSE ---------------------------
# faultline-lazyfs copied into the containers and mounted over each data
# directory (the image has libfuse3, umount and tar when this build has
# faultline-lazyfs). Containers without /dev/fuse are refused (254, the node
# named); then the containers are made again with /dev/fuse and
# SYS_ADMIN, a 6 s raftkv run with power-loss of a majority is valid with
# every loss restored and some held write dropped, and no mount or daemon
# is left; then a controller SIGKILLed during a power loss is healed.
LAZYFS="$(dirname "$FAULTLINE_BIN")/faultline-lazyfs"
# lazyfs_in_containers: faultline-lazyfs mounts and live daemons, summed
# over the three containers.
lazyfs_in_containers() {
  local n m=0 d=0
  for n in 1 2 3; do
    m=$((m + $(docker exec "faultline-n$n" cat /proc/self/mounts | grep -c ' fuse.faultline-lazyfs ' || true)))
    d=$((d + $(docker exec "faultline-n$n" ps -eo stat=,comm= | awk '$1 !~ /^Z/ && $2 == "faultline-lazyf"' | wc -l)))
  done
  echo "$m $d"
}
if [ -x "$LAZYFS" ] && [ -c /dev/fuse ]; then
  cat >"$WORK/disk.yaml" <<YAML
name: docker-disk
time_limit: 6
recovery: 2
cluster: {nodes: 3, network: $NET}
target: {name: raftkv}
workload: {name: register, keys: 3, concurrency: 4, rate: 60, op_timeout_ms: 1000}
nemesis: {faults: [power-loss], interval: 1, duration: 1, targets: [majority]}
YAML
  # The containers made without /dev/fuse: refused before anything starts.
  docker start faultline-n3 >/dev/null
  set +e
  "$FAULTLINE_BIN" run "$WORK/disk.yaml" --cluster docker \
    --store "$STORE" --index-dir "$INDEX" >"$WORK/nofuse.txt" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 254 ] || { tail -n 20 "$WORK/nofuse.txt" >&2; fail "disk faults in containers without /dev/fuse exited $rc, expected 254"; }
  grep -q "n1 has no /dev/fuse" "$WORK/nofuse.txt" ||
    { cat "$WORK/nofuse.txt" >&2; fail "the refusal does not name n1 and /dev/fuse"; }
  check_clean "after the refused disk run"
  for n in 1 2 3; do
    docker rm -f "faultline-n$n" >/dev/null
    docker run -d --init --name "faultline-n$n" --hostname "n$n" --network "$NET" \
      --cap-add NET_ADMIN --cap-add SYS_ADMIN --device /dev/fuse "$IMAGE" >/dev/null ||
      fail "docker run faultline-n$n with /dev/fuse failed"
  done
  set +e
  "$FAULTLINE_BIN" run "$WORK/disk.yaml" --cluster docker --seed 5 \
    --store "$STORE" --index-dir "$INDEX" >"$WORK/disk.txt" 2>&1
  rc=$?
  set -e
  drun="$STORE/docker-disk/latest"
  [ "$rc" -eq 0 ] || { tail -n 40 "$WORK/disk.txt" >&2; fail "the disk run over docker exited $rc, expected 0 (valid)"; }
  [ "$(json_get "$drun/results.json" "j['valid']")" = valid ] || fail "the disk run's verdict is not valid"
  validate_results "$drun/results.json"
  faults_paired disk "$drun" power-loss
  dropped=$("$PY" -c "import json,sys
t=0
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('type')=='info' and e.get('f')=='start-power-loss':
        t+=sum(n['dropped_writes'] for n in e['value']['disk'].values())
print(t)" "$drun/history.jsonl")
  [ "$dropped" -gt 0 ] || fail "disk: no power loss dropped a write"
  all_healed "$drun" mount || fail "disk: mount entries not all healed"
  [ "$(lazyfs_in_containers)" = "0 0" ] || fail "disk: mounts and daemons left: $(lazyfs_in_containers)"
  check_clean "after the disk run"
  sed -e 's/^name: .*/name: docker-disk-kill/' -e 's/^time_limit: .*/time_limit: 600/' \
    -e 's/duration: 1,/duration: 600,/' "$WORK/disk.yaml" >"$WORK/disk-kill.yaml"
  "$FAULTLINE_BIN" run "$WORK/disk-kill.yaml" --cluster docker --store "$STORE" \
    --index-dir "$INDEX" >"$WORK/out.txt" 2>&1 &
  pid=$!
  dkrun="$STORE/docker-disk-kill/latest"
  await_history "$pid" "$dkrun" '"type":"info","f":"start-power-loss"' "the power loss"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  before=$(lazyfs_in_containers)
  [ "$before" = "3 3" ] || fail "disk: expected 3 mounts and 3 daemons before heal, got $before"
  "$FAULTLINE_BIN" heal "$dkrun" >"$WORK/heal.txt" 2>&1 ||
    { cat "$WORK/heal.txt" >&2; fail "faultline heal of the disk run exited non-zero"; }
  [ "$(lazyfs_in_containers)" = "0 0" ] || fail "disk: after heal: $(lazyfs_in_containers)"
  check_clean "after heal of the disk run"
  echo "disk: $dropped writes dropped by power losses; heal after SIGKILL removed 3 mounts"
else
  echo "disk: skipped (no $LAZYFS or no /dev/fuse)"
fi
t_disk=$(date +%s)

# --- the Redis and ZooKeeper images build here and their programs start ---
# (scripts/nightly-docker.sh runs them for real; this keeps CI short.)
"$FAULTLINE_SOURCE_DIR/docker/build-images.sh" --build "$(dirname "$FAULTLINE_BIN")" \
  --prefix "faultline-e2e-$$" redis zookeeper >"$WORK/images.txt" 2>&1 ||
  { cat "$WORK/images.txt" >&2; fail "building the redis and zookeeper images failed"; }
docker_image_made "faultline-e2e-$$/redis:host"
docker_image_made "faultline-e2e-$$/zookeeper:host"
out=$(docker run --rm "faultline-e2e-$$/redis:host" redis-sentinel --version 2>&1) ||
  fail "redis-sentinel does not run in the redis image: $out"
case "$out" in "Redis server v=7"*) ;; *) fail "redis image: unexpected version '$out'" ;; esac
# QuorumPeerMain with a missing config: the JRE, ZooKeeper's jars and the
# slf4j binding load, and it says so before it exits.
out=$(docker run --rm "faultline-e2e-$$/zookeeper:host" java -Xmx64m \
  -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar:/usr/share/java/servlet-api.jar \
  org.apache.zookeeper.server.quorum.QuorumPeerMain /nonexistent.cfg 2>&1 || true)
grep -q "Invalid config, exiting abnormally" <<<"$out" ||
  fail "ZooKeeper does not start in the zookeeper image: $(tail -n 5 <<<"$out")"
t_images=$(date +%s)

echo "e2e_docker: ok (engine $((t_engine - t0)) s, image $((t_image - t_engine)) s," \
  "run $((t_run - t_image)) s: $ok_ops ok ops, $faults faults ($parts partitions);" \
  "etcd $((t_etcd - t_run)) s: $etcd_ops ok ops;" \
  "process $((t_process - t_etcd)) s: $process_ops ok ops;" \
  "sigkill+heal $((t_heal - t_process)) s; disk $((t_disk - t_heal)) s;" \
  "redis+zookeeper images $((t_images - t_disk)) s; total $(( $(date +%s) - t0 )) s)"

#!/usr/bin/env bash
# Whole faultline runs over SSH (provider ssh) against three netns nodes
# (10.77.70.0/24) that each run their own sshd in their own mount namespace
# with a private tmpfs as the nodes' work_dir (tests/lib_ssh.sh), so every
# file a target or fault needs on a node must travel through the Remote:
#  a. a raftkv register run as root over SSH with partition, pause, kill,
#     loss and clock faults: exit 0, results.json valid, every fault kind
#     applied and healed, the nodes' iptables empty and work dirs gone;
#  b. the same with a delay fault too, as a non-root user with passwordless
#     sudo (user, sudoers.d file created here and removed at the end): the
#     faultline-netdelay copied to the nodes held packets (its log, fetched
#     from the node, counts them) and was stopped at the heal;
#  c. SIGKILL of the controller during a partition together with a delay,
#     and during a pause: `faultline heal RUN` (replaying the ledger over
#     SSH) leaves no iptables rule on any node, no stopped process, no
#     raftkv or faultline-netdelay process and no node work dir;
#  a2. a run whose SSH key no node accepts is refused: exit 254, no run
#     directory kept, `latest` unchanged;
#  d. etcd (the host's, which the nodes see) over SSH, 8 s with a partition
#     and a kill: valid, its log fetched, nothing left on the nodes;
#  e. `target: process` over SSH: raftkv described in YAML, its status
#     script uploaded by `files` and run on the nodes, the Python exec
#     client on the controller, 10 s with pause, kill, clock (libfaketime
#     through the process's `faults`) and a leader partition found through
#     the status command: valid, every kind applied and healed, nothing left
#     on the nodes (about 19 s); then SIGKILL of the controller during a
#     partition and `faultline heal RUN` (about 6 s);
#  f. the disk faults over SSH: faultline-lazyfs uploaded to the nodes and
#     mounted over each data directory inside the node's mount namespace,
#     a raftkv register run of 10 s with power-loss of a majority: valid,
#     every power loss applied and restored and some held write dropped,
#     the mount entries healed, no lazy file system mounted and no daemon
#     left on any node (about 20 s); then SIGKILL of the controller during a
#     power loss and `faultline heal RUN`: the mounts and daemons seen
#     before the heal are gone after it (about 7 s).
# Needs root, openssh-server, sudo, libfaketime, python3, and raftkv and
# faultline-netdelay next to faultline; d needs etcd, f faultline-lazyfs
# next to faultline and /dev/fuse (each skipped without).
# About 135 s (80 s before e, 105 s before f).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ssh.sh"
require_root
require_tool python3
require_tool sudo
require_tool useradd
LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -r "$LIB" ] || fail "this test needs libfaketime ($LIB; apt-get install libfaketime)"
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"
[ -x "$bindir/faultline-netdelay" ] || fail "this test needs faultline-netdelay next to faultline (libnetfilter-queue-dev; scripts/build.sh)"

TUSER=flsshe2e
SUDOERS=/etc/sudoers.d/faultline-e2e-ssh
id "$TUSER" >/dev/null 2>&1 && fail "user $TUSER exists already (a previous run?)"
[ -e "$SUDOERS" ] && fail "$SUDOERS exists already (a previous run?)"

setup_workdir
NODEFS="$WORK/nodefs"
pid=""
made_user=0
cleanup_all() {
  local keep=$?
  set +e  # clean up everything even after a failure
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  # Heal over SSH while the nodes' sshd still run, then take them down.
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null 2>&1 || true
  ssh_kill_in_nodes raftkv
  ssh_nodes_down
  rm -f "$SUDOERS"
  if [ "$made_user" = 1 ]; then userdel "$TUSER" 2>/dev/null || true; fi
  (exit $keep)
  cleanup_workdir
}
trap cleanup_all EXIT

start_all=$(date +%s)
ssh_nodes_up flsr 10.77.70 3 "$WORK" "$NODEFS"

# write_config NAME USER SUDO FAULTS DURATION TIME_LIMIT
write_config() {
  cat >"$WORK/$1.yaml" <<YAML
name: $1
time_limit: $6
recovery: 2
cluster:
  provider: ssh
  nodes:
    - {name: n1, address: ${SSH_ADDR[0]}}
    - ${SSH_ADDR[1]}
    - ${SSH_ADDR[2]}
  user: $2
  sudo: $3
  key: $SSH_KEY
  known_hosts: $SSH_KNOWN_HOSTS
  host_key_policy: accept-new
  controller_ip: $SSH_BRIDGE_ADDR
  work_dir: $NODEFS
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 4, rate: 60, op_timeout_ms: 2000}
nemesis:
  faults: [$4]
  interval: 1
  duration: $5
  partitions: [halves, one]
  targets: [one]
  loss_probability: 0.5
  delay_ms: 200
  clock_offset_ms: 30000
YAML
}

# node_procs I COMM: how many processes named COMM (15 characters at most)
# run in node I's namespace.
node_procs() {
  local p n=0
  for p in $(ip netns pids "${SSH_NS[$1]}"); do
    grep -qx "$2" "/proc/$p/comm" 2>/dev/null && n=$((n + 1))
  done
  echo "$n"
}

# assert_nodes_clean RUN: no iptables rule in any node, no stopped or
# running raftkv or faultline-netdelay, no run directory in any node's
# private work_dir.
assert_nodes_clean() {
  local run="$1" i rules left stopped
  for i in 0 1 2; do
    rules=$(ip netns exec "${SSH_NS[$i]}" iptables -S | grep -c -- '^-A\|^-N' || true)
    [ "$rules" -eq 0 ] || { ip netns exec "${SSH_NS[$i]}" iptables -S; fail "$rules iptables rules left on ${SSH_NS[$i]}"; }
    left=$(node_sh "$i" ls -A "$NODEFS")
    [ -z "$left" ] || fail "node ${SSH_NS[$i]} still has $left in its work_dir"
  done
  for i in 0 1 2; do
    for p in $(ip netns pids "${SSH_NS[$i]}"); do
      if grep -qx raftkv "/proc/$p/comm" 2>/dev/null; then
        fail "raftkv pid $p ($(awk '{print $3}' "/proc/$p/stat")) left on ${SSH_NS[$i]}"
      fi
    done
    [ "$(node_procs "$i" faultline-netde)" -eq 0 ] || fail "faultline-netdelay left on ${SSH_NS[$i]}"
  done
  stopped=$(for i in 0 1 2; do for p in $(ip netns pids "${SSH_NS[$i]}"); do
    awk '{print $3}' "/proc/$p/stat" 2>/dev/null; done; done | grep -c '^T' || true)
  [ "$stopped" -eq 0 ] || fail "$stopped stopped processes left on the nodes"
}

# run_valid NAME SEED: runs NAME.yaml to the end; exit 0 and a valid
# verdict. Seed 121 schedules run a's five fault kinds in the first five
# steps, seed 65 run b's six in the first six (nemesis/schedule/schedule.h is
# deterministic per seed).
run_valid() {
  local t0 rc run
  t0=$(date +%s%N)
  set +e
  "$FAULTLINE_BIN" run "$WORK/$1.yaml" --store "$STORE" --index-dir "$INDEX" \
    --seed "$2" >"$WORK/out-$1.txt" 2>&1
  rc=$?
  set -e
  run="$STORE/$1/latest"
  [ "$rc" -eq 0 ] || { tail -40 "$WORK/out-$1.txt"; fail "run $1 exited $rc"; }
  validate_results "$run/results.json"
  [ "$(json_get "$run/results.json" "j['valid']")" = valid ] ||
    { cat "$run/results.json"; fail "run $1 is not valid"; }
  echo "$1: valid in $((($(date +%s%N) - t0) / 1000000)) ms, $(grep -c '"type":"ok"' "$run/history.jsonl") ok ops, phases $(json_get "$run/results.json" "' '.join('%s %.1fs' % (p['name'], p['seconds']) for p in j['phases'])")"
}

# faults_seen RUN: the fault kinds started in RUN, sorted, space-separated.
faults_seen() {
  python3 -c "import json,sys
k=set()
for l in open(sys.argv[1]):
    e=json.loads(l)
    f=e.get('f','')
    if e.get('type')=='info' and f.startswith('start-'): k.add(f[6:])
print(' '.join(sorted(k)))" "$1/history.jsonl"
}

# ---- a: root over SSH --------------------------------------------------------
write_config ssh-root root false "partition, pause, kill, loss, clock" 2 18
run_valid ssh-root 121
run="$STORE/ssh-root/latest"
seen=$(faults_seen "$run")
[ "$seen" = "clock kill loss partition pause" ] || fail "run a applied only: $seen"
starts=$(grep -c '"type":"info","f":"start-' "$run/history.jsonl")
stops=$(grep -c '"type":"info","f":"stop-' "$run/history.jsonl")
[ "$starts" -eq "$stops" ] || fail "$starts faults started but $stops healed"
grep -q '"f":"stop-clock"' "$run/history.jsonl" || fail "the clock fault was never healed"
# Node files (binary copy, data, logs, faketime files) went to the nodes'
# private tmpfs through SSH: the controller's view of work_dir stays empty.
[ -z "$(ls -A "$NODEFS")" ] || fail "files on the controller in $NODEFS: $(ls -A "$NODEFS")"
grep -q '"remote":{' "$run/ledger.jsonl" || fail "no ledger entry carries a remote descriptor"
assert_nodes_clean "$run"
[ -s "$run/nodes/n1/raftkv.log" ] || fail "n1's raftkv.log was not downloaded"
echo "PASS a: root over SSH, faults: $seen"

# ---- a2: SSH authentication fails: refused, exit 254, nothing kept ----------
# Same test name as run a, with a key no node accepts: the run is refused
# before its cluster exists, keeps no run directory and leaves `latest`
# pointing at run a.
ssh-keygen -q -t ed25519 -N '' -f "$WORK/wrong_key"
sed -e "s|^  key: .*|  key: $WORK/wrong_key|" "$WORK/ssh-root.yaml" >"$WORK/ssh-wrongkey.yaml"
latest_before=$(readlink -f "$STORE/ssh-root/latest")
runs_before=$(ls "$STORE/ssh-root" | wc -l)
set +e
"$FAULTLINE_BIN" run "$WORK/ssh-wrongkey.yaml" --store "$STORE" --index-dir "$INDEX" >"$WORK/out-wrongkey.txt" 2>&1
rc=$?
set -e
[ "$rc" -eq 254 ] || { cat "$WORK/out-wrongkey.txt"; fail "a run whose SSH authentication fails exited $rc, expected 254"; }
grep -q "refused" "$WORK/out-wrongkey.txt" || { cat "$WORK/out-wrongkey.txt"; fail "the refusal does not say refused"; }
grep -q "no run directory was kept" "$WORK/out-wrongkey.txt" || { cat "$WORK/out-wrongkey.txt"; fail "the refusal does not say nothing was kept"; }
[ "$(readlink -f "$STORE/ssh-root/latest")" = "$latest_before" ] || fail "a refused run moved latest"
[ "$(ls "$STORE/ssh-root" | wc -l)" -eq "$runs_before" ] || fail "a refused run kept a run directory"
assert_nodes_clean "$STORE/ssh-root/latest"
echo "PASS a2: SSH authentication failed: exit 254, nothing kept ($(grep refused "$WORK/out-wrongkey.txt" | head -1 | cut -c1-160))"

# ---- b: a non-root user with sudo ---------------------------------------------
useradd -M -s /bin/sh -d /nonexistent "$TUSER"
made_user=1
usermod -p '*' "$TUSER"  # no password, but not locked (sshd with UsePAM no)
echo "$TUSER ALL=(ALL) NOPASSWD: ALL" >"$SUDOERS"
chmod 440 "$SUDOERS"
write_config ssh-sudo "$TUSER" true "partition, pause, kill, loss, clock, delay" 1.5 19
run_valid ssh-sudo 65
run="$STORE/ssh-sudo/latest"
grep -q "\"user\":\"$TUSER\"" "$run/ledger.jsonl" || fail "ledger entries do not name $TUSER"
grep -q '"sudo":true' "$run/ledger.jsonl" || fail "ledger entries do not say sudo"
assert_nodes_clean "$run"
seen=$(faults_seen "$run")
[ "$seen" = "clock delay kill loss partition pause" ] || fail "run b applied only: $seen"
# The delay ran on the nodes: each delayed node's daemon (its log fetched
# from the node when it stopped) held packets, and the heal named it.
delayed=$(python3 -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('type')=='info' and e.get('f') in ('start-delay','stop-delay'):
        v=e['value']; print(e['f'], ' '.join(v.get('nodes', v.get('healed', []))))" "$run/history.jsonl")
started=$(sed -n 's/^start-delay //p' <<<"$delayed")
[ -n "$started" ] && [ "$(sed -n 's/^stop-delay //p' <<<"$delayed")" = "$started" ] ||
  fail "delay events do not start and heal the same nodes: $delayed"
for node in $started; do
  held=$(sed -n 's/.*exiting; \([0-9]*\) packets delayed.*/\1/p' "$run/netdelay-$node.log" 2>/dev/null | tail -n 1)
  [ "${held:-0}" -gt 0 ] || fail "faultline-netdelay on $node delayed no packet: $(cat "$run/netdelay-$node.log" 2>&1)"
  echo "  delay on $node: $held packets held"
done
echo "PASS b: $TUSER with sudo, faults: $seen"

# ---- c: SIGKILLed controller, then faultline heal over SSH -------------------
# kill_then_heal NAME FAULT(S) LAST [WRITER]: LAST is the kind started last;
# WRITER (default write_config) writes NAME.yaml as write_config would.
kill_then_heal() {
  local name="$1" faults="$2" last="$3" writer="${4:-write_config}" run
  "$writer" "$name" root false "$faults" 600 600
  "$FAULTLINE_BIN" run "$WORK/$name.yaml" --store "$STORE" --index-dir "$INDEX" \
    >"$WORK/out.txt" 2>&1 &
  pid=$!
  run="$STORE/$name/latest"
  await_history "$pid" "$run" "\"type\":\"info\",\"f\":\"start-$last\"" "the $last"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  # Before the heal the faults are really there (so the test can fail).
  local i rules=0 queued=0 stopped=0 daemons=0
  for i in 0 1 2; do
    rules=$((rules + $(ip netns exec "${SSH_NS[$i]}" iptables -S | grep -c -- '-j DROP' || true)))
    queued=$((queued + $(ip netns exec "${SSH_NS[$i]}" iptables -S | grep -c -- '-j NFQUEUE' || true)))
    daemons=$((daemons + $(node_procs "$i" faultline-netde)))
    for p in $(ip netns pids "${SSH_NS[$i]}"); do
      [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ] && stopped=$((stopped + 1))
    done
  done
  case "$faults" in
    *partition*)
      [ "$rules" -ge 1 ] || fail "no DROP rule on the nodes before heal"
      case "$faults" in
        *delay*)
          [ "$queued" -ge 1 ] && [ "$daemons" -ge 1 ] ||
            fail "no delay on the nodes before heal ($queued NFQUEUE rules, $daemons daemons)" ;;
      esac ;;
    *) [ "$stopped" -ge 1 ] || fail "no stopped process on the nodes before heal" ;;
  esac
  [ -n "$(node_sh 0 ls -A "$NODEFS")" ] || fail "no run directory on n1 before heal"
  "$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "heal exited $?"; }
  assert_nodes_clean "$run"
  "$FAULTLINE_BIN" heal "$run" >/dev/null || fail "second heal failed"
  echo "PASS c ($name): SIGKILL during $faults ($rules DROP + $queued NFQUEUE rules, $daemons netdelay, $stopped stopped), heal: $(grep -c . "$WORK/heal.txt") actions"
}
kill_then_heal ssh-kill-partition "{together: [partition, delay]}" delay
kill_then_heal ssh-kill-pause pause pause

# ---- d: etcd over SSH ----------------------------------------------------------
# The nodes see the host's etcd (only work_dir is private to each node):
# its data directories go to the nodes' tmpfs through SSH, and the run is
# valid with a partition and a kill.
if command -v etcd >/dev/null 2>&1; then
  sed -e 's/^name: .*/name: ssh-etcd/' -e 's/^time_limit: .*/time_limit: 8/' \
    -e 's/^target: .*/target: {name: etcd, pre_vote: true}/' \
    -e 's/^workload: .*/workload: {name: register, keys: 4, concurrency: 4, rate: 60, op_timeout_ms: 1000}/' \
    -e 's/^  faults: .*/  faults: [partition, kill]/' "$WORK/ssh-root.yaml" >"$WORK/ssh-etcd.yaml"
  run_valid ssh-etcd 3
  run="$STORE/ssh-etcd/latest"
  seen=$(faults_seen "$run")
  [ "$seen" = "kill partition" ] || fail "run d applied only: $seen"
  assert_nodes_clean "$run"
  for i in 0 1 2; do
    [ "$(node_procs "$i" etcd)" -eq 0 ] || fail "etcd left on ${SSH_NS[$i]}"
  done
  [ -s "$run/nodes/n1/etcd.log" ] || fail "n1's etcd.log was not downloaded"
  echo "PASS d: etcd over SSH, faults: $seen"
else
  echo "SKIP d: no etcd on this machine (Debian etcd-server)"
fi

# ---- e: target process over SSH ------------------------------------------------
# raftkv described in YAML (docs/targets/process.md) instead of the built-in
# adapter: the server from the controller's build directory (the nodes see
# the host's files outside work_dir), examples/raftkv/status.py uploaded to
# each node through `files` (braces doubled: the content is a template) and
# run there as the status command, the Python exec client on the
# controller. Seed 754 draws pause/one, kill/one, clock/one and
# partition/leader in the first four steps.
write_process_config() {  # as write_config: NAME USER SUDO FAULTS DURATION TIME_LIMIT
  write_config "$@"
  local tmp="$WORK/$1.yaml.tmp"
  sed -e '/^target: /,$d' "$WORK/$1.yaml" >"$tmp"
  cat >>"$tmp" <<YAML
$(process_raftkv_target $bindir/raftkv)
workload: {name: register, keys: 4, concurrency: 4, rate: 60, op_timeout_ms: 1000}
nemesis:
  faults: [$4]
  interval: 0.25
  duration: $5
  partitions: [leader, one]
  targets: [leader, one]
  clock_offset_ms: 30000
YAML
  mv "$tmp" "$WORK/$1.yaml"
}
write_process_config ssh-process root false "partition, pause, kill, clock" 1 10
run_valid ssh-process 754
run="$STORE/ssh-process/latest"
seen=$(faults_seen "$run")
[ "$seen" = "clock kill partition pause" ] || fail "run e applied only: $seen"
starts=$(grep -c '"type":"info","f":"start-' "$run/history.jsonl")
stops=$(grep -c '"type":"info","f":"stop-' "$run/history.jsonl")
[ "$starts" -eq "$stops" ] || fail "e: $starts faults started but $stops healed"
# The leader partition found its leader through the status command.
grep -q '"f":"start-partition","value":{"kind":"partition","shape":"leader".*"leader_known":true' \
  "$run/history.jsonl" || fail "e: no leader partition with a leader known from the status command"
assert_nodes_clean "$run"
[ -s "$run/nodes/n1/server.log" ] || fail "n1's server.log was not downloaded"
echo "PASS e: target process over SSH, faults: $seen"
kill_then_heal ssh-process-kill partition partition write_process_config

# ---- f: power loss over SSH ------------------------------------------------------
# The disk faults' file system (faultline-lazyfs, docs/disk-faults.md) over
# each node's data directory: the daemon uploaded to every node, mounted in
# the node's own mount namespace (over its private tmpfs), a majority's
# power lost and restored; raftkv fsyncs, so the run stays valid. Then the
# controller is SIGKILLed while a power loss is in force and `faultline
# heal` unmounts the file systems and kills the daemons over SSH.
LAZYFS="$bindir/faultline-lazyfs"
# node_lazyfs_mounts I: node I's faultline-lazyfs mount points under its
# work_dir (the node's mount namespace also holds copies of the host's
# mounts from when it was made, other tests' among them).
node_lazyfs_mounts() {
  node_sh "$1" cat /proc/self/mounts |
    awk -v p="$NODEFS/" '$3 == "fuse.faultline-lazyfs" && index($2, p) == 1 {print $2}'
}
# assert_no_lazyfs: no lazy file system mounted and no daemon on any node.
assert_no_lazyfs() {
  local i m
  for i in 0 1 2; do
    m=$(node_lazyfs_mounts "$i")
    [ -z "$m" ] || fail "$1: faultline-lazyfs still mounted on ${SSH_NS[$i]}: $m"
    [ "$(node_procs "$i" faultline-lazyf)" -eq 0 ] || fail "$1: faultline-lazyfs left on ${SSH_NS[$i]}"
  done
}
write_disk_config() {  # as write_config: NAME USER SUDO FAULTS DURATION TIME_LIMIT
  write_config "$@"
  sed -i -e 's/^  targets: .*/  targets: [majority]/' \
    -e 's/^workload: .*/workload: {name: register, keys: 3, concurrency: 4, rate: 60, op_timeout_ms: 1000}/' \
    "$WORK/$1.yaml"
}
if [ -x "$LAZYFS" ] && [ -c /dev/fuse ]; then
  write_disk_config ssh-disk root false power-loss 1 10
  run_valid ssh-disk 5
  run="$STORE/ssh-disk/latest"
  starts=$(grep -c '"type":"info","f":"start-power-loss"' "$run/history.jsonl" || true)
  stops=$(grep -c '"type":"info","f":"stop-power-loss"' "$run/history.jsonl" || true)
  [ "$starts" -ge 1 ] || fail "f: no power loss applied"
  [ "$starts" -eq "$stops" ] || fail "f: $starts power losses but $stops restored"
  [ "$(ledger_values "$run/ledger.jsonl" mount name | wc -l)" -eq 3 ] || fail "f: expected 3 mount entries"
  all_healed "$run" mount || fail "f: mount entries not all healed"
  all_healed "$run" disk || fail "f: disk entries not all healed"
  assert_no_lazyfs f
  assert_nodes_clean "$run"
  # The daemons' logs (empty unless something went wrong) came back.
  for n in n1 n2 n3; do
    [ -e "$run/lazyfs-$n.log" ] || fail "f: $n's lazyfs log was not downloaded"
  done
  # The nodes' file systems held writes, and the power losses dropped some.
  dropped=$(python3 -c "import json,sys
t=0
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('type')=='info' and e.get('f')=='start-power-loss':
        t+=sum(n['dropped_writes'] for n in e['value']['disk'].values())
print(t)" "$run/history.jsonl")
  [ "$dropped" -gt 0 ] || fail "f: no power loss dropped a write"
  echo "PASS f: power loss over SSH, $starts applied and restored, $dropped writes dropped"

  # SIGKILL during a (long) power loss, then heal over SSH.
  write_disk_config ssh-disk-kill root false power-loss 600 600
  "$FAULTLINE_BIN" run "$WORK/ssh-disk-kill.yaml" --store "$STORE" --index-dir "$INDEX" \
    >"$WORK/out.txt" 2>&1 &
  pid=$!
  run="$STORE/ssh-disk-kill/latest"
  await_history "$pid" "$run" '"type":"info","f":"start-power-loss"' "the power loss"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
  mounted=0 daemons=0
  for i in 0 1 2; do
    mounted=$((mounted + $(node_lazyfs_mounts "$i" | wc -l)))
    daemons=$((daemons + $(node_procs "$i" faultline-lazyf)))
  done
  [ "$mounted" -eq 3 ] && [ "$daemons" -eq 3 ] ||
    fail "f: expected 3 mounts and 3 daemons on the nodes before heal, got $mounted and $daemons"
  "$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "f: heal exited $?"; }
  assert_no_lazyfs "f heal"
  assert_nodes_clean "$run"
  "$FAULTLINE_BIN" heal "$run" >/dev/null || fail "f: second heal failed"
  echo "PASS f (ssh-disk-kill): SIGKILL during a power loss ($mounted mounts, $daemons daemons), heal: $(grep -c . "$WORK/heal.txt") actions"
else
  echo "SKIP f: no $LAZYFS (libfuse3-dev) or no /dev/fuse"
fi

echo "PASS: e2e_ssh_run in $(($(date +%s) - start_all)) s"

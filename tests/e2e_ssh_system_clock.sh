#!/usr/bin/env bash
# System-clock faults (nemesis.clock_mode: system, docs/faults.md "System
# clocks") over SSH against three netns nodes (10.77.94.0/24) that each run
# their own sshd (tests/lib_ssh.sh). The nodes share THIS machine's kernel,
# so the faults really step this machine's CLOCK_REALTIME: every step is
# <= 3 s and lasts a few seconds, and the EXIT trap puts the clock back to
# the baseline measured at the start whatever happened.
#  a. bump: a raftkv run with one clock fault (+3000 ms): while it is
#     active, REALTIME - MONOTONIC measured on a node over SSH is the
#     baseline + 3 s; the history says all three nodes moved (one kernel),
#     and that the controller's clock moved; after the run the offset is
#     back within 20 ms;
#  b. strobe: flips of 200 ms every 100 ms on the node, recorded in
#     stop-strobe; back within 20 ms after the run;
#  c. SIGKILL of the controller during a bump: the clock stays moved, then
#     `faultline heal RUN` (ledger `sysclock` entry over SSH) restores it
#     within 20 ms and removes the node's run directory.
# Needs root, openssh-server, python3, and raftkv and faultline-clock next
# to faultline. About 35 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ssh.sh"
require_root
require_tool python3
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"
[ -x "$bindir/faultline-clock" ] || fail "this test needs faultline-clock next to faultline; build it (scripts/build.sh)"
setup_workdir
NODEFS="$WORK/nodefs"
pid=""
# REALTIME - MONOTONIC here, in ns; and a reset to a given value of it.
cat >"$WORK/clock.py" <<'PY'
import ctypes, sys, time
def off():
    m1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    r = time.clock_gettime_ns(time.CLOCK_REALTIME)
    m2 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    return r - (m1 + m2) // 2
if len(sys.argv) == 1:
    print(off())
else:  # restore BASELINE_NS when more than 1 ms away
    base = int(sys.argv[1])
    if abs(off() - base) > 1_000_000:
        class TS(ctypes.Structure):
            _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + base
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        if libc.clock_settime(0, ctypes.byref(TS(t // 10**9, t % 10**9))) != 0:
            sys.exit("clock_settime failed")
        print("restored the clock by %d ms" % ((base - (off())) // 10**6), file=sys.stderr)
PY
BASE=$("$PY" "$WORK/clock.py")
cleanup_all() {
  local keep=$?
  set +e  # clean up everything even after a failure
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null 2>&1 || true
  "$PY" "$WORK/clock.py" "$BASE"  # whatever happened, the clock goes back
  ssh_kill_in_nodes 'raftkv\|faultline-clock'
  ssh_nodes_down
  (exit $keep)
  cleanup_workdir
}
trap cleanup_all EXIT

start_all=$(date +%s)
ssh_nodes_up flsc 10.77.94 3 "$WORK" "$NODEFS"

# node_offset I: REALTIME - MONOTONIC on node I, read there over SSH (ns).
node_offset() {
  ssh -q -i "$SSH_KEY" -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" \
    -o StrictHostKeyChecking=accept-new -o BatchMode=yes \
    "root@${SSH_ADDR[$1]}" "$PY" - <"$WORK/clock.py"
}
# ms_off I: node I's offset from the baseline, in ms (rounded).
ms_off() {
  local o
  o=$(node_offset "$1") || fail "cannot read the clock of node $1 over SSH"
  echo $(((o - BASE) / 1000000))
}
# assert_back WHAT: every node within 20 ms of the baseline; sets BACK_US
# to the largest distance seen (µs).
assert_back() {
  local i o
  BACK_US=0
  for i in 0 1 2; do
    o=$(node_offset "$i")
    o=$((o - BASE))
    [ "${o#-}" -le 20000000 ] || fail "$1: node $i is $((o / 1000)) us off its baseline"
    [ $((${o#-} / 1000)) -gt "$BACK_US" ] && BACK_US=$((${o#-} / 1000))
  done
  return 0
}

# write_config NAME FAULT DURATION TIME_LIMIT
write_config() {
  cat >"$WORK/$1.yaml" <<YAML
name: $1
time_limit: $4
recovery: 1
cluster:
  provider: ssh
  nodes: [${SSH_ADDR[0]}, ${SSH_ADDR[1]}, ${SSH_ADDR[2]}]
  user: root
  key: $SSH_KEY
  known_hosts: $SSH_KNOWN_HOSTS
  host_key_policy: accept-new
  controller_ip: $SSH_BRIDGE_ADDR
  work_dir: $NODEFS
  system_clock: allow
target: {name: raftkv}
workload: {name: register, keys: 2, concurrency: 2, rate: 30, op_timeout_ms: 2000}
nemesis:
  faults: [$2]
  clock_mode: system
  interval: 1
  duration: $3
  targets: [one]
  clock_offset_ms: 3000
  clock_strobe_delta_ms: 200
  clock_strobe_period_ms: 100
YAML
}

RUN_SEED=7
# start_run NAME: runs NAME.yaml in the background (lib.sh: $pid, $run).
start_run() { run_bg "$WORK/$1.yaml" "$1"; }
# finish_run: waits; exit 0 (valid) and a results.json that fits the schema.
finish_run() {
  finish
  validate_results "$run/results.json"
}
jq_py() { "$PY" -c "import json,sys; v=json.loads(sys.argv[1]); print($2)" "$1"; }

# ---- a: bump ----------------------------------------------------------------
write_config sc-bump clock 3 4.8
start_run sc-bump
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock fault"
during=$(ms_off 1)
grep -q '"f":"stop-clock"' "$run/history.jsonl" && fail "the bump ended before it was measured"
[ "$during" -ge 2950 ] && [ "$during" -le 3050 ] || fail "during the bump node 1 was $during ms off, not ~3000"
finish_run
assert_back "after the bump run"
v=$(event_value "$run" start-clock)
[ "$(jq_py "$v" "v['mode'], v['moved'], v['controller_moved'], len(v['kernels'])")" = \
  "system ['n1', 'n2', 'n3'] True 1" ] || fail "start-clock says $v"
v=$(event_value "$run" stop-clock)
[ "$(jq_py "$v" "v['healed']")" = "['n1', 'n2', 'n3']" ] || fail "stop-clock says $v"
all_healed "$run" sysclock || fail "a sysclock ledger entry was not marked healed"
grep -q "moved the controller's own clock" "$WORK/out.txt" || fail "no warning that the controller's clock moved"
echo "PASS a: bump moved node 1 by $during ms; back to $BACK_US us of the baseline"

# ---- b: strobe --------------------------------------------------------------
write_config sc-strobe strobe 2 3.8
start_run sc-strobe
finish_run
assert_back "after the strobe run"
v=$(event_value "$run" stop-strobe)
flips=$(jq_py "$v" "len(v['flips'])")
ups=$(jq_py "$v" "sum(1 for f in v['flips'] if f['up'] and abs(f['clock_ms']-200) < 20)")
[ "$flips" -ge 10 ] || fail "stop-strobe has $flips flips (2 s at 100 ms: ~20): $v"
[ "$ups" -ge 5 ] || fail "only $ups up-flips reached +200 ms: $v"
all_healed "$run" sysclock || fail "a sysclock ledger entry was not marked healed"
echo "PASS b: strobe made $flips flips ($ups up at +200 ms); back to $BACK_US us of the baseline"

# ---- c: SIGKILLed controller during a bump, then faultline heal -------------
write_config sc-kill clock 600 600
start_run sc-kill
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock fault"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
before=$(ms_off 2)
[ "$before" -ge 2950 ] && [ "$before" -le 3050 ] || fail "after the SIGKILL node 2 was $before ms off, not ~3000"
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "heal exited $?"; }
grep -q "clock reset on ssh" "$WORK/heal.txt" || { cat "$WORK/heal.txt"; fail "heal did not reset the clock"; }
assert_back "after faultline heal"
healed_us=$BACK_US
for i in 0 1 2; do
  left=$(node_sh "$i" ls -A "$NODEFS")
  [ -z "$left" ] || fail "node $i still has $left in its work_dir"
done
"$FAULTLINE_BIN" heal "$run" >/dev/null || fail "second heal failed"
assert_back "after a second heal"
echo "PASS c: SIGKILL left the clock $before ms off; heal put it back to $healed_us us of the baseline"

echo "PASS: e2e_ssh_system_clock in $(($(date +%s) - start_all)) s"

#!/usr/bin/env bash
# The loss and clock faults end to end (raftkv, subnets 10.77.56.0/24 and
# 10.77.57.0/24):
#  1. loss: while active, the chosen node's INPUT chain holds the tagged
#     statistic DROP rules; the heal reports the packets they dropped (> 0)
#     and removes exactly them; the ledger marks them healed.
#  2. clock: every member runs under libfaketime (environment, mapped
#     library); while a +1 h step is active, a probe reading the chosen
#     node's faketime file sees the hour; the heal resets the file to
#     "+0 x1"; at the end no faketime file and no /dev/shm leftover of the
#     run's processes remain.
#  3. kill -9 of the controller during a clock fault and during a loss
#     fault: `faultline heal RUN` removes the faketime directory, the
#     libfaketime /dev/shm leftovers and the loss rules' namespace.
# Needs root, python3, libfaketime, and raftkv next to faultline.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
[ -r "$LIB" ] || fail "this test needs libfaketime ($LIB; apt-get install libfaketime)"
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"
setup_workdir
RUN_SEED=5
interrupt_run_on_exit

# ns_of RUN NODE: the node's namespace, from the ledger.
ns_of() {
  ledger_values "$1/ledger.jsonl" netns name | grep -- "-$2\$"
}

# raftkv_pids RUN: pids of the run's raftkv processes, from the ledger.
raftkv_pids() {
  local p
  for p in $(ledger_values "$1/ledger.jsonl" process pid); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = raftkv ] && echo "$p"
  done
  return 0
}

# ---- 1: loss ---------------------------------------------------------------
cat >"$WORK/loss.yaml" <<YAML
name: e2e-loss
time_limit: 9
recovery: 1
cluster: {nodes: 3, subnet: 10.77.56.0/24}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 3, rate: 30, op_timeout_ms: 3000}
nemesis: {faults: [loss], interval: 2, duration: 5, targets: [one], loss_probability: 0.5}
YAML
run_bg "$WORK/loss.yaml" e2e-loss
await_history "$pid" "$run" '"type":"info","f":"start-loss"' "the loss"
node=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['nodes'][0])" "$(event_value "$run" start-loss)")
ns=$(ns_of "$run" "$node")
rules=$(ip netns exec "$ns" iptables -S INPUT | grep -c 'faultline-loss' || true)
[ "$rules" -eq 2 ] || { ip netns exec "$ns" iptables -S INPUT; event_value "$run" start-loss; fail "expected 2 loss rules in $ns (one per other node), found $rules"; }
ip netns exec "$ns" iptables -S INPUT | grep -q -- '--probability 0.5' || fail "the loss rules do not say probability 0.5"
await_history "$pid" "$run" '"type":"info","f":"stop-loss"' "the loss heal"
left=$(ip netns exec "$ns" iptables -S INPUT 2>/dev/null | grep -c 'faultline-loss' || true)
[ "$left" -eq 0 ] || fail "$left loss rules left in $ns after the heal"
dropped=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['dropped']['$node'])" "$(event_value "$run" stop-loss)")
echo "loss 0.5 on $node: $dropped packets dropped, rules removed at heal"
[ "$dropped" -gt 0 ] || fail "the loss rules dropped no packet"
finish
all_healed "$run" iptables || fail "ledger: the loss rules are not marked healed"
echo "PASS: loss applied ($dropped packets dropped) and healed"

# ---- 2: clock --------------------------------------------------------------
cat >"$WORK/clock.yaml" <<YAML
name: e2e-clock
time_limit: 9
recovery: 1
cluster: {nodes: 3, subnet: 10.77.57.0/24}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 3, rate: 30, op_timeout_ms: 3000}
nemesis: {faults: [clock], interval: 2, duration: 5, targets: [one], clock_offset_ms: 3600000}
YAML
run_bg "$WORK/clock.yaml" e2e-clock
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock step"
node=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['nodes'][0])" "$(event_value "$run" start-clock)")
ftdir=$(ledger_values "$run/ledger.jsonl" faketime name)
[ -n "$ftdir" ] || fail "no faketime ledger entry"
file="$ftdir/$node.faketime"
grep -q '^+3600\.' "$file" || fail "faketime file $file says '$(cat "$file")', expected +3600..."
pids=$(raftkv_pids "$run")
[ "$(wc -w <<<"$pids")" -eq 3 ] || fail "expected 3 raftkv processes, found: $pids"
for p in $pids; do
  tr '\0' '\n' <"/proc/$p/environ" | grep -qx "LD_PRELOAD=$LIB" || fail "raftkv $p runs without LD_PRELOAD=$LIB"
  tr '\0' '\n' <"/proc/$p/environ" | grep -q "^FAKETIME_TIMESTAMP_FILE=$ftdir/" || fail "raftkv $p has no faketime file"
  grep -q libfaketime "/proc/$p/maps" || fail "libfaketime is not mapped into raftkv $p"
done
# What a process reading that node's file sees (the same variables).
skew=$(env LD_PRELOAD="$LIB" FAKETIME_TIMESTAMP_FILE="$file" FAKETIME_NO_CACHE=1 \
  FAKETIME_FMT=%s FAKETIME_DONT_FAKE_MONOTONIC=1 date +%s)
real=$(date +%s)
echo "clock +1 h on $node: a process under its file reads $((skew - real)) s ahead"
[ $((skew - real)) -ge 3590 ] && [ $((skew - real)) -le 3610 ] || fail "faked clock is $((skew - real)) s ahead, expected ~3600"
await_history "$pid" "$run" '"type":"info","f":"stop-clock"' "the clock heal"
[ "$(cat "$file")" = "+0 x1" ] || fail "after the heal the file says '$(cat "$file")', expected +0 x1"
finish
[ ! -e "$ftdir" ] || fail "faketime directory $ftdir left behind"
for p in $pids; do
  [ ! -e "/dev/shm/faketime_shm_$p" ] || fail "/dev/shm/faketime_shm_$p left behind"
  [ ! -e "/dev/shm/sem.faketime_sem_$p" ] || fail "/dev/shm/sem.faketime_sem_$p left behind"
done
all_healed "$run" faketime || fail "ledger: the faketime entry is not marked healed"
echo "PASS: clock stepped +1 h on $node and reset; no faketime files left"

# ---- 3: kill -9 of the controller, then faultline heal --------------------
sed -e 's/^name: e2e-clock/name: e2e-clock-kill/' -e 's/time_limit: 9/time_limit: 600/' \
  -e 's/duration: 5/duration: 600/' "$WORK/clock.yaml" >"$WORK/clock-kill.yaml"
run_bg "$WORK/clock-kill.yaml" e2e-clock-kill
await_history "$pid" "$run" '"type":"info","f":"start-clock"' "the clock step"
ftdir=$(ledger_values "$run/ledger.jsonl" faketime name)
pids=$(raftkv_pids "$run")
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
[ -d "$ftdir" ] || fail "the faketime directory is gone before heal"
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "heal exited non-zero"; }
[ ! -e "$ftdir" ] || { cat "$WORK/heal.txt"; fail "heal left $ftdir"; }
for p in $pids; do
  [ ! -e "/dev/shm/faketime_shm_$p" ] || { cat "$WORK/heal.txt"; fail "heal left /dev/shm/faketime_shm_$p"; }
done
echo "PASS: faultline heal removed the faketime files and $(wc -w <<<"$pids") processes' /dev/shm leftovers after kill -9"

sed -e 's/^name: e2e-loss/name: e2e-loss-kill/' -e 's/time_limit: 9/time_limit: 600/' \
  -e 's/duration: 5/duration: 600/' "$WORK/loss.yaml" >"$WORK/loss-kill.yaml"
run_bg "$WORK/loss-kill.yaml" e2e-loss-kill
await_history "$pid" "$run" '"type":"info","f":"start-loss"' "the loss"
node=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['nodes'][0])" "$(event_value "$run" start-loss)")
ns=$(ns_of "$run" "$node")
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
ip netns exec "$ns" iptables -S INPUT | grep -q faultline-loss || fail "no loss rule before heal"
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "heal exited non-zero"; }
grep -q -- "--comment faultline-loss -j DROP on netns $ns" "$WORK/heal.txt" || { cat "$WORK/heal.txt"; fail "heal did not remove the loss rule"; }
grep -qF "$ns" <<<"$(ip netns list)" && fail "namespace $ns remains"
echo "PASS: faultline heal removed the loss rules after kill -9"

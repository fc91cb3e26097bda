#!/usr/bin/env bash
# One-way and reset partitions and a combined (`together`) schedule end to
# end on raftkv (subnets 10.77.79.0/24, 10.77.80.0/24, 10.77.81.0/24):
#  1. a one-way partition in reset mode: while it is active only the deaf
#     node has rules (the faultline-part chain with the tcp-reset REJECT),
#     the history value names the direction and every blocked flow, and
#     after each heal no namespace has a rule; the verdict is valid.
#  2. a together entry (partition + loss + pause at once): the history has
#     the three starts in the written order, each with its exact nodes, and
#     the stops newest first; while the step is active the partition chain
#     and the loss rules are both in place (healing one never removes the
#     other's); after it no namespace has a rule; the verdict is valid.
#  3. SIGINT during the combined step: the run ends, every fault of the step
#     is healed (history stop events, every ledger entry marked healed).
#  4. kill -9 of the controller during the combined step: `faultline heal
#     RUN` removes the rules, the raftkv processes and the namespaces.
# Needs root, python3, and raftkv next to faultline.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"
setup_workdir
RUN_SEED=7
interrupt_run_on_exit

# namespaces RUN: the run's node namespaces, from the ledger.
namespaces() {
  grep -o '"kind":"netns","name":"[^"]*"' "$1/ledger.jsonl" | sed 's/.*"name":"//; s/"$//'
}

# snapshot RUN: saves every node namespace's rules to $WORK/rules-<ns>
# at once (checked afterwards, while the fault may already be healing).
snapshot() {
  local ns
  for ns in $(namespaces "$1"); do rules_in "$ns" >"$WORK/rules-$ns"; done
}

# rules_in NS: the namespace's filter rules and chains (not the policies).
rules_in() {
  ip netns exec "$1" iptables -w -S | grep -v '^-P ' || true
}

# no_rules_left RUN: fails unless every node namespace has no rule/chain.
no_rules_left() {
  local ns
  for ns in $(namespaces "$1"); do
    [ -z "$(rules_in "$ns")" ] || { rules_in "$ns"; fail "rules left in $ns after the heal"; }
  done
}

# ---- 1: one-way partition, reset mode --------------------------------------
cat >"$WORK/oneway.yaml" <<YAML
name: e2e-oneway
time_limit: 9
recovery: 1
cluster: {nodes: 3, subnet: 10.77.79.0/24}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 3, rate: 30, op_timeout_ms: 2000}
nemesis:
  interval: 1
  duration: 4
  faults: [{fault: partition, partitions: [one-way-one], partition_mode: reset}]
YAML
t0=$SECONDS
run_bg "$WORK/oneway.yaml" e2e-oneway
await_history "$pid" "$run" '"type":"info","f":"start-partition"' "the one-way partition"
snapshot "$run"
value=$(event_value "$run" start-partition)
read -r deaf blocked direction mode < <("$PY" -c "import json,sys
v=json.loads(sys.argv[1]); print(v['components'][0][0], ','.join(v['blocked']), v['direction'], v['mode'])" "$value")
[ "$direction" = one-way ] || fail "direction is '$direction': $value"
[ "$mode" = reset ] || fail "mode is '$mode': $value"
expected=$("$PY" -c "import json,sys
v=json.loads(sys.argv[1]); d=v['components'][0][0]
print(','.join(sorted(r+'->'+d for r in v['components'][1])))" "$value")
[ "$blocked" = "$expected" ] || fail "blocked flows '$blocked', expected '$expected'"
for ns in $(namespaces "$run"); do
  r="$WORK/rules-$ns"
  if [[ "$ns" == *"-$deaf" ]]; then
    grep -q -- '-j REJECT --reject-with tcp-reset' "$r" || { cat "$r"; fail "no tcp-reset rule in the deaf node's $ns"; }
    [ "$(grep -c -- '-A faultline-part -s .* -j DROP' "$r")" -eq 2 ] || { cat "$r"; fail "expected 2 DROP rules in $ns"; }
  else
    [ ! -s "$r" ] || { cat "$r"; fail "$ns is not the deaf node's but has rules (one-way: one side only)"; }
  fi
done
echo "one-way reset partition: $deaf deaf to $blocked"
await_history "$pid" "$run" '"type":"info","f":"stop-partition"' "the heal"
no_rules_left "$run"
finish
all_healed "$run" iptables || fail "ledger: partition rules not marked healed"
echo "PASS: one-way reset partition applied as recorded and healed, valid ($((SECONDS - t0)) s)"

# ---- 2: together: partition + loss + pause ----------------------------------
cat >"$WORK/together.yaml" <<YAML
name: e2e-together
time_limit: 9
recovery: 1
cluster: {nodes: 3, subnet: 10.77.80.0/24}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 3, rate: 30, op_timeout_ms: 2000}
nemesis:
  interval: 1
  faults:
    - together:
        - {fault: partition, partitions: [one]}
        - {fault: loss, targets: [all], loss_probability: 0.2}
        - {fault: pause, targets: [one]}
      duration: 4
YAML
t0=$SECONDS
run_bg "$WORK/together.yaml" e2e-together
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the combined step"
snapshot "$run"
loss_nodes=$("$PY" -c "import json,sys; print(len(json.loads(sys.argv[1])['nodes']))" "$(event_value "$run" start-loss)")
[ "$loss_nodes" -eq 3 ] || fail "loss on $loss_nodes nodes, expected all 3"
chains=0
for ns in $(namespaces "$run"); do
  r="$WORK/rules-$ns"
  grep -q faultline-loss "$r" || { cat "$r"; fail "no loss rules in $ns while the step is active"; }
  grep -q -- '-A INPUT -j faultline-part' "$r" && chains=$((chains + 1))
done
[ "$chains" -eq 3 ] || fail "partition 'one' should give all 3 nodes a chain, found $chains"
await_history "$pid" "$run" '"type":"info","f":"stop-partition"' "the combined heal"
no_rules_left "$run"
finish
"$PY" - "$run/history.jsonl" <<'PY' || fail "combined step not recorded as expected"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
nem = [(e["f"], e) for e in ev if e["type"] == "info" and
       (e["f"].startswith("start-") or e["f"].startswith("stop-"))]
first = [f for f, _ in nem[:6]]
assert first == ["start-partition", "start-loss", "start-pause",
                 "stop-pause", "stop-loss", "stop-partition"], first
for f, e in nem:
    assert not e.get("error"), (f, e)
    v = e["value"]
    if f == "start-pause": assert len(v["nodes"]) == 1, v
    if f == "start-partition": assert v["grudge"] and v["direction"] == "both", v
    if f == "stop-pause": assert len(v["resumed"]) == 1, v
    if f == "stop-partition": assert len(v["healed"]) == 3, v
starts = sum(1 for f, _ in nem if f.startswith("start-"))
stops = sum(1 for f, _ in nem if f.startswith("stop-"))
assert starts == stops and starts % 3 == 0, (starts, stops)
print("combined steps:", starts // 3)
PY
all_healed "$run" iptables || fail "ledger: rules not marked healed"
all_healed "$run" stop || fail "ledger: the pause is not marked healed"
echo "PASS: partition + loss + pause applied together, healed newest first, valid ($((SECONDS - t0)) s)"

# ---- 3: SIGINT while the combined step is active ----------------------------
sed -e 's/^name: e2e-together/name: e2e-together-int/' -e 's/time_limit: 9/time_limit: 120/' \
  -e 's/duration: 4/duration: 100/' -e 's#10.77.80.0/24#10.77.81.0/24#' \
  "$WORK/together.yaml" >"$WORK/together-int.yaml"
t0=$SECONDS
run_bg "$WORK/together-int.yaml" e2e-together-int
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the combined step"
kill -INT "$pid"
set +e; wait "$pid"; rc=$?; set -e
pid=""
grep -q '"type":"info","f":"stop-partition"' "$run/history.jsonl" || { cat "$WORK/out.txt"; fail "no stop-partition after SIGINT (rc $rc)"; }
grep -q '"type":"info","f":"stop-loss"' "$run/history.jsonl" || fail "no stop-loss after SIGINT"
grep -q '"type":"info","f":"stop-pause"' "$run/history.jsonl" || fail "no stop-pause after SIGINT"
all_healed "$run" iptables || fail "ledger: rules not healed after SIGINT"
all_healed "$run" stop || fail "ledger: the pause not healed after SIGINT"
for ns in $(namespaces "$run"); do
  ip netns list | grep -qw -- "$ns" && fail "namespace $ns remains after SIGINT"
done
echo "PASS: SIGINT during the combined step healed all three faults (exit $rc, $((SECONDS - t0)) s)"

# ---- 4: kill -9 of the controller during the combined step -------------------
sed -e 's/^name: e2e-together-int/name: e2e-together-kill/' "$WORK/together-int.yaml" >"$WORK/together-kill.yaml"
t0=$SECONDS
run_bg "$WORK/together-kill.yaml" e2e-together-kill
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the combined step"
nss=$(namespaces "$run")
raftkv=$(for p in $(ledger_values "$run/ledger.jsonl" process pid); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = raftkv ] && echo "$p"; done; true)
stopped=0
for p in $raftkv; do grep -q '^State:.*T' "/proc/$p/status" 2>/dev/null && stopped=$((stopped + 1)); done
[ "$stopped" -eq 1 ] || fail "expected 1 paused raftkv, found $stopped"
# (Once the controller is gone, the kernel itself sends SIGHUP and SIGCONT
# to the stopped process's orphaned process group.)
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
[ -n "$(rules_in "$(head -n1 <<<"$nss")")" ] || fail "no rules before heal"
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "heal exited non-zero"; }
for ns in $nss; do
  grep -qw -- "$ns" <<<"$(ip netns list)" && { cat "$WORK/heal.txt"; fail "namespace $ns remains after heal"; }
done
for p in $raftkv; do
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
  [ "$state" = gone ] || [ "$state" = Z ] || fail "raftkv $p remains after heal (state $state)"
done
echo "PASS: faultline heal after kill -9 during the combined step removed the rules, the pause and the cluster ($((SECONDS - t0)) s)"

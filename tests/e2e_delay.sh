#!/usr/bin/env bash
# The delay fault end to end (raftkv cluster, subnet 10.77.14.0/24):
#  1. while a delay is active, a TCP handshake from another node to the
#     delayed node grows by ~delay_ms (the controller's is not delayed), and
#     after the fault heals it is back to normal; the run heals its ledger
#     entries and leaves no faultline-netdelay behind;
#  2. after kill -9 of the controller mid-delay, `faultline heal RUN` removes
#     the NFQUEUE rules and the daemon, using only the ledger.
# Needs root, python3, and faultline-netdelay + raftkv next to faultline.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/faultline-netdelay" ] || fail "this test needs faultline-netdelay next to faultline (apt-get install libnetfilter-queue-dev, then rebuild)"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"
setup_workdir
# A failing check must not leave the background run going: interrupt it (it
# heals itself), then the usual cleanup.
interrupt_run_on_exit

DELAY=400
PORT=6379  # raftkv's client port on every node

# handshake_ms NETNS IP: best of 3 TCP handshakes to IP:PORT, in ms ("" =
# the controller's namespace).
handshake_ms() {
  local ns="$1" ip="$2" py
  py="import socket,sys,time
best=None
for _ in range(3):
    t=time.monotonic(); s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=10)
    d=(time.monotonic()-t)*1000; s.close(); best=d if best is None else min(best,d)
print(int(best))"
  if [ -n "$ns" ]; then
    ip netns exec "$ns" python3 -c "$py" "$ip" "$PORT"
  else
    python3 -c "$py" "$ip" "$PORT"
  fi
}

# chosen_node RUN: the node the active delay hits (from the history).
chosen_node() {
  python3 -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('f')=='start-delay' and e.get('type')=='info':
        print(e['value']['nodes'][0]); break" "$1/history.jsonl"
}

# netdelay_pids RUN: live (not zombie) faultline-netdelay processes the run's
# ledger recorded.
netdelay_pids() {
  local p state
  for p in $(ledger_values "$1/ledger.jsonl" process pid); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = faultline-netde ] || continue
    state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
    [ "$state" = gone ] || [ "$state" = Z ] || echo "$p"
  done
}

# ---- 1: apply, measure, heal -------------------------------------------
cat >"$WORK/delay.yaml" <<YAML
name: e2e-delay
time_limit: 14
cluster: {nodes: 3, subnet: 10.77.14.0/24}
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 3, rate: 20, op_timeout_ms: 5000}
nemesis: {faults: [delay], interval: 2, duration: 6, targets: [one], delay_ms: $DELAY}
YAML
"$FAULTLINE_BIN" run "$WORK/delay.yaml" --store "$STORE" --index-dir "$INDEX" \
  --seed 3 >"$WORK/out.txt" 2>&1 &
pid=$!
run="$STORE/e2e-delay/latest"
await_history "$pid" "$run" '"type":"info","f":"start-delay"' "the delay"
node=$(chosen_node "$run")
[ -n "$node" ] || fail "start-delay names no node"
i=${node#n}
other=$(( i % 3 + 1 ))
mapfile -t namespaces < <(ledger_values "$run/ledger.jsonl" netns name)
ns_other=$(printf '%s\n' "${namespaces[@]}" | grep -- "-n$other\$")
ns_slow=$(printf '%s\n' "${namespaces[@]}" | grep -- "-n$i\$")
ip_slow="10.77.14.$i"; ip_other="10.77.14.$other"
grep -q NFQUEUE <<<"$(ip netns exec "$ns_slow" iptables -S)" || fail "no NFQUEUE rule in $ns_slow"
during=$(handshake_ms "$ns_other" "$ip_slow")
back=$(handshake_ms "$ns_slow" "$ip_other")
ctl=$(handshake_ms "" "$ip_slow")
echo "delay $DELAY ms on $node: n$other -> $node ${during} ms, $node -> n$other ${back} ms, controller -> $node ${ctl} ms"
[ "$during" -ge $((DELAY - 10)) ] && [ "$during" -le $((DELAY + 200)) ] || fail "handshake into the delayed node took $during ms, expected ~$DELAY"
[ "$back" -ge $((DELAY - 10)) ] || fail "handshake from the delayed node took $back ms, expected ~$DELAY (the reply is delayed)"
[ "$ctl" -lt 100 ] || fail "the controller's handshake was delayed ($ctl ms)"
await_history "$pid" "$run" '"type":"info","f":"stop-delay"' "the heal"
after=$(handshake_ms "$ns_other" "$ip_slow")
echo "after heal: n$other -> $node ${after} ms"
[ "$after" -lt 100 ] || fail "handshake still slow after the heal ($after ms)"
set +e; wait "$pid"; rc=$?; set -e
pid=""
[ "$rc" -eq 0 ] || { cat "$WORK/out.txt"; fail "the run exited $rc"; }
python3 - "$run/ledger.jsonl" <<'PY' || fail "ledger: the delay rules are not all marked healed"
import json, sys
es = [json.loads(l) for l in open(sys.argv[1])]
healed = {e["ref"] for e in es if e["kind"] == "healed"}
rules = [e["seq"] for e in es if e["kind"] == "iptables"]
assert rules and all(s in healed for s in rules)
PY
[ -z "$(netdelay_pids "$run")" ] || fail "faultline-netdelay left running: $(netdelay_pids "$run")"
echo "PASS: delay applied (~$DELAY ms), not on the controller, healed"

# ---- 2: kill -9 of the controller, then faultline heal --------------------
sed -e 's/^name: e2e-delay/name: e2e-delay-kill/' -e 's/time_limit: 14/time_limit: 600/' \
  -e 's/duration: 6/duration: 600/' "$WORK/delay.yaml" >"$WORK/kill.yaml"
"$FAULTLINE_BIN" run "$WORK/kill.yaml" --store "$STORE" --index-dir "$INDEX" \
  --seed 3 >"$WORK/out.txt" 2>&1 &
pid=$!
run="$STORE/e2e-delay-kill/latest"
await_history "$pid" "$run" '"type":"info","f":"start-delay"' "the delay"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
node=$(chosen_node "$run")
i=${node#n}
mapfile -t namespaces < <(ledger_values "$run/ledger.jsonl" netns name)
ns_slow=$(printf '%s\n' "${namespaces[@]}" | grep -- "-n$i\$")
grep -q NFQUEUE <<<"$(ip netns exec "$ns_slow" iptables -S)" || fail "no NFQUEUE rule before heal"
daemons=$(netdelay_pids "$run")
[ -n "$daemons" ] || fail "no faultline-netdelay running before heal"
"$FAULTLINE_BIN" heal "$run" >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "heal exited non-zero"; }
grep -q -- "-X faultline-delay on netns $ns_slow" "$WORK/heal.txt" || { cat "$WORK/heal.txt"; fail "heal did not remove the delay chain"; }
for p in $daemons; do
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
  [ "$state" = gone ] || [ "$state" = Z ] || fail "faultline-netdelay $p survived heal (state $state)"
done
grep -qF "$ns_slow" <<<"$(ip netns list)" && fail "namespace $ns_slow remains"
echo "PASS: faultline heal removed the delay rules and $(wc -w <<<"$daemons") faultline-netdelay process(es) after kill -9"

#!/usr/bin/env bash
# `faultline heal` touches only what faultline created. Three netns nodes
# with their own sshd (tests/lib_ssh.sh, 10.77.88.0/24) get rules of their
# "owner" first: a chain owner-chain with a DROP rule, a jump to it from
# INPUT and a commented DROP rule in INPUT (sources in 192.0.2.0/24, which
# nothing here sends from). A namespace of the test's own, flhf-probe, gets
# such rules too and runs a sleep. Then:
#  a. a raftkv run over SSH (provider ssh) is SIGKILLed while a partition
#     and a loss fault are in force (their chain faultline-part and their
#     faultline-loss rules are on the nodes); `faultline heal RUN` removes
#     them and the run's processes, leaves every owner rule and chain as it
#     was, records a `healed` entry per undone entry and takes the run off
#     the active index;
#  b. a second `faultline heal RUN` does nothing: "nothing to heal", the
#     ledger and the rules unchanged;
#  c. a hand-edited ledger naming flhf-probe (netns and iptables entries),
#     owner-chain on n1 (over SSH, with the real run's descriptor) and a
#     directory that is not faultline's is refused: the heal exits non-zero
#     naming each entry, and the namespace, its rules, its process, the
#     node's chain and the directory are all still there.
# Needs root, openssh-server, python3, and raftkv next to faultline. About
# 30 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_ssh.sh"
require_root
require_tool python3
bindir="$(dirname "$FAULTLINE_BIN")"
[ -x "$bindir/raftkv" ] || fail "this test needs the raftkv server next to faultline; build it (scripts/build.sh)"

PROBE=flhf-probe
grep -qw "$PROBE" <<<"$(ip netns list)" && fail "namespace $PROBE exists already (a previous run?)"

setup_workdir
NODEFS="$WORK/nodefs"
pid=""
probe_pid=""
made_probe=0
cleanup_all() {
  local keep=$?
  set +e  # clean up everything even after a failure
  if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  # Heal over SSH while the nodes' sshd still run, then take them down.
  "$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null 2>&1 || true
  ssh_kill_in_nodes raftkv
  ssh_nodes_down
  if [ -n "$probe_pid" ]; then kill "$probe_pid" 2>/dev/null; wait "$probe_pid" 2>/dev/null; fi
  [ "$made_probe" = 1 ] && ip netns del "$PROBE" 2>/dev/null
  (exit $keep)
  cleanup_workdir
}
trap cleanup_all EXIT

start_all=$(date +%s)
ssh_nodes_up flhf 10.77.88 3 "$WORK" "$NODEFS"

# add_owner_rules NS: rules and a chain faultline did not make.
# owner_rules NS: every rule and chain of NS that is not faultline's, as
# iptables -S lists them; faultline_rules NS: how many lines are.
add_owner_rules() {
  ip netns exec "$1" iptables -w -N owner-chain
  ip netns exec "$1" iptables -w -A owner-chain -s 192.0.2.7/32 -j DROP
  ip netns exec "$1" iptables -w -A INPUT -j owner-chain
  ip netns exec "$1" iptables -w -A INPUT -s 192.0.2.8/32 -m comment --comment "owner rule" -j DROP
}
owner_rules() { ip netns exec "$1" iptables -w -S | grep -v -- faultline- || true; }
faultline_rules() { ip netns exec "$1" iptables -w -S | grep -c -- faultline- || true; }

ip netns add "$PROBE"
made_probe=1
ip -n "$PROBE" link set lo up
for ns in "${SSH_NS[@]}" "$PROBE"; do add_owner_rules "$ns"; done
ip netns exec "$PROBE" sleep 600 &
probe_pid=$!
declare -A before
for ns in "${SSH_NS[@]}" "$PROBE"; do
  before[$ns]=$(owner_rules "$ns")
  [ "$(grep -c owner <<<"${before[$ns]}")" -eq 4 ] || fail "owner rules not set up in $ns: ${before[$ns]}"
done

# ---- a: SIGKILL during partition + loss, then heal ------------------------------
cat >"$WORK/heal-foreign.yaml" <<YAML
name: heal-foreign
time_limit: 600
cluster:
  provider: ssh
  nodes: [${SSH_ADDR[0]}, ${SSH_ADDR[1]}, ${SSH_ADDR[2]}]
  user: root
  key: $SSH_KEY
  known_hosts: $SSH_KNOWN_HOSTS
  host_key_policy: accept-new
  controller_ip: $SSH_BRIDGE_ADDR
  work_dir: $NODEFS
target: {name: raftkv}
workload: {name: register, keys: 4, concurrency: 4, rate: 60, op_timeout_ms: 2000}
nemesis:
  interval: 1
  duration: 600
  faults:
    - together:
        - {fault: partition, partitions: [halves]}
        - {fault: loss, targets: [one], loss_probability: 0.5}
YAML
t0=$(date +%s%N)
"$FAULTLINE_BIN" run "$WORK/heal-foreign.yaml" --store "$STORE" --index-dir "$INDEX" \
  >"$WORK/out.txt" 2>&1 &
pid=$!
run="$STORE/heal-foreign/latest"
await_history "$pid" "$run" '"type":"info","f":"start-loss"' "the loss fault"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=""
echo "run SIGKILLed during partition + loss after $((($(date +%s%N) - t0) / 1000000)) ms"
ledger="$run/ledger.jsonl"
# The faults are really there, and the ledger names their chain and comment.
parts=0
losses=0
for ns in "${SSH_NS[@]}"; do
  parts=$((parts + $(ip netns exec "$ns" iptables -w -S | grep -c -- '-A INPUT -j faultline-part' || true)))
  losses=$((losses + $(ip netns exec "$ns" iptables -w -S | grep -c -- '--comment faultline-loss' || true)))
done
[ "$parts" -ge 1 ] && [ "$losses" -ge 1 ] ||
  fail "faults not on the nodes before heal ($parts faultline-part jumps, $losses loss rules)"
grep -q '"kind":"iptables","name":"faultline-part"' "$ledger" || fail "the partition's ledger entry names no chain"
grep -q '"kind":"iptables","name":"faultline-loss"' "$ledger" || fail "the loss's ledger entry names no tag"
[ "$(ls "$INDEX" | wc -l)" -eq 1 ] || fail "the killed run is not listed in $INDEX: $(ls "$INDEX")"

t0=$(date +%s%N)
"$FAULTLINE_BIN" heal "$run" --index-dir "$INDEX" >"$WORK/heal1.txt" 2>&1 ||
  { cat "$WORK/heal1.txt"; fail "heal exited $?"; }
heal_ms=$((($(date +%s%N) - t0) / 1000000))
for i in 0 1 2; do
  ns=${SSH_NS[$i]}
  [ "$(faultline_rules "$ns")" -eq 0 ] || { ip netns exec "$ns" iptables -S; fail "faultline rules left on $ns"; }
  [ "$(owner_rules "$ns")" = "${before[$ns]}" ] ||
    fail "the owner's rules on $ns changed: before ${before[$ns]} after $(owner_rules "$ns")"
  for p in $(ip netns pids "$ns"); do
    grep -qx raftkv "/proc/$p/comm" 2>/dev/null && fail "raftkv pid $p left on $ns"
  done
  [ -z "$(node_sh "$i" ls -A "$NODEFS")" ] || fail "the run's directory is left on $ns"
done
healed=$(grep -c '"kind":"healed"' "$ledger")
open=$("$PY" -c "import json,sys
es=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
done={e['ref'] for e in es if e['kind']=='healed'}
print(sum(1 for e in es if e['kind'] not in ('healed','closed') and e['seq'] not in done))" "$ledger")
[ "$open" -eq 0 ] || fail "$open ledger entries not marked healed after the heal"
[ -z "$(ls "$INDEX")" ] || fail "the healed run is still listed in $INDEX: $(ls "$INDEX")"
echo "PASS a: heal in $heal_ms ms removed $parts faultline-part jumps and $losses loss rules, owner rules intact on 3 nodes, $healed healed entries, run left the index"

# ---- b: a second heal does nothing ------------------------------------------------
lines=$(wc -l <"$ledger")
"$FAULTLINE_BIN" heal "$run" --index-dir "$INDEX" >"$WORK/heal2.txt" 2>&1 ||
  { cat "$WORK/heal2.txt"; fail "second heal exited $?"; }
[ "$(cat "$WORK/heal2.txt")" = "nothing to heal" ] || fail "second heal acted: $(cat "$WORK/heal2.txt")"
[ "$(wc -l <"$ledger")" -eq "$lines" ] || fail "second heal wrote to the ledger"
for ns in "${SSH_NS[@]}"; do
  [ "$(owner_rules "$ns")" = "${before[$ns]}" ] || fail "the second heal changed $ns's rules"
done
echo "PASS b: second heal: nothing to heal, ledger unchanged ($lines lines)"

# ---- c: a hand-edited ledger naming what is not faultline's --------------------------
edited="$WORK/edited"
mkdir -p "$edited" "$WORK/owner-data"
remote=$("$PY" -c "import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get('remote') and e.get('node')=='n1': print(json.dumps(e['remote'])); break" "$ledger")
[ -n "$remote" ] || fail "no remote descriptor for n1 in $ledger"
cat >"$edited/ledger.jsonl" <<JSONL
{"seq":1,"kind":"netns","name":"$PROBE"}
{"seq":2,"kind":"iptables","netns":"$PROBE"}
{"seq":3,"kind":"iptables","name":"faultline-part","netns":"$PROBE"}
{"seq":4,"kind":"iptables","name":"owner-chain","node":"n1","remote":$remote}
{"seq":5,"kind":"dir","name":"$WORK/owner-data"}
JSONL
set +e
"$FAULTLINE_BIN" heal "$edited" --index-dir "$INDEX" >"$WORK/heal3.txt" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || { cat "$WORK/heal3.txt"; fail "heal of a hand-edited ledger exited 0"; }
for seq in 1 2 3 4 5; do
  grep -q "refused ledger entry seq $seq " "$WORK/heal3.txt" ||
    { cat "$WORK/heal3.txt"; fail "entry $seq was not refused"; }
done
ip netns list | grep -qw "$PROBE" || fail "heal deleted namespace $PROBE"
kill -0 "$probe_pid" 2>/dev/null || fail "heal killed the process in $PROBE"
[ "$(owner_rules "$PROBE")" = "${before[$PROBE]}" ] || fail "heal changed the rules in $PROBE"
[ "$(owner_rules "${SSH_NS[0]}")" = "${before[${SSH_NS[0]}]}" ] || fail "heal changed owner-chain on n1"
[ -d "$WORK/owner-data" ] || fail "heal removed a directory that is not faultline's"
grep -q '"kind":"healed"' "$edited/ledger.jsonl" && fail "refused entries were marked healed"
echo "PASS c: hand-edited ledger refused (exit $rc, 5 entries), $PROBE, its rules and process, owner-chain and the directory intact"

echo "PASS: e2e_heal_foreign in $(($(date +%s) - start_all)) s"

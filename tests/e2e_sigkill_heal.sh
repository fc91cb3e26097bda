#!/usr/bin/env bash
# A run whose controller is SIGKILLed mid-partition leaves namespaces,
# iptables rules, a bridge and etcd processes behind; `faultline heal RUN_DIR`
# must remove every one of them, using only the fault ledger.
source "$(dirname "$0")/lib.sh"
require_root
require_tool etcd
setup_workdir

cat >"$WORK/long.yaml" <<YAML
name: sigkill-heal
time_limit: 600
cluster: {nodes: 3, subnet: 10.77.0.0/24}
target: {name: etcd}
workload: {name: register, keys: 4, concurrency: 4, rate: 50}
nemesis: {faults: [partition], interval: 1, duration: 600, partitions: [halves]}
YAML

"$FAULTLINE_BIN" run "$WORK/long.yaml" --store "$STORE" --index-dir "$INDEX" \
  >"$WORK/out.txt" 2>&1 &
pid=$!

# Wait until the partition is applied: its start-partition info is written
# once the rules are in place (the ledger has them from before that).
run="$STORE/sigkill-heal/latest"
await_history "$pid" "$run" '"type":"info","f":"start-partition"' "the partition"
grep -q '"kind":"iptables"' "$run/ledger.jsonl" || fail "the partition is not in the ledger"
# The partition's iptables rules are in place now: kill the controller.
kill -9 "$pid"
wait "$pid" 2>/dev/null || true

mapfile -t namespaces < <(ledger_values "$run/ledger.jsonl" netns name)
mapfile -t pids < <(ledger_values "$run/ledger.jsonl" process pid)
scratch=$(ledger_values "$run/ledger.jsonl" dir name)
[ -n "$scratch" ] && [ -d "$scratch" ] || fail "no scratch directory recorded and present"
[ "${#namespaces[@]}" -eq 3 ] || fail "expected 3 namespaces in the ledger"
[ "${#pids[@]}" -ge 3 ] || fail "expected etcd processes in the ledger"
# Before healing, the leftovers are real (so the test can fail).
# (Lists are captured first: with pipefail, `cmd | grep -q` can fail on
# SIGPIPE when grep exits early.)
grep -qF "${namespaces[0]}" <<<"$(ip netns list)" || fail "namespace already gone before heal"
rules=$(ip netns exec "${namespaces[0]}" iptables -S | grep -c DROP || true)
[ "$rules" -ge 1 ] || fail "no DROP rule in place before heal"

"$FAULTLINE_BIN" heal "$run" || fail "heal exited $?"

for ns in "${namespaces[@]}"; do
  grep -qF "$ns" <<<"$(ip netns list)" && fail "namespace $ns remains"
  id="${ns#fl-}"; id="${id%%-*}"
  [ -z "$(leftovers_for_run "$id")" ] || fail "links remain: $(leftovers_for_run "$id")"
done
for p in "${pids[@]}"; do
  # A zombie awaiting its reaper (init, since the controller died) holds
  # nothing; any other state means the process survived.
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$p/stat" 2>/dev/null || echo gone)
  if [ "$state" != gone ] && [ "$state" != Z ] && grep -q etcd "/proc/$p/comm" 2>/dev/null; then
    fail "etcd process $p remains (state $state)"
  fi
done
stopped=$(ps -eo stat=,comm= | awk '$1 ~ /^T/ && $2 == "etcd"' | wc -l)
[ "$stopped" -eq 0 ] || fail "$stopped stopped etcd processes remain"
[ -e "$scratch" ] && fail "scratch directory $scratch remains"
# Healing twice is harmless.
"$FAULTLINE_BIN" heal "$run" >/dev/null || fail "second heal failed"
echo "PASS: heal removed ${#namespaces[@]} namespaces, their links and ${#pids[@]} processes"

#!/usr/bin/env bash
# SIGINT during a pause fault: the run stops early, resumes the paused
# member, tears everything down, still checks and stores what it recorded,
# and leaves nothing behind.
source "$(dirname "$0")/lib.sh"
require_root
require_tool etcd
setup_workdir

cat >"$WORK/pause.yaml" <<YAML
name: sigint
time_limit: 600
cluster: {nodes: 3, subnet: 10.77.3.0/24}
target: {name: etcd}
workload: {name: register, keys: 4, concurrency: 4, rate: 50}
nemesis: {faults: [pause], interval: 1, duration: 600, targets: [leader]}
YAML

"$FAULTLINE_BIN" run "$WORK/pause.yaml" --store "$STORE" --index-dir "$INDEX" \
  >"$WORK/out.txt" 2>&1 &
pid=$!
run="$STORE/sigint/latest"
# The start-pause info is written once the member is stopped.
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the pause"
paused=$(ledger_values "$run/ledger.jsonl" stop pid | sed -n 1p)
state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$paused/stat")
[ "$state" = T ] || fail "the paused member $paused is in state $state, not stopped"

kill -INT "$pid"
for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "faultline did not exit within 60 s of SIGINT"
set +e; wait "$pid"; rc=$?; set -e
cat "$WORK/out.txt"
[ "$rc" -eq 0 ] || fail "interrupted run exited $rc, expected 0 (valid so far)"
validate_results "$run/results.json"
[ "$(json_get "$run/results.json" "j['aborted']")" = True ] || fail "results.json does not say aborted"
grep -q '"f":"stop-pause"' "$run/history.jsonl" || fail "the pause was not healed in the history"
[ -z "$(ls -A "$INDEX")" ] || fail "the run is still listed as active"
id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
[ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
if [ -e "/proc/$paused/stat" ]; then
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$paused/stat")
  [ "$state" = Z ] || fail "member $paused still exists in state $state"
fi
echo "PASS: interrupted run healed, tore down and stored its verdict"

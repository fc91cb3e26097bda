#!/usr/bin/env bash
# Redis + Sentinel transactions end to end (root; redis-server and
# redis-sentinel; network namespaces on 10.77.173.0/24):
#  1. configs/redis-list-append.yaml (one Lua script per transaction on the
#     primary; pauses and kills of replicas) for 18 s of workload: the
#     verdict is valid; ok transactions read and appended, one did both, and
#     some read returned a non-empty list;
#  2. the same cluster with rw-register for 8 s, no faults: valid, with ok
#     reads that saw a written value;
#  3. nothing of either run is left (namespaces, links).
# The known pair (configs/known/redis-sentinel-lost-appends*.yaml) is
# measured in its configs, not here. About 45-55 s.
source "$(dirname "$0")/lib.sh"
require_root
require_tool redis-server
require_tool redis-sentinel
setup_workdir
E2E_SUBNET=10.77.173.0/24

# 1. list-append under faults Redis survives.
cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/redis-list-append.yaml" 18 \
  's/^recovery: .*/recovery: 3/' 's/^  interval: .*/  interval: 4/' \
  's/^  duration: .*/  duration: 4/')
run_config "$cfg" 1
echo "redis-list-append seed 1: $VERDICT (exit $RC)"
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "redis-list-append: $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "redis-list-append: exit $RC"
[ "$(checker_verdict list-append)" = valid ] || fail "the list-append checker did not say valid"
grep -q '"f":"start-kill"\|"f":"start-pause"' "$RUN/history.jsonl" ||
  fail "no fault was injected in the run"
check_txn_history "$RUN/history.jsonl" 100
runs=("$RUN")
echo "PASS: redis list-append transactions valid under replica faults"

# 2. rw-register, no faults.
sed -i -e 's/^name: redis-list-append/name: redis-rw-register/' \
  -e 's/^  name: list-append/  name: rw-register/' \
  -e 's/^time_limit: .*/time_limit: 8/' -e 's/^  faults: .*/  faults: []/' "$cfg"
run_config "$cfg" 2
echo "redis-rw-register seed 2: $VERDICT (exit $RC)"
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "redis-rw-register: $VERDICT, expected valid"; }
[ "$(checker_verdict rw-register)" = valid ] || fail "the rw-register checker did not say valid"
"$PY" - "$RUN/history.jsonl" <<'PY' || fail "no ok rw-register read saw a written value"
import json, sys
seen = sum(1 for line in open(sys.argv[1])
           for e in [json.loads(line)]
           if e.get("f") == "txn" and e["type"] == "ok"
           for m in e["value"] if m[0] == "r" and isinstance(m[2], int))
print("rw-register reads of a written value:", seen)
assert seen > 0
PY
runs+=("$RUN")
echo "PASS: redis rw-register transactions valid"

# 3. Nothing left behind.
for run in "${runs[@]}"; do
  id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -n "$id" ] || fail "$run: the ledger records no namespace"
  [ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
done
echo PASS

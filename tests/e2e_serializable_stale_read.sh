#!/usr/bin/env bash
# etcd with serializable reads and the leader isolated serves stale reads
# from the old leader; faultline must find the history not linearizable.
# The config says `expect: invalid`, so the run exits 0 when it is found.
source "$(dirname "$0")/lib.sh"
require_root
require_tool etcd
setup_workdir

set +e
"$FAULTLINE_BIN" run "$FAULTLINE_SOURCE_DIR/configs/known/etcd-serializable-stale-read.yaml" \
  --store "$STORE" --index-dir "$INDEX" --seed 3 >"$WORK/out.txt" 2>&1
rc=$?
set -e
cat "$WORK/out.txt"
run=$(ls -d "$STORE"/*/latest)
validate_results "$run/results.json"
verdict=$(json_get "$run/results.json" "j['valid']")
[ "$verdict" = invalid ] || fail "verdict $verdict, expected invalid (stale reads not found)"
[ "$rc" -eq 0 ] || fail "run exited $rc although the expected anomaly was found"
grep -q 'name="expect: invalid"/>' "$run/junit.xml" || fail "junit.xml does not pass the met expectation"
grep -q "read" <(json_get "$run/results.json" "[c for c in j['checkers'] if c['checker']=='linearizable'][0]['summary']") \
  || fail "the explanation does not name the read"
# The same verdict from the stored history, through `check`.
set +e
"$FAULTLINE_BIN" check --model cas-register "$run/history.jsonl" >"$WORK/check.txt"
crc=$?
set -e
cat "$WORK/check.txt"
[ "$crc" -eq 1 ] || fail "check exited $crc, expected 1 (invalid)"
echo "PASS: stale read found and explained"

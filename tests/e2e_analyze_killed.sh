#!/usr/bin/env bash
# `faultline analyze` of runs whose controller was SIGKILLed (subnet
# 10.77.122.0/24): one killed mid-workload says interrupted in results.json
# (aborted, signal unknown), junit.xml and report.html, and exits 2 although
# its prefix is valid; one killed before its first operation (no history)
# gives `unknown` (exit 2) saying nothing was tested, not "is this a run
# directory?". Needs root and raftkv. About 10 s.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir
interrupt_run_on_exit
E2E_SUBNET=10.77.122.0/24
cfg=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" 600 \
  's#^name: .*#name: killed#' 's#^  faults: .*#  faults: [partition]#')

# start STORE: starts the run in the background with its own store; sets
# pid and dir (the run directory, found as soon as it exists).
start() {
  "$FAULTLINE_BIN" run "$cfg" --store "$1" --index-dir "$INDEX" --seed 5 \
    >"$WORK/out.txt" 2>&1 &
  pid=$!
  dir=""
  for _ in $(seq 1 2000); do
    dir=$(ls -d "$1"/killed/2* 2>/dev/null | head -n 1 || true)
    [ -n "$dir" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.005
  done
  cat "$WORK/out.txt"
  fail "no run directory in $1"
}

# await_grep FILE PATTERN: polls every 5 ms until FILE holds PATTERN.
await_grep() {
  for _ in $(seq 1 4000); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/out.txt"; fail "the run ended before $1 showed $2"; }
    sleep 0.005
  done
  fail "no '$2' in $1 within 20 s"
}

# analyze DIR: runs analyze; sets RC.
analyze() {
  set +e
  "$FAULTLINE_BIN" analyze "$1" >"$WORK/analyze.txt" 2>&1
  RC=$?
  set -e
  cat "$WORK/analyze.txt"
}

# 1. Killed mid-workload, after some ok operations.
start "$WORK/store-1"
await_grep "$dir/history.jsonl" '"type":"ok"'
for _ in $(seq 1 400); do [ "$(grep -c '"type":"ok"' "$dir/history.jsonl")" -ge 20 ] && break; sleep 0.01; done
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
pid=""
grep -q '"kind":"closed"' "$dir/ledger.jsonl" && fail "the run closed its ledger before the kill"
"$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null || fail "heal --all failed"
analyze "$dir"
[ "$RC" -eq 2 ] || fail "analyze of a killed run with a valid prefix exited $RC, expected 2"
validate_results "$dir/results.json"
[ "$(json_get "$dir/results.json" "j['valid']")" = valid ] || fail "the prefix should check valid"
[ "$(json_get "$dir/results.json" "j['aborted']")" = True ] || fail "results.json of a killed run says aborted: false"
[ "$(json_get "$dir/results.json" "j['interrupted']['signal']")" = None ] || fail "the signal of a SIGKILL cannot be known"
json_get "$dir/results.json" "j['interrupted']['note']" | grep -q "without closing its fault ledger" \
  || fail "results.json does not say why it counts as interrupted"
[ "$(json_get "$dir/results.json" "j['exit_code']")" = 2 ] || fail "results.json exit_code is not 2"
grep -q '<error type="interrupted"' "$dir/junit.xml" || fail "junit.xml does not say interrupted"
grep -q 'id="interrupted"' "$dir/report.html" || fail "report.html does not say interrupted"
grep -q '\[interrupted\]' "$WORK/analyze.txt" || fail "analyze did not print interrupted"
echo "killed mid-run: analyze says interrupted, exit 2"

# 2. Killed during setup, before its first operation: no history at all.
start "$WORK/store-2"
await_grep "$dir/ledger.jsonl" '"kind":"bridge"'
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
pid=""
if [ -e "$dir/history.jsonl" ] && grep -q '"type":"invoke"' "$dir/history.jsonl"; then
  fail "the kill came after the first operation; the test needs it before"
fi
"$FAULTLINE_BIN" heal --all --index-dir "$INDEX" >/dev/null || fail "heal --all failed"
analyze "$dir"
[ "$RC" -eq 2 ] || fail "analyze of a run killed before its first operation exited $RC, expected 2 (unknown)"
grep -q "is this a run directory" "$WORK/analyze.txt" && fail "analyze did not take the run directory"
validate_results "$dir/results.json"
[ "$(json_get "$dir/results.json" "j['valid']")" = unknown ] || fail "no history must give unknown"
json_get "$dir/results.json" "j['checkers'][0]['summary']" | grep -q "nothing was tested" \
  || fail "the verdict does not say nothing was tested"
[ "$(json_get "$dir/results.json" "j['aborted']")" = True ] || fail "results.json does not say aborted"
echo "killed before the first operation: unknown, exit 2, nothing tested"
echo "PASS: analyze of SIGKILLed runs says interrupted, and unknown without a history"

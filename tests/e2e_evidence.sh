#!/usr/bin/env bash
# "Was the run able to find anything?" end to end (raftkv, 3 netns nodes,
# subnet 10.77.95.0/24):
#  1. a 6 s run with one partition (halves) from 2 s to the end: results.json's evidence
#     shows the partition with packets dropped > 0 (read from faultline's own
#     DROP rules just before heal; stop-partition's info carries them), it
#     bit, the run is not weak; the terminal summary has the evidence line,
#     report.html the evidence section, and the workload line's counts are
#     the stats row's;
#  2. the same run with faults disabled (`faults: []`) is flagged weak ("no
#     fault was applied") in results.json and the terminal (WEAK RUN), and
#     its verdict stays valid (exit 0).
# Needs root, python3 (python3-jsonschema), raftkv next to faultline.
source "$(dirname "$0")/lib.sh"
require_root
require_tool python3
require_raftkv
setup_workdir

config() {  # config NAME FAULTS
  cat >"$WORK/$1.yaml" <<YAML
name: $1
time_limit: 6
recovery: 1
expect: valid
cluster:
  nodes: 3
  subnet: 10.77.95.0/24
target:
  name: raftkv
  read_mode: readindex
workload:
  name: register
  keys: 2
  concurrency: 4
  rate: 100
  mix: {read: 50, write: 30, cas: 20}
  op_timeout_ms: 500
nemesis:
  faults: $2
  interval: 2
  duration: 5
  partitions: [halves]
checker:
  timeout: 30
YAML
  echo "$WORK/$1.yaml"
}

# --- 1. a partition that bites --------------------------------------------
run_config "$(config evidence-partition "[partition]")" 7
grep -E "^(evidence:|WEAK RUN|stats )|workload done" "$WORK/out.txt" || true  # for the log
[ "$RC" -eq 0 ] || { cat "$WORK/out.txt"; fail "the partitioned run exited $RC, expected 0 (valid)"; }
R="$RUN/results.json"
[ "$(json_get "$R" "len(j['evidence']['faults'])")" = 1 ] || fail "evidence lists $(json_get "$R" "len(j['evidence']['faults'])") faults, expected the one partition"
[ "$(json_get "$R" "j['evidence']['faults'][0]['kind']")" = partition ] || fail "the fault is not the partition"
dropped=$(json_get "$R" "j['evidence']['faults'][0]['packets_dropped']")
[ "$dropped" != None ] && [ "$dropped" -gt 0 ] || fail "the partition dropped '$dropped' packets, expected > 0"
# The same figure is in the history, from the rules' own counters.
hist=$(event_value "$RUN" stop-partition | "$PY" -c "import json,sys; print(sum(json.load(sys.stdin)['dropped'].values()))")
[ "$hist" = "$dropped" ] || fail "stop-partition says $hist packets dropped, evidence $dropped"
[ "$(json_get "$R" "j['evidence']['faults'][0]['bit']")" = True ] || fail "the partition did not bite"
[ "$(json_get "$R" "j['evidence']['weak']")" = False ] || fail "a run whose partition bit is weak: $(json_get "$R" "j['evidence']['weak_reasons']")"
grep -Eq "^evidence: 1 fault, 1 bit \(partition: [0-9,]+ packets dropped" "$WORK/out.txt" ||
  { cat "$WORK/out.txt"; fail "no evidence line in the terminal summary"; }
if grep -q "WEAK RUN" "$WORK/out.txt"; then fail "the partitioned run says WEAK RUN"; fi
grep -q '<section id="evidence">' "$RUN/report.html" || fail "report.html has no evidence section"
# The workload line's counts and the stats row agree; final reads apart.
counts=$(sed -nE 's/.*workload done: [0-9]+ invocations \(([0-9]+) ok, ([0-9]+) fail, ([0-9]+) info\).*/\1 ok, \2 fail, \3 info/p' "$WORK/out.txt")
[ -n "$counts" ] || fail "no workload done line"
grep -Eq "^stats +valid +$counts; final reads " "$WORK/out.txt" ||
  { grep -E "workload done|^stats" "$WORK/out.txt"; fail "the stats row does not count '$counts' as the workload line does"; }
echo "partition: $dropped packets dropped, bit; $counts in the workload"

# --- 2. no faults: weak, verdict unchanged --------------------------------
run_config "$(config evidence-nofaults "[]")" 7
[ "$RC" -eq 0 ] || { cat "$WORK/out.txt"; fail "the fault-free run exited $RC, expected 0 (valid: weak runs keep their verdict)"; }
[ "$VERDICT" = valid ] || fail "the fault-free run is $VERDICT"
R="$RUN/results.json"
[ "$(json_get "$R" "j['evidence']['weak']")" = True ] || fail "a run without faults is not weak"
reasons=$(json_get "$R" "j['evidence']['weak_reasons']")
[[ "$reasons" == *"no fault was applied"* ]] || fail "weak reasons: $reasons"
grep -q "^WEAK RUN: no fault was applied" "$WORK/out.txt" ||
  { cat "$WORK/out.txt"; fail "the terminal summary does not flag the run weak"; }
echo "no faults: weak, verdict valid"
echo PASS

#!/usr/bin/env bash
# Interrupting a real raftkv run (subnet 10.77.3.0/24), three ways:
#  1. SIGINT during a pause fault: the run resumes the paused member, reads
#     every key once more after the heal, tears down, checks and stores what
#     it recorded, says `interrupted` in results.json, junit.xml,
#     report.html and faultline.log (which signal, when), leaves nothing
#     behind, and exits 130 although the prefix is valid.
#  2. SIGTERM (what a CI job's timeout sends): exit 143, recorded likewise.
#  3. Ctrl-C three times: the second is ignored (said on stderr), the third
#     forces an exit at once that names the `faultline heal` command; that
#     command then removes everything.
#  4. `run --test-count` and `suite` stop at the interrupt and exit likewise.
#  5. A run whose output reader goes away (| head) is not killed by SIGPIPE:
#     it heals its pause and exits 0.
# Needs root and raftkv. About 20 s.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir
interrupt_run_on_exit
E2E_SUBNET=10.77.3.0/24
# config NAME: one long pause of the leader from 1 s on; the run would last
# 600 s. A name per round: `latest` moves only once a run's cluster exists,
# so a round must not see the previous round's run under it.
config() {
  local out
  out=$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-quick.yaml" 600 \
    "s#^name: .*#name: $1#" \
    's#^  faults: .*#  faults: [pause]#' \
    's#^  interval: .*#  interval: 1#' \
    's#^  duration: .*#  duration: 600#' \
    's#^  targets: .*#  targets: [leader]#')
  mv "$out" "$WORK/$1.yaml"
  echo "$WORK/$1.yaml"
}

# await_exit PID SECONDS: waits for PID to end; fails after SECONDS.
await_exit() {
  for _ in $(seq 1 $(($2 * 20))); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
  cat "$WORK/out.txt"
  fail "faultline did not exit within $2 s"
}

# check_interrupted SIGNAL CODE: the finished run $run was interrupted by
# SIGNAL, exited CODE ($rc), recorded it everywhere, read every key after
# the heal and left nothing.
check_interrupted() {
  local sig="$1" code="$2" dir id
  [ "$rc" -eq "$code" ] || { cat "$WORK/out.txt"; fail "$sig: the interrupted run exited $rc, expected $code"; }
  dir=$(readlink -f "$run")
  validate_results "$dir/results.json"
  [ "$(json_get "$dir/results.json" "j['valid']")" = valid ] || fail "$sig: the prefix should be valid"
  [ "$(json_get "$dir/results.json" "j['exit_code']")" = "$code" ] || fail "$sig: results.json exit_code is not $code"
  [ "$(json_get "$dir/results.json" "j['aborted']")" = True ] || fail "$sig: results.json does not say aborted"
  [ "$(json_get "$dir/results.json" "j['interrupted']['signal']")" = "$sig" ] \
    || fail "$sig: results.json does not name the signal: $(json_get "$dir/results.json" "j['interrupted']")"
  grep -q "<property name=\"interrupted\" value=\"$sig\"/>" "$dir/junit.xml" || fail "$sig: junit.xml has no interrupted property"
  grep -q '<error type="interrupted"' "$dir/junit.xml" || fail "$sig: junit.xml has no interrupted error"
  grep -q "id=\"interrupted\" class=\"expect unmet\">interrupted by $sig<" "$dir/report.html" \
    || fail "$sig: report.html does not say interrupted"
  grep -Eq "interrupted by $sig at 20[0-9-]+T[0-9:.]+Z \([0-9.]+ s after the start\)" "$dir/faultline.log" \
    || { cat "$dir/faultline.log"; fail "$sig: faultline.log does not record the interrupt"; }
  # After the last nemesis event (the heal, if a fault started), an ok read
  # of each of the 4 keys.
  "$PY" - "$dir/history.jsonl" <<'PYEOF' || fail "$sig: the final reads did not all happen after the heal"
import json, sys
h = [json.loads(l) for l in open(sys.argv[1])]
last = max((i for i, e in enumerate(h) if e["process"] == "nemesis"), default=-1)
keys = {e["key"] for e in h[last + 1:] if e["type"] == "ok" and e["f"] == "read"}
assert keys == {"k0", "k1", "k2", "k3"}, keys
PYEOF
  grep -q '"kind":"closed"' "$dir/ledger.jsonl" || fail "$sig: the run did not close its ledger"
  [ -z "$(ls -A "$INDEX")" ] || fail "$sig: the run is still listed as active"
  id=$(ledger_values "$dir/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -z "$(leftovers_for_run "$id")" ] || fail "$sig: resources remain: $(leftovers_for_run "$id")"
}

# 1. SIGINT while the leader is paused.
t0=$(date +%s)
run_bg "$(config sigint)" sigint
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the pause"
paused=$(ledger_values "$run/ledger.jsonl" stop pid | sed -n 1p)
state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$paused/stat")
[ "$state" = T ] || fail "the paused member $paused is in state $state, not stopped"
kill -INT "$pid"
await_exit "$pid" 30
set +e; wait "$pid"; rc=$?; set -e
pid=""
check_interrupted SIGINT 130
grep -q '"f":"stop-pause"' "$run/history.jsonl" || fail "the pause was not healed in the history"
if [ -e "/proc/$paused/stat" ]; then
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$paused/stat")
  [ "$state" = Z ] || fail "member $paused still exists in state $state"
fi
echo "SIGINT: exit 130, interrupted everywhere, final reads after the heal, nothing left ($(( $(date +%s) - t0 )) s)"

# 2. SIGTERM, as a CI timeout sends it.
t0=$(date +%s)
RUN_SEED=2 run_bg "$(config sigterm)" sigterm
await_history "$pid" "$run" '"type":"ok"' "a first operation"
kill -TERM "$pid"
await_exit "$pid" 30
set +e; wait "$pid"; rc=$?; set -e
pid=""
check_interrupted SIGTERM 143
echo "SIGTERM: exit 143, recorded likewise ($(( $(date +%s) - t0 )) s)"

# 3. Three Ctrl-Cs: the second is ignored, the third forces the exit.
t0=$(date +%s)
RUN_SEED=3 run_bg "$(config sigint-force)" sigint-force
await_history "$pid" "$run" '"type":"info","f":"start-pause"' "the pause"
dir=$(readlink -f "$run")
kill -INT "$pid"
# The run has noticed (it logs the interrupt), then heals and reads for ~2 s.
for _ in $(seq 1 200); do grep -q "interrupted by SIGINT" "$dir/faultline.log" && break; sleep 0.05; done
kill -INT "$pid"
for _ in $(seq 1 100); do grep -q "SIGINT ignored" "$WORK/out.txt" && break; sleep 0.02; done
grep -q "SIGINT ignored: already healing" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "the second SIGINT was not acknowledged"; }
kill -INT "$pid"
await_exit "$pid" 5
set +e; wait "$pid"; rc=$?; set -e
pid=""
cat "$WORK/out.txt"
[ "$rc" -ne 0 ] || fail "the forced exit exited 0"
grep -q "exiting now without finishing the heal and teardown" "$WORK/out.txt" \
  || fail "the forced exit did not say so (it may have finished first: rc $rc)"
heal_cmd=$(sed -n 's/.*run `\(faultline heal [^`]*\)` to finish the job.*/\1/p' "$WORK/out.txt" | tail -1)
[ "$heal_cmd" = "faultline heal $dir --index-dir $INDEX" ] || fail "the forced exit named '$heal_cmd', not the run's heal"
[ ! -e "$dir/results.json" ] || fail "a forced exit should not have written results"
id=$(ledger_values "$dir/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
# shellcheck disable=SC2086  # the command as printed, words split
"$FAULTLINE_BIN" ${heal_cmd#faultline } >"$WORK/heal.txt" 2>&1 || { cat "$WORK/heal.txt"; fail "the printed heal command failed"; }
[ -z "$(leftovers_for_run "$id")" ] || fail "after the printed heal, resources remain: $(leftovers_for_run "$id")"
[ -z "$(ls -A "$INDEX")" ] || fail "after the printed heal, the run is still listed as active"
echo "triple Ctrl-C: forced exit $rc naming '$heal_cmd'; that heal left nothing ($(( $(date +%s) - t0 )) s)"
# 4. `run --test-count 3` and `suite --runs 2` stop at the interrupt: no
# further run starts, and they exit like the interrupted run.
t0=$(date +%s)
# stop_many NAME SIGNAL CODE CMD...: runs CMD in the background, sends
# SIGNAL once the first run has an ok operation; CMD must exit CODE after
# that one run.
stop_many() {
  local name="$1" sig="$2" code="$3"
  shift 3
  "$@" >"$WORK/out.txt" 2>&1 &
  pid=$!
  await_history "$pid" "$STORE/$name/latest" '"type":"ok"' "a first operation of $name"
  kill "-$sig" "$pid"
  await_exit "$pid" 30
  set +e; wait "$pid"; rc=$?; set -e
  pid=""
  [ "$rc" -eq "$code" ] || { cat "$WORK/out.txt"; fail "$1: exited $rc after SIG$sig, expected $code"; }
  [ "$(ls -d "$STORE/$name"/2* | wc -l)" -eq 1 ] || fail "$name: another run started after the interrupt"
  grep -q "interrupted by SIG$sig: 1 of [23] runs done" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "$name: no tally of the interrupt"; }
}
stop_many sigcount TERM 143 "$FAULTLINE_BIN" run "$(config sigcount)" --test-count 3 \
  --store "$STORE" --index-dir "$INDEX"
stop_many sigsuite INT 130 "$FAULTLINE_BIN" suite "$(config sigsuite)" --runs 2 \
  --store "$STORE" --index-dir "$INDEX"
[ -z "$(ls -A "$INDEX")" ] || fail "a run is still listed as active"
echo "run --test-count / suite: stopped after the interrupted run, exit 143 / 130 ($(( $(date +%s) - t0 )) s)"
# 5. The reader of faultline's output goes away (`| head -c 1`): the run
#    must not die of SIGPIPE with its pause in force; it goes on, heals and
#    exits as the verdict says.
cfg=$(config sigpipe)
sed -i 's#^time_limit: .*#time_limit: 4#' "$cfg"
set +e
"$FAULTLINE_BIN" run "$cfg" --store "$STORE" --index-dir "$INDEX" 2>&1 | head -c 1 >/dev/null
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 0 ] || fail "sigpipe: faultline exited $rc once its reader was gone, expected 0 (valid)"
grep -q '"f":"stop-pause"' "$STORE/sigpipe/latest/history.jsonl" || fail "sigpipe: the pause was not healed"
[ -z "$(ls -A "$INDEX")" ] || fail "sigpipe: the run is still listed as active"
echo "a run whose reader went away finished, healed and exited 0"
echo "PASS: interrupted runs exit 130/143, record the interrupt, read after the heal, leave nothing"

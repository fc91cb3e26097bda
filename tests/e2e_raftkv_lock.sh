#!/usr/bin/env bash
# The lock workload and the leader observer end to end against raftkv
# (root: network namespaces on 10.77.12.0/24).
#  1. configs/raftkv-lock.yaml (fenced resource, holders stalling past the
#     TTL, partitions/pauses/kills): valid; the history has holds, rejected
#     stale writes and leader observations of every node; `faultline check
#     -m mutex-fencing` and `-m leader-per-term` agree with the run.
#  2. configs/raftkv-lock-unfenced.yaml: invalid (resource corrupted).
#  3. configs/known/raftkv-lock-token-per-term.yaml: invalid (tokens not
#     monotonic), up to 3 seeds; its -control.yaml: valid.
# The configs run on this test's own subnet and with shorter time limits.
# About 2-3 minutes.
source "$(dirname "$0")/lib.sh"
require_root
require_raftkv
setup_workdir
E2E_SUBNET=10.77.12.0/24

# check_model MODEL: exit code of `faultline check -m MODEL` on $RUN.
check_model() {
  set +e
  "$FAULTLINE_BIN" check -m "$1" "$RUN/history.jsonl" >"$WORK/check.txt" 2>&1
  local crc=$?
  set -e
  echo "$crc"
}

# 1. fenced: valid, with the evidence in the history.
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-lock.yaml" 30)" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "raftkv-lock: verdict $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "raftkv-lock: exit $RC"
[ "$(checker_verdict mutex-fencing)" = valid ] || fail "raftkv-lock: mutex-fencing not valid"
[ "$(checker_verdict leader-per-term)" = valid ] || fail "raftkv-lock: leader-per-term missing or not valid"
python3 - "$RUN/history.jsonl" <<'PY' || fail "raftkv-lock: the history lacks the expected events"
import json, sys
acq = writes = rejected = 0
observed = set()
observe_procs = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["process"] == "nemesis":
        continue
    if e["f"] == "acquire" and e["type"] == "ok":
        assert isinstance(e["value"], int), e
        acq += 1
    if e["f"] == "resource-write" and e["type"] == "invoke":
        assert e["fenced"] is True and isinstance(e["value"][0], int), e
        assert e["lock"] + "-resource" == e["key"], e
        writes += 1
    if e["f"] == "resource-write" and e["type"] == "fail":
        assert e["error"] == "fenced", e
        rejected += 1
    if e["f"] == "observe":
        assert observe_procs.setdefault(e["node"], e["process"]) == e["process"], e
        if e["type"] == "ok":
            observed.add(e["node"])
            assert set(e["value"]) == {"role", "term", "leader"}, e
print(f"acquires ok {acq}, resource writes {writes}, rejected by fencing {rejected}, observed nodes {sorted(observed)}")
assert acq >= 10 and writes >= 20
assert observed == {"n1", "n2", "n3", "n4", "n5"}
assert len(set(observe_procs.values())) == 5
PY
[ "$(check_model mutex-fencing)" -eq 0 ] || { cat "$WORK/check.txt"; fail "raftkv-lock: check -m mutex-fencing disagrees"; }
[ "$(check_model leader-per-term)" -eq 0 ] || { cat "$WORK/check.txt"; fail "raftkv-lock: check -m leader-per-term disagrees"; }
echo "PASS: raftkv-lock valid: $(json_get "$RUN/results.json" "[c['summary'] for c in j['checkers'] if c['checker']=='mutex-fencing'][0]")"

# 2. unfenced: the paused holders corrupt the resource.
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/raftkv-lock-unfenced.yaml" 30)" 1
[ "$VERDICT" = invalid ] || { cat "$WORK/out.txt"; fail "raftkv-lock-unfenced: verdict $VERDICT, expected invalid"; }
[ "$RC" -eq 0 ] || fail "raftkv-lock-unfenced: exit $RC although the expected anomaly was found"
json_get "$RUN/results.json" "[c['summary'] for c in j['checkers'] if c['checker']=='mutex-fencing'][0]" | grep -q corrupted \
  || fail "raftkv-lock-unfenced: the verdict does not say the resource was corrupted"
[ "$(check_model mutex-fencing)" -eq 1 ] || { cat "$WORK/check.txt"; fail "raftkv-lock-unfenced: check -m mutex-fencing disagrees"; }
echo "PASS: raftkv-lock-unfenced invalid"

# 3. lock-token-per-term and its control.
found=""
for seed in 1 2 3; do
  run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/known/raftkv-lock-token-per-term.yaml" 20)" "$seed"
  echo "raftkv-lock-token-per-term seed $seed: $VERDICT (exit $RC)"
  if [ "$VERDICT" = invalid ]; then
    [ "$RC" -eq 0 ] || fail "token-per-term: exit $RC although the expected anomaly was found"
    json_get "$RUN/results.json" "[c['summary'] for c in j['checkers'] if c['checker']=='mutex-fencing'][0]" \
      | grep -Eq 'not monotonic|granted twice' || fail "token-per-term: the verdict does not name the token anomaly"
    found=$seed
    break
  fi
done
[ -n "$found" ] || { cat "$WORK/out.txt"; fail "raftkv-lock-token-per-term: not caught with seeds 1..3"; }
echo "PASS: raftkv-lock-token-per-term invalid (seed $found)"
run_config "$(local_copy "$FAULTLINE_SOURCE_DIR/configs/known/raftkv-lock-token-per-term-control.yaml" 20)" 1
[ "$VERDICT" = valid ] || { cat "$WORK/out.txt"; fail "token-per-term control: verdict $VERDICT, expected valid"; }
[ "$RC" -eq 0 ] || fail "token-per-term control: exit $RC"
echo "PASS: raftkv-lock-token-per-term-control valid"

# Nothing of these runs is left behind.
for run in "$STORE"/*/latest; do
  id=$(ledger_values "$run/ledger.jsonl" netns name | sed -n 1p | cut -d- -f2)
  [ -n "$id" ] || fail "$run: the ledger records no namespace"
  [ -z "$(leftovers_for_run "$id")" ] || fail "resources remain: $(leftovers_for_run "$id")"
done
[ -z "$(ls -A "$INDEX")" ] || fail "a run is still listed as active"
echo "PASS: lock workload and leader observer end to end"
